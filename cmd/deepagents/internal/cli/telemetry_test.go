package cli

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/telemetry/otlp/otlptest"
)

// delegateScript has the main agent hand a task to the general-purpose
// subagent, which lists the workspace.
const delegateScript = `{"turns": [
  {"tool_calls": [{"id": "c1", "name": "task", "args": {"description": "list the files", "subagent_type": "general-purpose"}}]},
  {"agent": "general-purpose", "tool_calls": [{"id": "s1", "name": "ls", "args": {"path": "/"}}]},
  {"agent": "general-purpose", "content": "Nothing there."},
  {"content": "done"}]}`

// TestTracesFromTheEnvironment runs the binary with nothing but OTEL_*
// variables to configure tracing: the process exports the run's spans to
// the collector before it exits, as one tree, with the user's content
// because the environment asked for it.
func TestTracesFromTheEnvironment(t *testing.T) {
	col := otlptest.Start()
	defer col.Close()
	w := newWorld(t)
	code, _, stderr := w.runWithEnv([]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.URL(),
		"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true",
	}, w.runArgs(w.script(delegateScript), "list what is there")...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	spans := col.Spans() // the process flushed them before exiting
	want := `invoke_agent main
  chat script
  execute_tool task
    invoke_agent general-purpose
      chat script
      execute_tool ls
      chat script
  chat script
`
	if got := otlptest.Tree(spans); got != want {
		t.Fatalf("the collector received\n%s\nwant\n%s", got, want)
	}
	for _, s := range spans {
		if s.Resource["service.name"] != "deepagents" {
			t.Errorf("%s: service %q, want deepagents", s.Name, s.Resource["service.name"])
		}
		if s.Name == "invoke_agent main" && !strings.Contains(s.Attributes["gen_ai.input.messages"], "list what is there") {
			t.Errorf("the run span does not record the prompt: %v", s.Attributes)
		}
	}
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
}

// TestTracesCollectorDown checks that a collector that is down costs a run
// neither its success nor more than one warning.
func TestTracesCollectorDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String()
	ln.Close()
	w := newWorld(t)
	start := time.Now()
	code, stdout, stderr := w.runWithEnv([]string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint}, w.runArgs(w.script(delegateScript), "go")...)
	if code != ExitOK || runEnd(t, stdout).Status != "completed" {
		t.Fatalf("exit %d with the collector down: %s", code, stderr)
	}
	if d := time.Since(start); d > flushTimeout+5*time.Second {
		t.Errorf("the run took %v", d)
	}
	if n := strings.Count(stderr, "exporting traces failed"); n != 1 {
		t.Errorf("stderr reports the failure %d times, want once:\n%s", n, stderr)
	}
}
