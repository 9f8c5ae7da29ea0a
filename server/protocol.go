package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
	"github.com/deepagents-go/deepagents/store"
)

// The protocols served beside the LangGraph API (A2A in server/a2aserve,
// MCP in server/mcpserve) are packages of their own, built on what this
// file exports: they launch the server's runs, follow them and cancel
// them, wherever a replica executes them, and keep their records in the
// server's store under its locks. Each declares the part it uses as an
// interface of its own, which *Server satisfies.

// A Protocol is served beside the LangGraph API, on the server's runs and
// behind its access checks: New mounts each of Config.Protocols.
type Protocol interface {
	// Mount starts serving the protocol for s: it registers its routes
	// on m and returns what s tells it of. A Protocol may be mounted on
	// more than one Server, each time anew.
	Mount(s *Server, m *http.ServeMux) Mounted
}

// Mounted is a Protocol served by one Server.
type Mounted struct {
	// AllowHeaders and ExposeHeaders are the headers the protocol's
	// browser clients send and read besides the LangGraph SDK's (CORS).
	AllowHeaders, ExposeHeaders []string
	// Flags are the /info flags the protocol turns on ("mcp").
	Flags []string
	// ForgetThread, when set, is called once a client has deleted a
	// thread, its runs cancelled: the protocol forgets its records of
	// it.
	ForgetThread func(ctx context.Context, threadID string)
}

// Launch is a run asked for by a protocol: what its request has already
// read.
type Launch struct {
	// ThreadID is the run's thread; "" for a stateless run.
	ThreadID string
	// Request is the run as the LangGraph API takes it.
	Request *langgraph.RunCreate
	// Messages, when set, are the run's input, already read;
	// Request.Input then carries none.
	Messages []llm.Message
	// Tap, when set, sees each event of the agent as it comes, on the
	// run's goroutine: it must not block.
	Tap func(*agent.Event)
	// From is the request that asked, for Config.RunContext; nil for a
	// run of the server's own.
	From *http.Request
}

// Run is a run this replica executes, as a protocol that launched it (or
// looked it up) sees it.
type Run struct{ rn *run }

// ID is the run's ID.
func (r *Run) ID() string { return r.rn.id }

// ThreadID is the run's thread's ID.
func (r *Run) ThreadID() string { return r.rn.threadID }

// Done is closed once the run has finished.
func (r *Run) Done() <-chan struct{} { return r.rn.finished }

// Cancel cancels the run; it finishes interrupted.
func (r *Run) Cancel() { r.rn.cancel(errCancelled) }

// Status is the run's status now.
func (r *Run) Status() langgraph.RunStatus { return r.rn.wire().Status }

// Failure is why a finished run failed, "" when it did not say.
func (r *Run) Failure() string {
	r.rn.mu.Lock()
	defer r.rn.mu.Unlock()
	return r.rn.errMsg
}

// Status is the HTTP status the LangGraph API answers the refusal with
// (499: the request was cancelled).
func (e *Refusal) Status() int { return e.status }

// Busy reports a refusal because the thread runs another run.
func (e *Refusal) Busy() bool { return e.busy }

// Launch validates a run and starts it in the background, as the
// LangGraph API's run routes do: the run shows in the API, counts against
// MaxRuns, and ends with its thread. Its error is a *Refusal.
func (s *Server) Launch(ctx context.Context, l Launch) (*Run, error) {
	rn, no := s.launch(ctx, runAsk{threadID: l.ThreadID, q: l.Request, messages: l.Messages, tap: l.Tap, from: l.From})
	if no != nil {
		return nil, no
	}
	return &Run{rn}, nil
}

// Run returns a run of a thread that this replica executes, or has just
// finished; nil for any other.
func (s *Server) Run(threadID, runID string) *Run {
	if rn := s.runs.get(threadID, runID); rn != nil {
		return &Run{rn}
	}
	return nil
}

// RunStatus is the status of a thread's run: this replica's, or as the replicas' shared store records it. lost reports a run
// that no replica executes any more: never recorded (without a shared
// Store, a run is only ever this replica's), or recorded by a replica that
// stopped; status is then what was recorded last (RunError for none). A
// store that fails answers its error.
func (s *Server) RunStatus(ctx context.Context, threadID, runID string) (status langgraph.RunStatus, lost bool, err error) {
	if rn := s.runs.get(threadID, runID); rn != nil {
		return rn.wire().Status, false, nil
	}
	if s.cfg.Store == nil {
		return langgraph.RunError, true, nil
	}
	it, err := s.cfg.Store.Get(ctx, runsNamespace, runID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return langgraph.RunError, true, nil
	case err != nil:
		return "", false, err
	}
	rec := recordOf(it)
	if rec.Replica == s.replicaID {
		// Recorded as this replica's, which does not have it: an earlier
		// incarnation's, lost with it.
		return rec.Status, true, nil
	}
	if _, dead := s.replica(ctx, rec.Replica); dead {
		return rec.Status, true, nil
	}
	return rec.Status, false, nil
}

// CancelElsewhere cancels a run that another replica executes and waits
// until its thread is free; found reports that a run was recorded. A run
// of a replica that stopped is marked failed.
func (s *Server) CancelElsewhere(ctx context.Context, runID string) (found bool, err error) {
	if s.cfg.Store == nil {
		return false, nil
	}
	it, err := s.cfg.Store.Get(ctx, runsNamespace, runID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking up the run: %w", err)
	}
	return true, s.cancelRemote(ctx, recordOf(it))
}

// Lock takes a lock shared by every replica on the database (the Saver's
// lease of a thread of its own, named by name, which should hold a
// slash), waiting while another holds it; unlock ends it, even once ctx
// has ended.
func (s *Server) Lock(ctx context.Context, name string) (unlock func(), err error) {
	if !strings.Contains(name, "/") {
		return nil, fmt.Errorf("server: lock %q: a lock's name holds a slash", name)
	}
	l, err := s.hold(ctx, name)
	if err != nil {
		return nil, err
	}
	return func() { s.letGo(ctx, name, l) }, nil
}

// BackgroundApprovals returns the requests for approval the background
// tasks of a top-level thread wait on, oldest task first: the interrupts
// bg:TASK_ID of the thread's state, which a run with command.resume
// answers when the thread waits on no request of its own.
func (s *Server) BackgroundApprovals(ctx context.Context, threadID string) ([]background.Approval, error) {
	as, err := s.bgApprovals(ctx, threadID)
	out := make([]background.Approval, len(as))
	for i, a := range as {
		out[i] = a.Approval
	}
	return out, err
}

// AnswerBackground gives a top-level thread's waiting background task its
// decisions, one per call it waits on, in order: its subagent resumes on
// a goroutine of the server's. A task that does not wait is
// background.ErrNotWaiting.
func (s *Server) AnswerBackground(ctx context.Context, threadID, taskID string, decisions []agent.Decision) error {
	as, err := s.bgApprovals(ctx, threadID)
	i := slices.IndexFunc(as, func(a bgApproval) bool { return a.TaskID == taskID })
	if i < 0 {
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: task %s of thread %s", background.ErrNotWaiting, clip.Text(taskID, 100), clip.Text(threadID, 100))
	}
	return as[i].m.Answer(ctx, threadID, taskID, decisions)
}

// HasBackground reports whether an assistant's agent has background
// subagents, whose requests for approval BackgroundApprovals lists.
func (s *Server) HasBackground() bool { return len(s.bg) > 0 }

// Assistant finds an assistant by ID or graph ID ("" is the first
// configured one), a configured one or one a client created of a graph
// served; nil when there is none.
func (s *Server) Assistant(ctx context.Context, id string) *langgraph.Assistant {
	if _, wa := s.assistant(ctx, id); wa != nil {
		w := *wa
		return &w
	}
	return nil
}

// Assistants lists the configured assistants, then at most limit of those
// clients created (of the graphs served), oldest first.
func (s *Server) Assistants(ctx context.Context, limit int) (configured, created []*langgraph.Assistant, err error) {
	for _, a := range s.assistants {
		w := a.wire
		configured = append(configured, &w)
	}
	items, err := s.store.Search(ctx, assistantsNamespace, store.SearchOptions{Limit: limit})
	for i := range items {
		wa := createdAssistant(&items[i])
		if wa == nil || !slices.ContainsFunc(s.assistants, func(a *assistantEntry) bool { return a.GraphID == wa.GraphID }) {
			continue // an assistant of a graph no longer served runs nothing
		}
		created = append(created, wa)
	}
	slices.SortFunc(created, func(a, b *langgraph.Assistant) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.AssistantID, b.AssistantID)
	})
	return configured, created, err
}

// Saver is the server's Saver: its threads.
func (s *Server) Saver() checkpoint.Saver { return s.cfg.Saver }

// Store is the server's store: Config.Store, or one in memory.
func (s *Server) Store() store.Store { return s.store }

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// Config is the server's configuration, its defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// Go runs f as one of the server's goroutines, which Close waits for,
// unless the server is closed: then it reports false.
func (s *Server) Go(f func()) bool { return s.goRun(f) }

// Closing is closed once Close has been called.
func (s *Server) Closing() <-chan struct{} { return s.baseCtx.Done() }

// IDProblem says why id cannot be a thread's (run's, assistant's) ID, ""
// when it can.
func IDProblem(id string) string { return idProblem(id) }

// NewUUID returns a random (version 4) UUID, as the server names threads
// and runs.
func NewUUID() string { return newUUID() }

// MaxBody bounds a request's body: requests carry messages and files, not
// uploads.
const MaxBody = maxBody

// WriteJSON answers v as JSON with the status, as the LangGraph API's
// routes answer.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// HTTPError answers as the LangGraph API does: the status and the
// message as plain text.
func HTTPError(w http.ResponseWriter, status int, msg string) { httpError(w, status, msg) }
