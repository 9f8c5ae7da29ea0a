package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"

	"github.com/deepagents-go/deepagents/middleware/todos"
)

// runCLI runs the command in-process and returns its exit status and output.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	// Keep the user's home and data directories out of tests.
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	full := map[string]string{"HOME": home}
	for k, v := range env {
		full[k] = v
	}
	env = full
	var out, errb bytes.Buffer
	code = Main(args, Env{
		Stdin:  strings.NewReader(""),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string { return env[k] },
	})
	return code, out.String(), errb.String()
}

// events parses jsonl output, failing on any line that is not an event.
func events(t *testing.T, out string) []deepagents.Event {
	t.Helper()
	var evs []deepagents.Event
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var raw map[string]any
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("stdout line is not JSON: %q", sc.Text())
		}
		if _, ok := raw["type"].(string); !ok {
			t.Fatalf("line without a type: %q", sc.Text())
		}
		var e deepagents.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	return evs
}

func repoPath(t *testing.T, rel string) string {
	t.Helper()
	// The repository's root, four folders up from cmd/deepagents/internal/cli.
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// quickstart makes the README's scratch copy of the quickstart project and
// returns its folder and the script.
func quickstart(t *testing.T) (dir, script string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(repoPath(t, "examples/quickstart/project"))); err != nil {
		t.Fatal(err)
	}
	return dir, repoPath(t, "examples/quickstart/script.json")
}

const quickstartPrompt = "Add a -shout flag to greet, and write a report of the change"

// checkQuickstartWork checks what the README's quickstart promises: the
// scratch copy edited and its report written, the checkout untouched.
func checkQuickstartWork(t *testing.T, dir string) {
	t.Helper()
	read := func(p string) string {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if g := read(filepath.Join(dir, "greeting", "greeting.go")); !strings.Contains(g, "import \"strings\"") || !strings.Contains(g, "func Shout(name string) string") {
		t.Errorf("greeting.go not edited:\n%s", g)
	}
	if m := read(filepath.Join(dir, "main.go")); !strings.Contains(m, `flag.Bool("shout"`) {
		t.Errorf("main.go not edited:\n%s", m)
	}
	if r := read(filepath.Join(dir, "REPORT.md")); !strings.Contains(r, "HELLO, ADA!") {
		t.Errorf("REPORT.md = %q", r)
	}
	if g := read(repoPath(t, "examples/quickstart/project/greeting/greeting.go")); strings.Contains(g, "Shout") {
		t.Error("the checkout's project was changed")
	}
}

func TestRunQuickstartJSONL(t *testing.T) {
	dir, script := quickstart(t)
	code, stdout, stderr := runCLI(t, nil, "run", "--model", "replay:"+script, "--dir", dir, "--auto-approve", "--output", "jsonl", quickstartPrompt)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	evs := events(t, stdout)
	var todoUpdates int
	var lastTodos []todos.Todo
	tools := map[string]int{}
	for _, e := range evs {
		if plan, ok := todos.FromEvent(e); ok {
			todoUpdates++
			lastTodos = plan
		}
		if e.Type == deepagents.EventToolResult {
			if e.IsError {
				t.Errorf("tool %s failed: %s", e.Name, e.Content)
			}
			tools[e.Name]++
		}
	}
	if todoUpdates != 3 {
		t.Errorf("saw %d todo updates, want 3", todoUpdates)
	}
	for _, td := range lastTodos {
		if td.Status != todos.Completed {
			t.Errorf("final todo %q is %s", td.Content, td.Status)
		}
	}
	// Real work: it reads, searches, edits and writes.
	want := map[string]int{"ls": 1, "glob": 1, "grep": 2, "read_file": 2, "edit_file": 3, "write_file": 1, "write_todos": 3}
	for name, n := range want {
		if tools[name] != n {
			t.Errorf("%d %s results, want %d (all: %v)", tools[name], name, n, tools)
		}
	}
	last := evs[len(evs)-1]
	if last.Type != deepagents.EventRunEnd || last.Status != deepagents.StatusCompleted {
		t.Fatalf("last event = %+v", last)
	}
	if last.Usage == nil || last.Usage.InputTokens != 26400 || last.Usage.OutputTokens != 860 {
		t.Errorf("run_end usage = %+v", last.Usage)
	}
	var raw map[string]any
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	json.Unmarshal([]byte(lines[len(lines)-1]), &raw)
	if _, ok := raw["usage"].(map[string]any)["input_tokens"]; !ok {
		t.Errorf("run_end line lacks usage.input_tokens: %s", lines[len(lines)-1])
	}
	checkQuickstartWork(t, dir)
}

func TestRunText(t *testing.T) {
	dir, script := quickstart(t)
	code, stdout, stderr := runCLI(t, nil, "run", "--model", "replay:"+script, "--dir", dir, "--auto-approve", quickstartPrompt)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	if !strings.HasSuffix(stdout, "The change is described in REPORT.md.\n") {
		t.Errorf("stdout = %q", stdout)
	}
	for _, want := range []string{"[x] Write a report of the change", "> edit_file", "> write_file"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %q", want, stderr)
		}
	}
	checkQuickstartWork(t, dir)
}

func TestMalformedToolCallsThroughCLI(t *testing.T) {
	script := writeScript(t, `{"turns":[
		{"tool_calls":[
			{"id":"a","name":"no_such_tool","args":{}},
			{"id":"b","name":"write_todos","args":{"todos":"not a list"}}
		]},
		{"tool_calls":[{"id":"c","name":"write_todos","args":{}}]},
		{"content":"handled"}]}`)
	code, stdout, stderr := runCLI(t, nil, "run", "--model", "replay:"+script, "--output", "jsonl", "--dir", t.TempDir(), "go")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	want := map[string]string{"a": `unknown tool "no_such_tool"`, "b": `field "todos"`, "c": `field "todos": missing required field`}
	for _, e := range events(t, stdout) {
		if e.Type != deepagents.EventToolResult {
			continue
		}
		if !e.IsError || !strings.Contains(e.Content, want[e.ToolCallID]) {
			t.Errorf("result %s = %q (error %v), want an error containing %q", e.ToolCallID, e.Content, e.IsError, want[e.ToolCallID])
		}
		delete(want, e.ToolCallID)
	}
	if len(want) > 0 {
		t.Errorf("no results for %v", want)
	}
}

func TestCLIErrors(t *testing.T) {
	script := repoPath(t, "examples/quickstart/script.json")
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o600)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"unknown provider", []string{"run", "--model", "nope:x", "hi"}, ExitUsage, `unknown model provider "nope"`},
		{"unknown provider with -p", []string{"-p", "--model", "nope:x", "hi"}, ExitUsage, `unknown model provider "nope"`},
		{"bad spec", []string{"run", "--model", "justaname", "hi"}, ExitUsage, "provider:model"},
		// The command line is right; the environment lacks the key.
		{"missing key", []string{"run", "--model", "openai:gpt-4.1", "hi"}, ExitFailed, "OPENAI_API_KEY is not set"},
		{"missing script", []string{"run", "--model", "replay:/no/such/file.json", "hi"}, ExitFailed, "no such file"},
		{"no model", []string{"run", "hi"}, ExitUsage, "no model chosen: set ANTHROPIC_API_KEY or OPENAI_API_KEY"},
		{"bad flag", []string{"run", "--bogus", "hi"}, ExitUsage, "unknown flag: --bogus"},
		{"bad output", []string{"run", "--model", "replay:" + script, "--output", "xml", "hi"}, ExitUsage, "--output must be text or jsonl"},
		{"bad durability", []string{"run", "--model", "replay:" + script, "--durability", "never", "hi"}, ExitUsage, "--durability must be async, sync or exit"},
		{"no prompt", []string{"run", "--model", "replay:" + script}, ExitUsage, "needs a PROMPT"},
		{"dir not a directory", []string{"run", "--model", "replay:" + script, "--dir", notDir, "hi"}, ExitFailed, "is not a directory"},
		{"unknown command", []string{"fly"}, ExitUsage, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.wantErr)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 || !strings.HasPrefix(stderr, "deepagents: ") {
				t.Errorf("stderr is not one 'deepagents:' line: %q", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}

func TestFailedRunExitStatus(t *testing.T) {
	script := writeScript(t, `{"turns":[{"content":"only one turn","tool_calls":[{"id":"a","name":"write_todos","args":{"todos":[]}}]}]}`)
	code, stdout, _ := runCLI(t, nil, "run", "--model", "replay:"+script, "--output", "jsonl", "--dir", t.TempDir(), "go")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d", code, ExitFailed)
	}
	evs := events(t, stdout)
	last := evs[len(evs)-1]
	if last.Type != deepagents.EventRunEnd || last.Status != deepagents.StatusFailed || !strings.Contains(last.Error, "more often than scripted") {
		t.Errorf("last event = %+v", last)
	}
}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runCLI(t, nil, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "deepagents version ") || len(strings.TrimSpace(stdout)) <= len("deepagents version ") {
		t.Errorf("--version: %d %q", code, stdout)
	}
	// The built binary knows its commit.
	w := newWorld(t)
	if code, stdout, _ := w.run("--version"); code != 0 || !strings.Contains(stdout, "deepagents version ") {
		t.Errorf("binary --version: %d %q", code, stdout)
	}
}

// A prompt may come from standard input, and --continue picks up the
// thread that last ran in the workspace.
func TestPromptFromStdinAndContinue(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[{"content":"first","expect":{"last_message_contains":["task from stdin"]}}]}`)
	script2 := w.script(`{"turns":[{"content":"second","expect":{"messages_contain":["task from stdin"],"last_message_contains":["and more"]}}]}`)
	cmd := exec.Command(binary(t), "run", "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--output", "jsonl")
	cmd.Env = w.env()
	cmd.Stdin = strings.NewReader("the task from stdin\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	first := runEnd(t, string(out))
	code, stdout, stderr := w.run("run", "--continue", "--model", "replay:"+script2, "--dir", w.dir, "--db", w.db, "--output", "jsonl", "and more")
	if code != 0 {
		t.Fatalf("--continue: %d %s %s", code, stderr, stdout)
	}
	if got := runEnd(t, stdout).ThreadID; got != first.ThreadID {
		t.Errorf("--continue ran thread %s, want %s", got, first.ThreadID)
	}
	script3 := w.script(`{"turns":[{"content":"third","expect":{"messages_contain":["and more"]}}]}`)
	code, stdout, stderr = w.run("-p", "once more", "--resume", first.ThreadID, "--model", "replay:"+script3, "--dir", t.TempDir(), "--db", w.db, "--output", "jsonl")
	if code != 0 || runEnd(t, stdout).ThreadID != first.ThreadID {
		t.Errorf("--resume ID: %d %s %s", code, stderr, stdout)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--continue", "--dir", t.TempDir(), "--db", w.db, "x"}, "no thread has run in"},
		{[]string{"run", "--continue", "--thread", "t", "--db", w.db, "x"}, "give one"},
		{[]string{"run", "--db", w.db}, "standard input was empty"},
		{[]string{"-p", "x", "--resume", "nope", "--db", w.db}, "there is no thread nope"},
		{[]string{"-p", "x", "--resume", "--db", w.db}, "needs a terminal to pick one on"},
		{[]string{"-p", "x", "-c", "--resume=" + first.ThreadID, "--db", w.db}, "give one"},
	} {
		if code, _, stderr := w.run(c.args...); code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, stderr)
		}
	}
}

// Text output ends with the thread, and the tokens and cost of the run and
// of each subagent, at the prices of the user's configuration.
func TestRunTextSummary(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".deepagents"), 0o755)
	os.WriteFile(filepath.Join(home, ".deepagents", "config.yaml"), []byte("prices:\n  replay:script: {input: 2, output: 10, cache_read: 1}\n"), 0o600)
	script := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(script, []byte(`{"turns":[
		{"tool_calls":[{"id":"t","name":"task","args":{"description":"look","subagent_type":"general-purpose"}}],"usage":{"input_tokens":1000000,"output_tokens":1000,"cache_read_tokens":500000}},
		{"agent":"general-purpose","content":"looked","usage":{"input_tokens":2000,"output_tokens":200}},
		{"content":"Done.","usage":{"input_tokens":3000,"output_tokens":300}}]}`), 0o600)
	code, stdout, stderr := runCLI(t, map[string]string{"HOME": home}, "run", "--model", "replay:"+script, "--dir", t.TempDir(), "go")
	if code != ExitOK || stdout != "Done.\n" {
		t.Fatalf("exit %d: %q %s", code, stdout, stderr)
	}
	// 505,000 plain input at $2, 500,000 cached at $1, 1,500 out at $10 per million.
	want := "· 3 model calls · 1,005,000 tokens in (500,000 cached), 1,500 out · $1.5250"
	if !regexp.MustCompile(`deepagents: thread [0-9a-f]+ ` + regexp.QuoteMeta(want)).MatchString(stderr) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if !strings.Contains(stderr, "  main agent: 2 model calls · 1,003,000 tokens in (500,000 cached), 1,300 out") ||
		!regexp.MustCompile(`\n    general-purpose:t: 1 model call · 2,000 tokens in, 200 out · \$0\.0060`).MatchString(stderr) {
		t.Errorf("no line per agent, a subagent under the main agent:\n%s", stderr)
	}
}

// deepagents -p PROMPT runs a task as run does; with neither -p nor a
// prompt on standard input it shows the help.
func TestPrintFlag(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[{"content":"Printed.","expect":{"last_message_contains":["a printed task"]}}]}`)
	code, stdout, stderr := w.run("-p", "a printed task", "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	if code != 0 || stdout != "Printed.\n" || !strings.Contains(stderr, "deepagents: thread ") {
		t.Errorf("-p: %d %q %s", code, stdout, stderr)
	}
	if code, stdout, _ := w.run(); code != 0 || !strings.Contains(stdout, "Available Commands") {
		t.Errorf("no arguments: %d %q", code, stdout)
	}
}

// A thread's usage adds up over its runs, by subagent: threads shows its
// tokens and cost, threads usage the tree, and deleting the thread forgets
// it.
func TestThreadUsage(t *testing.T) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("prices:\n  replay:script: {input: 1, output: 10}\n"), 0o600)
	script := w.script(`{"turns":[
		{"tool_calls":[{"name":"task","args":{"description":"look","subagent_type":"general-purpose"}}],"usage":{"input_tokens":100000,"output_tokens":1000}},
		{"agent":"general-purpose","content":"looked","usage":{"input_tokens":200000,"output_tokens":2000}},
		{"content":"Done.","usage":{"input_tokens":300000,"output_tokens":3000}}]}`)
	code, stdout, stderr := w.run("run", "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--output", "jsonl", "go")
	if code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	id := runEnd(t, stdout).ThreadID
	if code, _, stderr := w.run("run", "--thread", id, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "again"); code != 0 {
		t.Fatalf("second run: %d %s", code, stderr)
	}
	// Twice 600,000 in at $1 and 6,000 out at $10 per million: $1.32.
	_, out, _ := w.run("threads", "--db", w.db)
	if !regexp.MustCompile(id + `\s+idle\s+\S+ \S+\s+1,212,000\s+\$1\.3200\s+go`).MatchString(out) {
		t.Errorf("threads:\n%s", out)
	}
	_, out, stderr = w.run("threads", "usage", id, "--db", w.db)
	want := "thread " + id + " · 6 model calls · 1,200,000 tokens in, 12,000 out · $1.3200\n" +
		"  main agent: 4 model calls · 800,000 tokens in, 8,000 out · $0.8800\n" +
		"    general-purpose: 2 model calls · 400,000 tokens in, 4,000 out · $0.4400\n"
	if out != want {
		t.Errorf("threads usage:\n%s\nwant:\n%s%s", out, want, stderr)
	}
	if code, _, stderr := w.run("threads", "delete", id, "--db", w.db); code != 0 {
		t.Fatalf("delete: %s", stderr)
	}
	if code, _, _ := w.run("threads", "usage", id, "--db", w.db); code == 0 {
		t.Error("threads usage of a deleted thread succeeded")
	}
}

// The user's configuration may live in the XDG configuration directory
// ($XDG_CONFIG_HOME/deepagents, else ~/.config/deepagents), which then
// comes before ~/.deepagents.
func TestConfigInXDGDir(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[{"content":"Done.","usage":{"input_tokens":1000000,"output_tokens":0}}]}`)
	os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("prices:\n  replay:script: {input: 1, output: 1}\n"), 0o600)
	for _, c := range []struct {
		name, dir string
		env       []string
		want      string
	}{
		{"~/.deepagents", "", nil, "$1.0000"},
		{"~/.config", filepath.Join(w.home, ".config"), nil, "$2.0000"},
		{"$XDG_CONFIG_HOME", filepath.Join(w.home, "xdg"), []string{"XDG_CONFIG_HOME=" + filepath.Join(w.home, "xdg")}, "$3.0000"},
	} {
		if c.dir != "" {
			os.MkdirAll(filepath.Join(c.dir, "deepagents"), 0o755)
			os.WriteFile(filepath.Join(c.dir, "deepagents", "config.yaml"), []byte("prices:\n  replay:script: {input: "+c.want[1:2]+", output: 1}\n"), 0o600)
		}
		code, _, stderr := w.runWithEnv(c.env, "run", "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "go")
		if code != 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, want the cost %s: %s", c.name, code, c.want, stderr)
		}
	}
}
