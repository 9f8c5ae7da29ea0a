package llm_test

import (
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
)

// TestSystemMemo: the memo appends as AppendSystem does, whatever the
// prompts and sections, and the same section to the prompt it made before
// costs no allocation.
func TestSystemMemo(t *testing.T) {
	var m llm.SystemMemo
	for _, c := range []struct{ base, section string }{
		{"", "memory"},
		{"base", "memory"},
		{"base", "memory"}, // remembered
		{"other base", "memory"},
		{"other base", "skills"},
		{"base", ""},
	} {
		want := llm.Request{System: c.base}
		want.AppendSystem(c.section)
		got := llm.Request{System: c.base}
		m.Append(&got, c.section)
		if got.System != want.System {
			t.Errorf("Append(%q, %q) = %q, want %q", c.base, c.section, got.System, want.System)
		}
	}

	base := "You are a deep agent." + string(make([]byte, 4096))
	var steady llm.SystemMemo
	steady.Append(&llm.Request{System: base}, "## Memory")
	if n := testing.AllocsPerRun(100, func() {
		r := llm.Request{System: base}
		steady.Append(&r, "## Memory")
	}); n != 0 {
		t.Errorf("the same section to the same prompt: %v allocations a call, want 0", n)
	}
}

// TestSystemMemoConcurrent: calls from several goroutines with different
// prompts each get their own prompt's result.
func TestSystemMemoConcurrent(t *testing.T) {
	var m llm.SystemMemo
	var wg sync.WaitGroup
	for _, base := range []string{"a", "b", "c", "d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				r := llm.Request{System: base}
				m.Append(&r, "s")
				if r.System != base+"\n\ns" {
					t.Errorf("%q: got %q", base, r.System)
					return
				}
			}
		}()
	}
	wg.Wait()
}
