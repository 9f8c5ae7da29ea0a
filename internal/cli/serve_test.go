package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServer starts `deepagents serve` on a free port and returns its
// URL; the process is stopped with SIGTERM when the test ends, and must
// exit cleanly.
func (w *world) startServer(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(binary(w.t), append([]string{"serve", "--db", w.db, "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = w.env()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	lines := bufio.NewReader(stderr)
	first, err := lines.ReadString('\n')
	url := regexp.MustCompile(`http://[0-9.:]+`).FindString(first)
	if err != nil || url == "" {
		cmd.Process.Kill()
		w.t.Fatalf("serve did not start: %q %v", first, err)
	}
	rest := make(chan string, 1)
	go func() { b, _ := io.ReadAll(lines); rest <- string(b) }()
	w.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			out := <-rest
			if err != nil || !strings.Contains(out, "server stopped") {
				w.t.Errorf("serve exited with %v: %s", err, out)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			w.t.Error("serve did not stop on SIGTERM")
		}
	})
	return url
}

// TestServeThroughCLI serves a scripted agent, runs it over HTTP, and
// finds the thread with `deepagents threads`, as the same database holds
// both.
func TestServeThroughCLI(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[{"tool_calls":[{"id":"c1","name":"write_file","args":{"file_path":"/notes.md","content":"hi"}}]},{"content":"Done."}]}`)
	url := w.startServer("--model", "replay:"+script)
	post := func(path, body string) map[string]any {
		t.Helper()
		res, err := http.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %s", path, res.StatusCode, b)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		return v
	}
	th := post("/threads", `{"metadata":{"owner":"test"}}`)
	tid := th["thread_id"].(string)
	out := post("/threads/"+tid+"/runs/wait", `{"assistant_id":"deepagent","input":{"messages":[{"type":"human","content":"write notes"}]}}`)
	files, _ := out["files"].(map[string]any)
	if _, ok := files["/notes.md"]; !ok {
		t.Errorf("the thread's files: %v (the workspace is the thread's state without --dir)", out["files"])
	}
	code, stdout, stderr := w.run("threads", "--db", w.db)
	if code != 0 || !strings.Contains(stdout, tid) {
		t.Errorf("threads: %d %s %s", code, stdout, stderr)
	}
	var buf bytes.Buffer
	res, err := http.Get(url + "/ok")
	if err == nil {
		io.Copy(&buf, res.Body)
		res.Body.Close()
	}
	if err != nil || !strings.Contains(buf.String(), "true") {
		t.Errorf("/ok: %v %s", err, buf.String())
	}
}

// TestServeFlags checks the flags serve refuses.
func TestServeFlags(t *testing.T) {
	w := newWorld(t)
	code, _, stderr := w.run("serve", "--db", w.db, "--shell")
	if code != ExitUsage || !strings.Contains(stderr, "--shell needs --dir") {
		t.Errorf("serve --shell: %d %s", code, stderr)
	}
	code, _, stderr = w.run("serve", "--db", w.db, "--model", "replay:"+w.script(`{"turns":[]}`), "--addr", "nonsense")
	if code == 0 || !strings.Contains(stderr, "--addr") {
		t.Errorf("serve --addr nonsense: %d %s", code, stderr)
	}
}
