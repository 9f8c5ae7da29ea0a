package background

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/internal/clip"
)

// A thread's background tasks are records in its state (TasksValue),
// changed under Middleware.recMu.

// starts are a thread's starts in progress.
type starts struct{ tasks, remote int }

// Task is a background task as the thread's state records it (under
// TasksValue). Records hold no results: a local task's result is kept
// in memory, a remote one's on its server.
type Task struct {
	TaskID    string `json:"task_id"`
	AgentName string `json:"agent_name"`
	// Remote tasks: the thread (the task id) and the current run on the
	// server. A local task whose subagent keeps a thread (it can stop for
	// approval): that thread, where it waits for an answer.
	Remote   bool   `json:"remote,omitempty"`
	ThreadID string `json:"thread_id,omitempty"`
	RunID    string `json:"run_id,omitempty"`
	// Workspace is the folder of a local task's workspace of its own,
	// while it works or waits for approval in it: a later process that
	// finds the task again says where what it wrote is.
	Workspace string `json:"workspace,omitempty"`
	// Owner identifies the middleware instance running a local task.
	Owner  string `json:"owner,omitempty"`
	Status string `json:"status"`
	// Collected is set once a finished local task's result was returned
	// to the model.
	Collected     bool      `json:"collected,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	LastCheckedAt time.Time `json:"last_checked_at"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
}

// Tasks reads the task records from a thread's state values (a
// Result's State.Values, say). Missing records are an empty map.
func Tasks(values map[string]json.RawMessage) (map[string]Task, error) {
	out := map[string]Task{}
	raw, ok := values[TasksValue]
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("async subagents: state value %s: %w", TasksValue, err)
	}
	return out, nil
}

// records returns the thread's task records. Corrupt records are logged
// and treated as none: the tools keep working.
func (s *Middleware) records(rt *agent.Runtime) map[string]Task {
	raw, _ := rt.Value(TasksValue)
	tasks, err := Tasks(map[string]json.RawMessage{TasksValue: raw})
	if err != nil {
		s.log.Warn("async subagents: ignoring unreadable task records", "thread", rt.ThreadID(), "err", err)
		return map[string]Task{}
	}
	return tasks
}

// lookup returns the record of a task of this thread.
func (s *Middleware) lookup(rt *agent.Runtime, id string) (Task, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return Task{}, errors.New("Error: task_id is empty; pass the task_id that start_async_task returned")
	}
	s.recMu.Lock()
	t, ok := s.records(rt)[id]
	s.recMu.Unlock()
	if !ok {
		return Task{}, fmt.Errorf("Error: no background task with task_id %q in this conversation; list_async_tasks shows the tasks there are", clip.Text(id, 100))
	}
	return t, nil
}

// save changes one record (or adds it) under the records lock; change
// sees the stored record, which another call may have changed meanwhile.
func (s *Middleware) save(rt *agent.Runtime, id string, change func(t *Task)) {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	tasks := s.records(rt)
	t, ok := tasks[id]
	if !ok {
		return // forgotten meanwhile (evicted to make room)
	}
	change(&t)
	tasks[id] = t
	s.store(rt, tasks)
}

func (s *Middleware) store(rt *agent.Runtime, tasks map[string]Task) {
	b, err := json.Marshal(tasks)
	if err != nil { // a map of plain structs: cannot happen
		s.log.Error("async subagents: encoding task records", "err", err)
		return
	}
	rt.SetValue(TasksValue, b)
}

// observe records a status seen now.
func (s *Middleware) observe(rt *agent.Runtime, id, status string, collected bool) {
	s.observeAll(rt, map[string]string{id: status}, collected)
}

// observeAll records what was seen of several tasks (by id, their
// statuses), encoding the records once.
func (s *Middleware) observeAll(rt *agent.Runtime, seen map[string]string, collected bool) {
	if len(seen) == 0 {
		return
	}
	now := time.Now().UTC().Truncate(time.Second)
	s.recMu.Lock()
	defer s.recMu.Unlock()
	tasks := s.records(rt)
	changed := false
	for id, status := range seen {
		t, ok := tasks[id]
		if !ok {
			continue // forgotten meanwhile (evicted to make room)
		}
		if t.Status != status {
			t.LastUpdatedAt = now
		}
		t.Status = status
		t.LastCheckedAt = now
		t.Collected = t.Collected || collected
		tasks[id], changed = t, true
	}
	if changed {
		s.store(rt, tasks)
	}
}

// remoteOf returns the remote agent a remote task ran on, or the error
// that it is no longer configured.
func (s *Middleware) remoteOf(rec Task) (*remoteAgent, error) {
	if e := s.byName[rec.AgentName]; e != nil && e.remote != nil {
		return e.remote, nil
	}
	return nil, fmt.Errorf("Error: task %s ran on async subagent %s, which is no longer configured", rec.TaskID, rec.AgentName)
}

// known reports whether the thread has a task of this id.
func (s *Middleware) known(rt *agent.Runtime, id string) bool {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	_, ok := s.records(rt)[id]
	return ok
}

// reserve checks the caps before a start, counting the thread's other
// starts in progress (parallel calls of one turn), and forgets the oldest
// finished record when the thread would pass MaxTasks. release, called
// with recMu held, ends the reservation; calling it again does nothing.
func (s *Middleware) reserve(rt *agent.Runtime, e *subagent) (release func(), err error) {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	thread := rt.ThreadID()
	st := s.starting[thread]
	if st == nil {
		st = &starts{}
	}
	tasks := s.records(rt)
	if e.remote != nil {
		running := st.remote
		for _, t := range tasks {
			if t.Remote && !terminal(t.Status) {
				running++
			}
		}
		if running >= s.limits.MaxRunning {
			return nil, fmt.Errorf("Error: %d remote background tasks of this conversation may be running, the most allowed; wait for one to finish (check_async_task or wait_async_task) or cancel one first", running)
		}
	}
	if len(tasks)+st.tasks >= s.limits.MaxTasks {
		oldest := ""
		for id, t := range tasks {
			finished := terminal(t.Status)
			if !finished && !t.Remote {
				finished = s.local.isFinished(id)
			}
			if finished && (oldest == "" || t.CreatedAt.Before(tasks[oldest].CreatedAt) || t.CreatedAt.Equal(tasks[oldest].CreatedAt) && id < oldest) {
				oldest = id
			}
		}
		if oldest == "" {
			return nil, fmt.Errorf("Error: this conversation already has %d background tasks and none has finished; wait for one or cancel one first", len(tasks)+st.tasks)
		}
		delete(tasks, oldest)
		s.local.forget(oldest)
		s.store(rt, tasks)
	}
	st.tasks++
	if e.remote != nil {
		st.remote++
	}
	if s.starting == nil {
		s.starting = map[string]*starts{}
	}
	s.starting[thread] = st
	released := false
	// release ends the reservation, under recMu: the start's record, stored
	// in the same hold, takes its place.
	return func() {
		if released {
			return
		}
		released = true
		st.tasks--
		if e.remote != nil {
			st.remote--
		}
		if st.tasks == 0 {
			delete(s.starting, thread)
		}
	}, nil
}
