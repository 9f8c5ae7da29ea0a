// Package streamtest holds what the providers' fake servers share: the
// script of turns and log of requests, and how scripted answers are cut
// into the pieces a stream delivers.
package streamtest

import (
	"net/http"
	"strings"
	"sync"
)

// Words cuts text into deltas of about three words, the way the APIs
// stream text.
func Words(text string) []string {
	if text == "" {
		return nil
	}
	words := strings.SplitAfter(text, " ")
	var out []string
	for i := 0; i < len(words); i += 3 {
		out = append(out, strings.Join(words[i:min(i+3, len(words))], ""))
	}
	return out
}

// Fragments cuts s into pieces of n bytes, the way the APIs stream tool
// arguments (a fragment need not end at a token boundary).
func Fragments(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// Request is a request a fake server received.
type Request struct {
	Method string
	Path   string
	Query  string // the raw query
	Header http.Header
	Body   []byte
}

// Script is the state the providers' fake servers share: the scripted
// turns still to play and the requests received. It is safe for
// concurrent use; the zero value is empty.
type Script[T any] struct {
	mu    sync.Mutex
	turns []T
	next  int
	reqs  []Request
	calls int
}

// Add appends turns.
func (s *Script[T]) Add(turns ...T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// Remaining returns how many turns have not been played.
func (s *Script[T]) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) - s.next
}

// Requests returns the requests received so far, in order.
func (s *Script[T]) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Log records a request.
func (s *Script[T]) Log(r *http.Request, body []byte) {
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	s.mu.Unlock()
}

// Take returns the next turn with the 1-based number of this call; ok is
// false when the script is played out.
func (s *Script[T]) Take() (t T, call int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.next >= len(s.turns) {
		return t, s.calls, false
	}
	t = s.turns[s.next]
	s.next++
	return t, s.calls, true
}
