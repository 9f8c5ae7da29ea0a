package server

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/store"
)

// runRoutes registers the runs API: on a thread and stateless.
func (s *Server) runRoutes(m *http.ServeMux) {
	m.HandleFunc("POST "+langgraph.PathRunsStream, s.streamRun)
	m.HandleFunc("POST "+langgraph.PathRunsWait, s.waitRun)
	m.HandleFunc("POST "+langgraph.PathRuns, s.createRun)
	m.HandleFunc("GET "+langgraph.PathRuns, s.listRuns)
	m.HandleFunc("GET "+langgraph.PathRun, s.getRun)
	m.HandleFunc("POST "+langgraph.PathRunCancel, s.cancelRun)
	m.HandleFunc("GET "+langgraph.PathRunJoin, s.joinRun)
	m.HandleFunc("GET "+langgraph.PathRunStream, s.joinStream)
	m.HandleFunc("POST "+langgraph.PathStatelessStream, s.streamRun)
	m.HandleFunc("POST "+langgraph.PathStatelessWait, s.waitRun)
}

// runPath is where a run lives; clients read its IDs from Content-Location.
func runPath(rn *run) string { return langgraph.Path(langgraph.PathRun, rn.threadID, rn.id) }

func (s *Server) streamRun(w http.ResponseWriter, r *http.Request) {
	rn := s.startRun(w, r, r.PathValue("thread_id"))
	if rn == nil {
		return
	}
	// on_disconnect defaults to cancel, as in LangGraph: a client that
	// goes away takes its run with it unless it asked otherwise.
	s.serveEvents(w, r, rn, 0, rn.onDisconnect != langgraph.OnDisconnectContinue)
}

// serveEvents writes rn's events after seq as server-sent events until the
// run ends or the client goes away.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request, rn *run, seq int, cancelOnDisconnect bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Location", runPath(rn))
	h.Set("Location", langgraph.Path(langgraph.PathRunStream, rn.threadID, rn.id))
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	bw := bufio.NewWriterSize(w, 32<<10)
	flush := func() bool {
		if bw.Flush() != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	if !flush() {
		return
	}
	beat := time.NewTicker(s.cfg.Heartbeat)
	defer beat.Stop()
	for {
		evs, done, changed := rn.since(seq)
		for _, e := range evs {
			fmt.Fprintf(bw, "event: %s\ndata: %s\nid: %d\n\n", e.name, e.data, e.seq)
			seq = e.seq
		}
		if len(evs) > 0 && !flush() {
			break
		}
		if done {
			return
		}
		select {
		case <-changed:
		case <-beat.C:
			bw.WriteString(": heartbeat\n\n")
			if !flush() {
				goto gone
			}
		case <-r.Context().Done():
			goto gone
		}
	}
gone:
	if cancelOnDisconnect {
		rn.cancel(errCancelled)
	}
}

func (s *Server) createRun(w http.ResponseWriter, r *http.Request) {
	rn := s.startRun(w, r, r.PathValue("thread_id"))
	if rn == nil {
		return
	}
	w.Header().Set("Content-Location", runPath(rn))
	writeJSON(w, http.StatusOK, rn.wire())
}

// waitRun runs and answers the final state.
func (s *Server) waitRun(w http.ResponseWriter, r *http.Request) {
	rn := s.startRun(w, r, r.PathValue("thread_id"))
	if rn == nil {
		return
	}
	select {
	case <-rn.finished:
	case <-r.Context().Done():
		if rn.onDisconnect != langgraph.OnDisconnectContinue {
			rn.cancel(errCancelled)
		}
		return
	}
	w.Header().Set("Content-Location", runPath(rn))
	s.writeResult(w, r, rn)
}

// writeResult answers a run's final state; for a run ended long enough ago
// that it was let go, the thread's state.
func (s *Server) writeResult(w http.ResponseWriter, r *http.Request, rn *run) {
	res := rn.result()
	if res == nil {
		snap, err := s.cfg.Saver.Load(r.Context(), rn.threadID, "")
		if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			storageError(w, rn.threadID, err)
			return
		}
		res = map[string]any{}
		if snap != nil {
			res = values(snap, s.private)
		}
	}
	writeJSON(w, http.StatusOK, res)
}

// result is what wait and join answer: the final state, with the error of
// a failed run under __error__ (the SDK raises it); nil when the final
// state is not known (any more).
func (rn *run) result() map[string]any {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.final == nil && rn.status != langgraph.RunError {
		return nil
	}
	out := map[string]any{}
	for k, v := range rn.final {
		out[k] = v
	}
	if rn.status == langgraph.RunError {
		out[langgraph.ErrorKey] = langgraph.Failure{Error: "AgentError", Message: rn.errMsg}
	}
	return out
}

// runOr404 finds the run a request names. A run this replica does not
// have, another may: the request is then forwarded to it, or answered
// here from the shared record when the run has ended (done is true
// either way, and rn nil).
func (s *Server) runOr404(w http.ResponseWriter, r *http.Request, ended func(*runRecord)) (rn *run, done bool) {
	tid, rid := r.PathValue("thread_id"), r.PathValue("run_id")
	if rn = s.runs.get(tid, rid); rn != nil {
		return rn, false
	}
	if rec := s.remoteRun(r, tid, rid); rec != nil {
		if !s.forward(w, r, rec) {
			if !rec.Status.Done() { // its replica went away just now
				rec.Status, rec.lost = langgraph.RunError, true
			}
			ended(rec)
		}
		return nil, true
	}
	httpError(w, http.StatusNotFound, "Run not found")
	return nil, true
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	rn, done := s.runOr404(w, r, func(rec *runRecord) { writeJSON(w, http.StatusOK, rec.Run) })
	if !done {
		writeJSON(w, http.StatusOK, rn.wire())
	}
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	tid := r.PathValue("thread_id")
	if _, ok := s.thread(w, r, tid); !ok {
		return
	}
	q := r.URL.Query()
	limit, offset := 10, 0
	if v, err := strconv.Atoi(q.Get("limit")); err == nil {
		limit = v
	}
	if v, err := strconv.Atoi(q.Get("offset")); err == nil {
		offset = v
	}
	status := langgraph.RunStatus(q.Get("status"))
	out := []langgraph.Run{}
	seen := map[string]bool{}
	for _, rn := range s.runs.ofThread(tid) {
		seen[rn.id] = true
		if wr := rn.wire(); status == "" || wr.Status == status {
			out = append(out, wr)
		}
	}
	if s.cfg.Store != nil { // the other replicas' runs
		items, _ := s.cfg.Store.Search(r.Context(), runsNamespace, store.SearchOptions{Filter: map[string]any{"thread_id": tid}, Limit: 1000})
		for i := range items {
			if rec := recordOf(&items[i]); !seen[rec.RunID] && (status == "" || rec.Status == status) {
				out = append(out, rec.Run)
			}
		}
		slices.SortFunc(out, func(a, b langgraph.Run) int { return b.CreatedAt.Compare(a.CreatedAt) })
	}
	writeJSON(w, http.StatusOK, page(out, offset, &limit, 10))
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	rn, done := s.runOr404(w, r, func(*runRecord) { w.WriteHeader(http.StatusAccepted) })
	if done {
		return
	}
	rn.cancel(errCancelled)
	if r.URL.Query().Get("wait") == "1" || r.URL.Query().Get("wait") == "true" {
		select {
		case <-rn.finished:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) joinRun(w http.ResponseWriter, r *http.Request) {
	rn, done := s.runOr404(w, r, func(rec *runRecord) { s.writeResult(w, r, &run{threadID: rec.ThreadID}) })
	if done {
		return
	}
	select {
	case <-rn.finished:
	case <-r.Context().Done():
		return
	}
	s.writeResult(w, r, rn)
}

// joinStream rejoins a run's stream: from after Last-Event-ID (-1, or no
// header, from the start) while the run goes on; a run that has ended
// answers an empty stream, as LangGraph's server does.
func (s *Server) joinStream(w http.ResponseWriter, r *http.Request) {
	rn, done := s.runOr404(w, r, func(rec *runRecord) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if rec.lost {
			// The run's replica went away while it ran: its stream
			// ends as a failed run's does.
			writeLost(w, rec.RunID)
		}
	})
	if done {
		return
	}
	seq := 0
	if v, err := strconv.Atoi(r.Header.Get(langgraph.HeaderLastEventID)); err == nil && v > 0 {
		seq = v
	}
	cancel := r.URL.Query().Get("cancel_on_disconnect") == "1" || r.URL.Query().Get("cancel_on_disconnect") == "true"
	select {
	case <-rn.finished:
		rn.mu.Lock()
		seq = rn.seq // nothing to replay
		rn.mu.Unlock()
	default:
	}
	s.serveEvents(w, r, rn, seq, cancel)
}
