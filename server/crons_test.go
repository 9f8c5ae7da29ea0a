package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/store"
)

// clock is a test's clock for the cron scheduler.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// apiCron is a cron as the API answers it.
type apiCron = langgraph.Cron

var t0 = time.Date(2026, 1, 1, 12, 0, 30, 0, time.UTC)

// cronReplicas starts n replicas on one saver and store whose schedulers
// run on clk, ticked by the test.
func cronReplicas(t *testing.T, n int, clk *clock, model llm.Model) []*replica {
	t.Helper()
	rs := newReplicas(t, n, checkpoint.NewMemorySaver(), store.NewMemoryStore(), func() llm.Model { return model })
	for _, r := range rs {
		r.s.SetCronClock(clk.now)
	}
	return rs
}

func hello(text string) map[string]any {
	return map[string]any{"messages": []map[string]any{{"type": "human", "content": text}}}
}

// TestCronsAPI creates, searches, counts, updates and deletes crons.
func TestCronsAPI(t *testing.T) {
	clk := &clock{t: t0}
	f := cronReplicas(t, 1, clk, &countingModel{})[0].fixture
	var th map[string]any
	f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)

	var stateless, onThread apiCron
	f.JSON(http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "*/5 * * * *", "input": hello("hi"), "metadata": map[string]any{"team": "a"}}, http.StatusOK, &stateless)
	if stateless.CronID == "" || stateless.ThreadID != nil || stateless.Schedule != "*/5 * * * *" || !stateless.Enabled || stateless.OnRunCompleted != "delete" ||
		stateless.NextRunDate == nil || !stateless.NextRunDate.Equal(time.Date(2026, 1, 1, 12, 5, 0, 0, time.UTC)) || stateless.Metadata["team"] != "a" ||
		stateless.Payload["input"] == nil || stateless.Payload["assistant_id"] != stateless.AssistantID || !stateless.CreatedAt.Equal(t0) {
		t.Fatalf("stateless cron = %+v", stateless)
	}
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "0 9 * * 1", "timezone": "Europe/Paris", "input": hello("weekly")}, http.StatusOK, &onThread)
	// Monday 5 January 2026, 9:00 in Paris (UTC+1).
	if onThread.ThreadID == nil || *onThread.ThreadID != tid || onThread.NextRunDate == nil || !onThread.NextRunDate.Equal(time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)) {
		t.Fatalf("thread cron = %+v", onThread)
	}

	var found []apiCron
	f.JSON(http.MethodPost, "/runs/crons/search", map[string]any{}, http.StatusOK, &found)
	if len(found) != 2 {
		t.Fatalf("search all: %+v", found)
	}
	f.JSON(http.MethodPost, "/runs/crons/search", map[string]any{"thread_id": tid}, http.StatusOK, &found)
	if len(found) != 1 || found[0].CronID != onThread.CronID {
		t.Fatalf("search by thread: %+v", found)
	}
	f.JSON(http.MethodPost, "/runs/crons/search", map[string]any{"assistant_id": "deepagent", "metadata": map[string]any{"team": "a"}}, http.StatusOK, &found)
	if len(found) != 1 || found[0].CronID != stateless.CronID {
		t.Fatalf("search by metadata: %+v", found)
	}
	f.JSON(http.MethodPost, "/runs/crons/search", map[string]any{"sort_by": "next_run_date", "sort_order": "asc", "limit": 1}, http.StatusOK, &found)
	if len(found) != 1 || found[0].CronID != stateless.CronID {
		t.Fatalf("search sorted: %+v", found)
	}
	var some []map[string]any
	f.JSON(http.MethodPost, "/runs/crons/search", map[string]any{"select": []string{"cron_id", "schedule"}}, http.StatusOK, &some)
	if len(some) != 2 || len(some[0]) != 2 || some[0]["schedule"] == nil {
		t.Fatalf("search with select: %v", some)
	}
	var n int
	f.JSON(http.MethodPost, "/runs/crons/count", map[string]any{}, http.StatusOK, &n)
	if n != 2 {
		t.Fatalf("count = %d", n)
	}
	f.JSON(http.MethodPost, "/runs/crons/count", map[string]any{"thread_id": tid}, http.StatusOK, &n)
	if n != 1 {
		t.Fatalf("count by thread = %d", n)
	}

	var upd apiCron
	clk.set(t0.Add(time.Hour))
	f.JSON(http.MethodPatch, "/runs/crons/"+stateless.CronID, map[string]any{"schedule": "0 * * * *", "enabled": false, "input": hello("changed")}, http.StatusOK, &upd)
	if upd.Enabled || upd.Schedule != "0 * * * *" || upd.NextRunDate == nil || !upd.NextRunDate.Equal(time.Date(2026, 1, 1, 14, 0, 0, 0, time.UTC)) ||
		!upd.UpdatedAt.Equal(t0.Add(time.Hour)) || fmt.Sprint(upd.Payload["input"]) != fmt.Sprint(hello("changed")) {
		t.Fatalf("updated cron = %+v", upd)
	}
	f.JSON(http.MethodPost, "/runs/crons/count", map[string]any{"enabled": true}, http.StatusOK, &n)
	if n != 1 {
		t.Fatalf("count enabled = %d", n)
	}

	f.JSON(http.MethodDelete, "/runs/crons/"+stateless.CronID, nil, http.StatusNoContent, nil)
	for _, c := range []struct {
		method, path string
		body         any
		want         int
	}{
		{http.MethodDelete, "/runs/crons/" + stateless.CronID, nil, http.StatusNotFound},
		{http.MethodPatch, "/runs/crons/" + stateless.CronID, map[string]any{"enabled": true}, http.StatusNotFound},
		{http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "deepagent"}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "every minute"}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "@every 1s"}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "* * * * *", "timezone": "Mars/Olympus"}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "* * * * *", "multitask_strategy": "sometimes"}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "* * * * *", "on_run_completed": "archive"}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "* * * * *", "end_time": "tomorrow"}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "* * * * *", "input": "text"}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "nobody", "schedule": "* * * * *"}, http.StatusNotFound},
		{http.MethodPost, "/threads/00000000-0000-4000-8000-000000000000/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "* * * * *"}, http.StatusNotFound},
		{http.MethodPost, "/runs/crons/search", map[string]any{"sort_by": "color"}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/runs/crons/search", map[string]any{"limit": 0}, http.StatusUnprocessableEntity},
	} {
		if code, b, _ := f.Do(c.method, c.path, c.body); code != c.want {
			t.Errorf("%s %s %v: %d %s, want %d", c.method, c.path, c.body, code, b, c.want)
		}
	}
}

// runsOf lists a thread's runs' statuses, waiting until none is pending
// or running.
func runsOf(t *testing.T, f *fixture, tid string) []string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		if time.Now().After(deadline) {
			t.Fatalf("the runs of thread %s did not end", tid)
		}
		var runs []map[string]any
		f.JSON(http.MethodGet, "/threads/"+tid+"/runs", nil, http.StatusOK, &runs)
		var out []string
		done := true
		for _, r := range runs {
			st := r["status"].(string)
			done = done && finalS(st)
			out = append(out, st)
		}
		if done {
			return out
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// threadsOf lists the threads, waiting a while for there to be want (a
// run creates its thread as it starts executing).
func threadsOf(t *testing.T, f *fixture, want int) []map[string]any {
	t.Helper()
	var threads []map[string]any
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		f.JSON(http.MethodPost, "/threads/search", map[string]any{"limit": 100}, http.StatusOK, &threads)
		if len(threads) >= want {
			break
		}
	}
	return threads
}

// TestCronFires: a cron fires when due, once, and no more after its end
// time; a stateless cron's run gets a thread of its own.
func TestCronFires(t *testing.T) {
	clk := &clock{t: t0}
	m := &countingModel{}
	r := cronReplicas(t, 1, clk, m)[0]
	f := r.fixture
	var th map[string]any
	f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	var c apiCron
	end := time.Date(2026, 1, 1, 12, 1, 30, 0, time.UTC)
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "* * * * *", "input": hello("tick"), "end_time": end}, http.StatusOK, &c)

	r.s.CronTick(t.Context()) // 12:00:30: not due
	if got := runsOf(t, f, tid); len(got) != 0 {
		t.Fatalf("runs before the cron is due: %v", got)
	}
	clk.set(time.Date(2026, 1, 1, 12, 1, 0, 0, time.UTC))
	r.s.CronTick(t.Context())
	r.s.CronTick(t.Context()) // the same minute again: fired already
	if got := runsOf(t, f, tid); len(got) != 1 || got[0] != "success" {
		t.Fatalf("runs after the firing: %v", got)
	}
	var state map[string]any
	f.JSON(http.MethodGet, "/threads/"+tid+"/state", nil, http.StatusOK, &state)
	if msgs := state["values"].(map[string]any)["messages"].([]any); len(msgs) != 2 || msgs[0].(map[string]any)["content"] != "tick" {
		t.Fatalf("thread after the firing: %v", msgs)
	}
	// 12:02 is past the end time: the cron fires no more, and says so.
	clk.set(time.Date(2026, 1, 1, 12, 2, 0, 0, time.UTC))
	r.s.CronTick(t.Context())
	if got := runsOf(t, f, tid); len(got) != 1 {
		t.Fatalf("runs after the end time: %v", got)
	}
	var found []apiCron
	f.JSON(http.MethodPost, "/runs/crons/search", map[string]any{}, http.StatusOK, &found)
	if len(found) != 1 || found[0].Enabled || found[0].NextRunDate != nil {
		t.Fatalf("cron past its end time: %+v", found)
	}

	// A stateless cron: each firing a new thread, kept when asked.
	var sc apiCron
	f.JSON(http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "*/10 * * * *", "input": hello("fresh"), "on_run_completed": "keep"}, http.StatusOK, &sc)
	before := m.Calls.Load()
	clk.set(time.Date(2026, 1, 1, 12, 10, 0, 0, time.UTC))
	r.s.CronTick(t.Context())
	threads := threadsOf(t, f, 2)
	if len(threads) != 2 {
		t.Fatalf("threads after a stateless firing: %v", threads)
	}
	for _, th := range threads {
		if id := th["thread_id"].(string); id != tid {
			if got := runsOf(t, f, id); len(got) != 1 || got[0] != "success" {
				t.Fatalf("the stateless firing's runs: %v", got)
			}
		}
	}
	if m.Calls.Load() != before+1 {
		t.Fatalf("model calls: %d, want %d", m.Calls.Load(), before+1)
	}
}

// TestCronFiresOnceAcrossReplicas: replicas on one database tick at the
// same moments; each firing starts one run.
func TestCronFiresOnceAcrossReplicas(t *testing.T) {
	clk := &clock{t: t0}
	st := store.NewMemoryStore()
	m := &countingModel{}
	rs := newReplicas(t, 3, checkpoint.NewMemorySaver(), st, func() llm.Model { return m })
	for _, r := range rs {
		r.s.SetCronClock(clk.now)
	}
	// Stateless: each firing's run has a thread of its own, which it
	// keeps.
	rs[1].JSON(http.MethodPost, "/runs/crons", map[string]any{"assistant_id": "deepagent", "schedule": "* * * * *", "input": hello("tick"), "on_run_completed": "keep"}, http.StatusOK, nil)
	const minutes = 10
	for i := 1; i <= minutes; i++ {
		clk.set(t0.Add(time.Duration(i) * time.Minute))
		var wg sync.WaitGroup
		for _, r := range rs {
			for range 2 {
				wg.Go(func() { r.s.CronTick(t.Context()) })
			}
		}
		wg.Wait()
	}
	// Each run is recorded in the shared store as it starts, before
	// CronTick returns.
	recs, err := st.Search(t.Context(), []string{"deepagents", "server", "runs"}, store.SearchOptions{Limit: 1000})
	if err != nil || len(recs) != minutes {
		t.Fatalf("%d runs recorded for %d firings (%v)", len(recs), minutes, err)
	}
	threads := threadsOf(t, rs[2].fixture, minutes)
	if len(threads) != minutes {
		t.Fatalf("%d threads for %d firings", len(threads), minutes)
	}
	for _, th := range threads {
		if got := runsOf(t, rs[2].fixture, th["thread_id"].(string)); len(got) != 1 || got[0] != "success" {
			t.Fatalf("the runs of one firing: %v", got)
		}
	}
}
