package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/llm"
)

// ErrExhausted reports a model called more often than its script allows.
var ErrExhausted = errors.New("replay: model called more often than scripted")

// Model plays a Script. It is safe for concurrent use: concurrent calls of
// one agent take that agent's turns in the order the calls arrive.
type Model struct {
	script   *Script
	byAgent  map[string][]int // turn indices per agent, in order
	replies  []llm.Response   // prepared once per turn
	defaults map[string]*playable
	mu       sync.Mutex
	next     map[string]int
	requests []Request
	record   bool
}

// playable is a turn with the response it plays.
type playable struct {
	turn  *Turn
	reply llm.Response
	name  string // how errors name it: "turn 3", "default reply"
}

// Request is a request the model received, kept when recording is on.
type Request struct {
	Agent   string
	Request llm.Request
}

// New returns a model playing the given turns.
func New(turns ...Turn) *Model {
	return NewFromScript(&Script{Turns: turns})
}

// NewFromScript returns a model playing s.
func NewFromScript(s *Script) *Model {
	m := &Model{script: s, byAgent: make(map[string][]int), next: make(map[string]int)}
	m.replies = make([]llm.Response, len(s.Turns))
	for i, t := range s.Turns {
		m.byAgent[agentOf(t.Agent)] = append(m.byAgent[agentOf(t.Agent)], i)
		m.replies[i] = reply(&t, "call_"+strconv.Itoa(i+1)+"_")
	}
	for a, t := range s.Defaults {
		if m.defaults == nil {
			m.defaults = make(map[string]*playable)
		}
		t := t
		m.defaults[agentOf(a)] = &playable{turn: &t, reply: reply(&t, "default_"+agentOf(a)+"_"), name: "default reply"}
	}
	return m
}

// reply prepares the response a turn plays; tool calls without an id get
// idPrefix and their number.
func reply(t *Turn, idPrefix string) llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant}
	if t.Reasoning != "" {
		msg.Parts = append(msg.Parts, llm.Part{Type: llm.PartReasoning, Text: t.Reasoning})
	}
	if t.Content != "" {
		msg.Parts = append(msg.Parts, llm.Text(t.Content))
	}
	for j, c := range t.ToolCalls {
		if c.ID == "" {
			c.ID = idPrefix + strconv.Itoa(j+1)
		}
		if len(c.Args) == 0 {
			c.Args = []byte("{}")
		}
		msg.ToolCalls = append(msg.ToolCalls, c)
	}
	stop := llm.StopEnd
	if len(msg.ToolCalls) > 0 {
		stop = llm.StopToolUse
	}
	return llm.Response{Message: msg, Usage: t.Usage, StopReason: stop, Model: "replay"}
}

// Record makes the model keep every request it receives (see Requests).
func (m *Model) Record() *Model {
	m.mu.Lock()
	m.record = true
	m.mu.Unlock()
	return m
}

// Requests returns the requests received so far, when recording.
func (m *Model) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.requests...)
}

// Remaining returns how many turns have not been played yet.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for agent, idx := range m.byAgent {
		n += max(len(idx)-m.next[agent], 0)
	}
	return n
}

// Info implements llm.Describer.
func (m *Model) Info() llm.Info {
	return llm.Info{Provider: "replay", Name: "script", ContextWindow: m.script.ContextWindow}
}

// Profile is the harness profile the script was recorded with
// (Script.Profile); nil for a script written by hand.
func (m *Model) Profile() json.RawMessage { return m.script.Profile }

func agentOf(name string) string {
	if name == "" {
		return "main"
	}
	return name
}

// take returns the agent's next turn, or its default reply once its turns
// are played; n counts the agent's calls.
func (m *Model) take(agent string, req *llm.Request) (p playable, n int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.record {
		m.requests = append(m.requests, Request{Agent: agent, Request: cloneRequest(req)})
	}
	idx := m.byAgent[agent]
	n = m.next[agent]
	m.next[agent] = n + 1
	if n < len(idx) {
		i := idx[n]
		return playable{turn: &m.script.Turns[i], reply: m.replies[i], name: "turn " + strconv.Itoa(i+1)}, n, nil
	}
	if d := m.defaults[agent]; d != nil {
		return *d, n, nil
	}
	m.next[agent] = n
	return playable{}, n, fmt.Errorf("%w: agent %q made call %d, but the script has %d turn(s) for it", ErrExhausted, agent, n+1, len(idx))
}

// Stream implements llm.Model.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		agent := agentOf(llm.AgentFromContext(ctx))
		p, n, err := m.take(agent, req)
		if err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		t := p.turn
		if err := t.Expect.check(req); err != nil {
			yield(llm.Chunk{}, fmt.Errorf("%s (agent %q): %w", p.name, agent, err))
			return
		}
		if t.Request != nil {
			if err := t.Request.diff(req); err != nil {
				yield(llm.Chunk{}, fmt.Errorf("%s (agent %q): %w", p.name, agent, err))
				return
			}
		}
		if t.Error != "" {
			yield(llm.Chunk{}, fmt.Errorf("replay: %s: %s", p.name, t.Error))
			return
		}
		out := p.reply
		// A fresh slice per call: the caller may edit call arguments.
		out.Message.ToolCalls = slices.Clone(out.Message.ToolCalls)
		if n >= len(m.byAgent[agent]) {
			// A default reply plays again and again: its calls need
			// ids of their own each time.
			for j := range out.Message.ToolCalls {
				out.Message.ToolCalls[j].ID += "_" + strconv.Itoa(n+1)
			}
		}
		if t.Reasoning != "" && !yield(llm.Chunk{Type: llm.ChunkReasoning, Text: t.Reasoning}, nil) {
			return
		}
		if t.Content != "" && !yield(llm.Chunk{Type: llm.ChunkText, Text: t.Content}, nil) {
			return
		}
		if t.DelayMS > 0 {
			timer := time.NewTimer(time.Duration(t.DelayMS) * time.Millisecond)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				yield(llm.Chunk{}, ctx.Err())
				return
			}
		}
		for j := range out.Message.ToolCalls {
			if !yield(llm.Chunk{Type: llm.ChunkToolCall, ToolCall: &out.Message.ToolCalls[j]}, nil) {
				return
			}
		}
		yield(llm.Chunk{Type: llm.ChunkDone, Response: &out}, nil)
	}
}

func cloneRequest(req *llm.Request) llm.Request {
	c := *req
	c.Messages = make([]llm.Message, len(req.Messages))
	for i, msg := range req.Messages {
		c.Messages[i] = msg.Clone()
	}
	c.Tools = append([]llm.ToolSpec(nil), req.Tools...)
	return c
}

// Register makes the scripted model available in r as "replay:FILE", and
// the Inline model as "replay:inline".
func Register(r *llm.Registry) {
	r.Register("replay", func(_ context.Context, path string) (llm.Model, error) {
		if path == "inline" {
			return Inline{}, nil
		}
		s, err := Load(path)
		if err != nil {
			return nil, err
		}
		return NewFromScript(s), nil
	})
}
