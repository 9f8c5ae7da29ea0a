package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
)

// A background subagent (middleware/subagents/background) that stops to
// ask for approval parks: its request waits for whoever drives the
// top-level thread that started it. On the LangGraph API the request
// shows on that thread as an interrupt in the human-in-the-loop shape of
// a foreground one, with the interrupt id bg:TASK_ID (and a task of that
// id in the state): the thread reads interrupted while its own run is
// idle, and a run with command.resume answers it when the thread waits
// on no request of its own. Such a run does not run the agent: it
// answers the task (the subagent resumes on its own) and ends at once
// with the thread's values; the main agent collects the task's result in
// a later run (check_async_task, wait_async_task).

// bgPrefix starts the interrupt id of a background task's request.
const bgPrefix = "bg:"

// bgNode names, in a thread's next and tasks, a background task's pause.
const bgNode = "background_task"

// bgApproval is a background task's waiting request, and the middleware
// that answers it.
type bgApproval struct {
	background.Approval
	m *background.Middleware
}

// backgroundOf lists the background middleware of the assistants'
// agents, each once.
func backgroundOf(as []*assistantEntry) []*background.Middleware {
	var out []*background.Middleware
	for _, a := range as {
		for _, m := range a.Agent.Middleware() {
			if b, ok := m.(*background.Middleware); ok && !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	return out
}

// bgApprovals returns the requests the background tasks of a thread wait
// on, oldest task first. A task two assistants' middleware both find
// (through the Saver) is answered by the one that holds it in this
// process (it parked it, or resumed it already: then none lists it), or
// after a restart by the first.
func (s *Server) bgApprovals(ctx context.Context, threadID string) ([]bgApproval, error) {
	var out []bgApproval
	var errs []error
	heldElsewhere := func(m *background.Middleware, taskID string) bool {
		return !m.Holds(taskID) && slices.ContainsFunc(s.bg, func(o *background.Middleware) bool { return o != m && o.Holds(taskID) })
	}
	for _, m := range s.bg {
		as, err := m.Approvals(ctx, threadID)
		if err != nil {
			errs = append(errs, err)
		}
		for _, a := range as {
			if heldElsewhere(m, a.TaskID) {
				// Its saved request, read by another assistant's agent:
				// the one that holds the task answers it (it may have
				// done so already).
				continue
			}
			i := slices.IndexFunc(out, func(b bgApproval) bool { return b.TaskID == a.TaskID })
			switch {
			case i < 0:
				out = append(out, bgApproval{a, m})
			case out[i].Since.IsZero() && !a.Since.IsZero():
				out[i] = bgApproval{a, m}
			}
		}
	}
	return out, errors.Join(errs...)
}

// bgWaiting is bgApprovals for showing: a failure reads as none (and is
// logged).
func (s *Server) bgWaiting(ctx context.Context, threadID string) []bgApproval {
	if len(s.bg) == 0 {
		return nil
	}
	as, err := s.bgApprovals(ctx, threadID)
	if err != nil {
		s.log.Warn("server: listing a thread's background approvals", "thread", threadID, "err", err)
	}
	return as
}

// bgWaitingAt is bgWaiting for a thread whose head snap is loaded
// already: an idle thread whose head records no local task that has not
// ended has none waiting (its last run saved every record it made), and
// costs no further read; listing n threads so loads n heads, not n more
// per assistant and task. A thread that is not idle (a run may not have
// saved its records yet) is read through.
func (s *Server) bgWaitingAt(ctx context.Context, th *checkpoint.Thread, snap *checkpoint.Snapshot) []bgApproval {
	if len(s.bg) == 0 {
		return nil
	}
	if th.Status == checkpoint.StatusIdle && !bgLive(snap.Values) {
		return nil
	}
	return s.bgWaiting(ctx, th.ID)
}

// bgLive reports whether values record a local background task (with a
// thread of its own, so able to stop for approval) that has not ended;
// true when the records cannot be read, so that Approvals decides.
func bgLive(values map[string]json.RawMessage) bool {
	tasks, err := background.Tasks(values)
	if err != nil {
		return true
	}
	for _, t := range tasks {
		if t.Remote || t.ThreadID == "" {
			continue
		}
		switch t.Status {
		case background.Success, background.Error, background.Cancelled, background.Interrupted,
			background.Timeout, background.Lost, background.Denied:
		default:
			return true
		}
	}
	return false
}

// bgInterrupt is a background task's request as an interrupt: each
// action request names the task and the subagent (task_id, subagent,
// and its description).
func bgInterrupt(a background.Approval) langgraph.Interrupt {
	v := interruptValueOf(a.Requests, func(r agent.ActionRequest, wr *wireActionRequest) {
		wr.TaskID, wr.Subagent = a.TaskID, a.Subagent
		head := fmt.Sprintf("Background task %s (subagent %s", a.TaskID, a.Subagent)
		if a.Task != "" {
			head += ": " + a.Task
		}
		head += ") waits for approval."
		if wr.Description != "" {
			head += "\n\n" + wr.Description
		}
		wr.Description = head
	})
	return langgraph.Interrupt{ID: bgPrefix + a.TaskID, Value: v}
}

// bgTask is a background task's request as a task of the thread's state.
func bgTask(a background.Approval) langgraph.Task {
	return langgraph.Task{ID: bgPrefix + a.TaskID, Name: bgNode, Path: []string{"__pregel_pull", bgNode}, Interrupts: []langgraph.Interrupt{bgInterrupt(a)}}
}

// answerBackground answers the waiting background approvals of a thread
// with command.resume: a value {"decisions": [...]} when one task waits,
// or a map of such values keyed by interrupt id (bg:TASK_ID), answering
// the tasks it names. Every answer is checked before any is given, so a
// wrong one answers none. The run it returns has ended at once, with the
// thread's values.
func (s *Server) answerBackground(ctx context.Context, threadID string, wa *langgraph.Assistant, q *langgraph.RunCreate, modes map[langgraph.StreamMode]bool, waiting []bgApproval) (*run, *Refusal) {
	answers, no := bgAnswers(q.Command.Resume, waiting)
	if no != nil {
		return nil, no
	}
	var given []string
	for _, ans := range answers {
		if err := ans.a.m.Answer(ctx, threadID, ans.a.TaskID, ans.ds); err != nil {
			// Checked, but refused by the task now (answered meanwhile,
			// say): those answered before it stay answered, and the
			// refusal names them.
			if len(given) > 0 {
				err = fmt.Errorf("%w (answered already: %s)", err, strings.Join(given, ", "))
			}
			if errors.Is(err, background.ErrNotWaiting) {
				return nil, refuse(http.StatusConflict, "Cannot resume background task %s: %v", ans.a.TaskID, err)
			}
			return nil, invalidField("command.resume", err)
		}
		given = append(given, bgPrefix+ans.a.TaskID)
	}
	now := time.Now().UTC()
	metadata := q.Metadata
	if metadata == nil {
		metadata = map[string]any{}
	}
	rn := &run{
		id: newUUID(), threadID: threadID, assistantID: wa.AssistantID, multitask: q.MultitaskStrategy, createdAt: now,
		metadata: metadata, modes: modes, cancel: func(error) {}, finished: make(chan struct{}),
		status: langgraph.RunPending, updatedAt: now, changed: make(chan struct{}), lastValues: -1,
	}
	s.runs.register(rn)
	rn.emit("metadata", map[string]any{"run_id": rn.id, "thread_id": threadID, "attempt": 1})
	tr := translator{s: s, rn: rn, streamed: map[string]bool{}}
	if v := tr.values(ctx, ""); v != nil {
		if rest := s.bgWaiting(ctx, threadID); len(rest) > 0 {
			v[langgraph.InterruptKey] = bgInterrupts(rest)
		}
		if modes[langgraph.StreamValues] {
			rn.emitState(v)
		}
	}
	s.end(rn, langgraph.RunSuccess, "")
	close(rn.finished)
	return rn, nil
}

// bgInterrupts are the interrupts of the waiting background tasks.
func bgInterrupts(as []bgApproval) []langgraph.Interrupt {
	out := make([]langgraph.Interrupt, len(as))
	for i, a := range as {
		out[i] = bgInterrupt(a.Approval)
	}
	return out
}

// bgAnswer is the decisions for one waiting task.
type bgAnswer struct {
	a  bgApproval
	ds []agent.Decision
}

// bgAnswers reads command.resume against the waiting tasks.
func bgAnswers(raw json.RawMessage, waiting []bgApproval) ([]bgAnswer, *Refusal) {
	ids := make([]string, len(waiting))
	for i, a := range waiting {
		ids[i] = bgPrefix + a.TaskID
	}
	var byID map[string]json.RawMessage
	if err := json.Unmarshal(raw, &byID); err != nil {
		return nil, invalidField("command.resume", errors.New(`command.resume must be {"decisions": [...]}, or an object of them keyed by interrupt id`))
	}
	if _, plain := byID["decisions"]; plain {
		if len(waiting) > 1 {
			return nil, invalidField("command.resume", fmt.Errorf("%d background tasks wait for approval (%s): resume with an object keyed by interrupt id, {%q: {\"decisions\": [...]}, ...}", len(waiting), strings.Join(ids, ", "), ids[0]))
		}
		byID = map[string]json.RawMessage{ids[0]: raw}
	}
	if len(byID) == 0 {
		return nil, invalidField("command.resume", errors.New(`command.resume is empty: give {"decisions": [...]}`))
	}
	var out []bgAnswer
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		i := slices.Index(ids, id)
		if i < 0 {
			return nil, invalidField("command.resume", fmt.Errorf("no background task waits as %q; waiting: %s", clip.Text(id, 100), strings.Join(ids, ", ")))
		}
		a := waiting[i]
		ds, err := decisions(byID[id], len(a.Requests))
		if err != nil {
			return nil, invalidField("command.resume", fmt.Errorf("%s: %w", id, err))
		}
		if err := checkDecisions(a.Requests, ds); err != nil {
			return nil, invalidField("command.resume", fmt.Errorf("%s: %w", id, err))
		}
		out = append(out, bgAnswer{a, ds})
	}
	return out, nil
}

// checkDecisions checks each decision's type against its request.
func checkDecisions(reqs []agent.ActionRequest, ds []agent.Decision) error {
	for i, d := range ds {
		switch d.Type {
		case agent.DecisionApprove, agent.DecisionReject, agent.DecisionEdit:
		default:
			return fmt.Errorf("decision %d: unknown decision type %q (want approve, edit or reject)", i+1, clip.Text(string(d.Type), 40))
		}
		if r := reqs[i]; len(r.Allowed) > 0 && !slices.Contains(r.Allowed, d.Type) {
			return fmt.Errorf("decision %d: %s is not allowed for %s (allowed: %v)", i+1, d.Type, r.Tool, r.Allowed)
		}
	}
	return nil
}
