package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/store"
)

// Crons (LangGraph's /runs/crons) start runs on a schedule: on a thread, or
// stateless (a new thread per firing). They are kept in the server's store
// (Config.Store: the database the replicas share), and every replica's
// scheduler looks for the crons that are due. A firing is claimed under
// the Saver's lease on a thread of the cron's own (cronLockThread): the
// replica holding it reads the cron's next_run_date and, when it is due,
// advances it before starting the run; a replica that comes second finds
// the lease taken or the date advanced, so each firing starts one run
// across the replicas. Every change to a cron (update, delete) is made
// under the same lease, so none is lost to a firing.

const (
	cronLockPrefix     = "deepagents-cron/"
	defaultCronOnEnd   = onCompletionDelete
	maxCronSearchLimit = 1000
)

// onCompletionDelete (a cron's on_run_completed) deletes the thread of a
// stateless cron's run when it ends.
const onCompletionDelete = "delete"

// cronsNamespace holds the crons, keyed by ID.
var cronsNamespace = []string{"deepagents", "server", "crons"}

// Timing of the scheduler: it looks at the crons at least every
// cronIdle, and again cronRetry after finding one due that another
// replica was claiming.
const (
	cronIdle  = 15 * time.Second
	cronRetry = time.Second
)

// cronScheduler is the state of a server's scheduler.
type cronScheduler struct {
	// now is the scheduler's clock (time.Now unless a test sets one).
	now atomic.Pointer[func() time.Time]
	// wake makes the scheduler look at the crons now (one changed here).
	wake chan struct{}
	// manual stops the scheduler's own looking: a test ticks it.
	manual atomic.Bool
	// fires counts the firings being started.
	fires sync.WaitGroup
}

// cronRecord is a cron as the API shows it and the store keeps it.
type cronRecord = langgraph.Cron

// cronValue is the record as the store keeps it.
func cronValue(c *cronRecord) map[string]any { return asValue(c) }

// cronOf reads a cron's record; nil for one that does not decode.
func cronOf(it *store.Item) *cronRecord {
	var c cronRecord
	if fromValue(it.Value, &c) != nil || c.CronID != it.Key {
		return nil
	}
	if c.Payload == nil {
		c.Payload = map[string]any{}
	}
	if c.Metadata == nil {
		c.Metadata = map[string]any{}
	}
	return &c
}

// cronLocation is the time zone the cron's schedule is read in.
func cronLocation(c *cronRecord) (*time.Location, error) {
	if c.Timezone == nil || *c.Timezone == "" {
		return time.UTC, nil
	}
	return time.LoadLocation(*c.Timezone)
}

// nextFiring is the cron's first firing after t; nil when it has none.
func nextFiring(c *cronRecord, t time.Time) (*time.Time, error) {
	sched, err := parseSchedule(c.Schedule)
	if err != nil {
		return nil, err
	}
	loc, err := cronLocation(c)
	if err != nil {
		return nil, err
	}
	n := sched.Next(t.In(loc))
	if n.IsZero() {
		return nil, nil
	}
	n = n.UTC()
	return &n, nil
}

// parseSchedule reads a 5-field cron schedule (or a descriptor such as
// @hourly). The time zone is the cron's timezone, not a prefix of the
// schedule, and a schedule is in minutes, as croniter's, which the
// reference server uses: @every and TZ= are refused.
func parseSchedule(spec string) (cron.Schedule, error) {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "@every") || strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return nil, fmt.Errorf("schedule %q: a cron schedule has five fields (minute hour day-of-month month day-of-week); set the time zone with timezone", spec)
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", spec, err)
	}
	return sched, nil
}

// cronLockThread is the thread whose lease guards a cron's changes and
// firings. Its ID has a slash, so lists of threads leave it out (as a
// child thread), and no path reaches it.
func cronLockThread(cronID string) string { return cronLockPrefix + cronID }

func (s *Server) cronRoutes(m *http.ServeMux) {
	m.HandleFunc("POST "+langgraph.PathCrons, s.createCron)
	m.HandleFunc("POST "+langgraph.PathThreadCrons, s.createCron)
	m.HandleFunc("POST "+langgraph.PathCronSearch, s.searchCrons)
	m.HandleFunc("POST "+langgraph.PathCronCount, s.countCrons)
	m.HandleFunc("PATCH "+langgraph.PathCron, s.updateCron)
	m.HandleFunc("DELETE "+langgraph.PathCron, s.deleteCron)
}

// cronNow is the scheduler's clock.
func (s *Server) cronNow() time.Time {
	if f := s.crons.now.Load(); f != nil {
		return (*f)().UTC()
	}
	return time.Now().UTC()
}

// cronFields are the fields of a cron request that are the cron's, not
// its runs': the rest is the payload of each run it starts.
var cronFields = []string{"schedule", "timezone", "end_time", "enabled", "on_run_completed"}

// cronRequest is what POST and PATCH read of a cron request beyond the
// run payload.
type cronRequest struct {
	Schedule       *string             `json:"schedule"`
	AssistantID    *string             `json:"assistant_id"`
	Timezone       *string             `json:"timezone"`
	EndTime        *time.Time          `json:"end_time"`
	Enabled        *bool               `json:"enabled"`
	OnRunCompleted *string             `json:"on_run_completed"`
	Metadata       *map[string]any     `json:"metadata"`
	Run            langgraph.RunCreate `json:"-"`
}

// readCronRequest reads a cron request: the cron's fields, and the run
// payload (checked as a run request would be). It answers and returns
// false when the request is not one.
func readCronRequest(w http.ResponseWriter, r *http.Request) (*cronRequest, map[string]any, bool) {
	var raw map[string]json.RawMessage
	if !readJSON(w, r, &raw) {
		return nil, nil, false
	}
	b, _ := json.Marshal(raw) //nolint:errchkjson // raw JSON
	var q cronRequest
	if err := json.Unmarshal(b, &q); err != nil {
		validationError(w, "", err.Error())
		return nil, nil, false
	}
	payload := map[string]any{}
	for k, v := range raw {
		if slices.Contains(cronFields, k) || string(v) == "null" {
			continue
		}
		var x any
		json.Unmarshal(v, &x) //nolint:errcheck // valid JSON, read above
		payload[k] = x
	}
	// The payload is a run request: a field of the wrong type is refused
	// now, not at each firing.
	pb, _ := json.Marshal(payload) //nolint:errchkjson // decoded JSON
	if err := json.Unmarshal(pb, &q.Run); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			validationError(w, typeErr.Field, fmt.Sprintf("Expected %s, received %s", typeErr.Type, typeErr.Value))
		} else {
			validationError(w, "", err.Error())
		}
		return nil, nil, false
	}
	if _, err := q.Run.StreamModes(); err != nil {
		validationError(w, "stream_mode", err.Error())
		return nil, nil, false
	}
	if _, err := durability(&q.Run); err != nil {
		validationError(w, "durability", err.Error())
		return nil, nil, false
	}
	switch q.Run.MultitaskStrategy {
	case "", langgraph.MultitaskReject, langgraph.MultitaskInterrupt, langgraph.MultitaskRollback, langgraph.MultitaskEnqueue:
	default:
		validationError(w, "multitask_strategy", fmt.Sprintf("unknown multitask_strategy %q: reject, interrupt, rollback or enqueue", q.Run.MultitaskStrategy))
		return nil, nil, false
	}
	if q.OnRunCompleted != nil && *q.OnRunCompleted != onCompletionDelete && *q.OnRunCompleted != langgraph.OnCompletionKeep {
		validationError(w, "on_run_completed", fmt.Sprintf("on_run_completed is delete or keep, not %q", *q.OnRunCompleted))
		return nil, nil, false
	}
	if q.Timezone != nil && *q.Timezone != "" {
		if _, err := time.LoadLocation(*q.Timezone); err != nil {
			validationError(w, "timezone", fmt.Sprintf("unknown time zone %q", *q.Timezone))
			return nil, nil, false
		}
	}
	if q.Schedule != nil {
		if _, err := parseSchedule(*q.Schedule); err != nil {
			validationError(w, "schedule", err.Error())
			return nil, nil, false
		}
	}
	return &q, payload, true
}

// createCron creates a cron: on the request's thread, or stateless.
func (s *Server) createCron(w http.ResponseWriter, r *http.Request) {
	q, payload, ok := readCronRequest(w, r)
	if !ok {
		return
	}
	if q.Schedule == nil {
		validationError(w, "schedule", "Required")
		return
	}
	ctx := r.Context()
	aid := ""
	if q.AssistantID != nil {
		aid = *q.AssistantID
	}
	_, wa := s.assistant(ctx, aid)
	if wa == nil {
		httpError(w, http.StatusNotFound, fmt.Sprintf("No assistant found for %q. Make sure the assistant ID is for a valid assistant or a valid graph ID.", aid))
		return
	}
	payload["assistant_id"] = wa.AssistantID
	now := s.cronNow()
	c := &cronRecord{
		CronID: newUUID(), AssistantID: wa.AssistantID, Schedule: strings.TrimSpace(*q.Schedule), Timezone: q.Timezone, EndTime: q.EndTime,
		CreatedAt: now, UpdatedAt: now, Payload: payload, Metadata: map[string]any{}, Enabled: q.Enabled == nil || *q.Enabled,
	}
	if q.Metadata != nil && *q.Metadata != nil {
		c.Metadata = *q.Metadata
	}
	if tid := r.PathValue("thread_id"); tid != "" {
		if _, ok := s.thread(w, r, tid); !ok {
			return
		}
		c.ThreadID = &tid
	} else {
		c.OnRunCompleted = defaultCronOnEnd
		if q.OnRunCompleted != nil {
			c.OnRunCompleted = *q.OnRunCompleted
		}
	}
	var err error
	if c.NextRunDate, err = nextFiring(c, now); err != nil {
		validationError(w, "schedule", err.Error())
		return
	}
	if err := s.store.Put(ctx, cronsNamespace, c.CronID, cronValue(c)); err != nil {
		storeError(w, err)
		return
	}
	s.wakeCrons()
	writeJSON(w, http.StatusOK, c)
}

// getCron reads a cron; nil, nil when there is none.
func (s *Server) getCron(ctx context.Context, id string) (*cronRecord, error) {
	it, err := s.store.Get(ctx, cronsNamespace, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return cronOf(it), nil
}

func (s *Server) deleteCron(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("cron_id")
	ctx := r.Context()
	c, err := s.getCron(ctx, id)
	if err != nil {
		storeError(w, err)
		return
	}
	if c == nil {
		httpError(w, http.StatusNotFound, fmt.Sprintf("Cron with ID %s not found", id))
		return
	}
	l, err := s.hold(ctx, cronLockThread(id))
	if err != nil {
		storageError(w, cronLockThread(id), err)
		return
	}
	err = s.store.Delete(ctx, cronsNamespace, id)
	s.letGo(ctx, cronLockThread(id), l)
	if err != nil {
		storeError(w, err)
		return
	}
	if err := s.cfg.Saver.DeleteThread(context.WithoutCancel(ctx), cronLockThread(id)); err != nil {
		s.log.Warn("server: deleting a cron's lease thread", "cron", id, "err", err)
	}
	w.WriteHeader(http.StatusNoContent)
}

// updateCron changes a cron's schedule, state or payload: the fields sent
// replace the cron's.
func (s *Server) updateCron(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("cron_id")
	q, payload, ok := readCronRequest(w, r)
	if !ok {
		return
	}
	if q.AssistantID != nil {
		validationError(w, "assistant_id", "A cron's assistant cannot change")
		return
	}
	ctx := r.Context()
	l, err := s.hold(ctx, cronLockThread(id))
	if err != nil {
		storageError(w, cronLockThread(id), err)
		return
	}
	c, err := s.getCron(ctx, id)
	if err != nil || c == nil {
		s.letGo(ctx, cronLockThread(id), l)
		if err != nil {
			storeError(w, err)
		} else {
			s.cfg.Saver.DeleteThread(context.WithoutCancel(ctx), cronLockThread(id)) //nolint:errcheck // only made by the lease just taken
			httpError(w, http.StatusNotFound, fmt.Sprintf("Cron with ID %s not found", id))
		}
		return
	}
	defer s.letGo(ctx, cronLockThread(id), l)
	reschedule := false
	if q.Schedule != nil {
		c.Schedule, reschedule = strings.TrimSpace(*q.Schedule), true
	}
	if q.Timezone != nil {
		c.Timezone, reschedule = q.Timezone, true
	}
	if q.EndTime != nil {
		c.EndTime = q.EndTime
	}
	if q.Enabled != nil {
		reschedule = reschedule || (*q.Enabled && !c.Enabled)
		c.Enabled = *q.Enabled
	}
	if q.OnRunCompleted != nil && c.ThreadID == nil {
		c.OnRunCompleted = *q.OnRunCompleted
	}
	if q.Metadata != nil && *q.Metadata != nil {
		c.Metadata = *q.Metadata
	}
	for k, v := range payload {
		c.Payload[k] = v
	}
	now := s.cronNow()
	if reschedule || c.NextRunDate == nil {
		if c.NextRunDate, err = nextFiring(c, now); err != nil {
			validationError(w, "schedule", err.Error())
			return
		}
	}
	c.UpdatedAt = now
	if err := s.store.Put(ctx, cronsNamespace, id, cronValue(c)); err != nil {
		storeError(w, err)
		return
	}
	s.wakeCrons()
	writeJSON(w, http.StatusOK, c)
}

// cronSearch is the body of POST /runs/crons/search and /count.
type cronSearch = langgraph.CronSearch

// cronSortFields are the fields crons sort by.
var cronSortFields = []string{"cron_id", "assistant_id", "thread_id", "next_run_date", "end_time", "created_at", "updated_at"}

// matching lists the crons a search keeps, in no order.
func (s *Server) matching(ctx context.Context, q *cronSearch) ([]*cronRecord, error) {
	filter := map[string]any{}
	if q.AssistantID != "" {
		_, wa := s.assistant(ctx, q.AssistantID)
		if wa == nil {
			return nil, nil
		}
		filter["assistant_id"] = wa.AssistantID
	}
	if q.ThreadID != "" {
		filter["thread_id"] = q.ThreadID
	}
	if q.Enabled != nil {
		filter["enabled"] = *q.Enabled
	}
	all, err := s.allCrons(ctx, filter)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(c *cronRecord) bool { return !store.Matches(c.Metadata, q.Metadata) }), nil
}

// allCrons reads the crons whose fields equal filter's.
func (s *Server) allCrons(ctx context.Context, filter map[string]any) ([]*cronRecord, error) {
	var out []*cronRecord
	for from := 0; ; from += storePageBatch {
		batch, err := s.store.Search(ctx, cronsNamespace, store.SearchOptions{Filter: filter, Limit: storePageBatch, Offset: from})
		if err != nil {
			return nil, err
		}
		for i := range batch {
			if c := cronOf(&batch[i]); c != nil {
				out = append(out, c)
			}
		}
		if len(batch) < storePageBatch {
			return out, nil
		}
	}
}

func (s *Server) searchCrons(w http.ResponseWriter, r *http.Request) {
	var q cronSearch
	if !readJSON(w, r, &q) {
		return
	}
	limit := 10
	if q.Limit != nil {
		limit = *q.Limit
	}
	switch {
	case limit < 1 || limit > maxCronSearchLimit:
		validationError(w, "limit", fmt.Sprintf("Number must be between 1 and %d", maxCronSearchLimit))
		return
	case q.Offset < 0:
		validationError(w, "offset", "Number must be greater than or equal to 0")
		return
	case q.SortBy != "" && !slices.Contains(cronSortFields, q.SortBy):
		validationError(w, "sort_by", "sort_by is one of "+strings.Join(cronSortFields, ", "))
		return
	case q.SortOrder != "" && q.SortOrder != "asc" && q.SortOrder != "desc":
		validationError(w, "sort_order", "sort_order is asc or desc")
		return
	}
	crons, err := s.matching(r.Context(), &q)
	if err != nil {
		storeError(w, err)
		return
	}
	by := cmp.Or(q.SortBy, "created_at")
	slices.SortStableFunc(crons, func(a, b *cronRecord) int {
		c := compareCrons(a, b, by)
		if c == 0 {
			c = strings.Compare(a.CronID, b.CronID)
		}
		if q.SortOrder != "asc" {
			c = -c
		}
		return c
	})
	if q.Offset >= len(crons) {
		crons = nil
	} else {
		crons = crons[q.Offset:min(len(crons), q.Offset+limit)]
	}
	out := make([]map[string]any, 0, len(crons))
	for _, c := range crons {
		v := cronValue(c)
		if len(q.Select) > 0 {
			for k := range v {
				if !slices.Contains(q.Select, k) {
					delete(v, k)
				}
			}
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// compareCrons orders two crons by a field of cronSortFields; a missing
// time or thread goes first.
func compareCrons(a, b *cronRecord, by string) int {
	t := func(p *time.Time) time.Time {
		if p == nil {
			return time.Time{}
		}
		return *p
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	switch by {
	case "cron_id":
		return strings.Compare(a.CronID, b.CronID)
	case "assistant_id":
		return strings.Compare(a.AssistantID, b.AssistantID)
	case "thread_id":
		return strings.Compare(str(a.ThreadID), str(b.ThreadID))
	case "next_run_date":
		return t(a.NextRunDate).Compare(t(b.NextRunDate))
	case "end_time":
		return t(a.EndTime).Compare(t(b.EndTime))
	case "updated_at":
		return a.UpdatedAt.Compare(b.UpdatedAt)
	default:
		return a.CreatedAt.Compare(b.CreatedAt)
	}
}

func (s *Server) countCrons(w http.ResponseWriter, r *http.Request) {
	var q cronSearch
	if !readJSON(w, r, &q) {
		return
	}
	crons, err := s.matching(r.Context(), &q)
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, len(crons))
}

// startCrons starts the scheduler, which Close stops.
func (s *Server) startCrons() {
	s.crons.wake = make(chan struct{}, 1)
	s.goRun(s.scheduleCrons)
}

// wakeCrons makes the scheduler look at the crons now.
func (s *Server) wakeCrons() {
	select {
	case s.crons.wake <- struct{}{}:
	default:
	}
}

// scheduleCrons fires the crons as they come due, until the server closes.
func (s *Server) scheduleCrons() {
	for {
		var next time.Time
		retry := false
		if !s.crons.manual.Load() {
			next, retry = s.cronTick(s.baseCtx)
		}
		wait := cronIdle
		if !next.IsZero() {
			wait = min(wait, next.Sub(s.cronNow()))
		}
		if retry {
			wait = min(wait, cronRetry)
		}
		// A date already past (the clock of a test, a claim lost to
		// another replica) is looked at again soon, not at once.
		wait = max(wait, 10*time.Millisecond)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.crons.wake:
			t.Stop()
		case <-s.baseCtx.Done():
			t.Stop()
			return
		}
	}
}

// cronTick fires the crons that are due. It returns the earliest firing
// to come, and whether a due cron was left to another replica that was
// claiming it (or to a store that failed): then it should look again
// soon.
func (s *Server) cronTick(ctx context.Context) (next time.Time, retry bool) {
	crons, err := s.allCrons(ctx, map[string]any{"enabled": true})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("server: reading the crons", "err", err)
		}
		return time.Time{}, true
	}
	now := s.cronNow()
	for _, c := range crons {
		if ctx.Err() != nil {
			return time.Time{}, false
		}
		at := c.NextRunDate
		if at != nil && !at.After(now) {
			fired, ok := s.claimCron(ctx, c.CronID, now)
			if !ok {
				retry = true
				continue
			}
			if fired != nil {
				// A run that waits for its thread (interrupt, rollback)
				// holds up no other cron.
				s.crons.fires.Add(1)
				if !s.goRun(func() {
					defer s.crons.fires.Done()
					s.fireCron(s.baseCtx, fired)
				}) {
					s.crons.fires.Done()
				}
			}
			c, at = fired, nil
			if c != nil {
				at = c.NextRunDate
			}
		}
		if at != nil && (next.IsZero() || at.Before(next)) {
			next = *at
		}
	}
	return next, retry
}

// claimCron claims a cron's firing due at now: under the cron's lease, it
// advances the cron's next_run_date past now. It returns the cron to fire
// (nil when the firing is not this replica's, or the cron ended), and
// false when it could not tell (the lease taken by another replica, or a
// store that failed).
func (s *Server) claimCron(ctx context.Context, id string, now time.Time) (*cronRecord, bool) {
	l, err := s.cfg.Saver.Acquire(ctx, cronLockThread(id), nil)
	if err != nil {
		if !errors.Is(err, checkpoint.ErrBusy) && ctx.Err() == nil {
			s.log.Warn("server: claiming a cron's firing", "cron", id, "err", err)
		}
		return nil, false
	}
	defer s.letGo(ctx, cronLockThread(id), l)
	c, err := s.getCron(ctx, id)
	if err != nil {
		return nil, false
	}
	if c == nil || !c.Enabled || c.NextRunDate == nil || c.NextRunDate.After(now) {
		return nil, true // deleted, disabled, or fired by another replica
	}
	due := *c.NextRunDate
	fire := c.EndTime == nil || !due.After(*c.EndTime)
	if c.NextRunDate, err = nextFiring(c, now); err != nil || c.NextRunDate == nil || (c.EndTime != nil && c.NextRunDate.After(*c.EndTime)) {
		// The cron ends: it fires no more.
		c.Enabled, c.NextRunDate = false, nil
	}
	if err := s.store.Put(ctx, cronsNamespace, id, cronValue(c)); err != nil {
		s.log.Warn("server: claiming a cron's firing", "cron", id, "err", err)
		return nil, false
	}
	if !fire {
		return nil, true
	}
	return c, true
}

// fireCron starts a cron's run, as POST /threads/{id}/runs (or POST
// /runs for a stateless cron) would with the cron's payload.
func (s *Server) fireCron(ctx context.Context, c *cronRecord) {
	body := make(map[string]any, len(c.Payload)+2)
	for k, v := range c.Payload {
		body[k] = v
	}
	tid := ""
	if c.ThreadID != nil {
		tid = *c.ThreadID
		// A firing while the thread runs waits its turn rather than
		// being lost.
		if _, ok := body["multitask_strategy"]; !ok {
			body["multitask_strategy"] = string(langgraph.MultitaskEnqueue)
		}
	} else {
		body["on_completion"] = cmp.Or(c.OnRunCompleted, defaultCronOnEnd)
	}
	var q langgraph.RunCreate
	if err := fromValue(body, &q); err != nil {
		s.log.Warn("server: a cron's payload", "cron", c.CronID, "err", err)
		return
	}
	rn, no := s.launch(ctx, runAsk{threadID: tid, q: &q})
	if no == nil {
		s.log.Info("server: cron fired", "cron", c.CronID, "thread", rn.threadID, "run", rn.id)
		return
	}
	s.log.Warn("server: a cron's run did not start", "cron", c.CronID, "thread", tid, "status", no.status, "answer", no.msg)
	if tid != "" && no.status == http.StatusNotFound {
		// Its thread is gone: so is the cron, as in LangGraph.
		if _, err := s.cfg.Saver.Thread(ctx, tid); errors.Is(err, checkpoint.ErrNotFound) {
			s.store.Delete(ctx, cronsNamespace, c.CronID)           //nolint:errcheck // looked at again next time
			s.cfg.Saver.DeleteThread(ctx, cronLockThread(c.CronID)) //nolint:errcheck // as above
		}
	}
}
