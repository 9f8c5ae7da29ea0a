package replay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/deepagents-go/deepagents/llm"
)

// RecordedRequest identifies the request a recorded turn answered, compactly:
// hashes of the system prompt and the whole conversation, the tool names,
// and the last message in full. A recording therefore grows linearly with
// the run, not with the square of it.
type RecordedRequest struct {
	SystemSHA256   string       `json:"system_sha256"`
	Tools          []string     `json:"tools,omitempty"`
	MessageCount   int          `json:"message_count"`
	MessagesSHA256 string       `json:"messages_sha256"`
	LastMessage    *llm.Message `json:"last_message,omitempty"`
}

// ErrRequestMismatch reports, in replay, a request that differs from the
// one recorded for the turn.
var ErrRequestMismatch = errors.New("replay: request differs from the recording")

func digest(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func recordRequest(req *llm.Request) *RecordedRequest {
	// Message IDs are new in every run and never reach a provider: a
	// recording identifies the conversation without them.
	msgs := make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		m.ID = ""
		msgs[i] = m
	}
	r := &RecordedRequest{
		SystemSHA256:   digest(req.System),
		MessageCount:   len(msgs),
		MessagesSHA256: digest(msgs),
	}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	if n := len(msgs); n > 0 {
		last := msgs[n-1].Clone()
		r.LastMessage = &last
	}
	return r
}

// diff reports how req differs from the recorded request, or nil.
func (r *RecordedRequest) diff(req *llm.Request) error {
	got := recordRequest(req)
	switch {
	case got.SystemSHA256 != r.SystemSHA256:
		return fmt.Errorf("%w: the system prompt changed", ErrRequestMismatch)
	case !slices.Equal(got.Tools, r.Tools):
		return fmt.Errorf("%w: tools %v, recorded %v", ErrRequestMismatch, got.Tools, r.Tools)
	case got.MessageCount != r.MessageCount:
		return fmt.Errorf("%w: %d messages, recorded %d", ErrRequestMismatch, got.MessageCount, r.MessageCount)
	case got.MessagesSHA256 == r.MessagesSHA256:
		return nil
	case r.LastMessage != nil && digest(got.LastMessage) != digest(r.LastMessage):
		gb, _ := json.Marshal(got.LastMessage)
		rb, _ := json.Marshal(r.LastMessage)
		return fmt.Errorf("%w: the last message is %s, recorded %s", ErrRequestMismatch, clipText(string(gb), 300), clipText(string(rb), 300))
	}
	return fmt.Errorf("%w: an earlier message changed", ErrRequestMismatch)
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Recording records every request and response of the models it wraps into
// one script file, which --model replay:FILE (or Load) plays back offline.
// The file is rewritten after every call, so a run that dies keeps what it
// recorded.
type Recording struct {
	path string

	mu     sync.Mutex
	script Script
}

// NewRecording returns a recording that writes to path.
func NewRecording(path string) *Recording {
	return &Recording{path: path, script: Script{Turns: []Turn{}}}
}

// Wrap returns a model that passes calls to m and records them. The first
// wrapped model's context window is recorded as the script's.
func (r *Recording) Wrap(m llm.Model) llm.Model {
	r.mu.Lock()
	if r.script.ContextWindow == 0 {
		r.script.ContextWindow = llm.Describe(m).ContextWindow
	}
	r.mu.Unlock()
	return &recorded{rec: r, model: m}
}

// SetProfile records the harness profile the recorded agent runs with,
// as JSON (Script.Profile).
func (r *Recording) SetProfile(profile json.RawMessage) {
	r.mu.Lock()
	r.script.Profile = profile
	r.mu.Unlock()
}

// NewRecorder returns m recording into a new file at path.
func NewRecorder(m llm.Model, path string) llm.Model {
	return NewRecording(path).Wrap(m)
}

type recorded struct {
	rec   *Recording
	model llm.Model
}

// Profile is the profile the recorded model was recorded with, when it
// plays a recording itself (Model.Profile): a replay recorded again keeps
// it.
func (r *recorded) Profile() json.RawMessage {
	if p, ok := r.model.(interface{ Profile() json.RawMessage }); ok {
		return p.Profile()
	}
	return nil
}

// Info implements llm.Describer with the recorded model's information.
func (r *recorded) Info() llm.Info { return llm.Describe(r.model) }

// Stream implements llm.Model.
func (r *recorded) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	rec := recordRequest(req)
	return func(yield func(llm.Chunk, error) bool) {
		for c, err := range r.model.Stream(ctx, req) {
			if err == nil && c.Type == llm.ChunkDone && c.Response != nil {
				if werr := r.rec.add(ctx, rec, c.Response); werr != nil {
					yield(llm.Chunk{}, werr)
					return
				}
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

func (r *Recording) add(ctx context.Context, req *RecordedRequest, resp *llm.Response) error {
	t := Turn{Agent: llm.AgentFromContext(ctx), Usage: resp.Usage, Request: req}
	if t.Agent == "main" {
		t.Agent = ""
	}
	for _, p := range resp.Message.Parts {
		switch p.Type {
		case llm.PartText:
			t.Content += p.Text
		case llm.PartReasoning:
			t.Reasoning += p.Text
		}
	}
	for _, c := range resp.Message.ToolCalls {
		c.Args = append(json.RawMessage(nil), c.Args...)
		t.ToolCalls = append(t.ToolCalls, c)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.script.Turns = append(r.script.Turns, t)
	return r.flush()
}

// flush writes the script atomically.
func (r *Recording) flush() error {
	b, err := json.MarshalIndent(&r.script, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.path), ".record-*")
	if err != nil {
		return fmt.Errorf("replay: recording: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("replay: recording: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("replay: recording: %w", err)
	}
	if err := os.Rename(tmp.Name(), r.path); err != nil {
		return fmt.Errorf("replay: recording: %w", err)
	}
	return nil
}
