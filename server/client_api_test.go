package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"testing"

	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// helloInput is a run's input: one human message.
func helloInput(text string) *langgraph.Input {
	m, _ := json.Marshal(servertest.Human(text))
	return &langgraph.Input{Messages: []json.RawMessage{m}}
}

// wantStatus fails the test unless err is a *langgraph.Error of status.
func wantStatus(t *testing.T, what string, err error, status int) {
	t.Helper()
	var lgErr *langgraph.Error
	if !errors.As(err, &lgErr) || lgErr.StatusCode != status {
		t.Errorf("%s: %v, want a *langgraph.Error of %d", what, err, status)
	}
}

// TestClientAssistants drives the server's own routes and the assistants
// API through langgraph.Client.
func TestClientAssistants(t *testing.T) {
	f := newFixture(t, servertest.Options{})
	c := &langgraph.Client{URL: f.Srv.URL}
	ctx := t.Context()
	if err := c.OK(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx)
	if err != nil || info.Version != "deepagents-go" || !info.Flags["assistants"] || !info.Flags["crons"] {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	if info.Flags["mcp"] {
		t.Errorf("Info says mcp without MCP mounted: %+v", info.Flags)
	}

	found, err := c.SearchAssistants(ctx, langgraph.AssistantSearch{GraphID: "deepagent"})
	if err != nil || len(found) != 1 || found[0].AssistantID == "" || found[0].Metadata["created_by"] != "system" {
		t.Fatalf("SearchAssistants = %+v, %v", found, err)
	}
	for _, id := range []string{found[0].AssistantID, "deepagent"} {
		if a, err := c.GetAssistant(ctx, id); err != nil || a.AssistantID != found[0].AssistantID || a.GraphID != "deepagent" {
			t.Errorf("GetAssistant(%q) = %+v, %v", id, a, err)
		}
	}
	mine, err := c.CreateAssistant(ctx, langgraph.AssistantCreate{Assistant: langgraph.Assistant{GraphID: "deepagent", Name: "mine", Metadata: map[string]any{"team": "a"}}})
	if err != nil || mine.AssistantID == "" || mine.AssistantID == found[0].AssistantID || mine.Name != "mine" {
		t.Fatalf("CreateAssistant = %+v, %v", mine, err)
	}
	if got, err := c.SearchAssistants(ctx, langgraph.AssistantSearch{Metadata: map[string]any{"team": "a"}}); err != nil || len(got) != 1 || got[0].AssistantID != mine.AssistantID {
		t.Errorf("SearchAssistants by metadata = %+v, %v", got, err)
	}
	if a, err := c.GetAssistant(ctx, mine.AssistantID); err != nil || a.Name != "mine" {
		t.Errorf("GetAssistant of a created one = %+v, %v", a, err)
	}
	_, err = c.GetAssistant(ctx, "nope")
	wantStatus(t, "GetAssistant of none", err, http.StatusNotFound)
	_, err = c.CreateAssistant(ctx, langgraph.AssistantCreate{Assistant: langgraph.Assistant{GraphID: "other"}})
	wantStatus(t, "CreateAssistant of an unknown graph", err, http.StatusNotFound)
}

// stateValues decodes a state's values, which the Client leaves raw.
type stateValues struct {
	Messages []servertest.WireMsg `json:"messages"`
	Topic    string               `json:"topic"`
}

func valuesOf(t *testing.T, v any) stateValues {
	t.Helper()
	raw, ok := v.(json.RawMessage)
	if !ok {
		t.Fatalf("values are a %T, not a json.RawMessage", v)
	}
	return servertest.Decode[stateValues](t, raw)
}

// TestClientThreads drives threads, their state and history, and waited
// runs through langgraph.Client.
func TestClientThreads(t *testing.T) {
	f := newFixture(t, servertest.Options{}, servertest.ReplayTurns("hello", "stateless")...)
	c := &langgraph.Client{URL: f.Srv.URL}
	ctx := t.Context()
	th, err := c.CreateThread(ctx, langgraph.ThreadCreate{Metadata: json.RawMessage(`{"owner": "ann"}`)})
	if err != nil {
		t.Fatal(err)
	}
	final, err := c.WaitRun(ctx, th.ThreadID, langgraph.RunCreate{AssistantID: "deepagent", Input: helloInput("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if v := valuesOf(t, final); len(v.Messages) != 2 || v.Messages[1].Content != "hello" {
		t.Fatalf("WaitRun = %s", final)
	}

	found, err := c.SearchThreads(ctx, langgraph.ThreadSearch{Metadata: map[string]any{"owner": "ann"}})
	if err != nil || len(found) != 1 || found[0].ThreadID != th.ThreadID || len(valuesOf(t, found[0].Values).Messages) != 2 {
		t.Fatalf("SearchThreads = %+v, %v", found, err)
	}
	patched, err := c.UpdateThread(ctx, th.ThreadID, langgraph.ThreadPatch{Metadata: map[string]any{"tag": "x"}})
	if err != nil || patched.Metadata["owner"] != "ann" || patched.Metadata["tag"] != "x" {
		t.Fatalf("UpdateThread = %+v, %v", patched, err)
	}

	head, err := c.GetState(ctx, th.ThreadID, "")
	if err != nil || head.Checkpoint == nil || len(valuesOf(t, head.Values).Messages) != 2 {
		t.Fatalf("GetState = %+v, %v", head, err)
	}
	upd, err := c.UpdateState(ctx, th.ThreadID, langgraph.StateUpdate{Values: map[string]json.RawMessage{"topic": json.RawMessage(`"weather"`)}})
	if err != nil || upd.Checkpoint.CheckpointID == "" || upd.Checkpoint.CheckpointID == head.Checkpoint.CheckpointID {
		t.Fatalf("UpdateState = %+v, %v", upd, err)
	}
	now, err := c.GetState(ctx, th.ThreadID, "")
	if err != nil || now.Checkpoint.CheckpointID != upd.Checkpoint.CheckpointID || now.ParentCheckpoint == nil ||
		now.ParentCheckpoint.CheckpointID != head.Checkpoint.CheckpointID || valuesOf(t, now.Values).Topic != "weather" {
		t.Fatalf("GetState after UpdateState = %+v, %v", now, err)
	}
	// The state as of the checkpoint before the update, both ways.
	at, err := c.GetState(ctx, th.ThreadID, head.Checkpoint.CheckpointID)
	if err != nil || at.Checkpoint.CheckpointID != head.Checkpoint.CheckpointID || valuesOf(t, at.Values).Topic != "" {
		t.Errorf("GetState at a checkpoint = %+v, %v", at, err)
	}
	of, err := c.StateAt(ctx, th.ThreadID, langgraph.StateRequest{Checkpoint: langgraph.Checkpoint{CheckpointID: head.Checkpoint.CheckpointID}})
	if err != nil || of.Checkpoint.CheckpointID != head.Checkpoint.CheckpointID {
		t.Errorf("StateAt = %+v, %v", of, err)
	}

	hist, err := c.History(ctx, th.ThreadID, langgraph.HistoryRequest{})
	if err != nil || len(hist) < 2 || hist[0].Checkpoint.CheckpointID != upd.Checkpoint.CheckpointID || valuesOf(t, hist[0].Values).Topic != "weather" {
		t.Fatalf("History = %+v, %v", hist, err)
	}
	one := 1
	older, err := c.History(ctx, th.ThreadID, langgraph.HistoryRequest{Limit: &one, Before: &langgraph.CheckpointRef{CheckpointID: upd.Checkpoint.CheckpointID}})
	if err != nil || len(older) != 1 || older[0].Checkpoint.CheckpointID != hist[1].Checkpoint.CheckpointID {
		t.Errorf("History before the head = %+v, %v", older, err)
	}

	cp, err := c.CopyThread(ctx, th.ThreadID)
	if err != nil || cp.ThreadID == th.ThreadID || cp.Metadata["tag"] != "x" {
		t.Fatalf("CopyThread = %+v, %v", cp, err)
	}
	if st, err := c.GetState(ctx, cp.ThreadID, ""); err != nil || valuesOf(t, st.Values).Topic != "weather" || len(valuesOf(t, st.Values).Messages) != 2 {
		t.Errorf("GetState of the copy = %+v, %v", st, err)
	}

	runs, err := c.ListRuns(ctx, th.ThreadID, langgraph.RunList{})
	if err != nil || len(runs) != 1 || runs[0].Status != langgraph.RunSuccess || runs[0].ThreadID != th.ThreadID {
		t.Errorf("ListRuns = %+v, %v", runs, err)
	}
	if runs, err := c.ListRuns(ctx, th.ThreadID, langgraph.RunList{Status: langgraph.RunError}); err != nil || len(runs) != 0 {
		t.Errorf("ListRuns of failed runs = %+v, %v", runs, err)
	}

	stateless, err := c.WaitRun(ctx, "", langgraph.RunCreate{AssistantID: "deepagent", Input: helloInput("alone")})
	if v := valuesOf(t, stateless); err != nil || len(v.Messages) != 2 || v.Messages[1].Content != "stateless" {
		t.Errorf("stateless WaitRun = %s, %v", stateless, err)
	}

	_, err = c.GetState(ctx, "nope", "")
	wantStatus(t, "GetState of no thread", err, http.StatusNotFound)
	_, err = c.UpdateState(ctx, th.ThreadID, langgraph.StateUpdate{CheckpointID: "nope"})
	wantStatus(t, "UpdateState at no checkpoint", err, http.StatusNotFound)
}

// collect reads a stream to its end.
func collect(t *testing.T, seq iter.Seq2[langgraph.Event, error]) []langgraph.Event {
	t.Helper()
	var out []langgraph.Event
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		out = append(out, ev)
	}
	return out
}

// runIDOf reads the run's ID from a stream's metadata event.
func runIDOf(t *testing.T, ev langgraph.Event) string {
	t.Helper()
	if ev.Name != "metadata" {
		t.Fatalf("first event %s %s, want metadata", ev.Name, ev.Data)
	}
	return servertest.Decode[struct {
		RunID string `json:"run_id"`
	}](t, ev.Data).RunID
}

// TestClientStreamRun reads streamed runs to their end, on a thread and
// stateless, and a stream the server refuses.
func TestClientStreamRun(t *testing.T) {
	f := newFixture(t, servertest.Options{}, servertest.ReplayTurns("hello", "alone")...)
	c := &langgraph.Client{URL: f.Srv.URL}
	ctx := t.Context()
	th, err := c.CreateThread(ctx, langgraph.ThreadCreate{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, threadID, reply string
	}{
		{"on a thread", th.ThreadID, "hello"},
		{"stateless", "", "alone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := collect(t, c.StreamRun(ctx, tc.threadID, langgraph.RunCreate{AssistantID: "deepagent", Input: helloInput("hi"),
				StreamMode: json.RawMessage(`["values", "messages-tuple"]`)}))
			if len(evs) < 3 || runIDOf(t, evs[0]) == "" || evs[0].ID == "" {
				t.Fatalf("events %v", evs)
			}
			last := evs[len(evs)-1]
			if v := servertest.Decode[stateValues](t, last.Data); last.Name != "values" || len(v.Messages) != 2 || v.Messages[1].Content != tc.reply {
				t.Errorf("last event %s %s", last.Name, last.Data)
			}
			messages := 0
			for _, ev := range evs {
				if ev.Name == "messages" {
					messages++
				}
			}
			if messages == 0 {
				t.Errorf("no messages events in %v", evs)
			}
		})
	}
	if runs, err := c.ListRuns(ctx, th.ThreadID, langgraph.RunList{}); err != nil || len(runs) != 1 || runs[0].Status != langgraph.RunSuccess {
		t.Errorf("ListRuns after the stream = %+v, %v", runs, err)
	}

	// A refused stream yields its *Error, once.
	n := 0
	for ev, err := range c.StreamRun(ctx, "nope", langgraph.RunCreate{AssistantID: "deepagent", Input: helloInput("hi")}) {
		n++
		wantStatus(t, "StreamRun on no thread", err, http.StatusNotFound)
		if ev.Name != "" {
			t.Errorf("event %+v with the error", ev)
		}
	}
	if n != 1 {
		t.Errorf("a refused stream yielded %d times", n)
	}
}

// TestClientStreamBreak breaks off a streamed run after its first event:
// the client closes the stream, so the server, seeing its client gone,
// cancels the run (on_disconnect's default), which the blocked model
// would otherwise keep going forever.
func TestClientStreamBreak(t *testing.T) {
	m := servertest.NewBlockingModel()
	f := newFixture(t, servertest.Options{Model: m})
	c := &langgraph.Client{URL: f.Srv.URL}
	ctx := t.Context()
	th, err := c.CreateThread(ctx, langgraph.ThreadCreate{})
	if err != nil {
		t.Fatal(err)
	}
	runID := ""
	for ev, err := range c.StreamRun(ctx, th.ThreadID, langgraph.RunCreate{AssistantID: "deepagent", Input: helloInput("hi")}) {
		if err != nil {
			t.Fatal(err)
		}
		runID = runIDOf(t, ev)
		break
	}
	servertest.WaitFor(t, "the run's end", func() bool {
		rn, err := c.GetRun(ctx, th.ThreadID, runID)
		return err == nil && rn.Status.Done()
	})
	if m.Calls.Load() > 1 {
		t.Errorf("the model was called %d times", m.Calls.Load())
	}
}

// TestClientJoinStream joins a running run's stream: from the start, then
// after an event (Last-Event-ID) read to the run's end; a context
// cancelled stops a stream with its error; a run there is not is an
// *Error.
func TestClientJoinStream(t *testing.T) {
	m := servertest.NewBlockingModel()
	f := newFixture(t, servertest.Options{Model: m})
	c := &langgraph.Client{URL: f.Srv.URL}
	ctx := t.Context()
	th, err := c.CreateThread(ctx, langgraph.ThreadCreate{})
	if err != nil {
		t.Fatal(err)
	}
	rn, err := c.CreateRun(ctx, th.ThreadID, langgraph.RunCreate{AssistantID: "deepagent", Input: helloInput("hi"), StreamMode: json.RawMessage(`["values", "messages-tuple"]`)})
	if err != nil {
		t.Fatal(err)
	}
	servertest.WaitFor(t, "the model call", func() bool { return m.Calls.Load() == 1 })

	// From the start: metadata, the input's state, the model's delta.
	var first []langgraph.Event
	for ev, err := range c.JoinStream(ctx, th.ThreadID, rn.RunID, "") {
		if err != nil {
			t.Fatal(err)
		}
		if first = append(first, ev); len(first) == 3 {
			break
		}
	}
	if len(first) != 3 || runIDOf(t, first[0]) != rn.RunID || first[1].Name != "values" || first[2].Name != "messages" {
		t.Fatalf("joined from the start: %v", first)
	}

	// A cancelled context ends the stream with its error.
	cctx, cancel := context.WithCancel(ctx)
	var streamErr error
	n := 0
	for _, err := range c.JoinStream(cctx, th.ThreadID, rn.RunID, "-1") {
		if err != nil {
			streamErr = err
			continue
		}
		if n++; n == 1 {
			cancel()
		}
	}
	cancel()
	if !errors.Is(streamErr, context.Canceled) {
		t.Errorf("a stream whose context is cancelled ended with %v after %d events", streamErr, n)
	}

	// After the second event: the third, then what the run goes on to
	// stream once the model is released, to its end.
	var rest []langgraph.Event
	for ev, err := range c.JoinStream(ctx, th.ThreadID, rn.RunID, first[1].ID) {
		if err != nil {
			t.Fatal(err)
		}
		if rest = append(rest, ev); len(rest) == 1 {
			close(m.Release)
		}
	}
	if len(rest) < 2 || rest[0].ID != first[2].ID || rest[0].Name != "messages" {
		t.Fatalf("rejoined after %s: %v", first[1].ID, rest)
	}
	last := rest[len(rest)-1]
	if v := servertest.Decode[stateValues](t, last.Data); last.Name != "values" || len(v.Messages) != 2 {
		t.Errorf("the stream's last event %s %s", last.Name, last.Data)
	}
	if got, err := c.GetRun(ctx, th.ThreadID, rn.RunID); err != nil || got.Status != langgraph.RunSuccess {
		t.Errorf("the run after its stream: %+v, %v", got, err)
	}
	// A run that has ended streams nothing.
	if evs := collect(t, c.JoinStream(ctx, th.ThreadID, rn.RunID, "")); len(evs) != 0 {
		t.Errorf("the stream of an ended run: %v", evs)
	}
	for _, err := range c.JoinStream(ctx, th.ThreadID, "nope", "") {
		wantStatus(t, "JoinStream of no run", err, http.StatusNotFound)
	}
}
