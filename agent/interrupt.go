package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// DecisionType is a human's answer to an [ActionRequest].
type DecisionType string

// Decision types.
const (
	DecisionApprove DecisionType = "approve" // run the call as the model asked
	DecisionEdit    DecisionType = "edit"    // run it with other arguments
	DecisionReject  DecisionType = "reject"  // do not run it; tell the model why
)

// ActionRequest asks a human to decide on one pending tool call.
type ActionRequest struct {
	ToolCallID  string          `json:"tool_call_id"`
	Tool        string          `json:"tool"`
	Args        json.RawMessage `json:"args"`
	Description string          `json:"description,omitempty"`
	// Allowed lists the decisions that may be taken.
	Allowed []DecisionType `json:"allowed_decisions"`
	// Namespace is the path of the agent that asked: empty for the main
	// agent, a subagent's path otherwise.
	Namespace []string `json:"namespace,omitempty"`
}

// Decision answers one ActionRequest.
type Decision struct {
	Type DecisionType `json:"type"`
	// Args replaces the call's arguments (edit).
	Args json.RawMessage `json:"args,omitempty"`
	// Message tells the model why the call was rejected (reject).
	Message string `json:"message,omitempty"`
}

// RejectedToolCall begins the result the model gets for a call a human
// rejected; the human's message, when given, follows it.
const RejectedToolCall = "The user rejected this tool call"

// rejection is the result of a rejected call.
func rejection(d Decision) ToolResult {
	text := RejectedToolCall + "."
	if d.Message != "" {
		text = RejectedToolCall + ": " + d.Message
	}
	return ToolResult{Content: text, IsError: true}
}

// Errors about decisions passed to Resume.
var (
	ErrNotInterrupted   = errors.New("agent: thread is not waiting for decisions")
	ErrDecisionCount    = errors.New("agent: wrong number of decisions")
	ErrDecisionNotAllow = errors.New("agent: decision not allowed for this action")
	// ErrDecisionArgs: an edit decision's arguments do not fit the tool.
	ErrDecisionArgs = errors.New("agent: edited arguments do not fit the tool")
)

// InterruptError stops a run to wait for human decisions. Middleware returns
// it from AfterModel; a tool returns it (a subagent's task tool, for one) to
// surface its own pending requests. The run ends with status interrupted,
// and [Agent.Resume] continues it.
type InterruptError struct {
	Requests []ActionRequest
}

// Error lists the tools awaiting approval.
func (e *InterruptError) Error() string {
	names := make([]string, len(e.Requests))
	for i, r := range e.Requests {
		names[i] = r.Tool
	}
	return fmt.Sprintf("agent: interrupted for approval of %s", strings.Join(names, ", "))
}

// checkDecisions reports whether decisions answer requests one for one.
func checkDecisions(requests []ActionRequest, decisions []Decision) error {
	if len(decisions) != len(requests) {
		return fmt.Errorf("%w: %d pending action(s), %d decision(s) given", ErrDecisionCount, len(requests), len(decisions))
	}
	for i, d := range decisions {
		r := requests[i]
		switch d.Type {
		case DecisionApprove, DecisionReject:
		case DecisionEdit:
			var obj map[string]json.RawMessage
			if json.Unmarshal(d.Args, &obj) != nil {
				return fmt.Errorf("agent: decision %d (edit %s): new arguments must be a JSON object", i+1, r.Tool)
			}
		default:
			return fmt.Errorf("agent: decision %d: unknown decision type %q (want approve, edit or reject)", i+1, d.Type)
		}
		if len(r.Allowed) > 0 && !slices.Contains(r.Allowed, d.Type) {
			return fmt.Errorf("%w: %s for %s (allowed: %v)", ErrDecisionNotAllow, d.Type, r.Tool, r.Allowed)
		}
	}
	return nil
}

// PendingRequests returns the action requests a thread waits on as of a
// checkpoint, from the checkpoint's Meta: those of the run that stopped
// there for decisions, in the order Resume expects their decisions; nil
// when that run did not stop for decisions.
func PendingRequests(meta json.RawMessage) ([]ActionRequest, error) {
	if len(meta) == 0 {
		return nil, nil
	}
	var m runMeta
	if err := json.Unmarshal(meta, &m); err != nil {
		return nil, fmt.Errorf("agent: checkpoint metadata: %w: %v", checkpoint.ErrCorrupt, err)
	}
	if m.Status != StatusInterrupted {
		return nil, nil
	}
	var out []ActionRequest
	for _, p := range m.Interrupts {
		out = append(out, p.Requests...)
	}
	return out, nil
}
