package a2aserve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	a2alog "github.com/a2aproject/a2a-go/log"

	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/store"
)

// Each assistant is also an A2A agent (the Agent2Agent protocol, 0.3, over
// JSON-RPC, on the official Go SDK's transport), as in LangGraph's Agent
// Server: its card at /.well-known/agent-card.json?assistant_id=ID (and
// at /a2a/ID/.well-known/agent-card.json; without an ID, the first
// assistant's), its endpoint at /a2a/ID. See docs/a2a.md.

const (
	a2aVersion     = "0.3.0"
	a2aDefaultDesc = "A deep agent: it plans, works in files, delegates to subagents and asks before the tool calls it was told to."
)

// Protocol serves each of a server's assistants as an A2A agent: list it
// in server.Config.Protocols.
type Protocol struct{}

// Mount implements server.Protocol.
func (Protocol) Mount(srv *server.Server, m *http.ServeMux) server.Mounted {
	s := &agents{srv: srv, cfg: srv.Config(), log: srv.Logger(), store: srv.Store()}
	s.a2aRoutes(m)
	return server.Mounted{ForgetThread: s.forgetTasks}
}

// host is what A2A uses of the server it is served by: its runs, where
// they execute, and its locks.
type host interface {
	Launch(ctx context.Context, l server.Launch) (*server.Run, error)
	Run(threadID, runID string) *server.Run
	RunStatus(ctx context.Context, threadID, runID string) (status langgraph.RunStatus, lost bool, err error)
	CancelElsewhere(ctx context.Context, runID string) (found bool, err error)
	Lock(ctx context.Context, name string) (unlock func(), err error)
	Assistant(ctx context.Context, id string) *langgraph.Assistant
	BackgroundApprovals(ctx context.Context, threadID string) ([]background.Approval, error)
	Go(f func()) bool
	Closing() <-chan struct{}
}

// agents are a server's assistants as A2A agents.
type agents struct {
	srv   host
	cfg   server.Config
	log   *slog.Logger
	store store.Store
	// a2aTasks are the A2A tasks whose runs this replica executes.
	a2aTasks liveTasks
}

// closing reports whether the server is closing.
func (s *agents) closing() bool {
	select {
	case <-s.srv.Closing():
		return true
	default:
		return false
	}
}

func (s *agents) a2aRoutes(m *http.ServeMux) {
	m.HandleFunc("GET "+langgraph.PathAgentCard, s.agentCard)
	m.HandleFunc("GET "+langgraph.PathA2ACard, s.agentCard)
	m.HandleFunc("POST "+langgraph.PathA2A, s.serveA2A)
}

// agentCard answers an assistant's agent card.
func (s *agents) agentCard(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("assistant_id")
	if id == "" {
		if id = r.URL.Query().Get("assistant_id"); id != "" && badID(w, "assistant", id) {
			return
		}
	}
	wa := s.srv.Assistant(r.Context(), id)
	if wa == nil {
		httpError(w, http.StatusNotFound, "Assistant not found")
		return
	}
	writeJSON(w, http.StatusOK, s.card(r, wa))
}

// card is an assistant's agent card, with the URL the request reached
// the server by.
func (s *agents) card(r *http.Request, wa *langgraph.Assistant) *a2a.AgentCard {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	desc := a2aDefaultDesc
	if wa.Description != nil && *wa.Description != "" {
		desc = *wa.Description
	}
	modes := []string{"text/plain", "application/json"}
	c := &a2a.AgentCard{
		ProtocolVersion:    a2aVersion,
		Name:               wa.Name,
		Description:        desc,
		URL:                scheme + "://" + r.Host + langgraph.Path(langgraph.PathA2A, wa.AssistantID),
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		Version:            "1",
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  append(modes, "image/png", "image/jpeg", "image/gif", "image/webp"),
		DefaultOutputModes: modes,
		Skills: []a2a.AgentSkill{{
			ID: wa.GraphID, Name: wa.Name, Description: desc,
			Tags: []string{"deepagents", "planning", "files", "subagents"},
		}},
	}
	if s.cfg.APIKey != "" {
		c.SecuritySchemes = a2a.NamedSecuritySchemes{
			"apiKey": a2a.APIKeySecurityScheme{Name: langgraph.HeaderAPIKey, In: a2a.APIKeySecuritySchemeInHeader, Description: "the server's API key"},
		}
		c.Security = []a2a.SecurityRequirements{{"apiKey": a2a.SecuritySchemeScopes{}}}
	}
	return c
}

// serveA2A serves an assistant's A2A endpoint.
func (s *agents) serveA2A(w http.ResponseWriter, r *http.Request) {
	wa := s.srv.Assistant(r.Context(), r.PathValue("assistant_id"))
	if wa == nil {
		httpError(w, http.StatusNotFound, "Assistant not found")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	// The SDK's transport writes its JSON answers without a type; a
	// stream sets its own.
	w.Header().Set("Content-Type", "application/json")
	r = r.WithContext(a2alog.WithLogger(r.Context(), s.log))
	ka := &keepAlive{ResponseWriter: w, boundary: true}
	stop := ka.beat(s.cfg.Heartbeat)
	defer stop()
	a2asrv.NewJSONRPCHandler(&a2aHandler{s: s, wa: wa, req: r}).ServeHTTP(ka, r)
}

// keepAlive writes a comment line into an event stream that has been
// silent for a heartbeat (a step that takes minutes), as the LangGraph
// streams do, so that proxies and clients do not take it for dead. It
// writes only between events: the SDK writes an event in more than one
// write.
type keepAlive struct {
	http.ResponseWriter
	mu       sync.Mutex
	stream   bool // the answer is an event stream
	boundary bool // what was written ends an event
	last     time.Time
}

func (k *keepAlive) WriteHeader(code int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stream = strings.HasPrefix(k.Header().Get("Content-Type"), "text/event-stream")
	k.last = time.Now()
	k.ResponseWriter.WriteHeader(code)
}

func (k *keepAlive) Write(b []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.boundary, k.last = bytes.HasSuffix(b, []byte("\n\n")), time.Now()
	return k.ResponseWriter.Write(b)
}

func (k *keepAlive) Flush() {
	k.mu.Lock()
	defer k.mu.Unlock()
	http.NewResponseController(k.ResponseWriter).Flush() //nolint:errcheck // the client may be gone
}

// beat starts the heartbeats; the returned func stops them, and returns
// once none can be written any more (the handler's writer is done with
// when it returns).
func (k *keepAlive) beat(every time.Duration) func() {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		// Ticking faster than the heartbeat keeps the silence it
		// allows near one heartbeat, not two.
		t := time.NewTicker(max(every/4, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-done:
				return
			}
			k.mu.Lock()
			if k.stream && k.boundary && time.Since(k.last) >= every {
				io.WriteString(k.ResponseWriter, ": keep-alive\n\n") //nolint:errcheck // as Flush
				http.NewResponseController(k.ResponseWriter).Flush() //nolint:errcheck // the client may be gone
				k.last = time.Now()
			}
			k.mu.Unlock()
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// a2aHandler answers the A2A methods for one assistant.
type a2aHandler struct {
	s   *agents
	wa  *langgraph.Assistant
	req *http.Request
}

var _ a2asrv.RequestHandler = (*a2aHandler)(nil)

// invalid is an A2A error of invalid params with its reason; clients
// read the reason in the error's data.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", a2a.ErrInvalidParams, fmt.Sprintf(format, args...))
}

// refused is a run's refusal as an A2A error.
func refused(err error) error {
	var no *server.Refusal
	if !errors.As(err, &no) {
		return fmt.Errorf("%w: %v", a2a.ErrInternalError, err)
	}
	if no.Status() == 499 {
		return context.Canceled
	}
	if no.Status() >= 500 {
		return fmt.Errorf("%w: %s", a2a.ErrInternalError, no.Error())
	}
	if no.Busy() {
		return invalid("the context is running another task: wait for it or cancel it")
	}
	return invalid("%s", no.Error())
}

// task reads a task of this assistant; a2a.ErrTaskNotFound when there is
// none.
func (h *a2aHandler) task(ctx context.Context, id a2a.TaskID) (*taskRecord, error) {
	t, err := h.s.getTask(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", a2a.ErrInternalError, err)
	}
	if t == nil || t.AssistantID != h.wa.AssistantID {
		return nil, fmt.Errorf("%w: no task %q", a2a.ErrTaskNotFound, id)
	}
	return t, nil
}

// start starts the run a message asks for: a new task, or the answer to a
// task's question, holding the context's lock from the task's check to its
// record (but in a context the server names now, which nothing else can
// reach yet). It returns the task as it starts.
func (h *a2aHandler) start(ctx context.Context, p *a2a.MessageSendParams) (*liveTask, *a2a.Task, error) {
	if p == nil || p.Message == nil {
		return nil, nil, invalid("params.message is required")
	}
	if p.Config != nil && p.Config.PushConfig != nil {
		return nil, nil, a2a.ErrPushNotificationNotSupported
	}
	msg := p.Message
	q := langgraph.RunCreate{
		AssistantID: h.wa.AssistantID, IfNotExists: langgraph.IfNotExistsCreate,
		// Cheap to keep, and what a LangGraph client joining the run
		// reads: no values events, each a load of the state.
		StreamMode:   []byte(`"updates"`),
		OnDisconnect: langgraph.OnDisconnectContinue,
	}
	var t *taskRecord
	var input []llm.Message
	fresh := false
	if msg.TaskID != "" {
		var err error
		if t, err = h.task(ctx, msg.TaskID); err != nil {
			return nil, nil, err
		}
		if msg.ContextID != "" && msg.ContextID != t.ContextID {
			return nil, nil, invalid("task %s is in context %s, not %s", t.ID, t.ContextID, msg.ContextID)
		}
		resume, err := a2aDecisions(msg)
		if err != nil {
			if st, _, _ := h.s.taskState(ctx, t); st != a2a.TaskStateInputRequired {
				return nil, nil, notWaiting(t, st)
			}
			return nil, nil, err
		}
		q.Command = &langgraph.Command{Resume: resume}
	} else {
		contextID := msg.ContextID
		if contextID == "" {
			contextID, fresh = newUUID(), true
		} else if p := idProblem(contextID); p != "" {
			return nil, nil, invalid("contextId %q cannot name a thread: %s", contextID, p)
		}
		m, err := a2aUserMessage(msg)
		if err != nil {
			return nil, nil, err
		}
		input = []llm.Message{m}
		t = &taskRecord{ID: a2a.TaskID(newUUID()), ContextID: contextID, AssistantID: h.wa.AssistantID}
	}
	q.Metadata = map[string]any{"a2a_task_id": string(t.ID)}
	var lt *liveTask
	var first *a2a.Task
	begin := func() error {
		if msg.TaskID != "" {
			// What the task is now, as the lock's holder before decided.
			cur, err := h.task(ctx, t.ID)
			if err != nil {
				return err
			}
			if st, _, _ := h.s.taskState(ctx, cur); st != a2a.TaskStateInputRequired {
				return notWaiting(cur, st)
			}
			t = cur
		} else if !fresh {
			busy, err := h.s.busyWith(ctx, t.ContextID)
			if err != nil {
				return fmt.Errorf("%w: %v", a2a.ErrInternalError, err)
			}
			if busy != nil {
				return invalid("the context is running another task (%s): wait for it or cancel it", busy.ID)
			}
		}
		lt = newLiveTask(t)
		if msg.TaskID != "" {
			// An answer to background tasks' requests: its run ends at
			// once (the subagents resume on their own).
			lt.background = t.Background
		}
		rn, err := h.s.srv.Launch(ctx, server.Launch{ThreadID: t.ContextID, Request: &q, Messages: input, Tap: lt.tap, From: h.req})
		if err != nil {
			return refused(err)
		}
		lt.rn = rn
		t.RunID, t.State, t.Status, t.Answer = rn.ID(), a2a.TaskStateSubmitted, nil, ""
		t.remember(msg)
		if err := h.s.putTask(ctx, t, msg.TaskID == ""); err != nil {
			// A task not recorded cannot be followed: its run goes.
			rn.Cancel()
			return fmt.Errorf("%w: recording the task: %v", a2a.ErrInternalError, err)
		}
		if !fresh && msg.TaskID == "" {
			h.s.settleWaiting(ctx, t.ContextID, t.ID)
		}
		first = h.s.taskView(ctx, t, historyLength(p))
		h.s.track(lt)
		return nil
	}
	var err error
	if fresh {
		// A context the server named just now: no other task can be in
		// it, or ask for it, before this one's answer names it.
		err = begin()
	} else {
		err = h.s.inContext(ctx, t.ContextID, begin)
	}
	if err != nil {
		return nil, nil, err
	}
	return lt, first, nil
}

// notWaiting is the error of an answer to a task that waits for none.
func notWaiting(t *taskRecord, state a2a.TaskState) error {
	if state.Terminal() {
		return invalid("task %s is %s: send a message without a taskId, with contextId %s, to go on in its context", t.ID, state, t.ContextID)
	}
	return invalid("task %s is %s: wait for it (tasks/get) or cancel it (tasks/cancel)", t.ID, state)
}

func historyLength(p *a2a.MessageSendParams) *int {
	if p.Config == nil {
		return nil
	}
	return p.Config.HistoryLength
}

// OnSendMessage implements message/send: the task once its run ends (or
// waits for a decision), or at once with configuration.blocking false.
func (h *a2aHandler) OnSendMessage(ctx context.Context, p *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	lt, first, err := h.start(ctx, p)
	if err != nil {
		return nil, err
	}
	if p.Config != nil && p.Config.Blocking != nil && !*p.Config.Blocking {
		return first, nil
	}
	select {
	case <-lt.ended:
	case <-ctx.Done():
		// The client left; the task goes on (tasks/get).
		return nil, ctx.Err()
	}
	return h.view(ctx, lt.id, historyLength(p))
}

func (h *a2aHandler) view(ctx context.Context, id a2a.TaskID, historyLength *int) (*a2a.Task, error) {
	t, err := h.task(ctx, id)
	if err != nil {
		return nil, err
	}
	return h.s.taskView(ctx, t, historyLength), nil
}

// OnSendMessageStream implements message/stream: the task as it starts,
// then its status updates (working, each step's tool calls, each plan),
// its answer as artifact chunks, and its final status.
func (h *a2aHandler) OnSendMessageStream(ctx context.Context, p *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		lt, first, err := h.start(ctx, p)
		if err != nil {
			yield(nil, err)
			return
		}
		// The task as submitted: its working, and all that follows, come
		// as status updates.
		first.Status.State = a2a.TaskStateSubmitted
		if yield(first, nil) {
			h.followLive(ctx, lt, 0, yield)
		}
	}
}

// followLive yields a live task's events after the first i until its end
// or ctx's. A client that stops following leaves the task going.
func (h *a2aHandler) followLive(ctx context.Context, lt *liveTask, i int, yield func(a2a.Event, error) bool) {
	for {
		evs, next, done, changed := lt.since(i)
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
		i = next
		if done {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// OnGetTask implements tasks/get.
func (h *a2aHandler) OnGetTask(ctx context.Context, q *a2a.TaskQueryParams) (*a2a.Task, error) {
	if q == nil {
		return nil, invalid("params.id is required")
	}
	return h.view(ctx, q.ID, q.HistoryLength)
}

// OnCancelTask implements tasks/cancel: a task at work has its run
// cancelled (on whichever replica runs it); a task that waits for a
// decision is cancelled, its thread left waiting until a new task goes on
// in its context. A task that ended before the cancel took is not
// cancelable.
func (h *a2aHandler) OnCancelTask(ctx context.Context, p *a2a.TaskIDParams) (*a2a.Task, error) {
	if p == nil {
		return nil, invalid("params.id is required")
	}
	t, err := h.task(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	// A run cancelled may stop for a decision before the cancel takes:
	// that task is cancelled waiting, the second time round.
	for range 2 {
		stop := false
		err := h.s.inContext(ctx, t.ContextID, func() error {
			if t, err = h.task(ctx, p.ID); err != nil {
				return err
			}
			switch st, _, _ := h.s.taskState(ctx, t); {
			case st.Terminal():
				return fmt.Errorf("%w: task %s is %s", a2a.ErrTaskNotCancelable, t.ID, st)
			case st == a2a.TaskStateInputRequired:
				t.State, t.Status = a2a.TaskStateCanceled, nil
				return h.s.putTask(ctx, t, false)
			}
			stop = true
			return nil
		})
		if err != nil || !stop {
			if err != nil && !errors.Is(err, a2a.ErrTaskNotCancelable) && !errors.Is(err, a2a.ErrTaskNotFound) && !errors.Is(err, a2a.ErrInternalError) {
				err = fmt.Errorf("%w: %v", a2a.ErrInternalError, err)
			}
			if err != nil {
				return nil, err
			}
			return h.s.taskView(ctx, t, nil), nil
		}
		// Outside the lock: the run's end is recorded under it.
		if err := h.s.stopTask(ctx, t); err != nil {
			return nil, err
		}
		if t, err = h.task(ctx, p.ID); err != nil {
			return nil, err
		}
		switch st, _, _ := h.s.taskState(ctx, t); {
		case st == a2a.TaskStateCanceled:
			return h.s.taskView(ctx, t, nil), nil
		case st.Terminal():
			return nil, fmt.Errorf("%w: task %s ended %s before the cancel took", a2a.ErrTaskNotCancelable, t.ID, st)
		}
	}
	return h.s.taskView(ctx, t, nil), nil
}

// stopTask cancels a task's run and waits for its end to be recorded.
func (s *agents) stopTask(ctx context.Context, t *taskRecord) error {
	if rn := s.srv.Run(t.ContextID, t.RunID); rn != nil {
		rn.Cancel()
		wait := rn.Done()
		if lt := s.a2aTasks.get(t.ID); lt != nil && lt.rn.ID() == rn.ID() {
			wait = lt.ended
		}
		select {
		case <-wait:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	found, err := s.srv.CancelElsewhere(ctx, t.RunID)
	if err != nil {
		return fmt.Errorf("%w: %v", a2a.ErrInternalError, err)
	}
	if !found {
		return nil // no run: nothing to stop
	}
	// The replica that ran it records the task's end as it sees it.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if cur, err := s.getTask(ctx, t.ID); err != nil || cur == nil || cur.State.Terminal() || cur.State == a2a.TaskStateInputRequired {
			return nil
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// OnResubscribeToTask implements tasks/resubscribe: the task as it is,
// then, while it works, its status updates: as they come when this
// replica runs it; through another, each change of its state, and its
// answer once completed.
func (h *a2aHandler) OnResubscribeToTask(ctx context.Context, p *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if p == nil {
			yield(nil, invalid("params.id is required"))
			return
		}
		// The live task first: its end is recorded before its last
		// events come, so the record read after is never older than
		// them.
		lt := h.s.a2aTasks.get(p.ID)
		next := 0
		if lt != nil {
			_, next, _, _ = lt.since(0)
		}
		t, err := h.task(ctx, p.ID)
		if err != nil {
			yield(nil, err)
			return
		}
		view := h.s.taskView(ctx, t, nil)
		if !yield(view, nil) {
			return
		}
		if lt != nil {
			h.followLive(ctx, lt, next, yield)
			return
		}
		for state := view.Status.State; !state.Terminal() && state != a2a.TaskStateInputRequired; {
			select {
			case <-time.After(500 * time.Millisecond):
			case <-ctx.Done():
				return
			case <-h.s.srv.Closing():
				return
			}
			if t, err = h.task(ctx, p.ID); err != nil {
				yield(nil, err)
				return
			}
			st, msg, answer := h.s.taskState(ctx, t)
			if st == state {
				continue
			}
			state = st
			var evs []a2a.Event
			if st == a2a.TaskStateCompleted {
				evs = answerChunks(t, answer)
			}
			ev := a2a.NewStatusUpdateEvent(t, st, msg)
			ev.Final = st.Terminal() || st == a2a.TaskStateInputRequired
			for _, e := range append(evs, ev) {
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// Push notifications are not offered (the card says so).

func (h *a2aHandler) OnGetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigParams) (*a2a.TaskPushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *a2aHandler) OnListTaskPushConfig(context.Context, *a2a.ListTaskPushConfigParams) ([]*a2a.TaskPushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *a2aHandler) OnSetTaskPushConfig(context.Context, *a2a.TaskPushConfig) (*a2a.TaskPushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *a2aHandler) OnDeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigParams) error {
	return a2a.ErrPushNotificationNotSupported
}

// OnGetExtendedAgentCard: there is no card beyond the public one.
func (h *a2aHandler) OnGetExtendedAgentCard(context.Context) (*a2a.AgentCard, error) {
	return nil, a2a.ErrAuthenticatedExtendedCardNotConfigured
}
