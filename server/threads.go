package server

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/middleware/verify"
	"github.com/deepagents-go/deepagents/thread"
)

// threadRoutes registers the threads API: threads, their state and history.
func (s *Server) threadRoutes(m *http.ServeMux) {
	m.HandleFunc("POST "+langgraph.PathThreads, s.createThread)
	m.HandleFunc("POST "+langgraph.PathThreadSearch, s.searchThreads)
	m.HandleFunc("POST "+langgraph.PathThreadCount, s.countThreads)
	m.HandleFunc("GET "+langgraph.PathThread, s.getThread)
	m.HandleFunc("DELETE "+langgraph.PathThread, s.deleteThread)
	m.HandleFunc("PATCH "+langgraph.PathThread, s.patchThread)
	m.HandleFunc("POST "+langgraph.PathThreadCopy, s.copyThread)
	m.HandleFunc("GET "+langgraph.PathThreadState, s.getState)
	m.HandleFunc("GET "+langgraph.PathThreadStateAt, s.getState)
	m.HandleFunc("POST "+langgraph.PathThreadStateOf, s.stateAt)
	m.HandleFunc("POST "+langgraph.PathThreadState, s.updateState)
	m.HandleFunc("POST "+langgraph.PathThreadHistory, s.history)
	m.HandleFunc("GET "+langgraph.PathThreadHistory, s.history)
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var u [16]byte
	rand.Read(u[:]) //nolint:errcheck // crypto/rand.Read never fails
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u)
}

// interruptValue is the payload of LangChain's human-in-the-loop
// middleware in both spellings: Python's (snake case, which the Deep Agents
// UI reads) and JavaScript's (camel case, which LangGraph's JavaScript
// server sends).
type interruptValue struct {
	ActionRequests      []wireActionRequest `json:"action_requests"`
	ActionRequestsCamel []wireActionRequest `json:"actionRequests"`
	ReviewConfigs       []wireReviewConfig  `json:"review_configs"`
	ReviewConfigsCamel  []wireReviewConfig  `json:"reviewConfigs"`
}

// wireActionRequest is one action request of an interrupt. A subagent's
// request says which subagent asks: Namespace is its path (elements
// "name:tool_call_id", as in stream_subgraphs' event names) and Subagent
// the name of the one that asks; both are absent for the main agent's.
// A background task's request also names the task (TaskID).
type wireActionRequest struct {
	Name        string          `json:"name"`
	Args        json.RawMessage `json:"args"`
	Description string          `json:"description,omitempty"`
	Namespace   []string        `json:"namespace,omitempty"`
	Subagent    string          `json:"subagent,omitempty"`
	TaskID      string          `json:"task_id,omitempty"`
}

type wireReviewConfig struct {
	ActionName       string               `json:"action_name"`
	ActionNameCamel  string               `json:"actionName"`
	AllowedDecisions []agent.DecisionType `json:"allowed_decisions"`
	AllowedCamel     []agent.DecisionType `json:"allowedDecisions"`
}

// interruptOf is the one interrupt a checkpoint with pending requests
// stands for; its ID is derived from the checkpoint's.
func interruptOf(cpID string, reqs []agent.ActionRequest) langgraph.Interrupt {
	return langgraph.Interrupt{ID: "interrupt-" + cpID, Value: interruptValueOf(reqs, nil)}
}

// interruptValueOf is the human-in-the-loop payload of requests; more,
// when set, completes each action request.
func interruptValueOf(reqs []agent.ActionRequest, more func(agent.ActionRequest, *wireActionRequest)) interruptValue {
	v := interruptValue{ActionRequests: []wireActionRequest{}, ReviewConfigs: []wireReviewConfig{}}
	seen := map[string]bool{}
	for _, r := range reqs {
		args := r.Args
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		wr := wireActionRequest{Name: r.Tool, Args: args, Description: r.Description, Namespace: r.Namespace}
		if n := len(r.Namespace); n > 0 {
			wr.Subagent, _, _ = strings.Cut(r.Namespace[n-1], ":")
		}
		if more != nil {
			more(r, &wr)
		}
		v.ActionRequests = append(v.ActionRequests, wr)
		if !seen[r.Tool] {
			seen[r.Tool] = true
			v.ReviewConfigs = append(v.ReviewConfigs, wireReviewConfig{ActionName: r.Tool, ActionNameCamel: r.Tool, AllowedDecisions: r.Allowed, AllowedCamel: r.Allowed})
		}
	}
	v.ActionRequestsCamel, v.ReviewConfigsCamel = v.ActionRequests, v.ReviewConfigs
	return v
}

// hitlNode is the node LangGraph names for the human-in-the-loop pause.
const hitlNode = "HumanInTheLoopMiddleware.after_model"

func metadataOf(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	if len(raw) > 0 {
		json.Unmarshal(raw, &m) //nolint:errcheck // metadata that is not an object reads as none
	}
	return m
}

// threadMetadataNamespace holds metadata set on threads after their
// creation (PATCH), over the metadata the Saver recorded.
var threadMetadataNamespace = []string{"deepagents", "server", "thread_metadata"}

// metadata is a thread's metadata: the Saver's, with what was patched over
// it.
func (s *Server) metadata(ctx context.Context, th *checkpoint.Thread) map[string]any {
	m := metadataOf(th.Metadata)
	if it, err := s.store.Get(ctx, threadMetadataNamespace, th.ID); err == nil {
		maps.Copy(m, it.Value)
	}
	return m
}

// patchThread merges metadata into a thread's.
func (s *Server) patchThread(w http.ResponseWriter, r *http.Request) {
	tid := r.PathValue("thread_id")
	var q langgraph.ThreadPatch
	if !readJSON(w, r, &q) {
		return
	}
	th, ok := s.thread(w, r, tid)
	if !ok {
		return
	}
	over := map[string]any{}
	if it, err := s.store.Get(r.Context(), threadMetadataNamespace, tid); err == nil {
		over = it.Value
	}
	maps.Copy(over, q.Metadata)
	if err := s.store.Put(r.Context(), threadMetadataNamespace, tid, over); err != nil {
		storageError(w, tid, err)
		return
	}
	s.writeThread(w, r, th)
}

// copyThread makes a new thread holding a thread's state as of its head,
// and its metadata.
func (s *Server) copyThread(w http.ResponseWriter, r *http.Request) {
	tid := r.PathValue("thread_id")
	th, ok := s.thread(w, r, tid)
	if !ok {
		return
	}
	md, _ := json.Marshal(s.metadata(r.Context(), th))
	id := newUUID()
	lease, err := s.cfg.Saver.Acquire(r.Context(), id, md)
	if err != nil {
		storageError(w, id, err)
		return
	}
	if th.Head != "" {
		snap, err := s.cfg.Saver.Load(r.Context(), tid, "")
		if err != nil {
			lease.Release(r.Context(), checkpoint.StatusError) //nolint:errcheck
			storageError(w, tid, err)
			return
		}
		cp := &checkpoint.Checkpoint{ThreadID: id, ID: newCheckpointID(), Step: snap.Step, CreatedAt: time.Now().UTC(), Meta: snap.Meta,
			Delta: checkpoint.Delta{Messages: snap.Messages, Values: snap.Values, Files: make(map[string]*thread.FileData, len(snap.Files))}}
		for p, d := range snap.Files {
			cp.Files[p] = &d
		}
		if err := s.cfg.Saver.Put(r.Context(), cp); err != nil {
			lease.Release(r.Context(), checkpoint.StatusError) //nolint:errcheck
			storageError(w, id, err)
			return
		}
	}
	status := checkpoint.StatusIdle
	if reqs, _ := s.pendingOf(r.Context(), tid); len(reqs) > 0 {
		status = checkpoint.StatusInterrupted
	}
	if err := lease.Release(r.Context(), status); err != nil {
		storageError(w, id, err)
		return
	}
	copied, err := s.cfg.Saver.Thread(r.Context(), id)
	if err != nil {
		storageError(w, id, err)
		return
	}
	s.writeThread(w, r, copied)
}

// pendingOf returns the action requests a thread waits on.
func (s *Server) pendingOf(ctx context.Context, tid string) ([]agent.ActionRequest, error) {
	snap, err := s.cfg.Saver.Load(ctx, tid, "")
	if err != nil {
		return nil, err
	}
	return agent.PendingRequests(snap.Meta)
}

// private reports whether a state value is private to an assistant's
// agent (kept out of what clients see).
func (s *Server) private(key string) bool {
	if key == todos.Value {
		// Each agent's own, but a part of the state clients see and
		// write (values.todos), as in the references.
		return false
	}
	for _, a := range s.assistants {
		if slices.Contains(a.Agent.PrivateValues(), key) {
			return true
		}
	}
	return false
}

// unwritable says why a client may not write the state value key (at
// where, "values" or "input"): it is private to an agent, or protected
// (Config.ProtectedValues); "" when it may.
func (s *Server) unwritable(where, key string) string {
	switch {
	case slices.Contains(s.cfg.ProtectedValues, key):
		return fmt.Sprintf("%s.%s is protected: it governs how the thread runs, and is never written through the API", where, key)
	case s.private(key):
		return fmt.Sprintf("%s.%s is private to the agent", where, key)
	}
	return ""
}

// threadWire describes th; with values, its head state is loaded.
func (s *Server) threadWire(r *http.Request, th *checkpoint.Thread, withValues bool) (langgraph.Thread, error) {
	t := langgraph.Thread{
		ThreadID: th.ID, CreatedAt: th.CreatedAt, UpdatedAt: th.UpdatedAt, StateUpdatedAt: th.UpdatedAt,
		Metadata: s.metadata(r.Context(), th), Status: langgraph.ThreadStatus(th.Status), Config: map[string]any{},
		Interrupts: map[string][]langgraph.Interrupt{},
	}
	if th.Head == "" || !withValues {
		return t, nil
	}
	snap, err := s.cfg.Saver.Load(r.Context(), th.ID, "")
	if err != nil {
		return t, err
	}
	t.Values = values(snap, s.private)
	if reqs, _ := agent.PendingRequests(snap.Meta); len(reqs) > 0 {
		t.Interrupts[snap.ID] = []langgraph.Interrupt{interruptOf(snap.ID, reqs)}
	} else if bg := s.bgWaitingAt(r.Context(), th, snap); len(bg) > 0 {
		// The thread's own run is done; its background tasks wait.
		for _, a := range bg {
			t.Interrupts[bgPrefix+a.TaskID] = []langgraph.Interrupt{bgInterrupt(a.Approval)}
		}
		if th.Status == checkpoint.StatusIdle {
			t.Status = langgraph.ThreadStatus(checkpoint.StatusInterrupted)
		}
	}
	if th.Status == checkpoint.StatusError {
		if it, err := s.store.Get(r.Context(), threadErrorsNamespace, th.ID); err == nil {
			if e, ok := it.Value["error"].(string); ok {
				t.Error = &e
			}
		}
	}
	return t, nil
}

func (s *Server) createThread(w http.ResponseWriter, r *http.Request) {
	var q langgraph.ThreadCreate
	if !readJSON(w, r, &q) {
		return
	}
	if q.ThreadID == "" {
		q.ThreadID = newUUID()
	}
	if badID(w, "thread", q.ThreadID) {
		// A "/" would also name a subagent's thread (PARENT/CALL_ID).
		return
	}
	if len(q.Metadata) == 0 || bytes.Equal(q.Metadata, []byte("null")) {
		q.Metadata = json.RawMessage(`{}`)
	}
	if q.Metadata[0] != '{' {
		httpError(w, http.StatusUnprocessableEntity, "metadata must be an object")
		return
	}
	th, err := s.cfg.Saver.Thread(r.Context(), q.ThreadID)
	switch {
	case err == nil && q.IfExists == langgraph.IfExistsDoNothing:
		s.writeThread(w, r, th)
		return
	case err == nil:
		httpError(w, http.StatusConflict, "Thread already exists")
		return
	case !errors.Is(err, checkpoint.ErrNotFound):
		storageError(w, q.ThreadID, err)
		return
	}
	lease, err := s.cfg.Saver.Acquire(r.Context(), q.ThreadID, q.Metadata)
	if err != nil {
		storageError(w, q.ThreadID, err)
		return
	}
	if err := lease.Release(r.Context(), checkpoint.StatusIdle); err != nil {
		storageError(w, q.ThreadID, err)
		return
	}
	th, err = s.cfg.Saver.Thread(r.Context(), q.ThreadID)
	if err != nil {
		storageError(w, q.ThreadID, err)
		return
	}
	s.writeThread(w, r, th)
}

func (s *Server) writeThread(w http.ResponseWriter, r *http.Request, th *checkpoint.Thread) {
	t, err := s.threadWire(r, th, true)
	if err != nil {
		storageError(w, th.ID, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) getThread(w http.ResponseWriter, r *http.Request) {
	tid := r.PathValue("thread_id")
	th, ok := s.thread(w, r, tid)
	if !ok {
		return
	}
	s.writeThread(w, r, th)
}

func (s *Server) deleteThread(w http.ResponseWriter, r *http.Request) {
	tid := r.PathValue("thread_id")
	if _, ok := s.thread(w, r, tid); !ok {
		return
	}
	if err := s.runs.cancelThread(r.Context(), tid); err != nil {
		httpError(w, 499, "Request cancelled")
		return
	}
	if err := s.cfg.Saver.DeleteThread(r.Context(), tid); err != nil {
		storageError(w, tid, err)
		return
	}
	s.store.Delete(r.Context(), threadMetadataNamespace, tid) //nolint:errcheck // what remains is never read: thread IDs are not reused
	s.store.Delete(r.Context(), threadErrorsNamespace, tid)   //nolint:errcheck // likewise
	for _, m := range s.mounted {
		if m.ForgetThread != nil {
			m.ForgetThread(r.Context(), tid)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// contains reports whether every key of filter is in m with an equal
// value (LangGraph's metadata filter).
func contains(m map[string]any, filter map[string]any) bool {
	for k, v := range filter {
		got, ok := m[k]
		if !ok || !reflect.DeepEqual(got, v) {
			return false
		}
	}
	return true
}

func (s *Server) searchThreads(w http.ResponseWriter, r *http.Request) {
	var q langgraph.ThreadSearch
	if !readJSON(w, r, &q) {
		return
	}
	out, ok := s.findThreads(w, r, &q)
	if !ok {
		return
	}
	w.Header().Set(langgraph.HeaderPaginationTotal, fmt.Sprint(len(out)))
	writeJSON(w, http.StatusOK, page(out, q.Offset, q.Limit, 10))
}

// countThreads answers how many threads a search's filters find.
func (s *Server) countThreads(w http.ResponseWriter, r *http.Request) {
	var q langgraph.ThreadSearch
	if !readJSON(w, r, &q) {
		return
	}
	if out, ok := s.findThreads(w, r, &q); ok {
		writeJSON(w, http.StatusOK, len(out))
	}
}

// findThreads lists the threads a search's filters find, in its order;
// it answers and returns false when the saver fails.
func (s *Server) findThreads(w http.ResponseWriter, r *http.Request, q *langgraph.ThreadSearch) ([]langgraph.Thread, bool) {
	// A subagent's thread is part of its parent's, not one of the client's.
	// A thread idle in the Saver reads interrupted while its background
	// tasks wait for approval: those statuses are told apart below.
	status := checkpoint.Status(q.Status)
	byWire := len(s.bg) > 0 && (status == checkpoint.StatusIdle || status == checkpoint.StatusInterrupted)
	saverStatus := status
	if byWire {
		saverStatus = ""
	}
	all, err := s.cfg.Saver.Threads(r.Context(), checkpoint.ListOptions{Status: saverStatus, TopLevel: true})
	if err != nil {
		storageError(w, "", err)
		return nil, false
	}
	var kept []checkpoint.Thread
	for _, th := range all {
		if (len(q.IDs) == 0 || slices.Contains(q.IDs, th.ID)) && contains(s.metadata(r.Context(), &th), q.Metadata) {
			kept = append(kept, th)
		}
	}
	key := func(t *checkpoint.Thread) time.Time { return t.UpdatedAt }
	if q.SortBy == "created_at" {
		key = func(t *checkpoint.Thread) time.Time { return t.CreatedAt }
	}
	desc := q.SortOrder != "asc"
	slices.SortStableFunc(kept, func(a, b checkpoint.Thread) int {
		c := key(&a).Compare(key(&b))
		if c == 0 {
			c = cmp.Compare(a.ID, b.ID)
		}
		if desc {
			return -c
		}
		return c
	})
	out := []langgraph.Thread{}
	for _, th := range kept {
		t, err := s.threadWire(r, &th, true)
		if err != nil {
			storageError(w, th.ID, err)
			return nil, false
		}
		if byWire && t.Status != langgraph.ThreadStatus(status) {
			continue
		}
		if q.Values != nil {
			v, _ := json.Marshal(t.Values)
			var vm map[string]any
			json.Unmarshal(v, &vm) //nolint:errcheck // our own encoding
			if !contains(vm, q.Values) {
				continue
			}
		}
		out = append(out, t)
	}
	return out, true
}

// stateOf is a checkpoint's state on the wire: a thread waiting for
// decisions has the human-in-the-loop pause as its next task.
func (s *Server) stateOf(snap *checkpoint.Snapshot) langgraph.ThreadState {
	st := langgraph.ThreadState{
		Values: values(snap, s.private), Next: []string{}, Tasks: []langgraph.Task{},
		Metadata:   map[string]any{"source": "loop", "step": snap.Step},
		CreatedAt:  &snap.CreatedAt,
		Checkpoint: &langgraph.Checkpoint{ThreadID: snap.ThreadID, CheckpointID: snap.ID},
	}
	if snap.ParentID != "" {
		st.ParentCheckpoint = &langgraph.Checkpoint{ThreadID: snap.ThreadID, CheckpointID: snap.ParentID}
	}
	if reqs, _ := agent.PendingRequests(snap.Meta); len(reqs) > 0 {
		st.Next = []string{hitlNode}
		st.Tasks = []langgraph.Task{{ID: "task-" + snap.ID, Name: hitlNode, Path: []string{"__pregel_pull", hitlNode}, Interrupts: []langgraph.Interrupt{interruptOf(snap.ID, reqs)}}}
	}
	return st
}

// emptyState is the state of a thread without checkpoints.
func emptyState() langgraph.ThreadState {
	return langgraph.ThreadState{Values: map[string]any{}, Next: []string{}, Tasks: []langgraph.Task{}, Metadata: map[string]any{}}
}

func (s *Server) getState(w http.ResponseWriter, r *http.Request) {
	tid := r.PathValue("thread_id")
	th, ok := s.thread(w, r, tid)
	if !ok {
		return
	}
	cpid := r.PathValue("checkpoint_id")
	if th.Head == "" && cpid == "" {
		writeJSON(w, http.StatusOK, emptyState())
		return
	}
	snap, err := s.cfg.Saver.Load(r.Context(), tid, cpid)
	if err != nil {
		storageError(w, tid, err)
		return
	}
	st := s.stateOf(snap)
	if snap.ID == th.Head && len(st.Tasks) == 0 {
		// The head of a thread whose background tasks wait for approval
		// has a task for each (the history's states do not: a request
		// is the thread's now, not its checkpoint's).
		for _, a := range s.bgWaiting(r.Context(), tid) {
			st.Tasks = append(st.Tasks, bgTask(a.Approval))
			st.Next = []string{bgNode}
		}
	}
	writeJSON(w, http.StatusOK, st)
}

// stateAt answers the state as of the checkpoint a StateRequest names, or
// of the head when it names none.
func (s *Server) stateAt(w http.ResponseWriter, r *http.Request) {
	var q langgraph.StateRequest
	if !readJSON(w, r, &q) {
		return
	}
	r.SetPathValue("checkpoint_id", q.Checkpoint.CheckpointID)
	s.getState(w, r)
}

// history lists a thread's states newest first, every branch's, as
// LangGraph does: POST with a HistoryRequest, or GET with the query
// parameters limit and before (a checkpoint ID).
func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	tid := r.PathValue("thread_id")
	var q langgraph.HistoryRequest
	if r.Method == http.MethodPost {
		if !readJSON(w, r, &q) {
			return
		}
	} else if !historyQuery(w, r, &q) {
		return
	}
	if q.Limit != nil && *q.Limit < 0 {
		validationError(w, "limit", "limit must not be negative")
		return
	}
	if _, ok := s.thread(w, r, tid); !ok {
		return
	}
	infos, err := s.cfg.Saver.History(r.Context(), tid, checkpoint.ListOptions{})
	if err != nil {
		storageError(w, tid, err)
		return
	}
	if q.Checkpoint != nil && q.Checkpoint.CheckpointID != "" {
		infos = slices.DeleteFunc(infos, func(in checkpoint.Info) bool { return in.ID != q.Checkpoint.CheckpointID })
	}
	if q.Before != nil && q.Before.CheckpointID != "" {
		infos = before(infos, q.Before.CheckpointID)
	}
	limit := 10
	if q.Limit != nil {
		limit = *q.Limit
	}
	var filter map[string]any
	if len(q.Metadata) > 0 {
		// Compared as JSON decodes them: the filter's numbers are float64.
		b, _ := json.Marshal(q.Metadata)
		json.Unmarshal(b, &filter) //nolint:errcheck // our own encoding
	}
	out := make([]langgraph.ThreadState, 0, min(limit, len(infos)))
	for _, in := range infos {
		if len(out) >= limit {
			break
		}
		snap, err := s.cfg.Saver.Load(r.Context(), tid, in.ID)
		if err != nil {
			storageError(w, tid, err)
			return
		}
		st := s.stateOf(snap)
		if filter != nil {
			var md map[string]any
			b, _ := json.Marshal(st.Metadata)
			json.Unmarshal(b, &md) //nolint:errcheck // our own encoding
			if !contains(md, filter) {
				continue
			}
		}
		out = append(out, st)
	}
	writeJSON(w, http.StatusOK, out)
}

// historyQuery reads GET history's query parameters into q: limit, and
// before, a checkpoint ID (or, as the SDKs encode an object in a query, a
// config or checkpoint as JSON).
func historyQuery(w http.ResponseWriter, r *http.Request, q *langgraph.HistoryRequest) bool {
	v := r.URL.Query()
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil {
			validationError(w, "limit", fmt.Sprintf("limit must be an integer, not %q", l))
			return false
		}
		q.Limit = &n
	}
	if b := v.Get("before"); b != "" {
		q.Before = &langgraph.CheckpointRef{CheckpointID: b}
		if strings.HasPrefix(b, "{") {
			if err := json.Unmarshal([]byte(b), q.Before); err != nil {
				validationError(w, "before", err.Error())
				return false
			}
		}
	}
	return true
}

// before returns the checkpoints of infos (newest first) older than id:
// those listed after it, or, when id is not one of them, those whose IDs
// sort before it, as LangGraph compares checkpoint IDs.
func before(infos []checkpoint.Info, id string) []checkpoint.Info {
	if i := slices.IndexFunc(infos, func(in checkpoint.Info) bool { return in.ID == id }); i >= 0 {
		return infos[i+1:]
	}
	return slices.DeleteFunc(infos, func(in checkpoint.Info) bool { return in.ID >= id })
}

// updateState applies a client's edit to a thread's state as a new
// checkpoint: files merge by path (null deletes), todos replace, messages
// append. The edit applies to the head, or to the checkpoint the request
// names (checkpoint_id or checkpoint), which forks the thread there. The
// thread must not be running.
func (s *Server) updateState(w http.ResponseWriter, r *http.Request) {
	tid := r.PathValue("thread_id")
	var q langgraph.StateUpdate
	if !readJSON(w, r, &q) {
		return
	}
	th, ok := s.thread(w, r, tid)
	if !ok {
		return
	}
	for k := range q.Values {
		if msg := s.unwritable("values", k); msg != "" {
			httpError(w, http.StatusUnprocessableEntity, msg)
			return
		}
	}
	now := time.Now().UTC()
	d, msg := decodeValues("values", q.Values, now)
	if msg != "" {
		httpError(w, http.StatusUnprocessableEntity, msg)
		return
	}
	lease, err := s.cfg.Saver.Acquire(r.Context(), tid, nil)
	if err != nil {
		storageError(w, tid, err)
		return
	}
	status := th.Status
	defer func() { lease.Release(r.Context(), status) }() //nolint:errcheck // the status is what it was
	// The update applies to the checkpoint the client names, or to the
	// head: the new checkpoint's parent. Naming an older one forks the
	// thread there, as in LangGraph; the branch left stays in the history.
	parent := th.Head
	if q.Checkpoint != nil && q.Checkpoint.CheckpointID != "" {
		parent = q.Checkpoint.CheckpointID
	}
	if q.CheckpointID != "" {
		parent = q.CheckpointID
	}
	cp := &checkpoint.Checkpoint{ThreadID: tid, ID: newCheckpointID(), ParentID: parent, CreatedAt: now, Delta: d}
	if parent != "" {
		base, err := s.cfg.Saver.Load(r.Context(), tid, parent)
		if errors.Is(err, checkpoint.ErrNotFound) {
			httpError(w, http.StatusNotFound, fmt.Sprintf("Checkpoint %s not found in thread %s", parent, tid))
			return
		}
		if err != nil {
			storageError(w, tid, err)
			return
		}
		cp.Keep, cp.Step = len(base.Messages), base.Step
		// A thread that waits for decisions still waits for them after
		// an edit (of a file the pending call writes, say).
		reqs, _ := agent.PendingRequests(base.Meta)
		if len(reqs) > 0 {
			cp.Meta = base.Meta
		}
		if parent != th.Head {
			// The thread's status is its new head's.
			status = checkpoint.StatusIdle
			if len(reqs) > 0 {
				status = checkpoint.StatusInterrupted
			}
		}
	}
	if err := s.cfg.Saver.Put(r.Context(), cp); err != nil {
		storageError(w, tid, err)
		return
	}
	writeJSON(w, http.StatusOK, langgraph.StateUpdated{Checkpoint: langgraph.Checkpoint{ThreadID: tid, CheckpointID: cp.ID}})
}

// newCheckpointID returns an ID that sorts after earlier ones, as the
// agent's do.
func newCheckpointID() string {
	var b [4]byte
	rand.Read(b[:]) //nolint:errcheck
	return fmt.Sprintf("%016x%x", time.Now().UnixNano(), b)
}

// decodeValues reads state values a client writes (where says which:
// "values" of a state update, "input" of a run) into a delta: files as
// the wire gives them (null removes one), the todo list checked, the
// messages converted, any other key as it is. msg says what is wrong.
func decodeValues(where string, vals map[string]json.RawMessage, now time.Time) (d checkpoint.Delta, msg string) {
	for k, v := range vals {
		switch k {
		case "files":
			var files map[string]json.RawMessage
			if err := json.Unmarshal(v, &files); err != nil {
				return d, where + ".files must be an object of paths"
			}
			d.Files = make(map[string]*thread.FileData, len(files))
			for p, f := range files {
				if len(f) == 0 || string(f) == "null" {
					d.Files[p] = nil
					continue
				}
				fd, err := fileFromWire(f, now)
				if err != nil {
					return d, fmt.Sprintf("%s.files[%q]: %v", where, p, err)
				}
				d.Files[p] = &fd
			}
		case verify.GoalValue:
			if err := verify.CheckGoal(v); err != nil {
				return d, where + ".goal: " + err.Error()
			}
			if d.Values == nil {
				d.Values = map[string]json.RawMessage{}
			}
			d.Values[k] = v
		case todos.Value:
			var list []todos.Todo
			if err := json.Unmarshal(v, &list); err != nil {
				return d, where + ".todos must be a list of todos"
			}
			if d.Values == nil {
				d.Values = map[string]json.RawMessage{}
			}
			// As the list was stored before it was a value: JSON null for
			// none, which reads as the empty list.
			d.Values[todos.Value], _ = json.Marshal(list)
		case "messages":
			var raws []json.RawMessage
			if err := json.Unmarshal(v, &raws); err != nil {
				return d, where + ".messages must be a list"
			}
			for _, raw := range raws {
				m, err := fromLangChain(raw)
				if err != nil {
					return d, where + ".messages: " + err.Error()
				}
				if m.ID == "" {
					m.ID = newUUID()
				}
				d.Messages = append(d.Messages, m)
			}
		default:
			if d.Values == nil {
				d.Values = map[string]json.RawMessage{}
			}
			d.Values[k] = v
		}
	}
	return d, ""
}
