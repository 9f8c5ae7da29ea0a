package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/llmtest"
	"github.com/deepagents-go/deepagents/middleware"
	"github.com/deepagents-go/deepagents/tool"
)

func bulkyTool() tool.Tool {
	return tool.Must(tool.New("fetch", "Fetch a page.", func(_ context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		return fmt.Sprintf("page %d: %s", in.N, strings.Repeat("lorem ipsum ", 40)), nil
	}))
}

func TestSummarizationOffloadsHistory(t *testing.T) {
	turns := []llmtest.Turn{
		{ToolCalls: []llm.ToolCall{todosCall("td", `[{"content":"read pages","status":"in_progress"}]`)}, Usage: llm.Usage{InputTokens: 300, OutputTokens: 20}},
	}
	// The provider's reported input grows to 900 tokens; the request of
	// step 5 is over 85% of the 1,000-token window, and after the summary
	// the reported size drops.
	for i, in := range []int{550, 700, 900, 300} {
		turns = append(turns, llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("f", i+1), Name: "fetch", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i+1))}}, Usage: llm.Usage{InputTokens: in, OutputTokens: 20}})
	}
	turns = append(turns[:4:4], append([]llmtest.Turn{
		{Agent: "summarizer", Content: "The user wants pages read; pages 1-3 were fetched.", Expect: &llmtest.Expect{
			MessagesContain: []string{"read the pages", "page 1: lorem", "page 2: lorem"}, MessagesExclude: []string{"page 3: lorem"},
		}}}, turns[4:]...)...)
	turns = append(turns,
		llmtest.Turn{Content: "all read", Expect: &llmtest.Expect{
			MessagesContain: []string{"<summary>\nThe user wants pages read; pages 1-3 were fetched.\n</summary>", "/conversation_history/th_1.md", "- [in_progress] read pages", "page 3: lorem", "page 4: lorem"},
			MessagesExclude: []string{"page 1: lorem", "page 2: lorem"},
		}},
	)
	m := llmtest.NewFromScript(&llmtest.Script{ContextWindow: 1000, Turns: turns}).Record()
	files := backend.NewFiles(nil)
	sum := middleware.NewSummarization(nil, backend.NewState(files))
	a, err := agent.New(agent.Config{Model: m, Tools: []tool.Tool{bulkyTool()}, Middleware: []agent.Middleware{middleware.NewTodos(), sum}})
	if err != nil {
		t.Fatal(err)
	}
	in := agent.Prompt("read the pages")
	in.ThreadID = "th/1"
	in.State = &agent.State{Files: files}
	res, err := a.Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "all read" || m.Remaining() != 0 {
		t.Fatalf("text %q, %d turns left", res.Text(), m.Remaining())
	}
	// The state keeps every message; only the request was rewritten.
	if n := len(res.State.Messages); n != 12 {
		t.Errorf("state has %d messages, want 12", n)
	}
	if len(res.State.Todos) != 1 {
		t.Errorf("todos = %v", res.State.Todos)
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
	// The last request: the summary, then whole call/result pairs.
	reqs := m.Requests()
	last := reqs[len(reqs)-1].Request.Messages
	if last[0].Role != llm.RoleUser || !strings.Contains(last[0].Text(), "<summary>") {
		t.Errorf("first message is not the summary: %q", last[0].Text())
	}
	if last[1].Role == llm.RoleTool {
		t.Error("kept messages start with a tool result whose call was summarized")
	}
	var st struct{ Cutoff int }
	json.Unmarshal(res.State.Values[middleware.SummarizationValue], &st)
	if st.Cutoff == 0 || res.State.Messages[st.Cutoff].Role == llm.RoleTool {
		t.Errorf("cutoff %d splits a call from its result", st.Cutoff)
	}
}

func TestNoSummaryBelowTrigger(t *testing.T) {
	m := llmtest.NewFromScript(&llmtest.Script{ContextWindow: 100000, Turns: []llmtest.Turn{
		{ToolCalls: []llm.ToolCall{{ID: "f", Name: "fetch", Args: json.RawMessage(`{"n":1}`)}}, Usage: llm.Usage{InputTokens: 5000}},
		{Content: "done", Expect: &llmtest.Expect{MessagesExclude: []string{"<summary>"}}},
	}})
	sum := middleware.NewSummarization(nil, backend.NewState(nil))
	a, _ := agent.New(agent.Config{Model: m, Tools: []tool.Tool{bulkyTool()}, Middleware: []agent.Middleware{sum}})
	res, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err != nil || res.Text() != "done" {
		t.Fatalf("%v %q", err, res.Text())
	}
	if _, ok := res.State.Values[middleware.SummarizationValue]; ok {
		t.Error("summarized below the trigger")
	}
}

func TestUnknownWindowKeepsSixMessages(t *testing.T) {
	var turns []llmtest.Turn
	for i := 1; i <= 5; i++ {
		turns = append(turns, llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("f", i), Name: "fetch", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}}})
	}
	turns = append(turns, llmtest.Turn{Agent: "summarizer", Content: "summary"},
		llmtest.Turn{Content: "done"})
	m := llmtest.New(turns...).Record()
	sum := middleware.NewSummarization(nil, backend.NewState(nil))
	sum.TriggerTokens = 600 // the window is unknown; keep falls back to messages
	a, _ := agent.New(agent.Config{Model: m, Tools: []tool.Tool{bulkyTool()}, Middleware: []agent.Middleware{sum}})
	in := agent.Prompt("go")
	in.State = &agent.State{Files: backend.NewFiles(nil)}
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
	if n := len(reqs[first].Request.Messages) - 1; n != middleware.DefaultKeepMessages {
		t.Errorf("kept %d messages, want %d", n, middleware.DefaultKeepMessages)
	}
}

// The size check must cost O(new messages) per step, or long runs become
// quadratic: count how many messages the counter is asked about.
func TestSummarizationCountsEachMessageOnce(t *testing.T) {
	const steps = 200
	var turns []llmtest.Turn
	for i := range steps - 1 {
		turns = append(turns, llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("f", i), Name: "fetch", Args: json.RawMessage(`{"n":1}`)}}}) // no usage reported
	}
	turns = append(turns, llmtest.Turn{Content: "done"})
	counted := 0
	sum := middleware.NewSummarization(nil, backend.NewState(nil))
	sum.TriggerTokens = 1 << 30
	sum.Counter = func(msgs []llm.Message) int {
		counted += len(msgs)
		return middleware.EstimateTokens(msgs)
	}
	a, _ := agent.New(agent.Config{Model: llmtest.New(turns...), Tools: []tool.Tool{bulkyTool()}, Middleware: []agent.Middleware{sum}})
	if _, err := a.Invoke(context.Background(), agent.Prompt("go")); err != nil {
		t.Fatal(err)
	}
	if msgs := 2 * steps; counted > 2*msgs {
		t.Errorf("counted %d messages over a %d-message run: the check is not incremental", counted, msgs)
	}
}
