package thread

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/deepagents-go/deepagents/llm"
)

// journal records what changed in a State since the last TakeChanges: the
// one place a run learns what its next checkpoint must hold. The files keep
// their own record (Files.TakeChanges), which TakeChanges takes along.
type journal struct {
	// saved is how many messages the State had at the last commit; kept is
	// how many of those are still in place (a rewrite lowers it).
	saved, kept int
	values      map[string]struct{}

	// Since BeginJournal, for the run's result.
	allFiles, allValues map[string]struct{}
}

// Changes are what changed in a State since its journal was last taken,
// in the shape of a checkpoint's delta.
type Changes struct {
	// Keep is how many of the messages at the last commit are still in
	// place; Messages, a slice of its own, follow them.
	Keep     int
	Messages []llm.Message
	// Values holds the values that changed; nil deletes the key.
	Values map[string]json.RawMessage
	// Files and Appends are the files' changes (see Files.TakeChanges).
	Files   map[string]*FileData
	Appends map[string]FileData
}

// BeginJournal starts recording changes: what the State holds now counts
// as committed. A run calls it once it has loaded the thread.
func (s *State) BeginJournal() {
	s.journal = journal{saved: len(s.Messages), kept: len(s.Messages)}
}

// RewriteMessages keeps the first keep messages and replaces the rest with
// tail, recording that the messages from keep on changed. It returns the
// new messages' index, keep as clamped to the list.
func (s *State) RewriteMessages(keep int, tail []llm.Message) int {
	keep = min(max(keep, 0), len(s.Messages))
	s.Messages = append(s.Messages[:keep:keep], tail...)
	s.journal.kept = min(s.journal.kept, keep)
	return keep
}

// ReplaceMessage puts m at index i of the conversation, recording the
// change (appending needs no call: the journal sees the length).
func (s *State) ReplaceMessage(i int, m llm.Message) {
	s.Messages[i] = m
	s.journal.kept = min(s.journal.kept, i)
}

// SetValue stores a custom value (a copy of v); nil deletes the key. The
// change is recorded.
func (s *State) SetValue(key string, v json.RawMessage) {
	if v == nil {
		delete(s.Values, key)
	} else {
		if s.Values == nil {
			s.Values = make(map[string]json.RawMessage)
		}
		s.Values[key] = slices.Clone(v)
	}
	if s.journal.values == nil {
		s.journal.values = make(map[string]struct{})
	}
	s.journal.values[key] = struct{}{}
}

// Dirty reports whether anything changed since the journal was last taken.
func (s *State) Dirty() bool {
	j := &s.journal
	return len(s.Messages) != j.saved || j.kept < j.saved || len(j.values) > 0 ||
		(s.Files != nil && s.Files.HasChanges())
}

// TakeChanges returns what changed since the last call (or BeginJournal)
// and starts recording afresh. The messages' parts and calls are shared
// with the State, which never changes them in place.
func (s *State) TakeChanges() Changes {
	j := &s.journal
	keep := min(j.kept, j.saved)
	c := Changes{Keep: keep, Messages: slices.Clone(s.Messages[keep:])}
	if len(j.values) > 0 {
		c.Values = make(map[string]json.RawMessage, len(j.values))
		for k := range j.values {
			c.Values[k] = s.Values[k] // nil when deleted
		}
		j.allValues = addKeys(j.allValues, j.values)
	}
	if s.Files != nil {
		c.Files, c.Appends = s.Files.TakeChanges()
		j.allFiles = addKeys(addKeys(j.allFiles, c.Files), c.Appends)
	}
	j.saved, j.kept, j.values = len(s.Messages), len(s.Messages), nil
	return c
}

// Changed returns the paths of the files and the keys of the values that
// changes taken since BeginJournal held, sorted.
func (s *State) Changed() (files, values []string) {
	return slices.Sorted(maps.Keys(s.journal.allFiles)), slices.Sorted(maps.Keys(s.journal.allValues))
}

// addKeys adds the keys of from to into, which it makes when needed.
func addKeys[V any](into map[string]struct{}, from map[string]V) map[string]struct{} {
	for k := range from {
		if into == nil {
			into = make(map[string]struct{}, len(from))
		}
		into[k] = struct{}{}
	}
	return into
}
