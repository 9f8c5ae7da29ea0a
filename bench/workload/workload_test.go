package workload_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/bench/workload"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
)

func TestCalls(t *testing.T) {
	tests := []struct {
		i          int
		name, args string
	}{
		{0, "write_file", `{"file_path":"/d0/f0.txt","content":"file 0: the quick brown fox jumps over the lazy dog\n"}`},
		{1, "read_file", `{"file_path":"/d0/f0.txt"}`},
		{2, "ls", `{"path":"/d0"}`},
		{3, "write_file", `{"file_path":"/d0/f1.txt","content":"file 1: the quick brown fox jumps over the lazy dog\n"}`},
		{29, "ls", `{"path":"/d0"}`},
		{30, "write_file", `{"file_path":"/d1/f10.txt","content":"file 10: the quick brown fox jumps over the lazy dog\n"}`},
		{29998, "read_file", `{"file_path":"/d999/f9999.txt"}`},
	}
	for _, tc := range tests {
		c := workload.Call(tc.i)
		if c.ID != fmt.Sprintf("call_%d", tc.i) || c.Name != tc.name || string(c.Args) != tc.args {
			t.Errorf("Call(%d) = %s %s %s, want %s %s", tc.i, c.ID, c.Name, c.Args, tc.name, tc.args)
		}
	}
}

// TestScriptRoundTrip checks that the replay script the CLI reads parses
// back into the same turns.
func TestScriptRoundTrip(t *testing.T) {
	data, err := json.Marshal(workload.Script(7))
	if err != nil {
		t.Fatal(err)
	}
	s, err := replay.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if s.ContextWindow != workload.ContextWindow || len(s.Turns) != 8 {
		t.Fatalf("window %d, %d turns", s.ContextWindow, len(s.Turns))
	}
	for i, turn := range s.Turns[:7] {
		want := workload.Call(i)
		if len(turn.ToolCalls) != 1 || turn.ToolCalls[0].ID != want.ID || !bytes.Equal(turn.ToolCalls[0].Args, want.Args) {
			t.Errorf("turn %d: %+v, want %+v", i, turn.ToolCalls, want)
		}
	}
	if s.Turns[7].Content != workload.Final || len(s.Turns[7].ToolCalls) != 0 {
		t.Errorf("final turn %+v", s.Turns[7])
	}
}

func TestCanonical(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(string(workload.Canonical(4)), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5", len(lines))
	}
	for i, l := range lines[:4] {
		var v struct {
			ID, Name string
			Args     map[string]string
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if c := workload.Call(i); v.ID != c.ID || v.Name != c.Name || len(v.Args) == 0 {
			t.Errorf("line %d = %s", i, l)
		}
	}
	if lines[4] != `{"content":"done"}` {
		t.Errorf("final line %s", lines[4])
	}
}

// TestRun runs the workload through the default deep agent and checks every
// tool result; it also makes sure Check can fail.
func TestRun(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 31, 62} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := replay.NewFromScript(workload.Script(n))
			a, err := deepagents.New(deepagents.Config{Model: m, MaxSteps: n + 1})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Invoke(context.Background(), deepagents.Prompt("go"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps != n+1 || res.Text() != workload.Final || m.Remaining() != 0 {
				t.Fatalf("steps %d, text %q, %d turns left", res.Steps, res.Text(), m.Remaining())
			}
			if err := workload.Check(n, res.State.Messages); err != nil {
				t.Fatal(err)
			}
			if n >= 3 && workload.Check(n+1, res.State.Messages) == nil {
				t.Error("Check accepted a wrong step count")
			}
		})
	}
	bad := []llm.Message{{Role: llm.RoleTool, Name: "ls", ToolCallID: "call_0", IsError: true, Parts: []llm.Part{llm.Text("Error: boom")}}}
	if err := workload.Check(1, bad); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Check of a failed tool = %v", err)
	}
	if err := workload.CheckResults(5, "file 0: x", "/d0/f0.txt"); err == nil {
		t.Error("CheckResults accepted the wrong file")
	}
}

// BenchmarkWorkload runs the workload in process with the default stack and
// the State backend; profile it with
//
//	go test -run='^$' -bench=Workload/steps=10000 -benchtime=3x -cpuprofile cpu.out -memprofile mem.out ./bench/workload
func BenchmarkWorkload(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			script := workload.Script(n)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				a, err := deepagents.New(deepagents.Config{Model: replay.NewFromScript(script), MaxSteps: n + 1})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := a.Invoke(ctx, deepagents.Prompt("go"))
				if err != nil || res.Steps != n+1 {
					b.Fatalf("steps %d, err %v", res.Steps, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
			b.ReportMetric(0, "ns/op")
		})
	}
}
