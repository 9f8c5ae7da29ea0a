package steer_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/budget"
	"github.com/deepagents-go/deepagents/middleware/steer"
	"github.com/deepagents-go/deepagents/sqlite"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/tool"
)

// slowTool is a tool whose call runs fn: the person types while it runs.
func slowTool(t *testing.T, fn func(ctx context.Context)) tool.Tool {
	t.Helper()
	tl, err := tool.New("slow", "a slow tool", func(ctx context.Context, _ struct{}) (string, error) {
		fn(ctx)
		return "done", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func newAgent(t *testing.T, m llm.Model, cp checkpoint.Saver, st store.Store, tools ...tool.Tool) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Config{Model: m, Tools: tools, Middleware: []agent.Middleware{steer.New()}, Checkpointer: cp, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// userTexts is the user messages of a request, their text joined.
func userTexts(req llm.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			out = append(out, m.Text())
		}
	}
	return out
}

// A message sent during a tool call is in the very next model request,
// after the call's result, marked as sent mid-turn; and in no request
// after as a second copy.
func TestSentDuringAToolCall(t *testing.T) {
	ctx := t.Context()
	st := store.NewMemoryStore()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{Name: "slow", Args: json.RawMessage(`{}`)}}},
		replay.Turn{ToolCalls: []llm.ToolCall{{Name: "slow", Args: json.RawMessage(`{}`)}}},
		replay.Turn{Content: "finished"},
	).Record()
	sends := 0
	a := newAgent(t, m, checkpoint.NewMemorySaver(), st, slowTool(t, func(ctx context.Context) {
		if sends++; sends == 1 {
			if err := steer.Send(ctx, st, "T", "use the other file"); err != nil {
				t.Error(err)
			}
		}
	}))
	var notices []string
	for e, err := range a.Stream(ctx, agent.Input{ThreadID: "T", Messages: []llm.Message{llm.UserText("do it")}}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == agent.EventNotice && e.Name == "steer" {
			notices = append(notices, e.Content)
		}
	}
	reqs := m.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if got := userTexts(reqs[0].Request); len(got) != 1 {
		t.Errorf("the first request's user messages: %q", got)
	}
	want := steer.Lead + "use the other file"
	for i, r := range reqs[1:] {
		got := userTexts(r.Request)
		if len(got) != 2 || got[1] != want {
			t.Errorf("request %d's user messages %q, want the prompt and %q", i+2, got, want)
		}
	}
	last := reqs[1].Request.Messages[len(reqs[1].Request.Messages)-1]
	if last.Role != llm.RoleUser || reqs[1].Request.Messages[len(reqs[1].Request.Messages)-2].Role != llm.RoleTool {
		t.Errorf("the message is not right after the call's result: %+v", reqs[1].Request.Messages)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "use the other file") {
		t.Errorf("notices %q, want one naming the message", notices)
	}
}

// A message sent while no run works on the thread (or before a crash
// killed the run that would have delivered it) is delivered at the
// thread's next run, once, whatever process runs it: it was in the
// database before Send returned.
func TestSentBeforeAKill(t *testing.T) {
	ctx := t.Context()
	dsn := filepath.Join(t.TempDir(), "db.sqlite")
	open := func() (*sqlite.Saver, *sqlite.Store) {
		t.Helper()
		db, err := sqlite.Open(ctx, dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db.Saver(), db.Store()
	}
	_, st := open()
	if err := steer.Send(ctx, st, "T", "and add a test"); err != nil {
		t.Fatal(err)
	}
	// "kill -9": nothing of the first process is used again.
	cp2, st2 := open()
	m := replay.New(replay.Turn{Content: "ok"}, replay.Turn{Content: "ok again"}).Record()
	a := newAgent(t, m, cp2, st2)
	for _, prompt := range []string{"go on", "and now?"} {
		if _, err := a.Invoke(ctx, agent.Input{ThreadID: "T", Messages: []llm.Message{llm.UserText(prompt)}}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := m.Requests()
	want := steer.Lead + "and add a test"
	if got := userTexts(reqs[0].Request); len(got) != 2 || got[1] != want {
		t.Errorf("first run's user messages %q, want the prompt then %q", got, want)
	}
	if got := userTexts(reqs[1].Request); len(got) != 3 || strings.Count(strings.Join(got, "\n"), "and add a test") != 1 {
		t.Errorf("second run's user messages %q: the message once", got)
	}
	items, err := st2.Search(ctx, steer.Namespace("T"), store.SearchOptions{})
	if err != nil || len(items) != 0 {
		t.Errorf("the store still holds %d delivered messages (%v): the second run forgets them", len(items), err)
	}
}

// Subagents' runs and other threads get nothing; bad messages are errors.
func TestSendRefuses(t *testing.T) {
	ctx := t.Context()
	st := store.NewMemoryStore()
	for _, c := range []struct {
		st     store.Store
		thread string
		text   string
		want   error
	}{
		{nil, "T", "x", steer.ErrNoStore},
		{st, "", "x", steer.ErrThread},
		{st, "T", "  \n", steer.ErrEmpty},
		{st, "T", strings.Repeat("x", steer.MaxBytes+1), steer.ErrTooLong},
	} {
		if err := steer.Send(ctx, c.st, c.thread, c.text); !errors.Is(err, c.want) {
			t.Errorf("Send(%q, %d bytes): %v, want %v", c.thread, len(c.text), err, c.want)
		}
	}
	if err := steer.Send(ctx, st, "other", "not for T"); err != nil {
		t.Fatal(err)
	}
	m := replay.New(replay.Turn{Content: "ok"}).Record()
	if _, err := newAgent(t, m, checkpoint.NewMemorySaver(), st).Invoke(ctx, agent.Input{ThreadID: "T", Messages: []llm.Message{llm.UserText("hi")}}); err != nil {
		t.Fatal(err)
	}
	if got := userTexts(m.Requests()[0].Request); len(got) != 1 {
		t.Errorf("thread T got another thread's message: %q", got)
	}
}

// countingStore counts the searches of a store.
type countingStore struct {
	store.Store
	searches int
}

func (c *countingStore) Search(ctx context.Context, prefix []string, opts store.SearchOptions) ([]store.Item, error) {
	c.searches++
	return c.Store.Search(ctx, prefix, opts)
}

// Without messages a run reads the store once, at its start, however many
// steps it takes: a step costs an atomic load.
func TestStepsReadNothing(t *testing.T) {
	ctx := t.Context()
	st := &countingStore{Store: store.NewMemoryStore()}
	var turns []replay.Turn
	for range 300 {
		turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{{Name: "slow", Args: json.RawMessage(`{}`)}}})
	}
	turns = append(turns, replay.Turn{Content: "done"})
	a, err := agent.New(agent.Config{Model: replay.New(turns...), Tools: []tool.Tool{slowTool(t, func(context.Context) {})}, Middleware: []agent.Middleware{steer.New()}, Checkpointer: checkpoint.NewMemorySaver(), Store: st, MaxSteps: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(ctx, agent.Input{ThreadID: "T", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	if st.searches != 1 {
		t.Errorf("%d searches of the store in a run of 301 steps, want 1", st.searches)
	}
}

// holdingStore holds the Put of a message whose text is held until
// release is closed: a Send slower than a later one.
type holdingStore struct {
	store.Store
	held             string
	entered, release chan struct{}
}

func (h *holdingStore) Put(ctx context.Context, ns []string, key string, v map[string]any) error {
	if v["text"] == h.held {
		close(h.entered) // its key is taken
		<-h.release
	}
	return h.Store.Put(ctx, ns, key, v)
}

// A message saved after one sent later is delivered all the same, once:
// delivery keeps what it delivered, not how far it got.
func TestSentOutOfOrder(t *testing.T) {
	ctx := t.Context()
	st := &holdingStore{Store: store.NewMemoryStore(), held: "A", entered: make(chan struct{}), release: make(chan struct{})}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{Name: "slow", Args: json.RawMessage(`{}`)}}},
		replay.Turn{ToolCalls: []llm.ToolCall{{Name: "slow", Args: json.RawMessage(`{}`)}}},
		replay.Turn{Content: "finished"},
	).Record()
	calls := 0
	sentA := make(chan error, 1)
	a := newAgent(t, m, checkpoint.NewMemorySaver(), st, slowTool(t, func(ctx context.Context) {
		switch calls++; calls {
		case 1:
			go func() { sentA <- steer.Send(ctx, st, "T", "A") }() // takes its key first, saved last
			<-st.entered
			if err := steer.Send(ctx, st, "T", "B"); err != nil {
				t.Error(err)
			}
		case 2:
			close(st.release)
			if err := <-sentA; err != nil {
				t.Error(err)
			}
		}
	}))
	if _, err := a.Invoke(ctx, agent.Input{ThreadID: "T", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	got := userTexts(reqs[2].Request)
	want := []string{"go", steer.Lead + "B", steer.Lead + "A"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the last request's user messages %q, want %q", got, want)
	}
}

// A message sent while the model writes its final answer keeps the run
// going: the model reads it at once, not at the thread's next run.
func TestSentDuringTheFinalAnswer(t *testing.T) {
	ctx := t.Context()
	st := store.NewMemoryStore()
	var a *agent.Agent
	m := &sendingModel{Model: replay.New(replay.Turn{Content: "all done"}, replay.Turn{Content: "and the README too"}).Record(), send: func(ctx context.Context) {
		if err := steer.Send(ctx, st, "T", "also the README"); err != nil {
			t.Error(err)
		}
	}}
	a = newAgent(t, m, checkpoint.NewMemorySaver(), st)
	res, err := a.Invoke(ctx, agent.Input{ThreadID: "T", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.State.Messages[len(res.State.Messages)-1].Text(); got != "and the README too" {
		t.Errorf("the run ended with %q, want the answer to the message", got)
	}
	if n := len(m.Model.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}
	items, _ := st.Search(ctx, steer.Namespace("T"), store.SearchOptions{})
	if len(items) != 0 {
		t.Errorf("%d messages left in the store after the run that delivered them", len(items))
	}
}

// sendingModel calls send during its first call, as a person types while
// the answer streams.
type sendingModel struct {
	*replay.Model
	send  func(context.Context)
	calls int
}

func (m *sendingModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	if m.calls++; m.calls == 1 {
		m.send(ctx)
	}
	return m.Model.Stream(ctx, req)
}

// A run from a checkpoint before a delivery does not bring the message
// back: the run that delivered it made the store forget it once it ended.
func TestForkBeforeADelivery(t *testing.T) {
	ctx := t.Context()
	st := store.NewMemoryStore()
	cp := checkpoint.NewMemorySaver()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{Name: "slow", Args: json.RawMessage(`{}`)}}},
		replay.Turn{Content: "steered"},
		replay.Turn{Content: "forked"},
	).Record()
	once := false
	a := newAgent(t, m, cp, st, slowTool(t, func(ctx context.Context) {
		if !once {
			once = true
			if err := steer.Send(ctx, st, "T", "STEERED"); err != nil {
				t.Error(err)
			}
		}
	}))
	if _, err := a.Invoke(ctx, agent.Input{ThreadID: "T", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	hist, err := cp.History(ctx, "T", checkpoint.ListOptions{Limit: 100})
	if err != nil || len(hist) < 2 {
		t.Fatalf("history: %d, %v", len(hist), err)
	}
	// A run of the thread from its oldest checkpoint, before the delivery
	// (as the server's checkpoint_id, or time travel, forks it).
	if _, err := a.Invoke(ctx, agent.Input{ThreadID: "T", CheckpointID: hist[len(hist)-1].ID, Messages: []llm.Message{llm.UserText("instead")}}); err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	if got := strings.Join(userTexts(reqs[len(reqs)-1].Request), "|"); strings.Contains(got, "STEERED") {
		t.Errorf("the fork's request has the message again: %s", got)
	}
}

// A steered request keeps what the middleware outside the steer added to
// it: the budget's last-turn note stays, and the message comes after it.
func TestSteeredRequestKeepsTheBudgetsNote(t *testing.T) {
	ctx := t.Context()
	st := store.NewMemoryStore()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{Name: "slow", Args: json.RawMessage(`{}`)}}},
		replay.Turn{Content: "final"},
	).Record()
	a, err := deepagents.New(deepagents.Config{Model: m, Checkpointer: checkpoint.NewMemorySaver(), Store: st, Budget: budget.Config{Steps: 1},
		Tools: []tool.Tool{slowTool(t, func(ctx context.Context) {
			if err := steer.Send(ctx, st, "T", "STEERMARK"); err != nil {
				t.Error(err)
			}
		})}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(ctx, deepagents.Input{ThreadID: "T", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	all := ""
	for _, msg := range reqs[len(reqs)-1].Request.Messages {
		all += msg.Text() + "\n"
	}
	if !strings.Contains(all, "The budget of this task is spent") || !strings.Contains(all, "STEERMARK") {
		t.Errorf("the last request lacks the budget's note or the message:\n%s", all)
	}
}
