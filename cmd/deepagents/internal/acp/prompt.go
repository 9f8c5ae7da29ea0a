package acp

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

// Prompt runs the prompt on the session's thread, streaming the run as
// session updates, asking the client for each approval the run stops
// for, until the run ends or the client cancels it.
func (s *server) Prompt(ctx context.Context, p sdk.PromptRequest) (resp sdk.PromptResponse, err error) {
	ss, err := s.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	if !ss.running.TryLock() {
		switch {
		case ss.ws.Steer == nil:
			return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"sessionId": "a prompt is already running in this session"})
		case ss.working.Load():
			return s.steer(ctx, ss, p)
		}
		// A prompt cancelled, or ending: this one runs after it.
		ss.running.Lock()
	}
	defer ss.running.Unlock()
	defer func() { ss.lastStop, ss.lastErr = resp.StopReason, err }()
	// The run's own context, which the connection's end and session/cancel
	// (Cancel) end. The SDK also ends a prompt's context when another
	// prompt of the session comes: where prompts steer, that prompt joins
	// this one rather than replacing it.
	reqCtx := ctx
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	if ss.ws.Steer == nil {
		defer context.AfterFunc(reqCtx, cancel)()
	}
	ss.setStop(cancel)
	defer ss.setStop(nil)
	if reqCtx.Err() != nil {
		// Cancelled before it started (a session/cancel that came first).
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	ss.working.Store(true)
	s.reaskBackground(ss)
	msg, err := promptMessage(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": err.Error()})
	}
	in := deepagents.Input{ThreadID: string(ss.id), Messages: []llm.Message{msg}}
	title := msg.Text()
	// The calls announced, by id, across the runs of the prompt (a call
	// announced before an approval runs after it).
	calls := map[string]*call{}
	for {
		end, runErr := s.run(ctx, ss, in, title, calls)
		ss.working.Store(false) // a prompt sent from now on runs after this one
		if ctx.Err() != nil {
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		}
		switch end.Status {
		case deepagents.StatusCompleted:
			return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
		case deepagents.StatusInterrupted:
			ds, err := s.decide(ctx, ss, end.Interrupts, calls)
			if ctx.Err() != nil {
				return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
			}
			if err != nil {
				return sdk.PromptResponse{}, err
			}
			in = deepagents.Input{ThreadID: string(ss.id), Decisions: ds}
			ss.working.Store(true)
			continue
		case deepagents.StatusFailed:
			// The event carries the error's text only.
			if strings.HasPrefix(end.Error, deepagents.ErrMaxSteps.Error()) {
				return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests}, nil
			}
			return sdk.PromptResponse{}, fmt.Errorf("the run failed: %s", end.Error)
		}
		if runErr == nil {
			runErr = errors.New("the run ended without reporting its end")
		}
		return sdk.PromptResponse{}, runErr
	}
}

// run streams one run of the session's agent to the client and returns
// its end (a zero event when it failed before it started, with the
// error).
func (s *server) run(ctx context.Context, ss *session, in deepagents.Input, title string, calls map[string]*call) (deepagents.Event, error) {
	var end deepagents.Event
	var runErr error
	var used deepagents.UsageTree
	for e, err := range ss.ws.Stream(ctx, in) {
		if err != nil {
			runErr = err
			break
		}
		used.Add(e)
		if len(e.Namespace) > 0 {
			continue // a subagent's: its task call stands for it
		}
		var u *sdk.SessionUpdate
		var more []sdk.SessionUpdate
		switch e.Type {
		case deepagents.EventRunStart:
			if !ss.started && ss.ws.Started != nil {
				ss.ws.Started(ctx, e.ThreadID, title)
			}
			ss.started = true
		case deepagents.EventTextDelta:
			u = ptr(sdk.UpdateAgentMessageText(e.Delta))
		case deepagents.EventReasoningDelta:
			u = ptr(sdk.UpdateAgentThoughtText(e.Delta))
		case deepagents.EventMessage:
			// The model's calls are announced as it asks for them, pending
			// until they run (or an approval decides on them).
			if e.Message != nil {
				for _, tc := range e.Message.ToolCalls {
					if calls[tc.ID] == nil {
						c := newCall(ss.ws, tc.ID, tc.Name, tc.Args)
						calls[tc.ID] = c
						more = append(more, c.start(sdk.ToolCallStatusPending))
					}
				}
			}
		case deepagents.EventToolCall:
			// The call runs now.
			if c := calls[e.ToolCallID]; c != nil {
				u = ptr(sdk.UpdateToolCall(c.id, sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
			} else {
				c := newCall(ss.ws, e.ToolCallID, e.Name, e.Args)
				calls[e.ToolCallID] = c
				u = ptr(c.start(sdk.ToolCallStatusInProgress))
			}
		case deepagents.EventToolResult:
			c := calls[e.ToolCallID]
			if c == nil {
				c = newCall(ss.ws, e.ToolCallID, e.Name, nil)
			}
			u = ptr(c.finish(e.Content, e.IsError))
		case deepagents.EventState:
			if raw, ok := e.Values[todos.Value]; ok {
				if list, err := todos.Parse(raw); err == nil {
					u = ptr(plan(list))
				}
			}
		case deepagents.EventRunEnd:
			end = e
		}
		if u != nil {
			more = append(more, *u)
		}
		for _, u := range more {
			if err := s.update(ctx, ss.id, u); err != nil && ctx.Err() == nil {
				return end, err
			}
		}
	}
	if end.ThreadID != "" && ss.ws.Ended != nil {
		ss.ws.Ended(ctx, end, &used)
	}
	return end, runErr
}

// Permission options: the ids the client answers with.
const (
	optAllow       = "allow"
	optAllowAlways = "allow_always"
	optReject      = "reject"
)

// decide asks the client about each pending call, in order, but for the
// tools allowed always in this session, and returns the decisions.
func (s *server) decide(ctx context.Context, ss *session, reqs []deepagents.ActionRequest, calls map[string]*call) ([]deepagents.Decision, error) {
	ds := make([]deepagents.Decision, 0, len(reqs))
	for _, r := range reqs {
		c := calls[r.ToolCallID]
		if c == nil {
			c = newCall(ss.ws, r.ToolCallID, r.Tool, r.Args)
		}
		d, err := s.ask(ctx, ss, r, c)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// ask asks the client about one pending call, c as it sees it, unless its
// tool is allowed always in this session, and returns the decision.
func (s *server) ask(ctx context.Context, ss *session, r deepagents.ActionRequest, c *call) (deepagents.Decision, error) {
	canApprove := allows(r, deepagents.DecisionApprove)
	if canApprove && ss.allowedAlways(r.Tool) {
		return deepagents.Decision{Type: deepagents.DecisionApprove}, nil
	}
	var opts []sdk.PermissionOption
	if canApprove {
		opts = append(opts,
			sdk.PermissionOption{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: optAllow},
			sdk.PermissionOption{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Always allow " + r.Tool + " in this session", OptionId: optAllowAlways})
	}
	opts = append(opts, sdk.PermissionOption{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: optReject})
	update := c.update(sdk.ToolCallStatusPending)
	if r.Description != "" {
		update.Title = sdk.Ptr(clipTitle(c.title + " — " + firstLine(r.Description)))
	}
	resp, err := s.connection().RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: ss.id, ToolCall: update, Options: opts})
	if err != nil {
		return deepagents.Decision{}, fmt.Errorf("asking the client's permission for %s: %w", r.Tool, err)
	}
	if resp.Outcome.Selected == nil {
		// Cancelled: the prompt was, or the client gave up.
		return deepagents.Decision{}, errors.New("the permission request was cancelled")
	}
	switch string(resp.Outcome.Selected.OptionId) {
	case optAllowAlways, optAllow:
		if !canApprove {
			return deepagents.Decision{}, fmt.Errorf("the client chose an option it was not offered for %s", r.Tool)
		}
		if string(resp.Outcome.Selected.OptionId) == optAllowAlways {
			ss.allowAlways(r.Tool)
		}
		return deepagents.Decision{Type: deepagents.DecisionApprove}, nil
	case optReject:
		return deepagents.Decision{Type: deepagents.DecisionReject, Message: RejectedMessage}, nil
	}
	return deepagents.Decision{}, fmt.Errorf("the client answered %s with an unknown option %q", r.Tool, resp.Outcome.Selected.OptionId)
}

// RejectedMessage is what the agent (or the background subagent) is told
// of a call the client rejected.
const RejectedMessage = "rejected in the editor"

// allows reports whether the request allows the decision (all decisions
// when it lists none).
func allows(r deepagents.ActionRequest, d deepagents.DecisionType) bool {
	if len(r.Allowed) == 0 {
		return true
	}
	for _, a := range r.Allowed {
		if a == d {
			return true
		}
	}
	return false
}

// promptMessage is the user message of a prompt's content: text as it
// is, an embedded resource's text in a <context> block naming its URI, a
// resource link as a Markdown link to it, an image as an image part.
func promptMessage(blocks []sdk.ContentBlock) (llm.Message, error) {
	m := llm.Message{Role: llm.RoleUser}
	var text []string
	flush := func() {
		if len(text) > 0 {
			m.Parts = append(m.Parts, llm.Text(strings.Join(text, "\n\n")))
			text = nil
		}
	}
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			text = append(text, b.Text.Text)
		case b.ResourceLink != nil:
			l := b.ResourceLink
			text = append(text, fmt.Sprintf("[%s](%s)", l.Name, l.Uri))
		case b.Resource != nil:
			switch r := b.Resource.Resource; {
			case r.TextResourceContents != nil:
				text = append(text, fmt.Sprintf("<context uri=%q>\n%s\n</context>", r.TextResourceContents.Uri, r.TextResourceContents.Text))
			case r.BlobResourceContents != nil:
				text = append(text, fmt.Sprintf("(a binary resource, %s, not included)", r.BlobResourceContents.Uri))
			}
		case b.Image != nil:
			data, err := base64.StdEncoding.DecodeString(b.Image.Data)
			if err != nil {
				return m, fmt.Errorf("an image's data is not base64: %w", err)
			}
			flush()
			m.Parts = append(m.Parts, llm.Part{Type: llm.PartImage, MIMEType: b.Image.MimeType, Data: data})
		case b.Audio != nil:
			return m, errors.New("audio is not supported")
		}
	}
	flush()
	if len(m.Parts) == 0 {
		return m, errors.New("the prompt is empty")
	}
	return m, nil
}

// plan is the plan update of a todo list.
func plan(list []todos.Todo) sdk.SessionUpdate {
	entries := make([]sdk.PlanEntry, 0, len(list))
	for _, t := range list {
		st := sdk.PlanEntryStatusPending
		switch t.Status {
		case todos.InProgress:
			st = sdk.PlanEntryStatusInProgress
		case todos.Completed:
			st = sdk.PlanEntryStatusCompleted
		}
		entries = append(entries, sdk.PlanEntry{Content: t.Content, Priority: sdk.PlanEntryPriorityMedium, Status: st})
	}
	return sdk.UpdatePlan(entries...)
}

func ptr[T any](v T) *T { return &v }

// firstLine is s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// steer gives a prompt sent while another runs to the run working (its
// next model request has it, or its final answer's end: the message is
// saved before this returns to the agent's loop), and answers once the
// prompt it joined ends, as it ended.
func (s *server) steer(ctx context.Context, ss *session, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	msg, err := promptMessage(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": err.Error()})
	}
	if err := ss.ws.Steer(ctx, string(ss.id), msg.Text()); err != nil {
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"steer": err.Error()})
	}
	ss.running.Lock() // the prompt joined has ended
	defer ss.running.Unlock()
	if ss.lastErr != nil || ss.lastStop == "" {
		return sdk.PromptResponse{}, fmt.Errorf("the prompt this one joined failed: %w", cmp.Or(ss.lastErr, errors.New("no stop reason")))
	}
	return sdk.PromptResponse{StopReason: ss.lastStop}, nil
}
