package loops

import (
	"testing"

	"github.com/deepagents-go/deepagents/tool"
)

// What a call costs the guard is bounded, however long the run: it
// compares the call with at most window others and remembers at most
// maxSeen calls that may change things.
func TestWorkPerCallIsBounded(t *testing.T) {
	m, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := &history{seen: make(map[uint64]bool), nudged: make(map[uint64]bool)}
	for i := range 10000 {
		// Reads of new files, and now and then a new command.
		tr := tool.Traits{ReadOnly: true}
		if i%7 == 0 {
			tr = tool.Traits{RunsCommands: true}
		}
		m.count(h, call{key: uint64(i) + 1, outcome: uint64(i)}, "x", tr, false)
		if len(h.recent) > window || len(h.seen) > maxSeen {
			t.Fatalf("call %d: %d recent, %d seen", i, len(h.recent), len(h.seen))
		}
	}
}
