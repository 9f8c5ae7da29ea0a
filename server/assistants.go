package server

import (
	"crypto/sha1"
	"encoding/hex"
	"net/http"
	"slices"
	"time"
)

// assistantNamespace is the UUID namespace LangGraph derives an
// assistant's ID from its graph ID with (the URL namespace of RFC 9562).
var assistantNamespace = [16]byte{0x6b, 0xa7, 0xb8, 0x21, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}

// uuid5 returns the name-based (SHA-1) UUID of name in namespace ns.
func uuid5(ns [16]byte, name string) string {
	h := sha1.New()
	h.Write(ns[:])
	h.Write([]byte(name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return formatUUID(u)
}

func formatUUID(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// assistantEntry is an assistant with its wire form.
type assistantEntry struct {
	Assistant
	id   string
	wire wireAssistant
}

// wireAssistant is LangGraph's Assistant object.
type wireAssistant struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// started is when assistants came to be: the server's start, as in
// LangGraph, where system assistants are registered at start-up.
var started = time.Now().UTC().Truncate(time.Second)

func newAssistantEntry(a Assistant) *assistantEntry {
	if a.Name == "" {
		a.Name = a.GraphID
	}
	e := &assistantEntry{Assistant: a, id: uuid5(assistantNamespace, a.GraphID)}
	e.wire = wireAssistant{
		AssistantID: e.id, GraphID: a.GraphID, Name: a.Name,
		Config: map[string]any{}, Context: map[string]any{},
		Metadata: map[string]any{"created_by": "system"}, Version: 1,
		CreatedAt: started, UpdatedAt: started,
	}
	if a.Description != "" {
		e.wire.Description = &a.Description
	}
	return e
}

// assistant finds an assistant by ID or graph ID; "" is the first one.
func (s *Server) assistant(id string) *assistantEntry {
	if id == "" {
		return s.assistants[0]
	}
	for _, a := range s.assistants {
		if a.id == id || a.GraphID == id {
			return a
		}
	}
	return nil
}

func (s *Server) getAssistant(w http.ResponseWriter, r *http.Request) {
	a := s.assistant(r.PathValue("id"))
	if a == nil {
		httpError(w, http.StatusNotFound, "Assistant not found")
		return
	}
	writeJSON(w, http.StatusOK, a.wire)
}

func (s *Server) searchAssistants(w http.ResponseWriter, r *http.Request) {
	var q struct {
		GraphID  string         `json:"graph_id"`
		Name     string         `json:"name"`
		Metadata map[string]any `json:"metadata"`
		Limit    *int           `json:"limit"`
		Offset   int            `json:"offset"`
	}
	if !readJSON(w, r, &q) {
		return
	}
	out := []wireAssistant{}
	for _, a := range s.assistants {
		if (q.GraphID == "" || q.GraphID == a.GraphID) && (q.Name == "" || q.Name == a.Name) && contains(a.wire.Metadata, q.Metadata) {
			out = append(out, a.wire)
		}
	}
	writeJSON(w, http.StatusOK, page(out, q.Offset, q.Limit, 10))
}

// page returns the window of items at offset of at most *limit items
// (def when limit is nil).
func page[T any](items []T, offset int, limit *int, def int) []T {
	n := def
	if limit != nil {
		n = *limit
	}
	offset = min(max(offset, 0), len(items))
	items = items[offset:]
	if n >= 0 && n < len(items) {
		items = items[:n]
	}
	return slices.Clip(items)
}
