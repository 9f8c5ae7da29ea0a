package background

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/internal/clip"
)

// The tools that change background tasks: start_async_task,
// update_async_task and cancel_async_task.

// startIn is what start_async_task takes.
type startIn struct {
	Description  string `json:"description" jsonschema:"the complete task for the subagent, with everything it needs to know"`
	SubagentType string `json:"subagent_type" jsonschema:"which subagent to start"`
}

func (s *Middleware) start(ctx context.Context, in startIn) (string, error) {
	rt := agent.RuntimeFromContext(ctx)
	call := agent.ToolCallFromContext(ctx)
	if rt == nil || call == nil {
		return "", errors.New("Error: start_async_task can only run inside an agent run")
	}
	e, ok := s.byName[in.SubagentType]
	if !ok {
		return "", fmt.Errorf("Error: unknown async subagent type `%s`; the available types are %s", clip.Text(in.SubagentType, 100), quotedNames(s.names))
	}
	if strings.TrimSpace(in.Description) == "" {
		return "", errors.New("Error: description is empty; describe the task completely")
	}
	// Make room first, so that a refused start starts nothing.
	release, err := s.reserve(rt, e)
	if err != nil {
		return "", err
	}
	defer func() {
		s.recMu.Lock()
		release() // a no-op once the record took its place
		s.recMu.Unlock()
	}()
	now := time.Now().UTC().Truncate(time.Second)
	rec := Task{AgentName: e.name, Status: Running, CreatedAt: now, LastCheckedAt: now, LastUpdatedAt: now}
	if s.limits.NewTaskID != nil {
		rec.TaskID = s.limits.NewTaskID()
		if strings.TrimSpace(rec.TaskID) == "" || s.local.get(rec.TaskID) != nil || s.known(rt, rec.TaskID) {
			return "", fmt.Errorf("Error: could not start async subagent %s: its task id %q is empty or taken (AsyncOptions.NewTaskID must make unique ids)", e.name, rec.TaskID)
		}
	}
	if e.remote != nil {
		tid, rid, err := e.remote.start(ctx, in.Description)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			s.log.Warn("async subagents: starting a remote task", "subagent", e.name, "err", err)
			return "", fmt.Errorf("Error: could not start async subagent %s: %v", e.name, err)
		}
		if rec.TaskID == "" {
			rec.TaskID = tid // as LangChain's deepagents: the remote thread's id
		}
		rec.Remote, rec.ThreadID, rec.RunID = true, tid, rid
	} else {
		if rec.TaskID == "" {
			rec.TaskID = newTaskID()
		}
		rec.Owner = s.instance
		child, ws, err := s.local.start(ctx, rt, e, rec.TaskID, call.ID, in.Description)
		if err != nil {
			return "", err
		}
		rec.ThreadID, rec.Workspace = child, ws
	}
	s.recMu.Lock()
	tasks := s.records(rt)
	tasks[rec.TaskID] = rec
	s.store(rt, tasks)
	release()
	s.recMu.Unlock()
	return "Launched async subagent. task_id: " + rec.TaskID, nil
}

type updateIn struct {
	TaskID  string `json:"task_id" jsonschema:"the task_id start_async_task returned, exactly as it was given"`
	Message string `json:"message" jsonschema:"the new instructions or context for the subagent"`
}

func (s *Middleware) update(ctx context.Context, in updateIn) (string, error) {
	rt := agent.RuntimeFromContext(ctx)
	call := agent.ToolCallFromContext(ctx)
	if rt == nil || call == nil {
		return "", errors.New("Error: update_async_task can only run inside an agent run")
	}
	if strings.TrimSpace(in.Message) == "" {
		return "", errors.New("Error: message is empty; say what the subagent should do")
	}
	rec, err := s.lookup(rt, in.TaskID)
	if err != nil {
		return "", err
	}
	now := time.Now().UTC().Truncate(time.Second)
	if rec.Remote {
		remote, err := s.remoteOf(rec)
		if err != nil {
			return "", err
		}
		rid, err := remote.followUp(ctx, rec.ThreadID, in.Message)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("Error: could not update task %s: %v", rec.TaskID, err)
		}
		s.save(rt, rec.TaskID, func(t *Task) {
			t.RunID, t.Status, t.LastUpdatedAt = rid, Running, now
		})
		return "Updated async subagent. task_id: " + rec.TaskID, nil
	}
	lt := s.local.get(rec.TaskID)
	if lt == nil {
		return "", fmt.Errorf("Error: task %s can no longer be updated: it is not kept in this process any more (status %s); start a new task instead", rec.TaskID, rec.Status)
	}
	merged, err := s.local.restart(ctx, rt, lt, call.ID, in.Message)
	if err != nil {
		return "", err
	}
	child, ws := lt.subagentThread(), lt.workspaceRoot()
	s.save(rt, rec.TaskID, func(t *Task) {
		t.Status, t.Collected, t.LastUpdatedAt, t.ThreadID, t.Workspace = Running, false, now, child, ws
	})
	// The run it had finished merged its workspace back: say so.
	return withNote("Updated async subagent. task_id: "+rec.TaskID, merged), nil
}

func (s *Middleware) cancel(ctx context.Context, in taskIDIn) (string, error) {
	rt := agent.RuntimeFromContext(ctx)
	if rt == nil {
		return "", errors.New("Error: cancel_async_task can only run inside an agent run")
	}
	rec, err := s.lookup(rt, in.TaskID)
	if err != nil {
		return "", err
	}
	if terminal(rec.Status) {
		return fmt.Sprintf("Task %s had already finished (status %s); nothing to cancel.", rec.TaskID, rec.Status), nil
	}
	if rec.Remote {
		remote, err := s.remoteOf(rec)
		if err != nil {
			return "", err
		}
		// A run that has ended keeps its outcome: cancelling it would
		// record it cancelled and hide its result.
		if st, err := remote.status(ctx, rec.ThreadID, rec.RunID); err == nil && terminal(st) {
			s.observe(rt, rec.TaskID, st, false)
			return fmt.Sprintf("Task %s had already finished (status %s); nothing to cancel. check_async_task returns its result.", rec.TaskID, st), nil
		}
		if err := remote.cancel(ctx, rec.ThreadID, rec.RunID); err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("Error: could not cancel task %s: %v", rec.TaskID, err)
		}
		s.observe(rt, rec.TaskID, Cancelled, false)
		return "Cancelled async subagent task: " + rec.TaskID, nil
	}
	lt := s.local.get(rec.TaskID)
	if lt == nil {
		r, err := s.status(ctx, rt, rec) // lost, and recorded so
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Task %s is no longer running (status %s); nothing to cancel.", rec.TaskID, r.Status), nil
	}
	status, err := s.local.cancel(ctx, lt)
	if err != nil {
		return "", err
	}
	if status != Cancelled {
		s.observe(rt, rec.TaskID, status, false)
		return fmt.Sprintf("Task %s had already finished (status %s); nothing to cancel. check_async_task returns its result.", rec.TaskID, status), nil
	}
	s.local.collect(rt, lt) // its usage so far
	s.observe(rt, rec.TaskID, Cancelled, true)
	// What it wrote in its workspace was merged back as it ended.
	return withNote("Cancelled async subagent task: "+rec.TaskID, lt.snapshot().merge), nil
}
