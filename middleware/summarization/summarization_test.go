package summarization_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/summarization"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/thread"
	"github.com/deepagents-go/deepagents/tool"
)

// newSummarization returns the summarization middleware of cfg.
func newSummarization(t *testing.T, cfg summarization.Config) *summarization.Middleware {
	t.Helper()
	m, err := summarization.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// todosCall is a write_todos call of the todo list list (JSON).
func todosCall(id, list string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: todos.WriteTodosTool, Args: json.RawMessage(`{"todos":` + list + `}`)}
}

// newTodos returns the todos middleware with the default configuration.
func newTodos(t *testing.T) *todos.Middleware {
	t.Helper()
	m, err := todos.New(todos.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func bulkyTool() tool.Tool {
	return tool.Must(tool.New("fetch", "Fetch a page.", func(_ context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		return fmt.Sprintf("page %d: %s", in.N, strings.Repeat("lorem ipsum ", 40)), nil
	}))
}

func TestSummarizationOffloadsHistory(t *testing.T) {
	turns := []replay.Turn{
		{ToolCalls: []llm.ToolCall{todosCall("td", `[{"content":"read pages","status":"in_progress"}]`)}, Usage: llm.Usage{InputTokens: 300, OutputTokens: 20}},
	}
	// The provider's reported input grows to 900 tokens; the request of
	// step 5 is over 85% of the 1,000-token window, and after the summary
	// the reported size drops.
	for i, in := range []int{550, 700, 900, 300} {
		turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("f", i+1), Name: "fetch", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i+1))}}, Usage: llm.Usage{InputTokens: in, OutputTokens: 20}})
	}
	turns = append(turns[:4:4], append([]replay.Turn{
		{Agent: "summarizer", Content: "The user wants pages read; pages 1-3 were fetched.", Expect: &replay.Expect{
			MessagesContain: []string{"read the pages", "page 1: lorem", "page 2: lorem"}, MessagesExclude: []string{"page 3: lorem"},
		}}}, turns[4:]...)...)
	turns = append(turns,
		replay.Turn{Content: "all read", Expect: &replay.Expect{
			MessagesContain: []string{"<summary>\nThe user wants pages read; pages 1-3 were fetched.\n</summary>", "/conversation_history/th_1.md", "- [in_progress] read pages", "page 3: lorem", "page 4: lorem"},
			MessagesExclude: []string{"page 1: lorem", "page 2: lorem"},
		}},
	)
	m := replay.NewFromScript(&replay.Script{ContextWindow: 1000, Turns: turns}).Record()
	files := thread.NewFiles(nil)
	sum := newSummarization(t, summarization.Config{Backend: backend.NewStateBackend(files)})
	a, err := agent.New(agent.Config{Model: m, Tools: []tool.Tool{bulkyTool()}, Middleware: []agent.Middleware{newTodos(t), sum}})
	if err != nil {
		t.Fatal(err)
	}
	in := agent.Prompt("read the pages")
	in.ThreadID = "th/1"
	in.State = &thread.State{Files: files}
	res, err := a.Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "all read" || m.Remaining() != 0 {
		t.Fatalf("text %q, %d turns left", res.Text(), m.Remaining())
	}
	// The thread's messages became the summary and what was kept: the
	// replaced messages are in the history file (and in the thread's
	// earlier checkpoints, with a Checkpointer).
	msgs := res.State.Messages
	if msgs[0].Role != llm.RoleUser || !strings.Contains(msgs[0].Text(), "<summary>") {
		t.Errorf("first message is not the summary: %q", msgs[0].Text())
	}
	if msgs[1].Role == llm.RoleTool {
		t.Error("kept messages start with a tool result whose call was summarized")
	}
	for _, m := range msgs {
		if strings.Contains(m.Text(), "page 1: lorem") {
			t.Errorf("a summarized message is still in the state: %q", m.Text())
		}
	}
	if plan, err := todos.Of(res.State.Values); err != nil || len(plan) != 1 {
		t.Errorf("todos = %v, %v", plan, err)
	}
	hist, ok := files.Get("/conversation_history/th_1.md")
	if !ok {
		t.Fatalf("no history file; files: %v", files.Paths())
	}
	for _, want := range []string{"User: read the pages", "Assistant called fetch: {\"n\":1}", "page 1: lorem ipsum lorem", "page 2: lorem"} {
		if !strings.Contains(hist.Content, want) {
			t.Errorf("history lacks %q", want)
		}
	}
	if strings.Contains(hist.Content, "page 3: lorem") {
		t.Error("history holds a message that was kept")
	}
	// The last request is the state: the summary, then whole pairs.
	reqs := m.Requests()
	last := reqs[len(reqs)-1].Request.Messages
	if len(last) != len(msgs)-1 || last[0].Text() != msgs[0].Text() {
		t.Errorf("the last request (%d messages) is not the state (%d before the answer)", len(last), len(msgs)-1)
	}
	var st struct{ History string }
	json.Unmarshal(res.State.Values[summarization.Value], &st)
	if st.History != "/conversation_history/th_1.md" {
		t.Errorf("summary state names history %q", st.History)
	}
}

func TestNoSummaryBelowTrigger(t *testing.T) {
	m := replay.NewFromScript(&replay.Script{ContextWindow: 100000, Turns: []replay.Turn{
		{ToolCalls: []llm.ToolCall{{ID: "f", Name: "fetch", Args: json.RawMessage(`{"n":1}`)}}, Usage: llm.Usage{InputTokens: 5000}},
		{Content: "done", Expect: &replay.Expect{MessagesExclude: []string{"<summary>"}}},
	}})
	sum := newSummarization(t, summarization.Config{Backend: backend.NewStateBackend(nil)})
	a, _ := agent.New(agent.Config{Model: m, Tools: []tool.Tool{bulkyTool()}, Middleware: []agent.Middleware{sum}})
	res, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err != nil || res.Text() != "done" {
		t.Fatalf("%v %q", err, res.Text())
	}
	if _, ok := res.State.Values[summarization.Value]; ok {
		t.Error("summarized below the trigger")
	}
}

func TestUnknownWindowKeepsSixMessages(t *testing.T) {
	var turns []replay.Turn
	for i := 1; i <= 5; i++ {
		turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("f", i), Name: "fetch", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}}})
	}
	turns = append(turns, replay.Turn{Agent: "summarizer", Content: "summary"},
		replay.Turn{Content: "done"})
	m := replay.New(turns...).Record()
	// The window is unknown; keep falls back to messages.
	sum := newSummarization(t, summarization.Config{Backend: backend.NewStateBackend(nil), TriggerTokens: 600})
	a, _ := agent.New(agent.Config{Model: m, Tools: []tool.Tool{bulkyTool()}, Middleware: []agent.Middleware{sum}})
	in := agent.Prompt("go")
	in.State = &thread.State{Files: thread.NewFiles(nil)}
	if _, err := a.Invoke(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	var first int
	for i, r := range reqs {
		if r.Agent == "main" && strings.Contains(r.Request.Messages[0].Text(), "<summary>") {
			first = i
			break
		}
	}
	if first == 0 {
		t.Fatal("no request carried a summary")
	}
	if n := len(reqs[first].Request.Messages) - 1; n != summarization.DefaultKeepMessages {
		t.Errorf("kept %d messages, want %d", n, summarization.DefaultKeepMessages)
	}
}

// The size check must cost O(new messages) per step, or long runs become
// quadratic: count how many messages the counter is asked about.
func TestSummarizationCountsEachMessageOnce(t *testing.T) {
	const steps = 200
	var turns []replay.Turn
	for i := range steps - 1 {
		turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("f", i), Name: "fetch", Args: json.RawMessage(`{"n":1}`)}}}) // no usage reported
	}
	turns = append(turns, replay.Turn{Content: "done"})
	counted := 0
	sum := newSummarization(t, summarization.Config{Backend: backend.NewStateBackend(nil), TriggerTokens: 1 << 30,
		Counter: func(msgs []llm.Message) int {
			counted += len(msgs)
			return summarization.EstimateTokens(msgs)
		}})
	a, _ := agent.New(agent.Config{Model: replay.New(turns...), Tools: []tool.Tool{bulkyTool()}, Middleware: []agent.Middleware{sum}})
	if _, err := a.Invoke(context.Background(), agent.Prompt("go")); err != nil {
		t.Fatal(err)
	}
	if msgs := 2 * steps; counted > 2*msgs {
		t.Errorf("counted %d messages over a %d-message run: the check is not incremental", counted, msgs)
	}
}

// fetchSteps returns n scripted turns, each fetching a page.
func fetchSteps(n int) []replay.Turn {
	turns := make([]replay.Turn, n)
	for i := range turns {
		turns[i] = replay.Turn{ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("f", i+1), Name: "fetch", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i+1))}}}
	}
	return turns
}

// notices collects the notice events of a run.
type notices struct {
	mu   sync.Mutex
	list []agent.Event
}

func (n *notices) listen(e agent.Event) {
	if e.Type == agent.EventNotice {
		n.mu.Lock()
		n.list = append(n.list, e)
		n.mu.Unlock()
	}
}

func (n *notices) count(name string) int {
	c := 0
	for _, e := range n.list {
		if e.Name == name {
			c++
		}
	}
	return c
}

// A summary that fails changes nothing; attempts back off, stop after
// MaxFailures in a row, and a request that would overflow the window is
// trimmed instead of sent.
func TestFailedSummaryBacksOffThenTrims(t *testing.T) {
	const window = 2000
	turns := append(fetchSteps(40), replay.Turn{Content: "done"})
	turns = append(turns,
		replay.Turn{Agent: "summarizer", Error: "429 rate limited"},
		replay.Turn{Agent: "summarizer", Content: "   "}, // empty: a failure too
		replay.Turn{Agent: "summarizer", Error: "timeout"},
	)
	m := replay.NewFromScript(&replay.Script{ContextWindow: window, Turns: turns}).Record()
	files := thread.NewFiles(nil)
	sum := newSummarization(t, summarization.Config{Backend: backend.NewStateBackend(files)})
	a, err := agent.New(agent.Config{Model: m, Tools: []tool.Tool{bulkyTool()}, Middleware: []agent.Middleware{sum}})
	if err != nil {
		t.Fatal(err)
	}
	var ns notices
	in := agent.Prompt("read the pages")
	in.ThreadID = "t"
	in.State = &thread.State{Files: files}
	in.Events = ns.listen
	res, err := a.Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if m.Remaining() != 0 {
		t.Fatalf("%d turns not played: the summarizer was not tried three times", m.Remaining())
	}
	if got := ns.count(summarization.NoticeSummaryFailed); got != summarization.DefaultMaxFailures {
		t.Errorf("%d summary_failed notices, want %d", got, summarization.DefaultMaxFailures)
	}
	if ns.count(summarization.NoticeSummarized) != 0 {
		t.Error("a summary was reported although every call failed")
	}
	trims := ns.count(summarization.NoticeContextTrimmed)
	if trims == 0 {
		t.Fatal("no trim: a request over the window was sent")
	}
	// No main request was over the window.
	sys := 0
	for _, r := range m.Requests() {
		if r.Agent != "main" {
			continue
		}
		sys = (len(r.Request.System) + 3) / 4
		if est := sys + summarization.EstimateTokens(r.Request.Messages); est > window {
			t.Errorf("a request of about %d tokens was sent to a %d-token window", est, window)
		}
	}
	// Each trimmed message is in the history file once; failed summaries
	// wrote nothing.
	hist, _ := files.Get("/conversation_history/t.md")
	if got := strings.Count(hist.Content, "\n## Messages "); got != trims {
		t.Errorf("history has %d sections, want one per trim (%d)", got, trims)
	}
	if got := strings.Count(hist.Content, "page 1: lorem"); got != 1 {
		t.Errorf("page 1 is %d times in the history, want 1", got)
	}
	if first := res.State.Messages[0].Text(); !strings.Contains(first, "removed without a summary") {
		t.Errorf("the first message does not tell the model about the trim: %q", first)
	}
	if len(res.State.Messages) >= 40 {
		t.Errorf("the state kept %d messages; trimming should bound it", len(res.State.Messages))
	}
}

// The regression of issue 12: a summary that fails must not write the
// history file, and a checkpoint must store what a step appended to it,
// never the whole file again. Total checkpoint bytes stay proportional to
// the conversation.
func TestSummarizationCheckpointsStayLinear(t *testing.T) {
	for _, tc := range []struct {
		name     string
		defaults map[string]replay.Turn
	}{
		{"summaries succeed", map[string]replay.Turn{"summarizer": {Content: "Pages were fetched; keep fetching."}}},
		{"summaries fail", map[string]replay.Turn{"summarizer": {Error: "503 overloaded"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const steps = 300
			turns := append(fetchSteps(steps), replay.Turn{Content: "done"})
			m := replay.NewFromScript(&replay.Script{ContextWindow: 4000, Turns: turns, Defaults: tc.defaults})
			saver := &sizingSaver{Saver: checkpoint.NewMemorySaver()}
			sum := newSummarization(t, summarization.Config{Backend: backend.NewStateBackend(nil)})
			a, err := agent.New(agent.Config{Model: m, Tools: []tool.Tool{bulkyTool()}, Middleware: []agent.Middleware{sum}, Checkpointer: saver, MaxSteps: steps + 1})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text() != "done" {
				t.Fatalf("final answer %q", res.Text())
			}
			// Every message of the conversation, as the model produced it.
			convBytes := 0
			for i := range steps {
				r := llm.ToolResult("x", "fetch", fmt.Sprintf("page %d: %s", i+1, strings.Repeat("lorem ipsum ", 40)), false)
				convBytes += len(r.Text()) + 20
			}
			hist := res.State.Files.Snapshot()["/conversation_history/t.md"].Content
			if saver.historyBytes != len(hist) {
				t.Errorf("checkpoints stored %d bytes of the history file, which has %d: appends were stored more than once", saver.historyBytes, len(hist))
			}
			if saver.total > 3*convBytes {
				t.Errorf("checkpoints hold %d bytes for a conversation of %d", saver.total, convBytes)
			}
		})
	}
}

// sizingSaver counts the bytes of what is put.
type sizingSaver struct {
	checkpoint.Saver
	total, historyBytes int
}

func (s *sizingSaver) Put(ctx context.Context, cp *checkpoint.Checkpoint) error {
	b, _ := json.Marshal(cp.Delta)
	s.total += len(b)
	for p, f := range cp.Files {
		if strings.HasPrefix(p, summarization.HistoryDir) && f != nil {
			s.historyBytes += len(f.Content)
		}
	}
	for p, f := range cp.Appends {
		if strings.HasPrefix(p, summarization.HistoryDir) {
			s.historyBytes += len(f.Content)
		}
	}
	return s.Saver.Put(ctx, cp)
}

// CompactFirst summarizes a short conversation at once, keeping only the
// new prompt; without it the same run sends the conversation whole.
func TestCompactFirst(t *testing.T) {
	for _, compact := range []bool{true, false} {
		t.Run(fmt.Sprint("compact=", compact), func(t *testing.T) {
			first := replay.Turn{Content: "the answer is 42"}
			second := replay.Turn{Content: "noted", Expect: &replay.Expect{MessagesContain: []string{"what was the answer?", "the answer is 42"}}}
			turns := []replay.Turn{first}
			if compact {
				turns = append(turns, replay.Turn{Agent: "summarizer", Content: "The user asked a question; the answer was 42.",
					Expect: &replay.Expect{MessagesContain: []string{"find the answer", "the answer is 42"}, MessagesExclude: []string{"what was the answer?"}}})
				second.Expect = &replay.Expect{
					MessagesContain: []string{"<summary>\nThe user asked a question; the answer was 42.\n</summary>", "what was the answer?"},
					MessagesExclude: []string{"find the answer"},
				}
			}
			m := replay.NewFromScript(&replay.Script{ContextWindow: 200_000, Turns: append(turns, second)}).Record()
			a, err := agent.New(agent.Config{Model: m, Checkpointer: checkpoint.NewMemorySaver(),
				Middleware: []agent.Middleware{newSummarization(t, summarization.Config{Backend: backend.NewStateBackend(nil)})}})
			if err != nil {
				t.Fatal(err)
			}
			in := agent.Prompt("find the answer")
			in.ThreadID = "t"
			if _, err := a.Invoke(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if compact {
				ctx = summarization.CompactFirst(ctx)
			}
			var n notices
			var usage agent.UsageTree
			in = agent.Prompt("what was the answer?")
			in.ThreadID = "t"
			in.Events = func(e agent.Event) { n.listen(e); usage.Add(e) }
			res, err := a.Invoke(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text() != "noted" || m.Remaining() != 0 {
				t.Fatalf("%q, %d turns left", res.Text(), m.Remaining())
			}
			if got := n.count(summarization.NoticeSummarized); got != map[bool]int{true: 1, false: 0}[compact] {
				t.Errorf("%d summarized notices", got)
			}
			// The summary call counts as the summarizer's, under the agent.
			if got := len(usage.Subagents); got != map[bool]int{true: 1, false: 0}[compact] ||
				compact && (usage.Subagents[0].Agent != summarization.SummarizerAgent || usage.Subagents[0].Models[0].Calls != 1) {
				t.Errorf("usage: %+v", usage)
			}
			hist, ok := res.State.Files.Get("/conversation_history/t.md")
			if ok != compact || compact && !strings.Contains(hist.Content, "find the answer") {
				t.Errorf("history file: %v %q", ok, hist.Content)
			}
		})
	}
}

// CompactNow with Input.Prepare summarizes the whole conversation at once,
// the focus given to the summarizer, without a model turn; the next prompt
// sees only the summary.
func TestCompactNow(t *testing.T) {
	for _, focus := range []string{"", "the parser's bug"} {
		t.Run(fmt.Sprintf("focus=%q", focus), func(t *testing.T) {
			sumExpect := &replay.Expect{MessagesContain: []string{"find the answer", "the answer is 42"}}
			if focus != "" {
				sumExpect.MessagesContain = append(sumExpect.MessagesContain, "<focus>\n"+focus+"\n</focus>")
			} else {
				sumExpect.MessagesExclude = []string{"<focus>"}
			}
			m := replay.NewFromScript(&replay.Script{ContextWindow: 200_000, Turns: []replay.Turn{
				{Content: "the answer is 42"},
				{Agent: "summarizer", Content: "The answer was 42.", Expect: sumExpect},
				{Content: "noted", Expect: &replay.Expect{MessagesContain: []string{"<summary>\nThe answer was 42.\n</summary>", "next?"},
					MessagesExclude: []string{"find the answer"}}},
			}}).Record()
			a, err := agent.New(agent.Config{Model: m, Checkpointer: checkpoint.NewMemorySaver(),
				Middleware: []agent.Middleware{newSummarization(t, summarization.Config{Backend: backend.NewStateBackend(nil)})}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			in := agent.Prompt("find the answer")
			in.ThreadID = "t"
			if _, err := a.Invoke(ctx, in); err != nil {
				t.Fatal(err)
			}
			var n notices
			res, err := a.Invoke(summarization.WithFocus(summarization.CompactNow(ctx), focus),
				agent.Input{ThreadID: "t", Prepare: true, Events: n.listen})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != agent.StatusCompleted || res.Steps != 0 || n.count(summarization.NoticeSummarized) != 1 {
				t.Fatalf("status %s, %d steps, %d summarized notices", res.Status, res.Steps, n.count(summarization.NoticeSummarized))
			}
			if msgs := res.State.Messages; len(msgs) != 1 || !strings.Contains(msgs[0].Text(), "The answer was 42.") {
				t.Fatalf("messages after compacting: %+v", msgs)
			}
			in = agent.Prompt("next?")
			in.ThreadID = "t"
			if res, err = a.Invoke(ctx, in); err != nil || res.Text() != "noted" || m.Remaining() != 0 {
				t.Fatalf("%v %q, %d turns left", err, res.Text(), m.Remaining())
			}
		})
	}
}
