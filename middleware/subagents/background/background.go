package background

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/middleware/subagents"
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

// TasksValue is the state value in which a thread records its
// background tasks: a JSON object from task id to [Task]. It is
// private to the agent that started them (see agent.PrivateValuer).
const TasksValue = "async_tasks"

// Statuses of a background task. A remote task may also report the
// LangGraph run statuses "pending" (and "running").
const (
	Running     = "running"
	Success     = "success"
	Error       = "error"
	Cancelled   = "cancelled"
	Interrupted = "interrupted"
	Timeout     = "timeout"
	// AwaitingApproval is the status of a local task whose subagent
	// stopped to ask a person to approve tool calls: it waits, its
	// checkpoint saved, until the driver of its thread answers
	// (Middleware.Answer), and then goes on.
	AwaitingApproval = "awaiting_approval"
	// Denied is the status of a task that waited for approval for
	// Options.ApprovalWait without an answer.
	Denied = "denied"
	// Lost is the status of a local task whose goroutine is gone
	// without a result: it ran in another process, or another instance of
	// the agent, that has ended.
	Lost = "lost"
)

// terminal reports whether a task in this status will not change.
func terminal(status string) bool {
	switch status {
	case Success, Error, Cancelled, Interrupted, Timeout, Lost, Denied:
		return true
	}
	return false
}

// Subagent is a subagent the main agent can start in the background.
// A local one is declared as a [subagents.Subagent] (declarative fields or a
// Runnable) and runs on a goroutine of this process; a remote one sets URL
// and GraphID and runs on a server that speaks the LangGraph API, such as
// deepagents serve.
type Subagent struct {
	// Subagent gives the Name and Description, and for a local subagent
	// what it is. A remote subagent sets only Name and Description of it.
	subagents.Subagent
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

// Options bound background tasks and adjust what the model sees.
// Zero fields take the defaults.
type Options struct {
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
	// Prompt replaces the default system prompt section, the
	// package's Prompt.
	Prompt string
	// NewTaskID makes the task ids; nil means a random UUID for a local
	// task and the server's thread id for a remote one. Scripted runs
	// (tests, examples) set it to get ids they can name. Ids must be
	// unique in a thread: a repeated one makes start fail.
	NewTaskID func() string
	// ApprovalWait is how long a local task that stopped for approval
	// waits for an answer in this process before it is denied (status
	// Denied: the model reads that nobody answered); zero means it
	// waits until answered, also across restarts. A program with nobody
	// to ask (headless) sets it.
	ApprovalWait time.Duration
}

// Defaults of Options.
const (
	DefaultMaxRunning     = 4
	DefaultMaxTasks       = 50
	DefaultMaxWait        = 10 * time.Minute
	DefaultWait           = time.Minute // wait_async_task without a timeout
	DefaultMaxRuntime     = time.Hour
	DefaultKeepFinished   = 64
	DefaultPollInterval   = 500 * time.Millisecond
	DefaultRequestTimeout = 30 * time.Second
)

func (l Options) withDefaults() Options {
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
	set(&l.MaxRunning, DefaultMaxRunning)
	set(&l.MaxTasks, DefaultMaxTasks)
	set(&l.KeepFinished, DefaultKeepFinished)
	setD(&l.MaxWait, DefaultMaxWait)
	setD(&l.MaxRuntime, DefaultMaxRuntime)
	setD(&l.PollInterval, DefaultPollInterval)
	setD(&l.RequestTimeout, DefaultRequestTimeout)
	return l
}

// Config configures the background subagents middleware.
type Config struct {
	// Parent is what local declarative subagents inherit, as in
	// subagents.Config.
	subagents.Parent
	// Subagents are the subagents start_async_task can start; at least one.
	Subagents []Subagent
	// Options bound the tasks.
	Options Options
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Workspace is the host folder the caller's files are (its backend's
	// backend.HostRoot), which a local task's workspace of its own
	// copies; "" isolates no task.
	Workspace string
	// Isolation is the isolation of the local subagents that set none
	// (Subagent.Isolation); "" is isolate.Auto, which for a background
	// task means a workspace of its own (a git worktree where there is
	// git, a copy elsewhere): it always runs beside the main agent.
	// isolate.None shares the folder.
	Isolation isolate.Mode
	// WorkspaceOptions configures the workspaces (isolate.Fork); its
	// Label is each task's own.
	WorkspaceOptions isolate.Options
}

// Middleware adds the tools that start, check, wait for, update, cancel
// and list background subagents. Local tasks belong to the middleware, not
// to a run: they go on after the run that started them ends, until they
// finish, are cancelled, exceed MaxRuntime, or the agent is closed (Close).
// Their events reach the stream of the run that started them while it
// lasts.
type Middleware struct {
	byName   map[string]*subagent
	names    []string
	limits   Options
	prompt   string
	tools    []tool.Tool
	log      *slog.Logger
	instance string // tells this instance's local tasks from others'
	// saver holds the threads' records (the main agent's Checkpointer),
	// where Approvals and Answer find tasks parked by another process.
	saver checkpoint.Saver

	recMu sync.Mutex // serialises changes to the records of a thread
	// starting counts, by thread, the starts between reserve and their
	// record (under recMu), so that parallel starts count each other.
	starting map[string]*starts
	local    *localTasks
}

// Prompt is the default system prompt section.
const Prompt = `## Background tasks

start_async_task hands a task to a subagent that works on it in the background while you go on; it returns a task_id at once.

- Use it for long work whose result you do not need for your next step, or to keep working (or talking with the user) meanwhile. When you need the result before going on, delegate with task instead, if you have it.
- The subagent sees nothing but the description you give it: make it complete.
- check_async_task returns a task's status, and its result once it has finished. Check when you need the result or the user asks; do not poll in a loop. To wait for a task, call wait_async_task, which returns when the task finishes or its timeout passes.
- update_async_task gives a task new instructions: it restarts with its conversation so far and your message, under the same task_id. cancel_async_task stops a task you no longer need. list_async_tasks shows every task of this conversation, with its current status.
- Statuses in earlier tool results may be out of date: check again before reporting one.
- Always quote a task_id in full.`

// New builds the background subagents middleware.
func New(cfg Config) (*Middleware, error) {
	if len(cfg.Subagents) == 0 {
		return nil, errors.New("async subagents: none configured")
	}
	s := &Middleware{
		byName:   make(map[string]*subagent),
		limits:   cfg.Options.withDefaults(),
		prompt:   cfg.Options.Prompt,
		log:      cfg.Logger,
		instance: newTaskID(),
		saver:    cfg.Parent.Agent.Checkpointer,
	}
	if s.prompt == "" {
		s.prompt = Prompt
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.local = newLocalTasks(s.limits)
	s.local.dir, s.local.wsOpts = cfg.Workspace, cfg.WorkspaceOptions
	defIsolation, err := isolate.ParseMode(string(cfg.Isolation))
	if err != nil {
		return nil, fmt.Errorf("async subagents: %w", err)
	}
	for _, sa := range cfg.Subagents {
		if err := s.add(cfg.Parent, sa, defIsolation); err != nil {
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

// subagent is one of the middleware's subagents: a local one, built by
// package subagents, or a remote one.
type subagent struct {
	*subagents.Entry  // a local one's; nil for a remote one
	name, description string
	remote            *remoteAgent // a remote one's server
	// isolation is how a local one's tasks get a workspace of their own
	// (never Auto: see workspaceMode); None shares the folder.
	isolation isolate.Mode
}

// add checks sa and builds it: a local subagent as the task tool's are
// (see subagents.NewEntry), a remote one as a client of its server.
func (s *Middleware) add(parent subagents.Parent, sa Subagent, defIsolation isolate.Mode) error {
	if sa.Name == "" {
		return errors.New("async subagents: a subagent has no name")
	}
	if _, dup := s.byName[sa.Name]; dup {
		return fmt.Errorf("async subagents: two subagents are named %q", sa.Name)
	}
	e := &subagent{name: sa.Name, description: sa.Description}
	var err error
	switch {
	case sa.Mode == subagents.Fork:
		// A background task runs beside the conversation it
		// would copy, which goes on without it.
		err = fmt.Errorf("%w: a background subagent starts from its task alone (isolated)", subagents.ErrMode)
	case sa.URL != "" || sa.GraphID != "":
		e.remote, err = newRemoteAgent(sa, s.limits.RequestTimeout)
	default:
		e.isolation = defIsolation
		if sa.Isolation != "" {
			e.isolation, err = isolate.ParseMode(string(sa.Isolation))
		}
		e.isolation = workspaceMode(e.isolation)
		if err == nil {
			e.Entry, err = subagents.NewEntry(parent, sa.Subagent)
		}
	}
	if err != nil {
		return fmt.Errorf("async subagents: %s: %w", sa.Name, err)
	}
	s.byName[sa.Name] = e
	s.names = append(s.names, sa.Name)
	return nil
}

// workspaceMode is the isolation of a background task: Auto isolates it,
// in a git worktree where there is git (a copy elsewhere), since a
// background task always runs beside the main agent.
func workspaceMode(m isolate.Mode) isolate.Mode {
	if m == isolate.Auto {
		return isolate.Worktree
	}
	return m
}

// quotedNames lists subagent names for the model: `a`, `b`.
func quotedNames(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "`" + n + "`"
	}
	return strings.Join(quoted, ", ")
}

// polls marks the tools that report on the background tasks: calling one
// again is waiting, not a loop (package loops).
var polls = tool.WithTraits(tool.Traits{Polls: true})

// newTools builds the tools, reporting every failure.
func (s *Middleware) newTools() ([]tool.Tool, error) {
	var set tool.Set
	set.Add(tool.New(StartAsyncTaskTool, s.startDescription(), s.start))
	set.Add(tool.New(CheckAsyncTaskTool, "Get a background task's status, and its result once it has finished. It does not wait: use wait_async_task for that.", s.check, polls))
	set.Add(tool.New(WaitAsyncTaskTool, fmt.Sprintf("Wait until a background task finishes, or until timeout seconds have passed (default %s, at most %s), and return its status and result as check_async_task does.", span(min(DefaultWait, s.limits.MaxWait)), span(s.limits.MaxWait)), s.wait, polls))
	set.Add(tool.New(UpdateAsyncTaskTool, "Give a background task new instructions. If it is still running it is stopped; it then starts again with its conversation so far and your message, under the same task_id.", s.update))
	set.Add(tool.New(CancelAsyncTaskTool, "Stop a background task that is no longer needed.", s.cancel))
	set.Add(tool.New(ListAsyncTasksTool, "List the background tasks of this conversation with their current status.", s.list, polls))
	return set.Tools()
}

func (s *Middleware) startDescription() string {
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
func (*Middleware) Name() string { return "async_subagents" }

// Tools implements agent.ToolProvider.
func (s *Middleware) Tools() []tool.Tool { return s.tools }

// SystemPrompt implements agent.SystemPrompter.
func (s *Middleware) SystemPrompt() string { return s.prompt }

// SystemPromptFor implements agent.ToolPrompter: nothing when
// start_async_task is not offered.
func (s *Middleware) SystemPromptFor(offered func(string) bool) string {
	if !offered(StartAsyncTaskTool) {
		return ""
	}
	return s.prompt
}

// PrivateValues implements agent.PrivateValuer: a thread's task records
// are its own; subagents neither receive nor return them.
func (*Middleware) PrivateValues() []string { return []string{TasksValue} }

// Names returns the subagents' names in the order they are offered.
func (s *Middleware) Names() []string { return slices.Clone(s.names) }

// Close cancels the local tasks still running and waits for them to end.
// Tasks cannot be started afterwards. Remote tasks are not touched: they
// belong to their server. Close may be called more than once.
func (s *Middleware) Close() error {
	s.local.close()
	return nil
}

// Running returns the local tasks running now, of every thread, by task
// id, with the name of the subagent that runs each: the tasks Close would
// cancel. A program about to close the agent can say which work it stops.
func (s *Middleware) Running() map[string]string {
	return s.local.runningTasks()
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
