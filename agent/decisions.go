package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/tool"
)

// This file holds what a run does with human decisions: applying them on
// resume, enforcing them on the calls, and interrupting for them.

// applyDecisions matches resume decisions to the pending action requests.
func (r *run) applyDecisions(decisions []Decision) error {
	var all []ActionRequest
	for _, p := range r.pending {
		all = append(all, p.Requests...)
	}
	if len(all) == 0 {
		return fmt.Errorf("%w: thread %s", ErrNotInterrupted, r.rt.threadID)
	}
	if err := checkDecisions(all, decisions); err != nil {
		return err
	}
	if err := r.checkEdits(all, decisions); err != nil {
		return err
	}
	r.rt.decisions = make(map[string]Decision)
	i := 0
	for _, p := range r.pending {
		ds := decisions[i : i+len(p.Requests)]
		i += len(p.Requests)
		if p.Owner == "" {
			for j, req := range p.Requests {
				r.rt.decisions[req.ToolCallID] = ds[j]
			}
			continue
		}
		if r.nested == nil {
			r.nested = make(map[string][]Decision)
		}
		r.nested[p.Owner] = ds
	}
	return nil
}

// keepAnswers appends the results a gate gave calls of the turn at idx
// without running them.
func (r *run) keepAnswers(ctx context.Context, turn *Turn, idx int) {
	if len(turn.answered) == 0 {
		return
	}
	var calls []llm.ToolCall
	for _, c := range pendingCalls(r.rt.state.Messages, idx) {
		if _, ok := turn.answered[c.ID]; ok {
			calls = append(calls, c)
		}
	}
	results, _ := r.execTools(ctx, turn, calls)
	for _, res := range results {
		if res != nil {
			r.rt.appendMessages(*res)
		}
	}
}

// enforceDecisions applies the decisions on this agent's own pending calls
// to the turn: an edited call gets its new arguments, a rejected one its
// rejection as result, so it never runs. Approved calls run as they are.
func (r *run) enforceDecisions(turn *Turn) {
	for i := range turn.Message.ToolCalls {
		call := &turn.Message.ToolCalls[i]
		d, ok := r.rt.decisions[call.ID]
		if !ok {
			continue
		}
		switch d.Type {
		case DecisionEdit:
			call.Args = append(json.RawMessage(nil), d.Args...)
		case DecisionReject:
			turn.Answer(call.ID, rejection(d))
		}
	}
}

// checkEdits checks that the arguments of edit decisions fit the schemas of
// the tools they are for, so that a bad edit fails the resume before
// anything runs.
func (r *run) checkEdits(requests []ActionRequest, decisions []Decision) error {
	for i, d := range decisions {
		if d.Type != DecisionEdit {
			continue
		}
		req := requests[i]
		t, ok := r.a.tools[req.Tool]
		if !ok {
			continue // a subagent's tool: its own run checks it
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(t.Spec().Parameters, &s); err != nil {
			continue // no schema to check against
		}
		v, err := tool.NewValidator(req.Tool, &s)
		if err != nil {
			continue
		}
		if err := v.Validate(d.Args); err != nil {
			return fmt.Errorf("%w: decision %d (edit %s): %v", ErrDecisionArgs, i+1, req.Tool, err)
		}
	}
	return nil
}

// interrupt saves the turn so far and ends the run waiting for decisions.
func (r *run) interrupt(ctx context.Context, pending []pendingInterrupt) (RunStatus, error) {
	r.pending = pending
	if r.a.saver == nil {
		return StatusFailed, errors.New("agent: a run was interrupted for human decisions but the agent has no Checkpointer to resume from")
	}
	meta, err := json.Marshal(runMeta{Status: StatusInterrupted, Agent: r.a.name, Interrupts: pending})
	if err != nil {
		return StatusFailed, err
	}
	if err := r.save(ctx, meta); err != nil {
		return StatusFailed, err
	}
	return StatusInterrupted, nil
}
