package loops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/loops"
	"github.com/deepagents-go/deepagents/tool"
)

// step is one tool call of a script: a tool of the fake set and its
// arguments.
type step struct{ tool, args string }

// fakeTools answer as a workspace would: read returns a file's text, edit
// always succeeds, run prints what the counter says (out grows with it
// when grows is set), fail fails with its argument, poll answers running.
func fakeTools(grows bool) []tool.Tool {
	runs := 0
	type pathIn struct {
		Path string `json:"path,omitempty"`
	}
	type cmdIn struct {
		Command string `json:"command,omitempty"`
	}
	return []tool.Tool{
		tool.Must(tool.New("read", "reads", func(_ context.Context, in pathIn) (string, error) { return "text of " + in.Path, nil },
			tool.WithTraits(tool.Traits{ReadOnly: true, ReadsFiles: true}))),
		tool.Must(tool.New("edit", "edits", func(_ context.Context, in pathIn) (string, error) { return "Updated " + in.Path, nil },
			tool.WithTraits(tool.Traits{EditsFiles: true}))),
		tool.Must(tool.New("run", "runs", func(_ context.Context, in cmdIn) (string, error) {
			runs++
			if grows {
				return fmt.Sprintf("%s: %d lines", in.Command, runs), nil
			}
			return in.Command + ": FAIL", nil
		}, tool.WithTraits(tool.Traits{RunsCommands: true}))),
		tool.Must(tool.New("fail", "fails", func(_ context.Context, in pathIn) (string, error) {
			return "", fmt.Errorf("no such file: %s", in.Path)
		})),
		tool.Must(tool.New("slow", "runs slowly", func(_ context.Context, in cmdIn) (string, error) {
			runs++ // how long it ran differs each time; its output does not
			return fmt.Sprintf("FAIL\n\n[Command failed with exit code 1 after %ds]", runs), nil
		}, tool.WithTraits(tool.Traits{RunsCommands: true}))),
		tool.Must(tool.New("poll", "polls", func(context.Context, struct{}) (string, error) { return "running", nil },
			tool.WithTraits(tool.Traits{Polls: true}))),
	}
}

// run runs the steps, one call a turn, and returns the run's result and
// the tool results in order.
func run(t *testing.T, cfg loops.Config, grows bool, steps ...step) (*agent.Result, []string) {
	t.Helper()
	var turns []replay.Turn
	for i, s := range steps {
		turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("c", i), Name: s.tool, Args: json.RawMessage(s.args)}}})
	}
	turns = append(turns, replay.Turn{Content: "done"})
	guard, err := loops.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: replay.New(turns...), Tools: fakeTools(grows), Middleware: []agent.Middleware{guard}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range res.State.Messages {
		if m.Role == llm.RoleTool {
			results = append(results, m.Text())
		}
	}
	return res, results
}

func repeat(n int, s ...step) []step {
	var out []step
	for range n {
		out = append(out, s...)
	}
	return out
}

// notes returns the indexes of the results that carry a note.
func notes(results []string) []int {
	var at []int
	for i, r := range results {
		if strings.Contains(r, "\n\nNote: ") || strings.Contains(r, "\n\nThe run is stopped") {
			at = append(at, i)
		}
	}
	return at
}

func TestGuard(t *testing.T) {
	readA, readB := step{"read", `{"path":"/a"}`}, step{"read", `{"path":"/b"}`}
	editA := step{"edit", `{"path":"/a"}`}
	test := step{"run", `{"command":"go test"}`}
	tests := []struct {
		name  string
		cfg   loops.Config
		grows bool
		steps []step
		notes []int  // results with a note
		want  string // in the first note
	}{
		{"three identical calls", loops.Config{}, false, repeat(3, readA), []int{2}, "called read 3 times"},
		{"two are not a loop", loops.Config{}, false, repeat(2, readA), nil, ""},
		{"ping-pong", loops.Config{}, false, repeat(3, readA, readB), []int{4}, "take turns between the same two"},
		{"polling a background task", loops.Config{}, false, repeat(10, step{"poll", `{}`}), nil, ""},
		{"no-op writes", loops.Config{}, false, repeat(3, editA), []int{2}, "changes nothing"},
		{"the same error", loops.Config{}, false, []step{{"fail", `{"path":"/x.go"}`}, {"fail", `{"path":"/y.go"}`}, {"fail", `{"path":"/z.go"}`}}, []int{2}, "failed 3 times with this same error"},
		{"a slow command whose output does not change", loops.Config{}, false, repeat(3, step{"slow", `{"command":"go test"}`}), []int{2}, "called slow 3 times"},
		{"tests after each edit", loops.Config{}, false, []step{
			{"edit", `{"path":"/1"}`}, test, {"edit", `{"path":"/2"}`}, test, {"edit", `{"path":"/3"}`}, test, {"edit", `{"path":"/4"}`}, test,
		}, nil, ""},
		{"a command whose output grows", loops.Config{}, true, repeat(6, test), nil, ""},
		{"a command whose output does not", loops.Config{}, false, repeat(3, test), []int{2}, "called run 3 times"},
		{"reads in a row", loops.Config{Reads: 4}, false, []step{readA, readB, {"read", `{"path":"/c"}`}, {"read", `{"path":"/d"}`}, {"read", `{"path":"/e"}`}}, []int{3}, "last 4 calls only read"},
		{"nudges off", loops.Config{Nudge: -1}, false, repeat(5, readA), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, results := run(t, tt.cfg, tt.grows, tt.steps...)
			if res.EndCode != "" {
				t.Errorf("the run ended early: %s (%s)", res.EndCode, res.EndReason)
			}
			got := notes(results)
			if fmt.Sprint(got) != fmt.Sprint(tt.notes) {
				t.Fatalf("notes on results %v, want %v: %q", got, tt.notes, results)
			}
			if len(got) > 0 && !strings.Contains(results[got[0]], tt.want) {
				t.Errorf("note %q, want it to say %q", results[got[0]], tt.want)
			}
		})
	}
}

// TestStop: past the stop threshold the run ends, completed, with the code
// loop, after the turn's calls ran; the model gets no further turn.
func TestStop(t *testing.T) {
	res, results := run(t, loops.Config{}, false, repeat(12, step{"read", `{"path":"/a"}`})...)
	if res.Status != agent.StatusCompleted || res.EndCode != agent.EndLoop || !strings.Contains(res.EndReason, "read repeated 8 times") {
		t.Fatalf("status %s, end %q %q", res.Status, res.EndCode, res.EndReason)
	}
	if len(results) != loops.DefaultStop || !strings.Contains(results[len(results)-1], "The run is stopped") {
		t.Errorf("%d results, the last %q", len(results), results[len(results)-1])
	}
	if got := notes(results); fmt.Sprint(got) != "[2 7]" {
		t.Errorf("notes on %v, want the nudge at 3 and the stop at 8", got)
	}
}

func TestConfig(t *testing.T) {
	if _, err := loops.New(loops.Config{Nudge: 5, Stop: 5}); err == nil {
		t.Error("Stop not above Nudge: no error")
	}
	if _, err := loops.New(loops.Config{Nudge: -1, Stop: 2}); err != nil {
		t.Errorf("nudges off: %v", err)
	}
}
