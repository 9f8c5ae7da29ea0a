package subagents

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/tool"
)

// The tools of background (async) subagents. The names and arguments follow
// LangChain's deepagents; wait_async_task is ours.
const (
	StartAsyncTaskTool  = "start_async_task"
	CheckAsyncTaskTool  = "check_async_task"
	WaitAsyncTaskTool   = "wait_async_task"
	UpdateAsyncTaskTool = "update_async_task"
	CancelAsyncTaskTool = "cancel_async_task"
	ListAsyncTasksTool  = "list_async_tasks"
)

// AsyncTasksValue is the state value in which a thread records its
// background tasks: a JSON object from task id to [AsyncTask]. It is
// private to the agent that started them (see agent.PrivateValuer).
const AsyncTasksValue = "async_tasks"

// Statuses of a background task. A remote task may also report the
// LangGraph run statuses "pending" (and "running").
const (
	AsyncRunning     = "running"
	AsyncSuccess     = "success"
	AsyncError       = "error"
	AsyncCancelled   = "cancelled"
	AsyncInterrupted = "interrupted"
	AsyncTimeout     = "timeout"
	// AsyncLost is the status of a local task whose goroutine is gone
	// without a result: it ran in another process, or another instance of
	// the agent, that has ended.
	AsyncLost = "lost"
)

// asyncTerminal reports whether a task in this status will not change.
func asyncTerminal(status string) bool {
	switch status {
	case AsyncSuccess, AsyncError, AsyncCancelled, AsyncInterrupted, AsyncTimeout, AsyncLost:
		return true
	}
	return false
}

// Async is a subagent the main agent can start in the background.
// A local one is declared as a [Subagent] (declarative fields or a
// Runnable) and runs on a goroutine of this process; a remote one sets URL
// and GraphID and runs on a server that speaks the LangGraph API, such as
// deepagents serve.
type Async struct {
	// Subagent gives the Name and Description, and for a local subagent
	// what it is. A remote subagent sets only Name and Description of it.
	Subagent
	// URL is the base URL of the LangGraph API server of a remote
	// subagent (http or https).
	URL string
	// GraphID is the graph name or assistant id to run on that server.
	GraphID string
	// Headers are sent with every request to the server (authentication,
	// say: X-Api-Key).
	Headers map[string]string
	// Client sends the requests; nil means a client of this package's own
	// with no overall timeout (each request is bounded by RequestTimeout).
	Client HTTPDoer
}

// AsyncOptions bound background tasks and adjust what the model sees.
// Zero fields take the defaults.
type AsyncOptions struct {
	// MaxRunning caps the tasks running at once: local tasks across the
	// agent (they share this process), and remote tasks of one thread.
	MaxRunning int
	// MaxTasks caps the tasks a thread records; when it is reached, the
	// oldest finished task is forgotten to make room, and a start is
	// refused when none has finished.
	MaxTasks int
	// MaxWait caps the timeout of wait_async_task.
	MaxWait time.Duration
	// MaxRuntime caps how long a local task may run; it is then stopped
	// with status timeout.
	MaxRuntime time.Duration
	// KeepFinished is how many finished local tasks keep their result in
	// memory for a later check.
	KeepFinished int
	// PollInterval is how often wait_async_task asks a remote server
	// about its run (doubling up to four times as long).
	PollInterval time.Duration
	// RequestTimeout bounds each request to a remote server.
	RequestTimeout time.Duration
	// Prompt replaces the default system prompt section
	// (AsyncPrompt).
	Prompt string
	// NewTaskID makes the task ids; nil means a random UUID for a local
	// task and the server's thread id for a remote one. Scripted runs
	// (tests, examples) set it to get ids they can name. Ids must be
	// unique in a thread: a repeated one makes start fail.
	NewTaskID func() string
}

// Defaults of AsyncOptions.
const (
	DefaultAsyncMaxRunning     = 4
	DefaultAsyncMaxTasks       = 50
	DefaultAsyncMaxWait        = 10 * time.Minute
	DefaultAsyncWait           = time.Minute // wait_async_task without a timeout
	DefaultAsyncMaxRuntime     = time.Hour
	DefaultAsyncKeepFinished   = 64
	DefaultAsyncPollInterval   = 500 * time.Millisecond
	DefaultAsyncRequestTimeout = 30 * time.Second
)

func (l AsyncOptions) withDefaults() AsyncOptions {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&l.MaxRunning, DefaultAsyncMaxRunning)
	set(&l.MaxTasks, DefaultAsyncMaxTasks)
	set(&l.KeepFinished, DefaultAsyncKeepFinished)
	setD(&l.MaxWait, DefaultAsyncMaxWait)
	setD(&l.MaxRuntime, DefaultAsyncMaxRuntime)
	setD(&l.PollInterval, DefaultAsyncPollInterval)
	setD(&l.RequestTimeout, DefaultAsyncRequestTimeout)
	return l
}

// AsyncConfig configures the background subagents middleware.
type AsyncConfig struct {
	// Parent is what local declarative subagents inherit, as in Config.
	Parent
	// Subagents are the subagents start_async_task can start; at least one.
	Subagents []Async
	// Options bound the tasks.
	Options AsyncOptions
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// AsyncMiddleware adds the tools that start, check, wait for, update, cancel
// and list background subagents. Local tasks belong to the middleware, not
// to a run: they go on after the run that started them ends, until they
// finish, are cancelled, exceed MaxRuntime, or the agent is closed (Close).
// Their events reach the stream of the run that started them while it
// lasts.
type AsyncMiddleware struct {
	launcher
	limits   AsyncOptions
	prompt   string
	tools    []tool.Tool
	log      *slog.Logger
	instance string // tells this instance's local tasks from others'

	recMu sync.Mutex // serialises changes to the records of a thread
	// starting counts, by thread, the starts between reserve and their
	// record (under recMu), so that parallel starts count each other.
	starting map[string]*asyncStarts
	local    *localTasks
}

// asyncStarts are a thread's starts in progress.
type asyncStarts struct{ tasks, remote int }

// AsyncPrompt is the default system prompt section.
const AsyncPrompt = `## Background tasks

start_async_task hands a task to a subagent that works on it in the background while you go on; it returns a task_id at once.

- Use it for long work whose result you do not need for your next step, or to keep working (or talking with the user) meanwhile. When you need the result before going on, delegate with task instead, if you have it.
- The subagent sees nothing but the description you give it: make it complete.
- check_async_task returns a task's status, and its result once it has finished. Check when you need the result or the user asks; do not poll in a loop. To wait for a task, call wait_async_task, which returns when the task finishes or its timeout passes.
- update_async_task gives a task new instructions: it restarts with its conversation so far and your message, under the same task_id. cancel_async_task stops a task you no longer need. list_async_tasks shows every task of this conversation, with its current status.
- Statuses in earlier tool results may be out of date: check again before reporting one.
- Always quote a task_id in full.`

// NewAsync builds the background subagents middleware.
func NewAsync(cfg AsyncConfig) (*AsyncMiddleware, error) {
	if len(cfg.Subagents) == 0 {
		return nil, errors.New("async subagents: none configured")
	}
	s := &AsyncMiddleware{
		launcher: newLauncher(cfg.Parent, "async subagents"),
		limits:   cfg.Options.withDefaults(),
		prompt:   cfg.Options.Prompt,
		log:      cfg.Logger,
		instance: newTaskID(),
	}
	if s.prompt == "" {
		s.prompt = AsyncPrompt
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.local = newLocalTasks(s.limits)
	for _, sa := range cfg.Subagents {
		err := s.add(sa.Subagent, func(e *entry) error {
			if sa.Mode == Fork {
				// A background task runs beside the conversation it
				// would copy, which goes on without it.
				return fmt.Errorf("%w: a background subagent starts from its task alone (isolated)", ErrMode)
			}
			if sa.URL == "" && sa.GraphID == "" {
				return nil
			}
			r, err := newRemoteAgent(sa, s.limits.RequestTimeout)
			e.remote = r
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	tools, err := s.newTools()
	if err != nil {
		return nil, fmt.Errorf("async subagents: %w", err)
	}
	s.tools = tools
	return s, nil
}

// newTools builds the tools, reporting every failure.
func (s *AsyncMiddleware) newTools() ([]tool.Tool, error) {
	var tools []tool.Tool
	add := func(t tool.Tool, err error) error {
		if err != nil {
			return err
		}
		tools = append(tools, t)
		return nil
	}
	err := errors.Join(
		add(tool.New(StartAsyncTaskTool, s.startDescription(), s.start)),
		add(tool.New(CheckAsyncTaskTool, "Get a background task's status, and its result once it has finished. It does not wait: use wait_async_task for that.", s.check)),
		add(tool.New(WaitAsyncTaskTool, fmt.Sprintf("Wait until a background task finishes, or until timeout seconds have passed (default %s, at most %s), and return its status and result as check_async_task does.", span(min(DefaultAsyncWait, s.limits.MaxWait)), span(s.limits.MaxWait)), s.wait)),
		add(tool.New(UpdateAsyncTaskTool, "Give a background task new instructions. If it is still running it is stopped; it then starts again with its conversation so far and your message, under the same task_id.", s.update)),
		add(tool.New(CancelAsyncTaskTool, "Stop a background task that is no longer needed.", s.cancel)),
		add(tool.New(ListAsyncTasksTool, "List the background tasks of this conversation with their current status.", s.list)),
	)
	return tools, err
}

func (s *AsyncMiddleware) startDescription() string {
	var b strings.Builder
	b.WriteString("Start a subagent on a task in the background. It returns a task_id at once; the subagent works on its own, in a fresh context, while you go on. Get its result later with check_async_task or wait_async_task.\n\n")
	b.WriteString("subagent_type picks the subagent; description is the complete task for it, since it sees nothing else of this conversation.\n\nAvailable subagents:\n")
	for _, n := range s.names {
		e := s.byName[n]
		where := ""
		if e.remote != nil {
			where = " (remote: it runs on another server, with its own tools and files)"
		}
		fmt.Fprintf(&b, "- %s%s: %s\n", n, where, e.description)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Name implements agent.Middleware.
func (*AsyncMiddleware) Name() string { return "async_subagents" }

// Tools implements agent.ToolProvider.
func (s *AsyncMiddleware) Tools() []tool.Tool { return s.tools }

// SystemPrompt implements agent.SystemPrompter.
func (s *AsyncMiddleware) SystemPrompt() string { return s.prompt }

// SystemPromptFor implements agent.ToolPrompter: nothing when
// start_async_task is not offered.
func (s *AsyncMiddleware) SystemPromptFor(offered func(string) bool) string {
	if !offered(StartAsyncTaskTool) {
		return ""
	}
	return s.prompt
}

// PrivateValues implements agent.PrivateValuer: a thread's task records
// are its own; subagents neither receive nor return them.
func (*AsyncMiddleware) PrivateValues() []string { return []string{AsyncTasksValue} }

// Names returns the subagents' names in the order they are offered.
func (s *AsyncMiddleware) Names() []string { return slices.Clone(s.names) }

// Close cancels the local tasks still running and waits for them to end.
// Tasks cannot be started afterwards. Remote tasks are not touched: they
// belong to their server. Close may be called more than once.
func (s *AsyncMiddleware) Close() error {
	s.local.close()
	return nil
}

// AsyncTask is a background task as the thread's state records it (under
// AsyncTasksValue). Records hold no results: a local task's result is kept
// in memory, a remote one's on its server.
type AsyncTask struct {
	TaskID    string `json:"task_id"`
	AgentName string `json:"agent_name"`
	// Remote tasks: the thread (the task id) and the current run on the
	// server.
	Remote   bool   `json:"remote,omitempty"`
	ThreadID string `json:"thread_id,omitempty"`
	RunID    string `json:"run_id,omitempty"`
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

// AsyncTasks reads the task records from a thread's state values (a
// Result's State.Values, say). Missing records are an empty map.
func AsyncTasks(values map[string]json.RawMessage) (map[string]AsyncTask, error) {
	out := map[string]AsyncTask{}
	raw, ok := values[AsyncTasksValue]
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("async subagents: state value %s: %w", AsyncTasksValue, err)
	}
	return out, nil
}

// records returns the thread's task records. Corrupt records are logged
// and treated as none: the tools keep working.
func (s *AsyncMiddleware) records(rt *agent.Runtime) map[string]AsyncTask {
	raw, _ := rt.Value(AsyncTasksValue)
	tasks, err := AsyncTasks(map[string]json.RawMessage{AsyncTasksValue: raw})
	if err != nil {
		s.log.Warn("async subagents: ignoring unreadable task records", "thread", rt.ThreadID(), "err", err)
		return map[string]AsyncTask{}
	}
	return tasks
}

// lookup returns the record of a task of this thread.
func (s *AsyncMiddleware) lookup(rt *agent.Runtime, id string) (AsyncTask, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return AsyncTask{}, errors.New("Error: task_id is empty; pass the task_id that start_async_task returned")
	}
	s.recMu.Lock()
	t, ok := s.records(rt)[id]
	s.recMu.Unlock()
	if !ok {
		return AsyncTask{}, fmt.Errorf("Error: no background task with task_id %q in this conversation; list_async_tasks shows the tasks there are", clip(id, 100))
	}
	return t, nil
}

// save changes one record (or adds it) under the records lock; change
// sees the stored record, which another call may have changed meanwhile.
func (s *AsyncMiddleware) save(rt *agent.Runtime, id string, change func(t *AsyncTask)) {
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

func (s *AsyncMiddleware) store(rt *agent.Runtime, tasks map[string]AsyncTask) {
	b, err := json.Marshal(tasks)
	if err != nil { // a map of plain structs: cannot happen
		s.log.Error("async subagents: encoding task records", "err", err)
		return
	}
	rt.SetValue(AsyncTasksValue, b)
}

// observe records a status seen now.
func (s *AsyncMiddleware) observe(rt *agent.Runtime, id, status string, collected bool) {
	s.observeAll(rt, map[string]string{id: status}, collected)
}

// observeAll records what was seen of several tasks (by id, their
// statuses), encoding the records once.
func (s *AsyncMiddleware) observeAll(rt *agent.Runtime, seen map[string]string, collected bool) {
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
func (s *AsyncMiddleware) remoteOf(rec AsyncTask) (*remoteAgent, error) {
	if e := s.byName[rec.AgentName]; e != nil && e.remote != nil {
		return e.remote, nil
	}
	return nil, fmt.Errorf("Error: task %s ran on async subagent %s, which is no longer configured", rec.TaskID, rec.AgentName)
}

type startIn struct {
	Description  string `json:"description" jsonschema:"the complete task for the subagent, with everything it needs to know"`
	SubagentType string `json:"subagent_type" jsonschema:"which subagent to start"`
}

func (s *AsyncMiddleware) start(ctx context.Context, in startIn) (string, error) {
	rt := agent.RuntimeFromContext(ctx)
	call := agent.ToolCallFromContext(ctx)
	if rt == nil || call == nil {
		return "", errors.New("Error: start_async_task can only run inside an agent run")
	}
	e, ok := s.byName[in.SubagentType]
	if !ok {
		return "", fmt.Errorf("Error: unknown async subagent type `%s`; the available types are %s", clip(in.SubagentType, 100), quotedNames(s.names))
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
	rec := AsyncTask{AgentName: e.name, Status: AsyncRunning, CreatedAt: now, LastCheckedAt: now, LastUpdatedAt: now}
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
		if err := s.local.start(ctx, rt, e, rec.TaskID, call.ID, in.Description); err != nil {
			return "", err
		}
	}
	s.recMu.Lock()
	tasks := s.records(rt)
	tasks[rec.TaskID] = rec
	s.store(rt, tasks)
	release()
	s.recMu.Unlock()
	return "Launched async subagent. task_id: " + rec.TaskID, nil
}

// known reports whether the thread has a task of this id.
func (s *AsyncMiddleware) known(rt *agent.Runtime, id string) bool {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	_, ok := s.records(rt)[id]
	return ok
}

// reserve checks the caps before a start, counting the thread's other
// starts in progress (parallel calls of one turn), and forgets the oldest
// finished record when the thread would pass MaxTasks. release, called
// with recMu held, ends the reservation; calling it again does nothing.
func (s *AsyncMiddleware) reserve(rt *agent.Runtime, e *entry) (release func(), err error) {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	thread := rt.ThreadID()
	st := s.starting[thread]
	if st == nil {
		st = &asyncStarts{}
	}
	tasks := s.records(rt)
	if e.remote != nil {
		running := st.remote
		for _, t := range tasks {
			if t.Remote && !asyncTerminal(t.Status) {
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
			finished := asyncTerminal(t.Status)
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
		s.starting = map[string]*asyncStarts{}
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

func (s *AsyncMiddleware) check(ctx context.Context, in taskIDIn) (string, error) {
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
func (s *AsyncMiddleware) status(ctx context.Context, rt *agent.Runtime, rec AsyncTask) (report, error) {
	r := report{TaskID: rec.TaskID, SubagentType: rec.AgentName, Status: rec.Status}
	if rec.Remote {
		remote, err := s.remoteOf(rec)
		if err != nil {
			return r, err
		}
		if rec.Status == AsyncCancelled {
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
		case AsyncSuccess:
			text, err := remote.result(ctx, rec.ThreadID)
			if err != nil {
				if ctx.Err() != nil {
					return r, ctx.Err()
				}
				r.Note = fmt.Sprintf("it finished, but its result could not be read: %v", err)
			} else {
				r.Result = text
			}
		case AsyncError:
			r.Error = remote.failure(ctx, rec.ThreadID, rec.RunID)
		case AsyncInterrupted:
			r.Error = "the remote run stopped before it finished (cancelled there, or waiting for a human approval this agent cannot give)"
		case AsyncTimeout:
			r.Error = "the remote run timed out"
		}
		s.observe(rt, rec.TaskID, st, false)
		return r, nil
	}
	lt := s.local.get(rec.TaskID)
	if lt == nil {
		switch {
		case rec.Status != AsyncLost && (rec.Collected || asyncTerminal(rec.Status)):
			r.Note = "it finished earlier, and what it returned was reported then; it is no longer kept"
		case rec.Owner == s.instance:
			r.Status = AsyncLost
			r.Error = "its result was dropped before anyone asked for it (only the latest finished tasks are kept); start it again if it is still needed"
		default:
			r.Status = AsyncLost
			r.Error = "it ran inside an agent process that has since ended, so it stopped without a result; start it again if it is still needed"
		}
		if r.Status != rec.Status {
			s.observe(rt, rec.TaskID, r.Status, false)
		}
		return r, nil
	}
	out := lt.snapshot()
	r.Status = out.status
	if out.status == AsyncRunning {
		r.ElapsedSeconds = int(time.Since(out.started).Seconds())
		s.observe(rt, rec.TaskID, AsyncRunning, false)
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

func (s *AsyncMiddleware) wait(ctx context.Context, in waitIn) (string, error) {
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
	d, note := DefaultAsyncWait, ""
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
	switch {
	case asyncTerminal(rec.Status):
	case rec.Remote:
		if err := s.pollRemote(ctx, rec, timer.C); err != nil {
			return "", err
		}
	default:
		if lt := s.local.get(rec.TaskID); lt != nil {
			select {
			case <-lt.doneChan():
			case <-timer.C:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
	}
	r, err := s.status(ctx, rt, rec)
	if err != nil {
		return "", err
	}
	if !asyncTerminal(r.Status) {
		r.Note = joinNotes(r.Note, "still running after waiting "+span(d))
	}
	r.Note = joinNotes(note, r.Note)
	return r.String(), nil
}

// pollRemote asks a remote task's server until the run ends or the timer
// fires. Failed requests are retried until then: check reports them.
func (s *AsyncMiddleware) pollRemote(ctx context.Context, rec AsyncTask, timeout <-chan time.Time) error {
	remote, err := s.remoteOf(rec)
	if err != nil {
		return nil // status says so
	}
	interval := s.limits.PollInterval
	for {
		st, err := remote.status(ctx, rec.ThreadID, rec.RunID)
		if err == nil && asyncTerminal(st) {
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

type updateIn struct {
	TaskID  string `json:"task_id" jsonschema:"the task_id start_async_task returned, exactly as it was given"`
	Message string `json:"message" jsonschema:"the new instructions or context for the subagent"`
}

func (s *AsyncMiddleware) update(ctx context.Context, in updateIn) (string, error) {
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
		s.save(rt, rec.TaskID, func(t *AsyncTask) {
			t.RunID, t.Status, t.LastUpdatedAt = rid, AsyncRunning, now
		})
		return "Updated async subagent. task_id: " + rec.TaskID, nil
	}
	lt := s.local.get(rec.TaskID)
	if lt == nil {
		return "", fmt.Errorf("Error: task %s can no longer be updated: it is not kept in this process any more (status %s); start a new task instead", rec.TaskID, rec.Status)
	}
	if err := s.local.restart(ctx, rt, lt, call.ID, in.Message); err != nil {
		return "", err
	}
	s.save(rt, rec.TaskID, func(t *AsyncTask) {
		t.Status, t.Collected, t.LastUpdatedAt = AsyncRunning, false, now
	})
	return "Updated async subagent. task_id: " + rec.TaskID, nil
}

func (s *AsyncMiddleware) cancel(ctx context.Context, in taskIDIn) (string, error) {
	rt := agent.RuntimeFromContext(ctx)
	if rt == nil {
		return "", errors.New("Error: cancel_async_task can only run inside an agent run")
	}
	rec, err := s.lookup(rt, in.TaskID)
	if err != nil {
		return "", err
	}
	if asyncTerminal(rec.Status) {
		return fmt.Sprintf("Task %s had already finished (status %s); nothing to cancel.", rec.TaskID, rec.Status), nil
	}
	if rec.Remote {
		remote, err := s.remoteOf(rec)
		if err != nil {
			return "", err
		}
		// A run that has ended keeps its outcome: cancelling it would
		// record it cancelled and hide its result.
		if st, err := remote.status(ctx, rec.ThreadID, rec.RunID); err == nil && asyncTerminal(st) {
			s.observe(rt, rec.TaskID, st, false)
			return fmt.Sprintf("Task %s had already finished (status %s); nothing to cancel. check_async_task returns its result.", rec.TaskID, st), nil
		}
		if err := remote.cancel(ctx, rec.ThreadID, rec.RunID); err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("Error: could not cancel task %s: %v", rec.TaskID, err)
		}
		s.observe(rt, rec.TaskID, AsyncCancelled, false)
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
	if status != AsyncCancelled {
		s.observe(rt, rec.TaskID, status, false)
		return fmt.Sprintf("Task %s had already finished (status %s); nothing to cancel. check_async_task returns its result.", rec.TaskID, status), nil
	}
	s.local.collect(rt, lt) // its usage so far
	s.observe(rt, rec.TaskID, AsyncCancelled, true)
	return "Cancelled async subagent task: " + rec.TaskID, nil
}

type listIn struct {
	StatusFilter string `json:"status_filter,omitempty" jsonschema:"only tasks in this status: running, success, error, cancelled, interrupted, timeout, lost, or all (the default)"`
}

func (s *AsyncMiddleware) list(ctx context.Context, in listIn) (string, error) {
	rt := agent.RuntimeFromContext(ctx)
	if rt == nil {
		return "", errors.New("Error: list_async_tasks can only run inside an agent run")
	}
	filter := strings.TrimSpace(in.StatusFilter)
	switch filter {
	case "", "all", AsyncRunning, AsyncSuccess, AsyncError, AsyncCancelled, AsyncInterrupted, AsyncTimeout, AsyncLost, "pending":
	default:
		return "", fmt.Errorf("Error: unknown status_filter %q; use running, success, error, cancelled, interrupted, timeout, lost or all", clip(filter, 100))
	}
	s.recMu.Lock()
	tasks := s.records(rt)
	s.recMu.Unlock()
	recs := make([]AsyncTask, 0, len(tasks))
	for _, t := range tasks {
		recs = append(recs, t)
	}
	slices.SortFunc(recs, func(a, b AsyncTask) int {
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
		if asyncTerminal(rec.Status) {
			continue
		}
		if !rec.Remote {
			statuses[i] = s.local.liveStatus(rec)
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
		if statuses[i] != rec.Status && (rec.Remote || statuses[i] == AsyncLost) {
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

// newTaskID returns a random id in the UUID format.
func newTaskID() string {
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// span writes a duration for the model: "90 seconds", or "250ms".
func span(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return fmt.Sprintf("%d seconds", d/time.Second)
	}
	return d.Round(time.Millisecond).String()
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

// validBaseURL checks a remote subagent's URL.
func validBaseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("URL %q: want http(s)://host[:port][/path]", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}
