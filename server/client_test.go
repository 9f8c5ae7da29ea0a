package server_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// TestClientCrons drives the crons API through langgraph.Client: what the
// client sends is what the server reads, and what it answers decodes.
func TestClientCrons(t *testing.T) {
	clk := &clock{t: t0}
	f := cronReplicas(t, 1, clk, &countingModel{})[0].fixture
	c := &langgraph.Client{URL: f.Srv.URL}
	ctx := t.Context()
	th, err := c.CreateThread(ctx, langgraph.ThreadCreate{})
	if err != nil {
		t.Fatal(err)
	}

	stateless, err := c.CreateCron(ctx, langgraph.CronCreate{Schedule: "*/5 * * * *",
		RunCreate: langgraph.RunCreate{AssistantID: "deepagent", Input: &langgraph.Input{Messages: []json.RawMessage{json.RawMessage(`{"type": "human", "content": "hi"}`)}}, Metadata: map[string]any{"team": "a"}}})
	if err != nil {
		t.Fatal(err)
	}
	if stateless.CronID == "" || stateless.ThreadID != nil || stateless.OnRunCompleted != "delete" || stateless.Metadata["team"] != "a" ||
		stateless.NextRunDate == nil || !stateless.NextRunDate.Equal(time.Date(2026, 1, 1, 12, 5, 0, 0, time.UTC)) {
		t.Fatalf("CreateCron = %+v", stateless)
	}
	onThread, err := c.CreateThreadCron(ctx, th.ThreadID, langgraph.CronCreate{Schedule: "0 9 * * 1", Timezone: "Europe/Paris",
		RunCreate: langgraph.RunCreate{AssistantID: "deepagent"}})
	if err != nil {
		t.Fatal(err)
	}
	if onThread.ThreadID == nil || *onThread.ThreadID != th.ThreadID || onThread.Timezone == nil || *onThread.Timezone != "Europe/Paris" {
		t.Fatalf("CreateThreadCron = %+v", onThread)
	}

	one := 1
	found, err := c.SearchCrons(ctx, langgraph.CronSearch{SortBy: "next_run_date", SortOrder: "asc", Limit: &one})
	if err != nil || len(found) != 1 || found[0].CronID != stateless.CronID {
		t.Fatalf("SearchCrons sorted = %+v, %v", found, err)
	}
	if n, err := c.CountCrons(ctx, langgraph.CronSearch{ThreadID: th.ThreadID}); err != nil || n != 1 {
		t.Fatalf("CountCrons by thread = %d, %v", n, err)
	}

	off := false
	upd, err := c.UpdateCron(ctx, onThread.CronID, langgraph.CronPatch{Schedule: "30 9 * * 1", Enabled: &off})
	if err != nil || upd.Schedule != "30 9 * * 1" || upd.Enabled {
		t.Fatalf("UpdateCron = %+v, %v", upd, err)
	}
	if err := c.DeleteCron(ctx, onThread.CronID); err != nil {
		t.Fatal(err)
	}
	var lgErr *langgraph.Error
	if err := c.DeleteCron(ctx, onThread.CronID); !errors.As(err, &lgErr) || lgErr.StatusCode != http.StatusNotFound {
		t.Fatalf("DeleteCron twice: %v", err)
	}
	if _, err := c.CreateCron(ctx, langgraph.CronCreate{Schedule: "@every 5m", RunCreate: langgraph.RunCreate{AssistantID: "deepagent"}}); !errors.As(err, &lgErr) || lgErr.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a schedule in seconds: %v", err)
	}
}

// TestClientStore drives the store API through langgraph.Client.
func TestClientStore(t *testing.T) {
	f := newFixture(t, servertest.Options{})
	c := &langgraph.Client{URL: f.Srv.URL}
	ctx := t.Context()
	for _, it := range []langgraph.ItemPut{
		{Namespace: []string{"users", "u1", "prefs"}, Key: "theme", Value: map[string]any{"color": "dark"}},
		{Namespace: []string{"users", "u1", "prefs"}, Key: "lang", Value: map[string]any{"code": "fr"}},
		{Namespace: []string{"users", "u2"}, Key: "theme", Value: map[string]any{"color": "light"}},
	} {
		if err := c.PutItem(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	it, err := c.GetItem(ctx, []string{"users", "u1", "prefs"}, "theme")
	if err != nil || it == nil || it.Value["color"] != "dark" || it.CreatedAt.IsZero() {
		t.Fatalf("GetItem = %+v, %v", it, err)
	}
	if it, err := c.GetItem(ctx, []string{"users"}, "nobody"); err != nil || it != nil {
		t.Fatalf("GetItem of none = %+v, %v", it, err)
	}
	items, err := c.SearchItems(ctx, langgraph.ItemSearch{NamespacePrefix: []string{"users", "u1"}, Filter: map[string]any{"code": "fr"}})
	if err != nil || len(items) != 1 || items[0].Key != "lang" {
		t.Fatalf("SearchItems = %+v, %v", items, err)
	}
	depth := 2
	nss, err := c.ListNamespaces(ctx, langgraph.NamespaceSearch{Prefix: []string{"users"}, MaxDepth: &depth})
	if err != nil || !slices.EqualFunc(nss, [][]string{{"users", "u1"}, {"users", "u2"}}, slices.Equal) {
		t.Fatalf("ListNamespaces = %v, %v", nss, err)
	}
	if err := c.DeleteItem(ctx, []string{"users", "u2"}, "theme"); err != nil {
		t.Fatal(err)
	}
	if it, err := c.GetItem(ctx, []string{"users", "u2"}, "theme"); err != nil || it != nil {
		t.Fatalf("GetItem after DeleteItem = %+v, %v", it, err)
	}
	var lgErr *langgraph.Error
	if err := c.PutItem(ctx, langgraph.ItemPut{Namespace: []string{"deepagents", "server", "runs"}, Key: "x", Value: map[string]any{}}); !errors.As(err, &lgErr) || lgErr.StatusCode != http.StatusForbidden {
		t.Fatalf("PutItem into the server's records: %v", err)
	}
}

// TestClientCountThreads counts threads by their filters through
// langgraph.Client, as POST /threads/search finds them.
func TestClientCountThreads(t *testing.T) {
	f := newFixture(t, servertest.Options{})
	c := &langgraph.Client{URL: f.Srv.URL}
	ctx := t.Context()
	for _, owner := range []string{"ann", "ann", "bob"} {
		if _, err := c.CreateThread(ctx, langgraph.ThreadCreate{Metadata: json.RawMessage(`{"owner": "` + owner + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		q    langgraph.ThreadSearch
		want int
	}{
		{langgraph.ThreadSearch{}, 3},
		{langgraph.ThreadSearch{Metadata: map[string]any{"owner": "ann"}}, 2},
		{langgraph.ThreadSearch{Metadata: map[string]any{"owner": "eve"}}, 0},
		{langgraph.ThreadSearch{Status: langgraph.ThreadIdle}, 3},
		{langgraph.ThreadSearch{Status: langgraph.ThreadBusy}, 0},
	} {
		if n, err := c.CountThreads(ctx, tc.q); err != nil || n != tc.want {
			t.Errorf("CountThreads(%+v) = %d, %v; want %d", tc.q, n, err, tc.want)
		}
	}
	// A count ignores the page: past the first ten, every thread counts.
	for range 10 {
		if _, err := c.CreateThread(ctx, langgraph.ThreadCreate{}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := c.CountThreads(ctx, langgraph.ThreadSearch{}); err != nil || n != 13 {
		t.Errorf("CountThreads of 13 threads = %d, %v", n, err)
	}
}
