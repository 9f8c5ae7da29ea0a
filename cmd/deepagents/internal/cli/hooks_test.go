package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deepagents-go/deepagents"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents/hooks"
)

// The hooks of testdata/hooks are written as Claude Code's documentation
// writes them (bash and jq, or python3, reading the event on stdin), and
// configured in a .claude/settings.json as its users do: the tests run
// them unchanged against the real binary.

// hookWorld is a world whose workspace has the hooks of testdata/hooks in
// .claude/ (settings.json, and the scripts in .claude/hooks/).
func hookWorld(t *testing.T) *world {
	t.Helper()
	for _, tool := range []string{"bash", "jq", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("missing in CI: %s", tool)
			}
			t.Skipf("the hooks need %s", tool)
		}
	}
	w := newWorld(t)
	installHooks(t, filepath.Join(w.dir, ".claude"))
	return w
}

// installHooks copies testdata/hooks into dir: settings.json, and the
// scripts into dir/hooks/.
func installHooks(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", "hooks"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata", "hooks", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		to, mode := filepath.Join(dir, "hooks", e.Name()), os.FileMode(0o755)
		if e.Name() == "settings.json" {
			to, mode = filepath.Join(dir, "settings.json"), 0o644
		}
		if err := os.WriteFile(to, data, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// hookArgs runs a script trusting the workspace, with a shell.
func (w *world) hookArgs(script string, extra ...string) []string {
	return w.runArgs(script, append([]string{"--trust-workspace", "--shell", "--sandbox", "none"}, extra...)...)
}

// answers are the main agent's final messages of a jsonl run, in order.
func answers(t *testing.T, stdout string) []string {
	t.Helper()
	var out []string
	for _, e := range events(t, stdout) {
		if e.Type == deepagents.EventMessage && len(e.Namespace) == 0 && e.Message != nil && len(e.Message.ToolCalls) == 0 {
			out = append(out, e.Message.Text())
		}
	}
	return out
}

// A PreToolUse hook on Bash that exits 2 blocks rm -rf: the command does
// not run, and the model reads the hook's stderr.
func TestHookBlocksRmRf(t *testing.T) {
	w := hookWorld(t)
	victim := filepath.Join(w.dir, "victim")
	os.MkdirAll(victim, 0o755)
	os.WriteFile(filepath.Join(victim, "keep.txt"), []byte("keep"), 0o644)
	script := w.script(`{"turns":[
		{"tool_calls":[{"id":"rm","name":"execute","args":{"command":"rm -rf victim"}},
		               {"id":"ls","name":"execute","args":{"command":"echo listed"}}]},
		{"content":"done","expect":{"messages_contain":["Blocked: 'rm -rf' is not allowed in this project"]}}]}`)
	code, stdout, stderr := w.run(w.hookArgs(script, "clean up")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(victim, "keep.txt")); err != nil {
		t.Errorf("rm -rf ran: %v", err)
	}
	res := toolResultEvents(t, stdout)
	if r := res["rm"]; !r.IsError || !strings.Contains(r.Content, "Blocked: 'rm -rf'") {
		t.Errorf("the blocked call's result: %+v", r)
	}
	if r := res["ls"]; r.IsError || !strings.Contains(r.Content, "listed") {
		t.Errorf("another command is not blocked: %+v", r)
	}
}

// A PostToolUse hook on Edit|Write formats the file written, at its host
// path.
func TestHookFormatsAfterEdits(t *testing.T) {
	w := hookWorld(t)
	script := w.script(`{"turns":[
		{"tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/src/notes.txt","content":"one   \ntwo\t\nthree\n"}}]},
		{"tool_calls":[{"id":"e","name":"edit_file","args":{"file_path":"/src/notes.txt","old_string":"two","new_string":"TWO  "}}]},
		{"content":"done"}]}`)
	code, stdout, stderr := w.run(w.hookArgs(script, "write notes")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for id, r := range toolResultEvents(t, stdout) {
		if r.IsError {
			t.Errorf("%s: %+v", id, r)
		}
	}
	data, err := os.ReadFile(filepath.Join(w.dir, "src", "notes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), "one\nTWO\nthree\n"; got != want {
		t.Errorf("the file is %q, want %q (formatted)", got, want)
	}
	if strings.Contains(stderr, "warning:") {
		t.Errorf("a hook failed: %s", stderr)
	}
}

// A PreToolUse hook on Read|Edit|Write denies .env files with JSON
// (permissionDecision deny): not read, not written, the reason given to
// the model.
func TestHookGuardsEnvFiles(t *testing.T) {
	w := hookWorld(t)
	env := filepath.Join(w.dir, ".env")
	os.WriteFile(env, []byte("API_KEY=s3cr3t-value\n"), 0o600)
	script := w.script(`{"turns":[
		{"tool_calls":[{"id":"r","name":"read_file","args":{"file_path":"/.env"}},
		               {"id":"w","name":"write_file","args":{"file_path":"/config/.env.local","content":"X=1"}},
		               {"id":"e","name":"edit_file","args":{"file_path":"/.env","old_string":"API_KEY","new_string":"LEAKED"}},
		               {"id":"ok","name":"write_file","args":{"file_path":"/README.md","content":"# readme\n"}}]},
		{"content":"done","expect":{"messages_contain":[".env files are off limits"],"messages_exclude":["s3cr3t-value"]}}]}`)
	code, stdout, stderr := w.run(w.hookArgs(script, "look at the configuration")...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	res := toolResultEvents(t, stdout)
	for _, id := range []string{"r", "w", "e"} {
		if r := res[id]; !r.IsError || !strings.Contains(r.Content, "off limits") || strings.Contains(r.Content, "s3cr3t") {
			t.Errorf("%s: %+v", id, r)
		}
	}
	if r := res["ok"]; r.IsError {
		t.Errorf("another file is refused: %+v", r)
	}
	if data, _ := os.ReadFile(env); string(data) != "API_KEY=s3cr3t-value\n" {
		t.Errorf(".env changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "config", ".env.local")); err == nil {
		t.Error(".env.local was written")
	}
}

// A UserPromptSubmit hook's stdout, and a SessionStart hook's
// additionalContext, reach the model with the prompt.
func TestHookAddsPromptContext(t *testing.T) {
	w := hookWorld(t)
	script := w.script(`{"turns":[
		{"content":"done","expect":{"last_message_contains":["the codename is BLUEFIN","for: what is the codename"],
		                            "messages_contain":["<SessionStart-hook-context>","the build command is make check"]}}]}`)
	code, stdout, stderr := w.run(w.hookArgs(script, "what is the codename?")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	end := runEnd(t, stdout)
	// The session log: SessionStart and SessionEnd, with the thread's id.
	log, _ := os.ReadFile(filepath.Join(w.dir, ".claude", "session.log"))
	want := "SessionStart startup " + end.ThreadID + "\nSessionEnd other " + end.ThreadID + "\n"
	if string(log) != want {
		t.Errorf("session log:\n%s\nwant:\n%s", log, want)
	}
	// The thread's title is the prompt, not the context.
	if code, out, _ := w.run("threads", "--db", w.db); code != 0 || !strings.Contains(out, "what is the codename?") || strings.Contains(out, "SessionStart") {
		t.Errorf("threads: %s", out)
	}
	// Continuing the thread is a SessionStart of source resume.
	script = w.script(`{"turns":[{"content":"again","expect":{"last_message_contains":["BLUEFIN"]}}]}`)
	if code, _, stderr := w.run(w.hookArgs(script, "--thread", end.ThreadID, "and now?")...); code != 0 {
		t.Fatalf("continued: exit %d: %s", code, stderr)
	}
	log, _ = os.ReadFile(filepath.Join(w.dir, ".claude", "session.log"))
	if !strings.HasSuffix(string(log), "SessionStart resume "+end.ThreadID+"\nSessionEnd other "+end.ThreadID+"\n") {
		t.Errorf("session log after --thread:\n%s", log)
	}
}

// A Stop hook that answers {"decision":"block"} sends the agent back to
// work with its reason, once: stop_hook_active lets it stop then.
func TestHookStopMakesTheAgentContinue(t *testing.T) {
	w := hookWorld(t)
	script := w.script(`{"turns":[
		{"content":"Half done. TODO: the tests."},
		{"content":"All done, tests included. TODO list empty.","expect":{"last_message_contains":["Your answer says TODO: finish the work before you stop."]}}]}`)
	code, stdout, stderr := w.run(w.hookArgs(script, "do the work")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := answers(t, stdout)
	if len(got) != 2 || !strings.HasPrefix(got[1], "All done") {
		t.Errorf("answers %q: the agent did not go on after the Stop hook", got)
	}
}

// Workspace hooks run only with --trust-workspace: without it a note names
// the file; the user's ~/.claude/settings.json runs always. --mcp-workspace
// is the flag's former name.
func TestWorkspaceHooksNeedTrust(t *testing.T) {
	w := hookWorld(t)
	victim := filepath.Join(w.dir, "victim")
	rmScript := func() string {
		os.MkdirAll(victim, 0o755)
		return w.script(`{"turns":[{"tool_calls":[{"id":"rm","name":"execute","args":{"command":"rm -rf victim"}}]},{"content":"done"}]}`)
	}
	args := func(script string, extra ...string) []string {
		return w.runArgs(script, append([]string{"--shell", "--sandbox", "none"}, extra...)...)
	}
	code, _, stderr := w.run(args(rmScript(), "clean up")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(victim); err == nil {
		t.Error("an untrusted workspace's hook blocked rm -rf")
	}
	settings := filepath.Join(w.dir, ".claude", "settings.json")
	if !regexp.MustCompile(`note: .*` + regexp.QuoteMeta(settings) + ` names hooks; .*only with --trust-workspace`).MatchString(stderr) {
		t.Errorf("no note about the workspace's hooks: %s", stderr)
	}
	if _, err := os.Stat(filepath.Join(w.dir, ".claude", "session.log")); err == nil {
		t.Error("an untrusted workspace's session hooks ran")
	}
	// Trusted, under the flag's former name too.
	for _, flag := range []string{"--trust-workspace", "--mcp-workspace"} {
		code, _, stderr = w.run(args(rmScript(), flag, "clean up")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", flag, code, stderr)
		}
		if _, err := os.Stat(victim); err != nil {
			t.Errorf("%s: rm -rf ran: %v", flag, err)
		}
		if strings.Contains(stderr, "names hooks") {
			t.Errorf("%s: a note about untrusted hooks: %s", flag, stderr)
		}
	}
	// The user's settings run without the flag.
	os.RemoveAll(filepath.Join(w.dir, ".claude"))
	installHooks(t, filepath.Join(w.home, ".claude"))
	os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), []byte(strings.ReplaceAll(
		readFile(t, filepath.Join(w.home, ".claude", "settings.json")), `\"$CLAUDE_PROJECT_DIR\"/.claude`, filepath.Join(w.home, ".claude"))), 0o644)
	code, _, stderr = w.run(args(rmScript(), "clean up")...)
	if code != 0 {
		t.Fatalf("user hooks: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the user's hook did not block rm -rf: %v", err)
	}
}

// Hooks that do not run here are notes; a malformed settings file is a
// usage error naming it.
func TestHookSettingsErrors(t *testing.T) {
	w := newWorld(t)
	settings := filepath.Join(w.home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	script := w.script(`{"turns":[{"content":"done"}]}`)
	os.WriteFile(settings, []byte(`{"model":"opus","hooks":{"PermissionDenied":[{"hooks":[{"type":"command","command":"true"}]}],
		"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"agent","prompt":"is it safe?"}]}]}}`), 0o644)
	code, _, stderr := w.run(w.runArgs(script, "go")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{settings + ": left out PermissionDenied hooks", `left out a PreToolUse hook of type "agent"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no note %q: %s", want, stderr)
		}
	}
	for _, bad := range []string{`{"hooks": [1]}`, `{"hooks":{"PreToolUse":[{"matcher":"(","hooks":[{"type":"command","command":"true"}]}]}}`} {
		os.WriteFile(settings, []byte(bad), 0o644)
		if code, _, stderr := w.run(w.runArgs(script, "go")...); code != ExitUsage || !strings.Contains(stderr, settings) {
			t.Errorf("%s: exit %d: %s", bad, code, stderr)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The interactive session runs the session's hooks: SessionStart at its
// start (its context reaching the first prompt's model call), SessionEnd
// and SessionStart on /clear, SessionEnd when the user leaves; and shows
// the hooks' notes, a failed hook's as a warning.
func TestInteractiveSessionHooks(t *testing.T) {
	w := hookWorld(t)
	dir := filepath.Join(w.home, ".claude")
	os.MkdirAll(dir, 0o755)
	logHook := `input=$(cat); echo "$(jq -r .hook_event_name <<<"$input") $(jq -r '.source // .reason' <<<"$input") $(jq -r .session_id <<<"$input")" >> "$CLAUDE_PROJECT_DIR/sessions.log"; ` +
		`[ "$(jq -r .hook_event_name <<<"$input")" = SessionStart ] && echo "Started by $(jq -r .source <<<"$input")"; exit 0`
	settings := map[string]any{"hooks": map[string]any{
		"SessionStart": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": logHook}}}},
		"SessionEnd":   []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": logHook}}}},
		"PreToolUse": []any{map[string]any{"matcher": "Write", "hooks": []any{
			map[string]any{"type": "command", "command": `echo '{"systemMessage":"writing checked"}'`},
			map[string]any{"type": "command", "command": `echo broken >&2; exit 1`},
		}}},
	}}
	data, _ := json.Marshal(settings)
	os.WriteFile(filepath.Join(dir, "settings.json"), data, 0o644)
	script := w.script(`{"turns":[
		{"tool_calls":[{"name":"write_file","args":{"file_path":"/a.txt","content":"a"}}],"expect":{"messages_contain":["Started by startup"]}},
		{"content":"first answer"},
		{"content":"second answer","expect":{"last_message_contains":["second prompt"],"messages_contain":["Started by clear"],"messages_exclude":["first prompt"]}}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--auto-approve")
	s.waitFor("> ")
	s.typeLine("first prompt")
	scr := s.waitFor("first answer")
	for _, want := range []string{"note: PreToolUse hook", "writing checked", "warning: PreToolUse hook", "broken"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the screen does not show %q:\n%s", want, scr)
		}
	}
	s.typeLine("/clear")
	s.waitFor("a new thread starts")
	s.typeLine("second prompt")
	s.waitFor("second answer")
	s.typeLine("/exit")
	s.waitFor(exitedMark)
	log := readFile(t, filepath.Join(w.dir, "sessions.log"))
	ids := hexID.FindAllString(log, -1)
	want := fmt.Sprintf("SessionStart startup %[1]s\nSessionEnd clear %[1]s\nSessionStart clear %[2]s\nSessionEnd prompt_input_exit %[2]s\n", ids[0], ids[len(ids)-1])
	if len(ids) != 4 || ids[0] == ids[2] || log != want {
		t.Errorf("session log:\n%s\nwant:\n%s", log, want)
	}
	// The threads are the ones the hooks were told of.
	_, out, _ := w.run("threads", "--db", w.db)
	for _, id := range []string{ids[0], ids[2]} {
		if !strings.Contains(out, id) {
			t.Errorf("no thread %s: %s", id, out)
		}
	}
}

// run's text output shows what hooks say on stderr: a note, or a warning
// for a hook that failed.
func TestHookNoticesInTextOutput(t *testing.T) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte(`hooks:
  PreToolUse:
    - matcher: write_file
      hooks:
        - {type: command, command: "echo '{\"systemMessage\": \"checked the write\"}'"}
        - {type: command, command: "echo 'no linter here' >&2; exit 1"}
`), 0o644)
	script := w.script(`{"turns":[{"tool_calls":[{"name":"write_file","args":{"file_path":"/a.txt","content":"a"}}]},{"content":"done"}]}`)
	code, stdout, stderr := w.run("run", "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "go")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^note: PreToolUse hook .*: checked the write$`).MatchString(stderr) ||
		!regexp.MustCompile(`(?m)^warning: PreToolUse hook .*no linter here$`).MatchString(stderr) {
		t.Errorf("stderr:\n%s", stderr)
	}
	if strings.TrimSpace(stdout) != "done" {
		t.Errorf("stdout %q", stdout)
	}
}

// mcp-serve runs the hooks of the configuration it was started with: in
// its directory (its threads keep their files in their state, whose paths
// the hooks get as they are).
func TestMCPServeRunsHooks(t *testing.T) {
	w := hookWorld(t)
	dir := filepath.Join(w.home, ".claude")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"hooks":{
		"PreToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"jq -e '.tool_input.file_path | endswith(\".secret\") | not' >/dev/null || { echo 'no secrets in threads' >&2; exit 2; }"}]}],
		"PostToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"jq -r '.tool_input.file_path + \" \" + .cwd' >> \"$CLAUDE_PROJECT_DIR/written.log\""}]}]}}`), 0o644)
	cmd := exec.Command(binary(t), "mcp-serve", "--db", w.db, "--model", "replay:inline")
	cmd.Env, cmd.Dir = w.env(), w.dir
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	script := `{"turns":[
		{"tool_calls":[{"id":"s","name":"write_file","args":{"file_path":"/keys.secret","content":"k"}},
		               {"id":"r","name":"write_file","args":{"file_path":"/report.md","content":"r"}}]},
		{"content":"done","expect":{"messages_contain":["no secrets in threads"]}}]}`
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "run_task", Arguments: map[string]any{"task": script}})
	if err != nil || res.IsError {
		t.Fatalf("run_task: %v %+v", err, res)
	}
	log := readFile(t, filepath.Join(w.dir, "written.log"))
	real, _ := filepath.EvalSymlinks(w.dir)
	if log != "/report.md "+real+"\n" {
		t.Errorf("written.log: %q", log)
	}
}

// PostToolUseFailure and SubagentStart hooks of the user's
// ~/.claude/settings.json fire through the binary with Claude Code's
// payloads (its tool names, the error, the subagent's type), and their
// context reaches the model.
func TestHookFailureAndSubagentStart(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the hooks need bash")
	}
	w := newWorld(t)
	log := filepath.Join(w.home, "events.jsonl")
	settings := fmt.Sprintf(`{"hooks":{
		"PostToolUseFailure":[{"matcher":"Read","hooks":[{"type":"command","command":"cat >> %[1]s; echo >> %[1]s; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUseFailure\",\"additionalContext\":\"try /docs\"}}'"}]}],
		"SubagentStart":[{"matcher":"general-purpose","hooks":[{"type":"command","command":"cat >> %[1]s; echo >> %[1]s; echo 'stay in /src'"}]}]}}`, log)
	os.MkdirAll(filepath.Join(w.home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), []byte(settings), 0o644)
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"bad","name":"read_file","args":{"file_path":"/missing.md"}}]},
		{"tool_calls":[{"id":"t","name":"task","args":{"description":"list files","subagent_type":"general-purpose"}}],"expect":{"messages_contain":["try /docs"]}},
		{"agent":"general-purpose","content":"listed","expect":{"last_message_contains":["stay in /src"]}},
		{"content":"done"}]}`)
	if code, stdout, stderr := w.run(w.runArgs(s, "go")...); code != 0 {
		t.Fatalf("exit %d: %s %s", code, stderr, stdout)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, m)
	}
	if len(got) != 2 {
		t.Fatalf("%d events: %v", len(got), got)
	}
	if f := got[0]; f["hook_event_name"] != "PostToolUseFailure" || f["tool_name"] != "Read" || !strings.Contains(fmt.Sprint(f["error"]), "missing.md") || f["tool_use_id"] != "bad" {
		t.Errorf("PostToolUseFailure's payload: %v", f)
	} else if in, _ := f["tool_input"].(map[string]any); !strings.HasPrefix(fmt.Sprint(in["file_path"]), w.dir) {
		t.Errorf("the path is not the host's: %v", in)
	}
	if s := got[1]; s["hook_event_name"] != "SubagentStart" || s["agent_type"] != "general-purpose" || s["agent_id"] == "" || s["session_id"] == "" {
		t.Errorf("SubagentStart's payload: %v", s)
	}
}

// An http hook of the user's settings, against a loopback server, denies
// a call through the binary: the model reads the server's reason.
func TestHTTPHookDeniesThroughCLI(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var in struct {
			ToolName string `json:"tool_name"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		if in.ToolName == "Write" && r.Header.Get("Authorization") == "Bearer t0k" {
			fmt.Fprint(w, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"writes need review"}}`)
		}
	}))
	defer srv.Close()
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), []byte(`{"hooks":{"PreToolUse":[{"matcher":"Write","hooks":[
		{"type":"http","url":"`+srv.URL+`/check","headers":{"Authorization":"Bearer $HOOK_TOKEN"},"allowedEnvVars":["HOOK_TOKEN"]}]}]}}`), 0o644)
	s := w.script(`{"turns":[{"tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/a.txt","content":"x"}}]},
		{"content":"done","expect":{"messages_contain":["writes need review"]}}]}`)
	code, stdout, stderr := w.runWithEnv([]string{"HOOK_TOKEN=t0k"}, w.runArgs(s, "--auto-approve", "go")...)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, stderr, stdout)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "a.txt")); err == nil {
		t.Error("the denied write ran")
	}
	if calls.Load() != 1 {
		t.Errorf("the server was asked %d times", calls.Load())
	}
}

// A PermissionRequest hook of the user's settings answers an approval in
// the user's place through the binary, with Claude Code's payload: its
// allow runs the write headless, its deny refuses the command.
func TestHookPermissionRequestThroughCLI(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the hooks need bash")
	}
	w := newWorld(t)
	log := filepath.Join(w.home, "asked.jsonl")
	settings := fmt.Sprintf(`{"hooks":{"PermissionRequest":[
		{"matcher":"Write","hooks":[{"type":"command","command":"cat >> %[1]s; echo >> %[1]s; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"allow\"}}}'"}]},
		{"matcher":"Bash","hooks":[{"type":"command","command":"echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"deny\",\"message\":\"no commands tonight\"}}}'"}]}]}}`, log)
	os.MkdirAll(filepath.Join(w.home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), []byte(settings), 0o644)
	s := w.script(`{"turns":[{"tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/a.txt","content":"x"}},{"id":"x","name":"execute","args":{"command":"ls"}}]},
		{"content":"done","expect":{"messages_contain":["no commands tonight"]}}]}`)
	code, stdout, stderr := w.run(w.runArgs(s, "--interrupt-on", "write_file,execute", "--shell", "--sandbox", "none", "go")...)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, stderr, stdout)
	}
	if data, err := os.ReadFile(filepath.Join(w.dir, "a.txt")); err != nil || string(data) != "x" {
		t.Errorf("the allowed write: %q %v", data, err)
	}
	data, _ := os.ReadFile(log)
	var in map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(data))), &in); err != nil || in["hook_event_name"] != "PermissionRequest" || in["tool_name"] != "Write" {
		t.Errorf("the payload: %s (%v)", data, err)
	}
}

// deepagents hooks lists every event and handler type, as text and JSON.
func TestHooksCommand(t *testing.T) {
	w := newWorld(t)
	code, stdout, stderr := w.run("hooks")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"PermissionRequest", "PostToolUseFailure", "SubagentStart", "the tool's name", "handler types: command, http, prompt"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
	code, stdout, _ = w.run("hooks", "--json")
	var out struct {
		Events []struct {
			Name, When string
		}
		HandlerTypes []string `json:"handler_types"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil || len(out.Events) != len(hooks.Events) || len(out.HandlerTypes) != len(hooks.HandlerTypes) {
		t.Errorf("--json: exit %d, %v: %s", code, err, stdout)
	}
}

// A prompt hook (Claude Code's "prompt" type) of the user's settings asks
// the session's model, scripted here, and blocks a stop through the
// binary: the agent goes back to work with the reason.
func TestPromptHookBlocksAStop(t *testing.T) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), []byte(`{"hooks":{"Stop":[{"hooks":[
		{"type":"prompt","prompt":"Has the agent run the tests? $ARGUMENTS"}]}]}}`), 0o644)
	s := w.script(`{"turns":[{"content":"done"},
		{"agent":"hook","content":"{\"ok\": false, \"reason\": \"run the tests first\"}","expect":{"last_message_contains":["Has the agent run the tests?","\"last_assistant_message\":\"done\""]}},
		{"content":"Ran the tests.","expect":{"last_message_contains":["Stop hook feedback:\nrun the tests first"]}},
		{"agent":"hook","content":"{\"ok\": true}"}]}`)
	code, stdout, stderr := w.run(w.runArgs(s, "go")...)
	if code != 0 || !strings.Contains(stdout, `"text":"Ran the tests."`) {
		t.Fatalf("exit %d: %s %s", code, stderr, stdout)
	}
}
