package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// everythingServer is the npm MCP test server (installed by .ci/run).
func everythingServer(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../../../mcp/testdata/npm/node_modules/.bin/mcp-server-everything")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("missing in CI: %v", err)
		}
		t.Skip("needs the npm MCP servers: cd mcp/testdata/npm && npm ci")
	}
	return p
}

// TestRunWithMCPServers runs a scripted agent with the servers of the
// user's mcp.json and, only when asked, the workspace's .mcp.json; a
// server that does not start is a warning, and rules that name it are
// dropped rather than fatal.
func TestRunWithMCPServers(t *testing.T) {
	w := newWorld(t)
	bin := everythingServer(t)
	write := func(path string, servers map[string]any) {
		t.Helper()
		data, _ := json.Marshal(map[string]any{"mcpServers": servers})
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(w.home, ".deepagents", "mcp.json"), map[string]any{
		"everything": map[string]any{"command": bin},
		"broken":     map[string]any{"command": "/nonexistent/server"},
	})
	write(filepath.Join(w.dir, ".mcp.json"), map[string]any{"repo": map[string]any{"command": bin}})

	script := w.script(`{"turns":[
		{"tool_calls":[{"id":"e","name":"mcp__everything__echo","args":{"message":"through the CLI"}},
		               {"id":"s","name":"mcp__everything__get-sum","args":{"a":1,"b":2}}]},
		{"content":"done","expect":{"tools_exclude":["mcp__repo__echo"]}}]}`)
	code, stdout, stderr := w.run(w.runArgs(script, "--deny", "mcp__broken", "--ask", "mcp__everything__get-sum", "use the tools")...)
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d (get-sum asks): %s", code, ExitInterrupted, stderr)
	}
	end := runEnd(t, stdout)
	if len(end.Interrupts) != 1 || end.Interrupts[0].Tool != "mcp__everything__get-sum" {
		t.Fatalf("interrupts: %+v", end.Interrupts)
	}
	// The resuming process's model plays what follows the approved turn.
	rest := w.script(`{"turns":[{"content":"done","expect":{"tools_exclude":["mcp__repo__echo"]}}]}`)
	resumed, rstdout, rstderr := w.run("resume", end.ThreadID, "--decision", "approve", "--model", "replay:"+rest, "--dir", w.dir, "--db", w.db, "--output", "jsonl")
	if resumed != 0 {
		t.Fatalf("resume: exit %d: %s", resumed, rstderr)
	}
	res := toolResultEvents(t, rstdout)
	if r := res["e"]; r.IsError || !strings.Contains(r.Content, "through the CLI") {
		t.Errorf("echo: %+v", r)
	}
	if r := res["s"]; r.IsError || !strings.Contains(r.Content, "3") {
		t.Errorf("get-sum, approved: %+v", r)
	}
	if !strings.Contains(stderr, `server=broken`) || !strings.Contains(stderr, "the agent runs without it") {
		t.Errorf("no warning about the broken server: %s", stderr)
	}
	if !strings.Contains(stderr, ".mcp.json names MCP servers (repo)") || !strings.Contains(stderr, "--trust-workspace") {
		t.Errorf("no note about the workspace's servers: %s", stderr)
	}

	// With --trust-workspace the repository's servers start too.
	script = w.script(`{"turns":[{"tool_calls":[{"id":"r","name":"mcp__repo__echo","args":{"message":"repo server"}}]},{"content":"done"}]}`)
	code, stdout, stderr = w.run(w.runArgs(script, "--trust-workspace", "use the repo server")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if r := toolResultEvents(t, stdout)["r"]; r.IsError || !strings.Contains(r.Content, "repo server") {
		t.Errorf("the workspace's server: %+v", r)
	}

	// A configuration that cannot be used is a usage error.
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"mcpServers": {"x": {"command": "${UNSET_VARIABLE_FOR_TEST}"}}}`), 0o600)
	if code, _, stderr := w.run(w.runArgs(script, "--mcp-config", bad, "go")...); code != ExitUsage || !strings.Contains(stderr, "UNSET_VARIABLE_FOR_TEST is not set") {
		t.Errorf("bad configuration: exit %d: %s", code, stderr)
	}
}

// ~/.deepagents/config.yaml gives the defaults of the flags: the model,
// approvals, MCP servers; the flags win, and a workspace's file may only
// add approvals.
func TestConfigFileDefaults(t *testing.T) {
	w := newWorld(t)
	bin := everythingServer(t)
	script := w.script(`{"turns":[{"tool_calls":[{"id":"e","name":"mcp__everything__echo","args":{"message":"configured"}},
		{"id":"w","name":"write_file","args":{"file_path":"/a.md","content":"x"}}]},{"content":"done"}]}`)
	os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte(
		"model: replay:"+script+"\ninterrupt_on: [write_file]\nmcp_servers:\n  everything: {command: "+bin+"}\n"), 0o600)
	os.MkdirAll(filepath.Join(w.dir, ".deepagents"), 0o755)
	os.WriteFile(filepath.Join(w.dir, ".deepagents", "config.yaml"), []byte("model: openai:gpt-4.1\ninterrupt_on: [edit_file]\n"), 0o600)

	code, stdout, stderr := w.run("run", "--dir", w.dir, "--db", w.db, "--output", "jsonl", "go")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d (write_file needs approval by the configuration): %s", code, ExitInterrupted, stderr)
	}
	end := runEnd(t, stdout)
	if len(end.Interrupts) != 1 || end.Interrupts[0].Tool != "write_file" {
		t.Errorf("interrupts %+v", end.Interrupts)
	}
	if !strings.Contains(stderr, "are ignored") {
		t.Errorf("no note about the workspace's model: %s", stderr)
	}
	// The flags win: no approvals.
	code, stdout, stderr = w.run("run", "--dir", w.dir, "--db", w.db, "--output", "jsonl", "--auto-approve", "go")
	if code != 0 {
		t.Fatalf("--auto-approve: exit %d: %s", code, stderr)
	}
	if r := toolResultEvents(t, stdout)["e"]; r.IsError || !strings.Contains(r.Content, "configured") {
		t.Errorf("the configuration's MCP server: %+v", r)
	}
	// A bad value is a usage error that names the file.
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("sandbox: {mode: docker}\n"), 0o600)
	if code, _, stderr := w.run("run", "--dir", w.dir, "--db", w.db, "--model", "replay:"+script, "go"); code != ExitUsage || !strings.Contains(stderr, "sandbox.mode") {
		t.Errorf("bad sandbox: exit %d: %s", code, stderr)
	}
}

// A thread run with the servers of an --mcp-config file resumes without
// the flag given again: the thread keeps the files it was run with, and
// its approved MCP call runs. Without the file, the resume says what to
// pass rather than "unknown tool".
func TestResumeKeepsMCPConfig(t *testing.T) {
	w := newWorld(t)
	bin := everythingServer(t)
	cfg := filepath.Join(t.TempDir(), "servers.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"extra": map[string]any{"command": bin}}})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	script := w.script(`{"turns":[{"tool_calls":[{"id":"s","name":"mcp__extra__get-sum","args":{"a":2,"b":3}}]}]}`)
	code, stdout, stderr := w.run(w.runArgs(script, "--mcp-config", cfg, "--ask", "mcp__extra__get-sum", "add")...)
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, ExitInterrupted, stderr)
	}
	end := runEnd(t, stdout)
	rest := w.script(`{"turns":[{"content":"done"}]}`)
	code, rstdout, rstderr := w.run("resume", end.ThreadID, "--decision", "approve", "--model", "replay:"+rest, "--dir", w.dir, "--db", w.db, "--output", "jsonl")
	if code != 0 {
		t.Fatalf("resume without --mcp-config: exit %d: %s", code, rstderr)
	}
	if r := toolResultEvents(t, rstdout)["s"]; r.IsError || !strings.Contains(r.Content, "5") {
		t.Errorf("get-sum, approved: %+v", r)
	}

	// When the file is gone, the resume says what to pass.
	code, stdout, stderr = w.run(w.runArgs(script, "--mcp-config", cfg, "--ask", "mcp__extra__get-sum", "add")...)
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, ExitInterrupted, stderr)
	}
	end = runEnd(t, stdout)
	os.Remove(cfg)
	code, _, rstderr = w.run("resume", end.ThreadID, "--decision", "approve", "--model", "replay:"+rest, "--dir", w.dir, "--db", w.db, "--output", "jsonl")
	if code != ExitUsage || !strings.Contains(rstderr, "MCP server extra") || !strings.Contains(rstderr, "pass --mcp-config") || !strings.Contains(rstderr, cfg+", which cannot be read now") {
		t.Errorf("resume with the file gone: exit %d: %s", code, rstderr)
	}
}

// `deepagents mcp list` says which tools were left out, and why.
func TestMCPListNotes(t *testing.T) {
	w := newWorld(t)
	cfg := filepath.Join(t.TempDir(), "servers.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{"command": everythingServer(t)}}})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := w.run("mcp", "list", "--mcp-config", cfg)
	if code != 0 || !strings.Contains(stdout, "  mcp__everything__echo\n") ||
		!strings.Contains(stdout, "  note: MCP tool left out: it runs only as a task") || !strings.Contains(stdout, "tool=simulate-research-query") {
		t.Errorf("exit %d: %s%s", code, stdout, stderr)
	}
}
