package background

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/internal/clip"
)

// The tools that report on background tasks: check_async_task,
// wait_async_task and list_async_tasks.

// taskIDIn is what check_async_task and cancel_async_task take.
type taskIDIn struct {
	TaskID string `json:"task_id" jsonschema:"the task_id start_async_task returned, exactly as it was given"`
}

// report is what check, wait and update tell of a task.
type report struct {
	TaskID       string `json:"task_id"`
	SubagentType string `json:"subagent_type"`
	Status       string `json:"status"`
	Result       string `json:"result,omitempty"`
	Error        string `json:"error,omitempty"`
	Note         string `json:"note,omitempty"`
	// ElapsedSeconds is how long a running local task has been running.
	ElapsedSeconds int `json:"elapsed_seconds,omitempty"`
}

func (r report) String() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(r) //nolint:errcheck // strings and ints only
	return strings.TrimRight(b.String(), "\n")
}

func (s *Middleware) check(ctx context.Context, in taskIDIn) (string, error) {
	rt := agent.RuntimeFromContext(ctx)
	if rt == nil {
		return "", errors.New("Error: check_async_task can only run inside an agent run")
	}
	rec, err := s.lookup(rt, in.TaskID)
	if err != nil {
		return "", err
	}
	r, err := s.status(ctx, rt, rec)
	if err != nil {
		return "", err
	}
	return r.String(), nil
}

// status finds out how a task stands now, collects a finished local
// task's result into this run, and records what it saw.
func (s *Middleware) status(ctx context.Context, rt *agent.Runtime, rec Task) (report, error) {
	r := report{TaskID: rec.TaskID, SubagentType: rec.AgentName, Status: rec.Status}
	if rec.Remote {
		remote, err := s.remoteOf(rec)
		if err != nil {
			return r, err
		}
		if rec.Status == Cancelled {
			r.Note = "it was cancelled"
			return r, nil
		}
		st, err := remote.status(ctx, rec.ThreadID, rec.RunID)
		if err != nil {
			if ctx.Err() != nil {
				return r, ctx.Err()
			}
			return r, fmt.Errorf("Error: could not get the status of task %s from its server: %v", rec.TaskID, err)
		}
		r.Status = st
		switch st {
		case Success:
			text, err := remote.result(ctx, rec.ThreadID)
			if err != nil {
				if ctx.Err() != nil {
					return r, ctx.Err()
				}
				r.Note = fmt.Sprintf("it finished, but its result could not be read: %v", err)
			} else {
				r.Result = text
			}
		case Error:
			r.Error = remote.failure(ctx, rec.ThreadID, rec.RunID)
		case Interrupted:
			r.Error = "the remote run stopped before it finished (cancelled there, or waiting for a human approval this agent cannot give)"
		case Timeout:
			r.Error = "the remote run timed out"
		}
		s.observe(rt, rec.TaskID, st, false)
		return r, nil
	}
	lt := s.local.get(rec.TaskID)
	if lt == nil {
		if a, ok, err := s.parkedInSaver(ctx, rt.ThreadID(), rec); err != nil {
			s.log.Warn("async subagents: reading a parked task", "task", rec.TaskID, "err", err)
		} else if ok {
			r.Status, r.Note = AwaitingApproval, waitingNote(a)
			s.observe(rt, rec.TaskID, AwaitingApproval, false)
			return r, nil
		}
		switch {
		case rec.Status == Cancelled && !rec.Collected:
			r.Error = "it was cancelled before it finished (by cancel_async_task, or when the agent that ran it was closed), so it left no result; start it again if it is still needed"
		case rec.Status != Lost && (rec.Collected || terminal(rec.Status)):
			r.Note = "it finished earlier, and what it returned was reported then; it is no longer kept"
		case rec.Owner == s.instance:
			r.Status = Lost
			r.Error = "its result was dropped before anyone asked for it (only the latest finished tasks are kept); start it again if it is still needed"
		default:
			r.Status = Lost
			r.Error = "it ran inside an agent process that has since ended, so it stopped without a result; start it again if it is still needed"
			if rec.Workspace != "" {
				r.Error = withNote(r.Error, lostWorkspaceNote(rec.Workspace))
			}
		}
		if r.Status != rec.Status {
			s.observe(rt, rec.TaskID, r.Status, false)
		}
		return r, nil
	}
	out := lt.snapshot()
	r.Status = out.status
	if a, ok := lt.pendingApproval(); ok {
		r.Note = waitingNote(a)
		s.observe(rt, rec.TaskID, AwaitingApproval, false)
		return r, nil
	}
	if out.status == Running {
		r.ElapsedSeconds = int(time.Since(out.started).Seconds())
		s.observe(rt, rec.TaskID, Running, false)
		return r, nil
	}
	r.Result, r.Error = out.result, out.err
	// Its usage counts in this run; its changes, when it succeeded, are
	// applied here.
	if conflicts := s.local.collect(rt, lt); len(conflicts) > 0 {
		r.Note = "these files changed here while it worked, so its versions were not applied: " + strings.Join(conflicts, ", ")
	}
	s.observe(rt, rec.TaskID, out.status, true)
	return r, nil
}

type waitIn struct {
	TaskID  string  `json:"task_id" jsonschema:"the task_id start_async_task returned, exactly as it was given"`
	Timeout float64 `json:"timeout,omitempty" jsonschema:"the most seconds to wait (default 60)"`
}

func (s *Middleware) wait(ctx context.Context, in waitIn) (string, error) {
	rt := agent.RuntimeFromContext(ctx)
	if rt == nil {
		return "", errors.New("Error: wait_async_task can only run inside an agent run")
	}
	if in.Timeout < 0 {
		return "", fmt.Errorf("Error: timeout must be a positive number of seconds (at most %s), not %v", span(s.limits.MaxWait), in.Timeout)
	}
	rec, err := s.lookup(rt, in.TaskID)
	if err != nil {
		return "", err
	}
	d, note := DefaultWait, ""
	switch {
	case in.Timeout == 0:
	case in.Timeout > s.limits.MaxWait.Seconds():
		d, note = s.limits.MaxWait, fmt.Sprintf("the timeout was lowered to %s, the most allowed", span(s.limits.MaxWait))
	default:
		d = time.Duration(math.Round(in.Timeout * float64(time.Second)))
	}
	d = min(d, s.limits.MaxWait)
	timer := time.NewTimer(d)
	defer timer.Stop()
	timedOut := false // a wait through a park the model knew of ended so
	switch {
	case terminal(rec.Status):
	case rec.Remote:
		if err := s.pollRemote(ctx, rec, timer.C); err != nil {
			return "", err
		}
	default:
		if lt := s.local.get(rec.TaskID); lt != nil {
			// A task that starts to wait for approval meanwhile is
			// reported then (the user may want to hear of it), and so
			// is one that waits already if the model has not heard of
			// it (it parked before this call); one the model was told
			// waits is waited through, until it is answered (it then
			// runs again, under a new done) or denied.
			through := lt.parkChan() != nil && rec.Status == AwaitingApproval
		waiting:
			for {
				if parked := lt.parkChan(); parked != nil {
					if !through {
						break
					}
					select {
					case <-parked:
						through = false
						continue
					case <-timer.C:
						timedOut = true
						break waiting
					case <-ctx.Done():
						return "", ctx.Err()
					}
				}
				done := lt.doneChan()
				if lt.snapshot().status != Running {
					break
				}
				select {
				case <-done:
				case <-timer.C:
					timedOut = true
					break waiting
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
		}
	}
	r, err := s.status(ctx, rt, rec)
	if err != nil {
		return "", err
	}
	switch {
	case r.Status == AwaitingApproval && timedOut:
		r.Note = joinNotes(r.Note, "still waiting after "+span(d))
	case r.Status == AwaitingApproval:
	case !terminal(r.Status):
		r.Note = joinNotes(r.Note, "still running after waiting "+span(d))
	}
	r.Note = joinNotes(note, r.Note)
	return r.String(), nil
}

// pollRemote asks a remote task's server until the run ends or the timer
// fires. Failed requests are retried until then: check reports them.
func (s *Middleware) pollRemote(ctx context.Context, rec Task, timeout <-chan time.Time) error {
	remote, err := s.remoteOf(rec)
	if err != nil {
		return nil // status says so
	}
	interval := s.limits.PollInterval
	for {
		st, err := remote.status(ctx, rec.ThreadID, rec.RunID)
		if err == nil && terminal(st) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t := time.NewTimer(interval)
		select {
		case <-t.C:
		case <-timeout:
			t.Stop()
			return nil
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		interval = min(2*interval, 4*s.limits.PollInterval)
	}
}

type listIn struct {
	StatusFilter string `json:"status_filter,omitempty" jsonschema:"only tasks in this status: running, awaiting_approval, success, error, cancelled, interrupted, denied, timeout, lost, or all (the default)"`
}

func (s *Middleware) list(ctx context.Context, in listIn) (string, error) {
	rt := agent.RuntimeFromContext(ctx)
	if rt == nil {
		return "", errors.New("Error: list_async_tasks can only run inside an agent run")
	}
	filter := strings.TrimSpace(in.StatusFilter)
	switch filter {
	case "", "all", Running, Success, Error, Cancelled, Interrupted, Timeout, Lost, AwaitingApproval, Denied, "pending":
	default:
		return "", fmt.Errorf("Error: unknown status_filter %q; use running, awaiting_approval, success, error, cancelled, interrupted, denied, timeout, lost or all", clip.Text(filter, 100))
	}
	s.recMu.Lock()
	tasks := s.records(rt)
	s.recMu.Unlock()
	recs := make([]Task, 0, len(tasks))
	for _, t := range tasks {
		recs = append(recs, t)
	}
	slices.SortFunc(recs, func(a, b Task) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.TaskID, b.TaskID)
	})
	// Live statuses, remote ones concurrently (a few at a time).
	statuses := make([]string, len(recs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, rec := range recs {
		statuses[i] = rec.Status
		if terminal(rec.Status) {
			continue
		}
		if !rec.Remote {
			statuses[i] = s.local.liveStatus(rec)
			if statuses[i] == Lost {
				if _, ok, _ := s.parkedInSaver(ctx, rt.ThreadID(), rec); ok {
					statuses[i] = AwaitingApproval
				}
			}
			continue
		}
		remote, err := s.remoteOf(rec)
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if st, err := remote.status(ctx, rec.ThreadID, rec.RunID); err == nil {
				statuses[i] = st
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var lines []string
	seen := map[string]string{}
	for i, rec := range recs {
		if statuses[i] != rec.Status && (rec.Remote || statuses[i] == Lost || statuses[i] == AwaitingApproval) {
			// A finished local task's status is recorded when its result
			// is collected (check or wait), not here.
			seen[rec.TaskID] = statuses[i]
		}
		if filter != "" && filter != "all" && statuses[i] != filter {
			continue
		}
		lines = append(lines, fmt.Sprintf("- task_id: %s  agent: %s  status: %s", rec.TaskID, rec.AgentName, statuses[i]))
	}
	s.observeAll(rt, seen, false)
	if len(lines) == 0 {
		if len(recs) == 0 {
			return "No async subagent tasks tracked.", nil
		}
		return fmt.Sprintf("No async subagent tasks with status %s (%d tracked in all).", filter, len(recs)), nil
	}
	return fmt.Sprintf("%d tracked task(s):\n%s", len(lines), strings.Join(lines, "\n")), nil
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// waitingNote tells the model what a task that waits for approval waits
// on.
func waitingNote(a Approval) string {
	return fmt.Sprintf("it waits for the user to approve %s; it goes on by itself once they answer (they see the request), so do not start it again", a.Tools())
}
