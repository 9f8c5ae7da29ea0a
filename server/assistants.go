package server

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/store"
)

// assistantRoutes registers the assistants API.
func (s *Server) assistantRoutes(m *http.ServeMux) {
	m.HandleFunc("POST "+langgraph.PathAssistantSearch, s.searchAssistants)
	m.HandleFunc("GET "+langgraph.PathAssistant, s.getAssistant)
	m.HandleFunc("POST "+langgraph.PathAssistants, s.createAssistant)
}

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
	wire langgraph.Assistant
}

// started is when assistants came to be: the server's start, as in
// LangGraph, where system assistants are registered at start-up.
var started = time.Now().UTC().Truncate(time.Second)

func newAssistantEntry(a Assistant) *assistantEntry {
	if a.Name == "" {
		a.Name = a.GraphID
	}
	e := &assistantEntry{Assistant: a, id: uuid5(assistantNamespace, a.GraphID)}
	e.wire = langgraph.Assistant{
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

// assistant finds an assistant by ID or graph ID ("" is the first one),
// and the agent it runs; for an assistant a client created, the wire form
// is its own and the agent its graph's.
func (s *Server) assistant(ctx context.Context, id string) (*assistantEntry, *langgraph.Assistant) {
	if id == "" {
		return s.assistants[0], &s.assistants[0].wire
	}
	for _, a := range s.assistants {
		if a.id == id || a.GraphID == id {
			return a, &a.wire
		}
	}
	if it, err := s.store.Get(ctx, assistantsNamespace, id); err == nil {
		if w := createdAssistant(it); w != nil {
			for _, a := range s.assistants {
				if a.GraphID == w.GraphID {
					return a, w
				}
			}
		}
	}
	return nil, nil
}

// assistantsNamespace holds the assistants clients created.
var assistantsNamespace = []string{"deepagents", "server", "assistants"}

// createdAssistant reads a created assistant from the store.
func createdAssistant(it *store.Item) *langgraph.Assistant {
	var w langgraph.Assistant
	if fromValue(it.Value, &w) != nil || w.GraphID == "" {
		return nil
	}
	w.AssistantID, w.CreatedAt, w.UpdatedAt = it.Key, it.CreatedAt, it.UpdatedAt
	return &w
}

func (s *Server) getAssistant(w http.ResponseWriter, r *http.Request) {
	_, wa := s.assistant(r.Context(), r.PathValue("assistant_id"))
	if wa == nil {
		httpError(w, http.StatusNotFound, "Assistant not found")
		return
	}
	writeJSON(w, http.StatusOK, wa)
}

// createAssistant makes an assistant of a served graph: its own name,
// metadata, config and context (which the agent does not read).
func (s *Server) createAssistant(w http.ResponseWriter, r *http.Request) {
	var q langgraph.AssistantCreate
	if !readJSON(w, r, &q) {
		return
	}
	graph, _ := s.assistant(r.Context(), q.GraphID)
	if graph == nil || graph.GraphID != q.GraphID {
		httpError(w, http.StatusNotFound, fmt.Sprintf("Graph %q not found", q.GraphID))
		return
	}
	if q.AssistantID == "" {
		q.AssistantID = newUUID()
	}
	if badID(w, "assistant", q.AssistantID) {
		return
	}
	if _, existing := s.assistant(r.Context(), q.AssistantID); existing != nil {
		if q.IfExists == langgraph.IfExistsDoNothing {
			writeJSON(w, http.StatusOK, existing)
			return
		}
		httpError(w, http.StatusConflict, "Assistant already exists")
		return
	}
	// What the client may set; the rest is the server's.
	wa := langgraph.Assistant{GraphID: q.GraphID, Name: q.Name, Description: q.Description, Config: q.Config, Context: q.Context, Metadata: q.Metadata, Version: 1}
	if wa.Name == "" {
		wa.Name = "Untitled"
	}
	for _, m := range []*map[string]any{&wa.Config, &wa.Context, &wa.Metadata} {
		if *m == nil {
			*m = map[string]any{}
		}
	}
	if err := s.store.Put(r.Context(), assistantsNamespace, q.AssistantID, asValue(wa)); err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	_, created := s.assistant(r.Context(), q.AssistantID)
	writeJSON(w, http.StatusOK, created)
}

func (s *Server) searchAssistants(w http.ResponseWriter, r *http.Request) {
	var q langgraph.AssistantSearch
	if !readJSON(w, r, &q) {
		return
	}
	all := []langgraph.Assistant{}
	for _, a := range s.assistants {
		all = append(all, a.wire)
	}
	items, _ := s.store.Search(r.Context(), assistantsNamespace, store.SearchOptions{Limit: 1000})
	for i := range items {
		if wa := createdAssistant(&items[i]); wa != nil {
			all = append(all, *wa)
		}
	}
	out := []langgraph.Assistant{}
	for _, a := range all {
		if (q.GraphID == "" || q.GraphID == a.GraphID) && (q.Name == "" || q.Name == a.Name) && contains(a.Metadata, q.Metadata) {
			out = append(out, a)
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
