package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/deepagents-go/deepagents/llm"
)

// Script is a scripted conversation: the turns a model plays.
type Script struct {
	// ContextWindow is the context window the model reports (in tokens);
	// zero leaves it unknown.
	ContextWindow int `json:"context_window,omitempty"`
	// Profile is the harness profile (package profile's Profile, as JSON)
	// the recording was made with, so that a replay can make the same
	// requests; the model plays no part in choosing it (Model.Profile).
	Profile json.RawMessage `json:"profile,omitempty"`
	Turns   []Turn          `json:"turns"`
	// Defaults holds, by agent name, a reply played whenever that agent
	// has no scripted turn left: a summarizer or a subagent that answers
	// alike however often it is called. Its Agent field is ignored.
	Defaults map[string]Turn `json:"defaults,omitempty"`
}

// Turn is one scripted model response.
type Turn struct {
	// Agent names the agent whose call this turn answers; "" means "main".
	Agent     string         `json:"agent,omitempty"`
	Content   string         `json:"content,omitempty"`
	Reasoning string         `json:"reasoning,omitempty"`
	ToolCalls []llm.ToolCall `json:"tool_calls,omitempty"`
	Usage     llm.Usage      `json:"usage,omitzero"`
	// Error, when set, makes the call fail with this message instead.
	Error string `json:"error,omitempty"`
	// DelayMS makes the call stream its text and then wait this many
	// milliseconds (or until cancelled) before it ends: a slow model, for
	// tests of cancellation and of streams joined while a run goes on.
	DelayMS int `json:"delay_ms,omitempty"`
	// Expect checks the request this turn answers.
	Expect *Expect `json:"expect,omitempty"`
	// Request, in a recording, is the request the turn answered; replay
	// fails the call when the request it gets differs.
	Request *RecordedRequest `json:"request,omitempty"`
}

// Expect describes what the request a turn answers must look like. Every
// listed string must hold; an unmet expectation fails the call and says
// which.
type Expect struct {
	SystemContains      []string `json:"system_contains,omitempty"`
	SystemExclude       []string `json:"system_exclude,omitempty"`
	MessagesContain     []string `json:"messages_contain,omitempty"`
	MessagesExclude     []string `json:"messages_exclude,omitempty"`
	LastMessageContains []string `json:"last_message_contains,omitempty"`
	ToolsInclude        []string `json:"tools_include,omitempty"`
	ToolsExclude        []string `json:"tools_exclude,omitempty"`
	// NoToolCalls, when set, is whether the request must ask for an
	// answer without tool calls (llm.Request.NoToolCalls).
	NoToolCalls *bool `json:"no_tool_calls,omitempty"`
}

// ErrExpectation reports a request that did not meet a turn's Expect.
var ErrExpectation = errors.New("replay: request does not meet the script's expectation")

// Parse reads a script in the JSON format of the package comment.
func Parse(data []byte) (*Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("replay: parsing script: %w", err)
	}
	for i, t := range s.Turns {
		for j, c := range t.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("replay: turn %d, tool call %d: missing name", i+1, j+1)
			}
		}
	}
	for a, t := range s.Defaults {
		for j, c := range t.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("replay: default reply of %q, tool call %d: missing name", a, j+1)
			}
		}
	}
	return &s, nil
}

// Load reads a script file.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// check reports the first unmet expectation.
func (e *Expect) check(req *llm.Request) error {
	if e == nil {
		return nil
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrExpectation}, args...)...)
	}
	for _, s := range e.SystemContains {
		if !strings.Contains(req.System, s) {
			return fail("system prompt does not contain %q", s)
		}
	}
	for _, s := range e.SystemExclude {
		if strings.Contains(req.System, s) {
			return fail("system prompt contains %q", s)
		}
	}
	for _, s := range e.MessagesContain {
		if !anyMessageContains(req.Messages, s) {
			return fail("no message contains %q", s)
		}
	}
	for _, s := range e.MessagesExclude {
		if anyMessageContains(req.Messages, s) {
			return fail("a message contains %q", s)
		}
	}
	for _, s := range e.LastMessageContains {
		if len(req.Messages) == 0 || !messageContains(&req.Messages[len(req.Messages)-1], s) {
			return fail("the last message does not contain %q", s)
		}
	}
	for _, name := range e.ToolsInclude {
		if !hasTool(req.Tools, name) {
			return fail("tool %q is not offered", name)
		}
	}
	if e.NoToolCalls != nil && *e.NoToolCalls != req.NoToolCalls {
		return fail("the request's no_tool_calls is %v", req.NoToolCalls)
	}
	for _, name := range e.ToolsExclude {
		if hasTool(req.Tools, name) {
			return fail("tool %q is offered", name)
		}
	}
	return nil
}

func anyMessageContains(msgs []llm.Message, s string) bool {
	for i := range msgs {
		if messageContains(&msgs[i], s) {
			return true
		}
	}
	return false
}

// messageContains looks in a message's text, reasoning and tool call
// arguments.
func messageContains(m *llm.Message, s string) bool {
	for _, p := range m.Parts {
		if strings.Contains(p.Text, s) {
			return true
		}
	}
	for _, c := range m.ToolCalls {
		if strings.Contains(string(c.Args), s) || strings.Contains(c.Name, s) {
			return true
		}
	}
	return false
}

func hasTool(tools []llm.ToolSpec, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}
