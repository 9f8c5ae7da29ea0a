package checkpoint

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/thread"
)

// ApplyDelta applies d to s in place, the way a load applies a checkpoint
// on top of its parent's state: it keeps the first d.Keep messages and
// appends d.Messages; each entry of d.Files and d.Values sets its path or
// key, and a nil entry deletes it;
// each entry of d.Appends adds its text to the end of its file.
// s.Info is left alone.
//
// ApplyDelta allocates only when s must grow. It reuses the backing array
// of s.Messages (so truncating and appending overwrites the elements past
// Keep) and shares memory with d: the appended messages' parts and the
// values' bytes. Call [Snapshot.Clone] first when another snapshot
// shares s's memory, and clone d's content if the caller changes it later.
//
// A Keep below zero or beyond len(s.Messages) is ErrInvalid, and s is left
// unchanged.
func ApplyDelta(s *Snapshot, d *Delta) error {
	if d.Keep < 0 || d.Keep > len(s.Messages) {
		return fmt.Errorf("%w: keep %d outside 0..%d", ErrInvalid, d.Keep, len(s.Messages))
	}
	s.Messages = append(s.Messages[:d.Keep], d.Messages...)
	for p, f := range d.Files {
		if f == nil {
			delete(s.Files, p)
			continue
		}
		if s.Files == nil {
			s.Files = make(map[string]thread.FileData, len(d.Files))
		}
		s.Files[p] = *f
	}
	for p, f := range d.Appends {
		if s.Files == nil {
			s.Files = make(map[string]thread.FileData, len(d.Appends))
		}
		old, ok := s.Files[p]
		s.Files[p] = appendFile(old, ok, f)
	}
	for k, v := range d.Values {
		if v == nil {
			delete(s.Values, k)
			continue
		}
		if s.Values == nil {
			s.Values = make(map[string]json.RawMessage, len(d.Values))
		}
		s.Values[k] = v
	}
	return nil
}

// appendFile returns the file old (ok false when absent) with the text of
// the append add at its end and add's modification time; an append to an
// absent file creates it.
func appendFile(old thread.FileData, ok bool, add thread.FileData) thread.FileData {
	if !ok {
		return add
	}
	old.Content += add.Content
	old.ModifiedAt = add.ModifiedAt
	return old
}

// Clone returns a deep copy of s that shares no memory with it.
func (s *Snapshot) Clone() *Snapshot {
	c := &Snapshot{Info: s.Info}
	c.Meta = cloneRaw(s.Meta)
	if s.Messages != nil {
		c.Messages = make([]llm.Message, len(s.Messages))
		for i := range s.Messages {
			c.Messages[i] = s.Messages[i].Clone()
		}
	}
	c.Files = maps.Clone(s.Files)
	if s.Values != nil {
		c.Values = make(map[string]json.RawMessage, len(s.Values))
		for k, v := range s.Values {
			c.Values[k] = cloneRaw(v)
		}
	}
	return c
}

// cloneRaw copies b, keeping nil as nil.
func cloneRaw(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(make([]byte, 0, len(b))), b...)
}
