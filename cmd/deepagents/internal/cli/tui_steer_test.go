package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A message typed while a tool call runs reaches the model at its very
// next request (the script's expectation fails the run otherwise), marked
// as sent mid-turn; Tab keeps a message for when the task ends instead.
func TestSteerWhileAToolRuns(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	// The command waits for the test: the message is typed and saved
	// while it runs.
	script := w.script(`{"turns":[
 {"tool_calls":[{"name":"execute","args":{"command":"while [ ! -e ` + gate + ` ]; do sleep 0.05; done; echo waited"}}]},
 {"expect":{"messages_contain":["while you were working","STEERMARK use the other file"]},"content":"Switching to the other file."},
 {"expect":{"messages_contain":["QUEUEMARK later"]},"content":"Done later."}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--shell", "--sandbox", "none", "--auto-approve")
	s.waitFor("> ")
	s.typeLine("fix it")
	s.waitFor("enter steers, tab queues")
	s.typeLine("STEERMARK use the other file")
	s.waitFor("sent to the running task")
	s.keys("-l", "QUEUEMARK later")
	s.keys("Tab")
	s.waitFor("queued: QUEUEMARK later")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	scr := s.waitFor("Done later.")
	back := strings.Join(s.scrollback(), "\n")
	if !strings.Contains(back, "Switching to the other file.") || !strings.Contains(back, "delivered to the model: STEERMARK") {
		t.Errorf("the steered answer or its delivery's note is missing:\n%s", scr)
	}
	if strings.Contains(back, "reached the task after its last step") {
		t.Errorf("a delivered message was said to be late:\n%s", back)
	}
}
