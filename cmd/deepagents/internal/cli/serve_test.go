package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// serveProc is a running `deepagents serve`.
type serveProc struct {
	url    string
	cmd    *exec.Cmd
	killed bool
	before string // stderr up to the line with the URL
}

// kill ends the server with SIGKILL, as a crash would.
func (p *serveProc) kill() {
	p.killed = true
	p.cmd.Process.Kill()
}

// startServer starts `deepagents serve` on a free port; the process is
// stopped with SIGTERM when the test ends, and must exit cleanly (unless
// killed).
func (w *world) startServer(args ...string) *serveProc {
	w.t.Helper()
	return w.startListening("server stopped", append([]string{"serve", "--db", w.db, "--addr", "127.0.0.1:0"}, args...)...)
}

// startListening starts a command that prints the URL it serves on its
// first line of stderr, and says stopped when it ends on SIGTERM.
func (w *world) startListening(stopped string, args ...string) *serveProc {
	w.t.Helper()
	return w.startListeningWith(nil, stopped, args...)
}

// startListeningWith is startListening with more environment variables;
// lines before the URL's (warnings) are kept in p.before.
func (w *world) startListeningWith(env []string, stopped string, args ...string) *serveProc {
	w.t.Helper()
	cmd := exec.Command(binary(w.t), args...)
	cmd.Env = append(w.env(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	lines := bufio.NewReader(stderr)
	var before strings.Builder
	url := ""
	for url == "" {
		line, err := lines.ReadString('\n')
		before.WriteString(line)
		url = regexp.MustCompile(`http://(\[[0-9a-f:]+\]|[0-9.]+):[0-9]+`).FindString(line)
		if err != nil {
			cmd.Process.Kill()
			w.t.Fatalf("serve did not start: %q %v", before.String(), err)
		}
	}
	p := &serveProc{url: url, cmd: cmd, before: before.String()}
	rest := make(chan string, 1)
	go func() { b, _ := io.ReadAll(lines); rest <- string(b) }()
	w.t.Cleanup(func() {
		if p.killed {
			cmd.Wait()
			return
		}
		cmd.Process.Signal(syscall.SIGTERM)
		// Read stderr to its end before Wait, which closes the pipe: a
		// Wait first could drop the last line (the one looked for).
		select {
		case out := <-rest:
			if err := cmd.Wait(); err != nil || !strings.Contains(out, stopped) {
				w.t.Errorf("serve exited with %v: %s", err, out)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			cmd.Wait()
			w.t.Error("serve did not stop on SIGTERM")
		}
	})
	return p
}

// TestServeThroughCLI serves a scripted agent, runs it over HTTP, and
// finds the thread with `deepagents threads`, as the same database holds
// both.
func TestServeThroughCLI(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[{"tool_calls":[{"id":"c1","name":"write_file","args":{"file_path":"/notes.md","content":"hi"}}]},{"content":"Done."}]}`)
	url := w.startServer("--model", "replay:"+script).url
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
	for _, cmd := range []string{"serve", "mcp-serve"} {
		code, _, stderr := w.run(cmd, "--db", w.db, "--shell")
		if code != ExitUsage || !strings.Contains(stderr, "--shell needs --dir") {
			t.Errorf("%s --shell: %d %s", cmd, code, stderr)
		}
	}
	code, _, stderr := w.run("serve", "--db", w.db, "--model", "replay:"+w.script(`{"turns":[]}`), "--addr", "nonsense")
	if code == 0 || !strings.Contains(stderr, "--addr") {
		t.Errorf("serve --addr nonsense: %d %s", code, stderr)
	}
}

// call does a request with a JSON body and decodes the JSON answer into v.
func call(t *testing.T, method, url string, body any, want int, v any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, res.StatusCode, b, want)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
}

// postgresDSN returns the test server's URL with a fresh schema, dropped
// when the test ends.
func postgresDSN(t *testing.T) string {
	t.Helper()
	u := os.Getenv("DEEPAGENTS_TEST_POSTGRES_URL")
	if u == "" {
		t.Skip("DEEPAGENTS_TEST_POSTGRES_URL is not set; skipping PostgreSQL tests")
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, u); err == nil {
			conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
			conn.Close(ctx)
		}
	})
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "schema=" + schema
}

// TestServeReplicasOnPostgres runs two `deepagents serve` processes on one
// PostgreSQL database: a run started through one is read, joined and
// cancelled through the other; when the process running a run is killed,
// the other reports the run failed and runs the thread again.
func TestServeReplicasOnPostgres(t *testing.T) {
	w := newWorld(t)
	w.db = postgresDSN(t)
	a := w.startServer("--model", "replay:inline")
	b := w.startServer("--model", "replay:inline")
	slow := map[string]any{"messages": []any{map[string]any{"type": "human", "content": `{"turns":[{"content":"thinking","delay_ms":60000}]}`}}}

	var th, rn, got map[string]any
	call(t, http.MethodPost, a.url+"/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	call(t, http.MethodPost, a.url+"/threads/"+tid+"/runs", map[string]any{"input": slow}, http.StatusOK, &rn)
	path := "/threads/" + tid + "/runs/" + rn["run_id"].(string)
	waitUntil(t, "the run running, seen through the other server", func() bool {
		call(t, http.MethodGet, b.url+path, nil, http.StatusOK, &got)
		return got["status"] == "running"
	})
	// Joined through the other server, as it goes on.
	req, _ := http.NewRequest(http.MethodGet, b.url+path+"/stream", nil)
	req.Header.Set("Last-Event-ID", "-1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(res.Body).ReadString('\n')
	res.Body.Close()
	if line != "event: metadata\n" {
		t.Errorf("joined through the other server: %q", line)
	}
	call(t, http.MethodPost, b.url+path+"/cancel?wait=1", nil, http.StatusNoContent, nil)
	call(t, http.MethodGet, a.url+path, nil, http.StatusOK, &got)
	if got["status"] != "interrupted" {
		t.Errorf("cancelled through the other server: %v", got)
	}

	// The server running a run dies: the other says so, and the thread
	// runs again there (the database freed the dead server's hold).
	call(t, http.MethodPost, a.url+"/threads/"+tid+"/runs", map[string]any{"input": slow}, http.StatusOK, &rn)
	path = "/threads/" + tid + "/runs/" + rn["run_id"].(string)
	waitUntil(t, "the second run running", func() bool {
		call(t, http.MethodGet, b.url+path, nil, http.StatusOK, &got)
		return got["status"] == "running"
	})
	a.kill()
	waitUntil(t, "the dead server's run failed", func() bool {
		call(t, http.MethodGet, b.url+path, nil, http.StatusOK, &got)
		return got["status"] == "error"
	})
	var out map[string]any
	waitUntil(t, "a new run on the thread", func() bool {
		req, _ := http.NewRequest(http.MethodPost, b.url+"/threads/"+tid+"/runs/wait", strings.NewReader(`{"input":{"messages":[{"type":"human","content":"{\"turns\":[{\"content\":\"back\"}]}"}]}}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		return res.StatusCode == http.StatusOK && json.NewDecoder(res.Body).Decode(&out) == nil
	})
	msgs, _ := out["messages"].([]any)
	if len(msgs) == 0 || !strings.Contains(fmt.Sprint(msgs[len(msgs)-1]), "back") {
		t.Errorf("the new run: %v", out)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestServeAssistantsFile serves two assistants from a file: one whose
// files are each thread's and whose write_file needs approval, with its
// own instructions; one working in a folder.
func TestServeAssistantsFile(t *testing.T) {
	w := newWorld(t)
	folder := t.TempDir()
	os.WriteFile(filepath.Join(folder, "data.csv"), []byte("a,b\n"), 0o644)
	file := filepath.Join(t.TempDir(), "assistants.yaml")
	os.WriteFile(file, []byte(`assistants:
  - graph_id: writer
    description: Writes reports
    model: replay:inline
    system_prompt: You write reports for the finance team.
    interrupt_on: [write_file]
    subagents:
      - name: critic
        description: Reviews drafts
        system_prompt: Be harsh.
  - graph_id: reader
    model: replay:inline
    dir: `+folder+`
`), 0o644)
	p := w.startServer("--assistants", file)
	var found []map[string]any
	call(t, http.MethodPost, p.url+"/assistants/search", map[string]any{"limit": 10}, http.StatusOK, &found)
	if len(found) != 2 || found[0]["graph_id"] != "writer" || found[1]["graph_id"] != "reader" {
		t.Fatalf("assistants %v", found)
	}
	script := func(s string) map[string]any {
		return map[string]any{"messages": []any{map[string]any{"type": "human", "content": s}}}
	}
	var out map[string]any
	call(t, http.MethodPost, p.url+"/runs/wait", map[string]any{"assistant_id": "reader", "input": script(
		`{"turns":[{"tool_calls":[{"name":"ls","args":{"path":"/"}}]},{"content":"listed","expect":{"last_message_contains":["data.csv"]}}]}`)}, http.StatusOK, &out)
	if msgs, _ := out["messages"].([]any); len(msgs) != 4 {
		t.Errorf("reader: %v", out)
	}
	var th map[string]any
	call(t, http.MethodPost, p.url+"/threads", map[string]any{}, http.StatusOK, &th)
	call(t, http.MethodPost, p.url+"/threads/"+th["thread_id"].(string)+"/runs/wait", map[string]any{"assistant_id": "writer", "input": script(
		`{"turns":[{"tool_calls":[{"name":"write_file","args":{"file_path":"/r.md","content":"x"}}],"expect":{"system_contains":["You write reports for the finance team."],"tools_include":["task"]}},{"content":"done"}]}`)}, http.StatusOK, &out)
	if _, ok := out["__interrupt__"]; !ok {
		t.Errorf("writer: %v, want an approval", out)
	}
}

// TestServeAssistantsFileErrors checks the files serve refuses.
func TestServeAssistantsFileErrors(t *testing.T) {
	w := newWorld(t)
	for name, body := range map[string]string{
		"unknown key":            "assistants:\n  - graph_id: a\n    modle: replay:inline\n",
		"no graph_id":            "assistants:\n  - model: replay:inline\n",
		"twice":                  "assistants:\n  - graph_id: a\n  - graph_id: a\n",
		"shell, no dir":          "assistants:\n  - graph_id: a\n    model: replay:inline\n    shell: true\n",
		"missing folder":         "assistants:\n  - graph_id: a\n    model: replay:inline\n    dir: /nonexistent/folder\n",
		"empty":                  "assistants: []\n",
		"unknown subagent model": "assistants:\n  - graph_id: a\n    model: replay:inline\n    subagents:\n      - {name: c, description: d, model: 'nosuch:model'}\n",
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "assistants.yaml")
			os.WriteFile(file, []byte(body), 0o644)
			code, _, stderr := w.run("serve", "--db", w.db, "--addr", "127.0.0.1:0", "--assistants", file)
			if code != ExitUsage || !strings.Contains(stderr, "--assistants") {
				t.Errorf("exit %d: %s", code, stderr)
			}
		})
	}
}

// TestServeRefusesRunFlags: --thread, --continue and --output were taken
// and ignored by serve, and --help showed a --durability default (async)
// its runs did not use (they are sync unless the request asks): they are
// usage errors, and not offered.
func TestServeRefusesRunFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	for _, args := range [][]string{{"--thread", "t1"}, {"--continue"}, {"-c"}, {"--output", "jsonl"}, {"--durability", "async"}} {
		code, _, stderr := runCLI(t, nil, append([]string{"serve", "--db", db, "--model", "replay:none.json", "--addr", "127.0.0.1:0"}, args...)...)
		if code != 2 || !strings.Contains(stderr, "is not a serve flag") {
			t.Errorf("serve %v: exit %d, %s; want a usage error", args, code, stderr)
		}
	}
	_, out, stderr := runCLI(t, nil, "serve", "--help")
	for _, flag := range []string{"--thread", "--continue", "--output", "--durability"} {
		if strings.Contains(out+stderr, flag) {
			t.Errorf("serve --help offers %s", flag)
		}
	}
}

// TestServeRestartedOnSQLite: a lone server on SQLite killed mid-run and
// restarted at its address knows at once that the run died with it: the
// run reads error, and the thread takes a new run at once (it was
// refused, 422 "already running", until the dead process's lease expired,
// some 15 s later).
func TestServeRestartedOnSQLite(t *testing.T) {
	w := newWorld(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := func() *serveProc {
		return w.startListening("server stopped", "serve", "--db", w.db, "--addr", addr, "--model", "replay:inline")
	}
	a := start()
	slow := map[string]any{"messages": []any{map[string]any{"type": "human", "content": `{"turns":[{"content":"thinking","delay_ms":60000}]}`}}}
	var th, rn, got map[string]any
	call(t, http.MethodPost, a.url+"/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	call(t, http.MethodPost, a.url+"/threads/"+tid+"/runs", map[string]any{"input": slow}, http.StatusOK, &rn)
	path := "/threads/" + tid + "/runs/" + rn["run_id"].(string)
	waitUntil(t, "the run running", func() bool {
		call(t, http.MethodGet, a.url+path, nil, http.StatusOK, &got)
		return got["status"] == "running"
	})
	waitUntil(t, "the thread held", func() bool {
		call(t, http.MethodGet, a.url+"/threads/"+tid, nil, http.StatusOK, &got)
		return got["status"] == "busy"
	})
	time.Sleep(300 * time.Millisecond) // the model called: the run is well under way
	a.kill()
	waitUntil(t, "the address free", func() bool {
		l, err := net.Listen("tcp", addr)
		if err == nil {
			l.Close()
		}
		return err == nil
	})
	b := start()
	began := time.Now()
	call(t, http.MethodGet, b.url+path, nil, http.StatusOK, &got)
	if got["status"] != "error" {
		t.Errorf("the dead run after the restart: %v, want error", got["status"])
	}
	var out map[string]any
	call(t, http.MethodPost, b.url+"/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": `{"turns":[{"content":"back"}]}`}}}}, http.StatusOK, &out)
	if msgs, _ := out["messages"].([]any); len(msgs) == 0 || !strings.Contains(fmt.Sprint(msgs[len(msgs)-1]), "back") {
		t.Errorf("the new run: %v", out)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("the new run took %v", d)
	}
}
