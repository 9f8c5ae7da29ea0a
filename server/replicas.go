package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/store"
)

// Several servers on one database share their runs through its store
// (Config.Store): each run has a record there naming the replica that
// executes it, and each replica a heartbeat. A request for a run this
// replica does not have is forwarded to the replica that does; a run whose
// replica stopped beating is marked failed by whichever replica finds it
// (the thread's lease, held by the dead process, is freed by the database
// itself, so the thread can run again and never runs twice at once).

var (
	runsNamespace     = []string{"deepagents", "server", "runs"}
	replicasNamespace = []string{"deepagents", "server", "replicas"}
)

// Timing of the heartbeats; a replica silent for replicaTimeout is dead.
const (
	heartbeatEvery = 3 * time.Second
	replicaTimeout = 15 * time.Second
)

// forwardedHeader marks a request one replica forwarded to another, which
// answers it from what it has and never forwards it again.
const forwardedHeader = "X-Deepagents-Forwarded"

// runRecord is a run as the shared store keeps it: the run as the API
// shows it, and the replica executing it.
type runRecord struct {
	langgraph.Run
	Replica string `json:"replica"` // the replica ID
	// lost is set when the replica running the run could not be reached
	// while the run was unfinished (never stored).
	lost bool
}

// value is the record as the store keeps it: the run's JSON object with
// "replica" added (its key is the run's ID).
func (r *runRecord) value() map[string]any { return asValue(r) }

// recordOf reads a run's record; the item's key is the run's ID. A value
// of the wrong type reads as none, as the rest of the record does.
func recordOf(it *store.Item) *runRecord {
	var rec runRecord
	// A time that does not parse would stop encoding/json from decoding
	// the rest of the record: such a time is left out, and stays zero.
	v := make(map[string]any, len(it.Value))
	for k, x := range it.Value {
		if k == "created_at" || k == "updated_at" {
			if s, ok := x.(string); !ok || !validTime(s) {
				continue
			}
		}
		v[k] = x
	}
	fromValue(v, &rec) //nolint:errcheck // what does not fit stays zero
	rec.RunID = it.Key
	if rec.Metadata == nil {
		rec.Metadata = map[string]any{}
	}
	rec.Kwargs = map[string]any{}
	return &rec
}

// validTime reports whether s is a time as JSON carries one (RFC 3339).
func validTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// record writes rn's record, when replicas share a store. A failure is
// logged: the run goes on, seen by this replica alone.
func (s *Server) record(rn *run) {
	if s.cfg.Store == nil {
		return
	}
	rec := runRecord{Run: rn.wire(), Replica: s.replicaID}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.cfg.Store.Put(ctx, runsNamespace, rn.id, rec.value()); err != nil {
		s.log.Warn("server: recording a run for the other replicas", "run", rn.id, "err", err)
	}
}

// heartbeat tells the other replicas this one is alive, and marks failed
// the runs of replicas that are not, until the server closes.
func (s *Server) heartbeat() {
	defer s.wg.Done()
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	s.sweep()
	for {
		select {
		case <-tick.C:
		case <-s.baseCtx.Done():
			return
		}
		s.beat()
		s.sweep()
	}
}

// beat records that this replica is alive now. New beats once before it
// returns: a replica's runs are recorded only after the replica is, or
// another replica, finding the run before the replica, would take it for
// dead and mark its run failed.
func (s *Server) beat() {
	ctx, cancel := context.WithTimeout(s.baseCtx, 10*time.Second)
	defer cancel()
	err := s.cfg.Store.Put(ctx, replicasNamespace, s.replicaID, map[string]any{"url": s.cfg.URL, "seen": time.Now().UTC().Format(time.RFC3339Nano)})
	if err != nil && s.baseCtx.Err() == nil {
		s.log.Warn("server: heartbeat", "err", err)
	}
}

// forgetPrevious deletes the records of the replicas that were reached at
// this one's URL: they are earlier incarnations of this server (two live
// servers cannot listen at one address), killed or crashed, and their
// unfinished runs will never end. With their records gone they are dead
// at once, rather than after replicaTimeout: the sweep that follows, or
// the first request for one of their runs, marks those runs failed.
func (s *Server) forgetPrevious() {
	ctx, cancel := context.WithTimeout(s.baseCtx, 10*time.Second)
	defer cancel()
	items, err := s.cfg.Store.Search(ctx, replicasNamespace, store.SearchOptions{Filter: map[string]any{"url": s.cfg.URL}, Limit: 1000})
	if err != nil {
		s.log.Warn("server: looking up this server's previous runs", "err", err)
		return
	}
	for _, it := range items {
		if it.Key != s.replicaID {
			if err := s.cfg.Store.Delete(ctx, replicasNamespace, it.Key); err != nil {
				s.log.Warn("server: forgetting this server's previous incarnation", "replica", it.Key, "err", err)
			}
		}
	}
}

// replica returns the URL of a live replica; dead reports that the
// replica is known to have stopped (its record is gone, or its heartbeat
// is stale). A store that fails says neither: url is "" and dead false,
// and no run is given up for a passing database error.
func (s *Server) replica(ctx context.Context, id string) (url string, dead bool) {
	it, err := s.cfg.Store.Get(ctx, replicasNamespace, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", true
	}
	if err != nil {
		return "", false
	}
	seen, _ := it.Value["seen"].(string)
	t, err := time.Parse(time.RFC3339Nano, seen)
	if err != nil || time.Since(t) > replicaTimeout {
		return "", true
	}
	u, _ := it.Value["url"].(string)
	return u, false
}

// sweep marks failed the unfinished runs of dead replicas. Each store call
// has a time limit of its own, so a slow one does not make the rest fail.
func (s *Server) sweep() {
	for _, status := range []langgraph.RunStatus{langgraph.RunPending, langgraph.RunRunning} {
		ctx, cancel := context.WithTimeout(s.baseCtx, 10*time.Second)
		items, err := s.cfg.Store.Search(ctx, runsNamespace, store.SearchOptions{Filter: map[string]any{"status": string(status)}, Limit: 1000})
		cancel()
		if err != nil {
			return
		}
		for i := range items {
			rec := recordOf(&items[i])
			if rec.Replica == s.replicaID {
				continue
			}
			ctx, cancel := context.WithTimeout(s.baseCtx, 10*time.Second)
			if _, dead := s.replica(ctx, rec.Replica); dead {
				s.orphan(ctx, rec)
			}
			cancel()
		}
	}
}

// orphan marks failed a run whose replica stopped.
func (s *Server) orphan(ctx context.Context, rec *runRecord) {
	rec.Status, rec.UpdatedAt = langgraph.RunError, time.Now().UTC()
	if err := s.cfg.Store.Put(ctx, runsNamespace, rec.RunID, rec.value()); err != nil {
		s.log.Warn("server: marking a dead replica's run failed", "run", rec.RunID, "err", err)
	}
}

// remoteRun finds a run this replica does not have in the shared store;
// nil when there is none. A run whose replica died is marked failed first.
func (s *Server) remoteRun(r *http.Request, threadID, runID string) *runRecord {
	if s.cfg.Store == nil {
		return nil
	}
	it, err := s.cfg.Store.Get(r.Context(), runsNamespace, runID)
	if err != nil {
		return nil
	}
	rec := recordOf(it)
	if rec.ThreadID != threadID {
		return nil
	}
	if rec.Status.Done() {
		return rec
	}
	if _, dead := s.replica(r.Context(), rec.Replica); rec.Replica == s.replicaID || dead {
		// Its replica is dead, or it is this one, restarted, which has
		// lost the run: it will not end otherwise.
		s.orphan(r.Context(), rec)
	}
	return rec
}

// forward sends the request to the replica running rec and relays the
// answer as it comes (streams included). It returns false, having written
// nothing, when that replica cannot be reached or the run has ended.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, rec *runRecord) bool {
	if rec.Status.Done() || r.Header.Get(forwardedHeader) != "" {
		return false
	}
	u, _ := s.replica(r.Context(), rec.Replica)
	target, err := url.Parse(u)
	if err != nil || target.Host == "" {
		return false
	}
	failed := false
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Set(forwardedHeader, s.replicaID)
			if s.cfg.APIKey != "" {
				pr.Out.Header.Set(langgraph.HeaderAPIKey, s.cfg.APIKey)
			}
		},
		FlushInterval: -1, // streams go through as they come
		ModifyResponse: func(res *http.Response) error {
			// The answering replica sets its own CORS headers; ours are
			// already on w.
			for _, h := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Expose-Headers"} {
				res.Header.Del(h)
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // our client left; the run goes on where it runs
			}
			failed = true
			s.log.Warn("server: forwarding to the replica running a run", "run", rec.RunID, "err", err)
		},
	}
	stream := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/stream")
	broke := false
	func() {
		// The answering replica died part way through its answer: the
		// proxy aborts this request (http.ErrAbortHandler). A stream
		// ends with an error event instead, as a run that fails does.
		defer func() {
			if v := recover(); v != nil {
				if v != http.ErrAbortHandler || !stream || r.Context().Err() != nil {
					panic(v)
				}
				broke = true
			}
		}()
		p.ServeHTTP(w, r)
	}()
	if r.Context().Err() != nil {
		return true // the client left: nothing more to write
	}
	if stream && !failed && (broke || !s.ends(r.Context(), rec.RunID)) {
		// The stream ended and its run did not: the replica running it
		// stopped. The client hears so, as it would of a failed run,
		// rather than an end that reads as the run's.
		writeLost(w, rec.RunID)
		return true
	}
	if failed {
		// Unreachable, but is it dead? Only then is its run given up.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
		defer cancel()
		if _, dead := s.replica(ctx, rec.Replica); dead {
			s.orphan(ctx, rec)
		}
	}
	return !failed
}

// writeLost ends a stream whose run was lost with its replica with an
// error event, as a failed run's stream ends.
func writeLost(w http.ResponseWriter, runID string) {
	b, _ := json.Marshal(langgraph.Failure{Error: "RunLostError", Message: fmt.Sprintf("the server running run %s stopped before the run ended", runID)})
	fmt.Fprintf(w, "event: error\ndata: %s\n\n", b)
	http.NewResponseController(w).Flush() //nolint:errcheck // the client may be gone
}

// ends reports whether a run's record says it ended, waiting a little for
// it: a replica ends a run's stream as it records its end.
func (s *Server) ends(ctx context.Context, runID string) bool {
	for deadline := time.Now().Add(2 * time.Second); ; {
		it, err := s.cfg.Store.Get(ctx, runsNamespace, runID)
		if err != nil || recordOf(it).Status.Done() || ctx.Err() != nil {
			return true // nothing known otherwise: the stream's end stands
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// activeRemote finds the unfinished run on a thread that another replica
// executes, if any: a running one first.
func (s *Server) activeRemote(ctx context.Context, threadID string) *runRecord {
	return s.unfinishedRemote(ctx, threadID, func(*runRecord) bool { return true })
}

// remoteAhead finds a run of rn's thread on another replica that goes
// before rn: one running, or one pending that was created earlier (the
// run ID decides between runs created at the same instant). Enqueued runs
// on several replicas thus take turns instead of each waiting for the
// other.
func (s *Server) remoteAhead(ctx context.Context, rn *run) *runRecord {
	return s.unfinishedRemote(ctx, rn.threadID, func(rec *runRecord) bool {
		if rec.Status == langgraph.RunRunning {
			return true
		}
		if !rec.CreatedAt.Equal(rn.createdAt) {
			return rec.CreatedAt.Before(rn.createdAt)
		}
		return rec.RunID < rn.id
	})
}

// unfinishedRemote finds an unfinished run of the thread on another replica that
// keep accepts, looking at running runs first.
func (s *Server) unfinishedRemote(ctx context.Context, threadID string, keep func(*runRecord) bool) *runRecord {
	if s.cfg.Store == nil {
		return nil
	}
	for _, status := range []langgraph.RunStatus{langgraph.RunRunning, langgraph.RunPending} {
		items, err := s.cfg.Store.Search(ctx, runsNamespace, store.SearchOptions{Filter: map[string]any{"thread_id": threadID, "status": string(status)}, Limit: 1000})
		if err != nil {
			continue
		}
		for i := range items {
			if rec := recordOf(&items[i]); rec.Replica != s.replicaID && keep(rec) {
				return rec
			}
		}
	}
	return nil
}

// cancelRemote cancels a run on another replica and waits until its
// thread is free.
func (s *Server) cancelRemote(ctx context.Context, rec *runRecord) error {
	u, dead := s.replica(ctx, rec.Replica)
	if dead {
		s.orphan(ctx, rec)
		return nil
	}
	if u == "" {
		return fmt.Errorf("the run %s runs on another server, which cannot be looked up now; try again", rec.RunID)
	}
	c := langgraph.Client{URL: u, Headers: map[string]string{forwardedHeader: s.replicaID}}
	if s.cfg.APIKey != "" {
		c.Headers[langgraph.HeaderAPIKey] = s.cfg.APIKey
	}
	// Whatever it answers (the run may have ended there just now), the
	// thread's status below says whether it is free.
	var answered *langgraph.Error
	if err := c.CancelRun(ctx, rec.ThreadID, rec.RunID, true, ""); err != nil && !errors.As(err, &answered) {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		th, err := s.cfg.Saver.Thread(ctx, rec.ThreadID)
		if err != nil || th.Status != checkpoint.StatusBusy {
			return nil
		}
	}
	return errors.New("the cancelled run on another replica did not release its thread")
}
