package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/persist"
)

// peakTools is a middleware that counts the tool calls running at once.
type peakTools struct{ running, peak atomic.Int32 }

func (*peakTools) Name() string { return "test_peak_tools" }

// WrapTool implements agent.ToolWrapper.
func (p *peakTools) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	n := p.running.Add(1)
	defer p.running.Add(-1)
	for m := p.peak.Load(); n > m && !p.peak.CompareAndSwap(m, n); m = p.peak.Load() {
	}
	// Not an assertion on time: it holds the call open, so that calls
	// the cap does not hold back overlap it.
	time.Sleep(20 * time.Millisecond)
	return next(ctx, req)
}

// --max-parallel-tools reaches the agent Open builds: four calls of one
// turn run one at a time under --max-parallel-tools 1, and overlap
// without it.
func TestMaxParallelToolsReachesTheAgent(t *testing.T) {
	ws := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	call := `{"id":"c%d","name":"ls","args":{"path":"/"}}`
	mustWrite(t, script, `{"turns":[{"tool_calls":[`+
		sprintfAll(call, 1, 2, 3, 4)+`]},{"content":"done"}]}`)
	for _, tc := range []struct {
		name     string
		max      int
		overlaps bool
	}{{"capped", 1, false}, {"default", 0, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := Flags{Model: "replay:" + script, Dir: ws, Sandbox: "bwrap", Durability: "async", MaxParallelTools: tc.max}
			if tc.max != 0 {
				f.Given = given("max-parallel-tools")
			}
			spec, err := Resolve(Inputs{Flags: f, Places: home(t, "")})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			db, err := persist.Open(ctx, "memory:", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			p := &peakTools{}
			s, err := Open(ctx, spec, Deps{DB: db, Getenv: func(string) string { return "" }, Middleware: []deepagents.Middleware{p}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Agent.Invoke(ctx, deepagents.Prompt("go")); err != nil {
				t.Fatal(err)
			}
			if got := p.peak.Load(); (got > 1) != tc.overlaps || got == 0 {
				t.Errorf("at most %d tool calls ran at once (--max-parallel-tools %d)", got, tc.max)
			}
		})
	}
}

// sprintfAll joins format applied to each of ns with commas.
func sprintfAll(format string, ns ...int) string {
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf(format, n))
	}
	return strings.Join(out, ",")
}
