package agent_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/tool"
)

type runKey struct{}

// runRecorder wraps runs: it puts its name in the context and records
// every run's start and end.
type runRecorder struct {
	name string
	mu   sync.Mutex
	log  []string
}

func (r *runRecorder) Name() string { return r.name }

func (r *runRecorder) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	r.add("start " + req.Agent.Name() + " " + req.ThreadID + " resume=" + boolString(req.Input.Decisions != nil))
	res, err := next(context.WithValue(ctx, runKey{}, r.name), req)
	end := "end"
	if res != nil {
		end += " " + string(res.Status)
	}
	if err != nil {
		end += " error"
	}
	r.add(end)
	return res, err
}

func (r *runRecorder) add(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

func (r *runRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.log
	r.log = nil
	return out
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestRunWrapper checks that a RunWrapper sees every run start and end,
// whatever its outcome, and that the context it passes on reaches the
// model and the tools.
func TestRunWrapper(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	probe := tool.Must(tool.New("probe", "Report the run wrapper's context value.", func(ctx context.Context, _ struct{}) (string, error) {
		v, _ := ctx.Value(runKey{}).(string)
		mu.Lock()
		seen = append(seen, "tool:"+v)
		mu.Unlock()
		return v, nil
	}))
	tests := []struct {
		name    string
		turns   []replay.Turn
		approve bool // the probe needs approval
		want    []string
		wantErr bool
	}{
		{
			name:  "completed",
			turns: []replay.Turn{{ToolCalls: []llm.ToolCall{call("c1", "probe", `{}`)}}, {Content: "done"}},
			want:  []string{"outer: start main t resume=false", "inner: start main t resume=false", "inner: end completed", "outer: end completed"},
		},
		{
			name:    "failed",
			turns:   []replay.Turn{{Error: "provider down"}},
			want:    []string{"outer: start main t resume=false", "inner: start main t resume=false", "inner: end failed error", "outer: end failed error"},
			wantErr: true,
		},
		{
			name:    "interrupted",
			turns:   []replay.Turn{{ToolCalls: []llm.ToolCall{call("c1", "probe", `{}`)}}, {Content: "done"}},
			approve: true,
			want:    []string{"outer: start main t resume=false", "inner: start main t resume=false", "inner: end interrupted", "outer: end interrupted"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen = nil
			outer, inner := &runRecorder{name: "outer"}, &runRecorder{name: "inner"}
			mw := []agent.Middleware{outer, inner}
			if tt.approve {
				mw = append(mw, newHITL(t, map[string]hitl.InterruptOn{"probe": {}}))
			}
			a := newAgent(t, agent.Config{
				Model:        replay.New(tt.turns...),
				Tools:        []tool.Tool{probe},
				Middleware:   mw,
				Checkpointer: checkpoint.NewMemorySaver(),
				Logger:       newDiscardLogger(),
			})
			_, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			got := merge(outer.take(), inner.take())
			if !slices.Equal(got, tt.want) {
				t.Errorf("runs seen:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if want := map[bool][]string{false: {"tool:inner"}, true: nil}[tt.wantErr || tt.approve]; !slices.Equal(seen, want) {
				t.Errorf("the tools saw %v, want %v (the innermost wrapper's context)", seen, want)
			}
			if !tt.approve {
				return
			}
			// Resuming is a run of its own, which the wrappers see as one.
			res, err := a.Resume(context.Background(), "t", []agent.Decision{{Type: agent.DecisionApprove}})
			if err != nil || res.Status != agent.StatusCompleted {
				t.Fatalf("resume: %v %v", res, err)
			}
			if got, want := outer.take(), []string{"start main t resume=true", "end completed"}; !slices.Equal(got, want) {
				t.Errorf("resume seen %v, want %v", got, want)
			}
		})
	}
}

// merge interleaves the logs of the outer and the inner wrapper as they
// nest: outer start, inner start, inner end, outer end.
func merge(outer, inner []string) []string {
	if len(outer) != 2 || len(inner) != 2 {
		return append(prefix("outer: ", outer), prefix("inner: ", inner)...)
	}
	return []string{"outer: " + outer[0], "inner: " + inner[0], "inner: " + inner[1], "outer: " + outer[1]}
}

func prefix(p string, s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = p + v
	}
	return out
}

// TestRunWrapperNewThreadAndStream checks that a wrapper learns the id of a new thread
// before the run starts, and that Stream goes through the wrapper too.
func TestRunWrapperNewThreadAndStream(t *testing.T) {
	rec := &runRecorder{name: "rec"}
	a := newAgent(t, agent.Config{Model: replay.New(replay.Turn{Content: "hi"}), Middleware: []agent.Middleware{rec}})
	var threadID string
	for e, err := range a.Stream(context.Background(), agent.Prompt("hello")) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == agent.EventRunStart {
			threadID = e.ThreadID
		}
	}
	got := rec.take()
	if threadID == "" || len(got) != 2 || got[0] != "start main "+threadID+" resume=false" || got[1] != "end completed" {
		t.Errorf("seen %q for thread %q", got, threadID)
	}
}

// inputRewriter changes the run's input, as a guard might.
type inputRewriter struct{}

func (inputRewriter) Name() string { return "rewrite" }

func (inputRewriter) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	req.Input.Messages = []llm.Message{llm.UserText("rewritten")}
	return next(ctx, req)
}

func TestRunWrapperChangesTheInput(t *testing.T) {
	m := replay.New(replay.Turn{Content: "ok", Expect: &replay.Expect{LastMessageContains: []string{"rewritten"}}})
	a := newAgent(t, agent.Config{Model: m, Middleware: []agent.Middleware{inputRewriter{}}})
	if _, err := a.Invoke(context.Background(), agent.Prompt("original")); err != nil {
		t.Fatal(err)
	}
}

// panickyRun panics around the run.
type panickyRun struct{}

func (panickyRun) Name() string { return "panicky_run" }

func (panickyRun) WrapRun(context.Context, *agent.RunRequest, agent.RunHandler) (*agent.Result, error) {
	panic("wrapper bug")
}

func TestRunWrapperPanicFailsTheRun(t *testing.T) {
	a := newAgent(t, agent.Config{Model: replay.New(), Middleware: []agent.Middleware{panickyRun{}}, Logger: newDiscardLogger()})
	if _, err := a.Invoke(context.Background(), agent.Prompt("go")); !errors.Is(err, agent.ErrPanic) {
		t.Fatalf("error %v, want ErrPanic", err)
	}
}
