package session

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// home returns Places for a temporary home with config.yaml holding
// config (none when empty).
func home(t *testing.T, config string) Places {
	t.Helper()
	h := t.TempDir()
	getenv := func(k string) string { return map[string]string{"HOME": h}[k] }
	if config != "" {
		mustWrite(t, filepath.Join(h, ".deepagents", "config.yaml"), config)
	}
	return Locate(getenv)
}

func given(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// The order of resolution: a flag given wins, then the settings the
// thread kept, then the user's configuration, then the flag's default; a
// given flag that changes what the thread ran with is noted.
func TestResolvePrecedence(t *testing.T) {
	ws := t.TempDir()
	places := home(t, "model: replay:config.json\nshell: true\ninterrupt_on: [write_file]\n")
	base := Flags{Dir: ws, Sandbox: "bwrap", Durability: "async"}

	spec, err := Resolve(Inputs{Flags: base, Places: places})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Model != "replay:config.json" || !spec.Shell || !slices.Equal(spec.InterruptOn, []string{"write_file"}) {
		t.Errorf("the configuration's defaults: %+v", spec)
	}

	kept := &Kept{Settings: Settings{Model: "replay:thread.json", Dir: ws, InterruptOn: []string{"execute"}, MaxSteps: 7}, Folder: ws}
	f := base
	f.Model, f.Given = "replay:flag.json", given("model")
	spec, err = Resolve(Inputs{Flags: f, Places: places, Thread: "th", Kept: kept})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Model != "replay:flag.json" || spec.Shell || !slices.Equal(spec.InterruptOn, []string{"execute"}) || spec.MaxSteps != 7 {
		t.Errorf("the thread's settings under the flag: %+v", spec)
	}
	if len(spec.Notes) != 1 || spec.Notes[0] != "note: thread th ran with --model replay:thread.json; this run uses replay:flag.json" {
		t.Errorf("notes %q", spec.Notes)
	}
	if spec.Settings.Model != "replay:flag.json" || spec.Settings.Dir != ws || spec.Thread != "th" {
		t.Errorf("settings to record %+v", spec.Settings)
	}
}

// A thread kept with a relative workspace, or one that is gone, needs
// --dir; a usage error says so.
func TestResolveKeptWorkspace(t *testing.T) {
	base := Flags{Dir: t.TempDir(), Sandbox: "bwrap"}
	for _, c := range []struct {
		kept Kept
		want string
	}{
		{Kept{Settings: Settings{Dir: "ws"}}, `recorded its workspace as "ws"`},
		{Kept{Settings: Settings{Dir: "/gone"}, Gone: true}, "/gone, which is gone; pass --dir"},
	} {
		_, err := Resolve(Inputs{Flags: base, Places: home(t, ""), Thread: "th", Kept: &c.kept})
		var ue UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a usage error saying %q", c.kept, err, c.want)
		}
	}
}

// A workspace's configuration may add approvals and ask and deny rules,
// nothing else: the rest is ignored with notes.
func TestResolveWorkspaceConfig(t *testing.T) {
	ws := t.TempDir()
	mustWrite(t, filepath.Join(ws, ".deepagents", "config.yaml"), "model: openai:gpt-x\nshell: true\ninterrupt_on: [edit_file]\npermissions: {allow: [execute], deny: [execute(rm)]}\n")
	spec, err := Resolve(Inputs{Flags: Flags{Dir: ws, Sandbox: "bwrap"}, Places: home(t, "")})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Model != "" || spec.Shell || !slices.Equal(spec.InterruptOn, []string{"edit_file"}) {
		t.Errorf("spec %+v", spec)
	}
	if len(spec.Notes) != 2 || !strings.Contains(spec.Notes[0], "are ignored") || !strings.Contains(spec.Notes[1], "allow rules in a workspace's configuration are ignored") {
		t.Errorf("notes %q", spec.Notes)
	}
	for _, r := range spec.Rules.Rules() {
		if r.Tool == "execute" && r.Pattern == "" {
			t.Errorf("the workspace's allow rule applies: %+v", r)
		}
	}
}

// Resolving twice gives the same Spec, and leaves the inputs alone.
func TestResolveIsPure(t *testing.T) {
	ws := t.TempDir()
	places := home(t, "interrupt_on: [write_file]\n")
	a := Assistant{GraphID: "a", Permissions: RuleLists{Deny: []string{"execute(rm)"}}}
	in := Inputs{Flags: Flags{Dir: ws, Sandbox: "bwrap", Rules: RuleLists{Deny: []string{"read_file(**/.env)"}}}, Places: places, Served: true, Assistant: &a}
	one, err := Resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	two, _ := Resolve(in)
	if !slices.Equal(one.Settings.Rules.Deny, two.Settings.Rules.Deny) || len(one.Settings.Rules.Deny) != 2 {
		t.Errorf("rules %v then %v", one.Settings.Rules.Deny, two.Settings.Rules.Deny)
	}
	if len(in.Flags.Rules.Deny) != 1 || len(a.Permissions.Deny) != 1 {
		t.Errorf("resolving changed its inputs: %v %v", in.Flags.Rules.Deny, a.Permissions.Deny)
	}
	// An assistant gets neither the user's folder nor the configuration's
	// approvals, and keeps its workspace in each thread's state.
	if one.UserDir != "" || len(one.InterruptOn) != 0 || !one.StateWorkspace {
		t.Errorf("assistant %+v", one)
	}
}

// Hooks come from the user's config.yaml (the agent's names) and
// ~/.claude/settings.json (Claude Code's), then, with --trust-workspace,
// the workspace's .deepagents/config.yaml and .claude/settings*.json;
// without it a note names the workspace's files. A workspace that is the
// home reads the user's files once, as the user's.
func TestResolveHooks(t *testing.T) {
	places := home(t, "hooks:\n  Stop:\n    - hooks: [{type: command, command: user-yaml}]\n")
	claude := func(cmd string) string {
		return `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"` + cmd + `"}]}]}}`
	}
	mustWrite(t, filepath.Join(places.Home, ".claude", "settings.json"), claude("user-claude"))
	mustWrite(t, filepath.Join(filepath.Dir(places.Config), "hooks.json"), claude("user-da"))
	ws := t.TempDir()
	mustWrite(t, filepath.Join(ws, ".deepagents", "hooks.json"), claude("ws-da"))
	mustWrite(t, filepath.Join(ws, ".deepagents", "config.yaml"), "hooks:\n  PostToolUse:\n    - matcher: write_file\n      hooks: [{type: command, command: ws-yaml}]\n")
	mustWrite(t, filepath.Join(ws, ".claude", "settings.json"), claude("ws-claude"))
	mustWrite(t, filepath.Join(ws, ".claude", "settings.local.json"), claude("ws-local"))
	commands := func(spec Spec) string {
		var c []string
		for _, h := range spec.Hooks {
			c = append(c, fmt.Sprintf("%s:%s:%d", h.Event, h.Command, h.Dialect))
		}
		return strings.Join(c, " ")
	}

	spec, err := Resolve(Inputs{Flags: Flags{Dir: ws}, Places: places})
	if err != nil {
		t.Fatal(err)
	}
	if got := commands(spec); got != "Stop:user-yaml:0 PreToolUse:user-da:1 PreToolUse:user-claude:1" {
		t.Errorf("untrusted: %s", got)
	}
	if len(spec.Notes) != 1 || !strings.Contains(spec.Notes[0], filepath.Join(ws, ".deepagents", "config.yaml")+" and ") ||
		!strings.Contains(spec.Notes[0], "settings.local.json name hooks") || !strings.Contains(spec.Notes[0], "--trust-workspace") {
		t.Errorf("notes %q", spec.Notes)
	}

	spec, err = Resolve(Inputs{Flags: Flags{Dir: ws, TrustWorkspace: true}, Places: places})
	if err != nil {
		t.Fatal(err)
	}
	if got := commands(spec); got != "Stop:user-yaml:0 PreToolUse:user-da:1 PreToolUse:user-claude:1 PostToolUse:ws-yaml:0 PreToolUse:ws-da:1 PreToolUse:ws-claude:1 PreToolUse:ws-local:1" {
		t.Errorf("trusted: %s", got)
	}
	if len(spec.Notes) != 0 {
		t.Errorf("notes %q", spec.Notes)
	}

	// The workspace is the home: its files are the user's, no note.
	spec, err = Resolve(Inputs{Flags: Flags{Dir: places.Home}, Places: places})
	if err != nil {
		t.Fatal(err)
	}
	if got := commands(spec); got != "Stop:user-yaml:0 PreToolUse:user-da:1 PreToolUse:user-claude:1" || len(spec.Notes) != 0 {
		t.Errorf("home as the workspace: %s %q", got, spec.Notes)
	}

	// An assistant of serve's file has none.
	spec, err = Resolve(Inputs{Flags: Flags{Dir: ws, TrustWorkspace: true, Sandbox: "bwrap"}, Places: places, Assistant: &Assistant{GraphID: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Hooks) != 0 {
		t.Errorf("an assistant's hooks: %s", commands(spec))
	}

	// A bad hook is a usage error naming its file.
	mustWrite(t, filepath.Join(ws, ".claude", "settings.local.json"), `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command"}]}]}}`)
	_, err = Resolve(Inputs{Flags: Flags{Dir: ws, TrustWorkspace: true}, Places: places})
	if !errors.As(err, new(UsageError)) || !strings.Contains(err.Error(), "settings.local.json") {
		t.Errorf("a hook without a command: %v", err)
	}
}

// A thread keeps its --mcp-config files; a run given none starts them
// again, and rules that name the tools of a server no configuration names
// are a usage error that says what to pass. A pattern over server names
// names no one server.
func TestResolveKeptMCPConfigs(t *testing.T) {
	ws := t.TempDir()
	places := home(t, "")
	cfg := filepath.Join(t.TempDir(), "servers.json")
	mustWrite(t, cfg, `{"mcpServers": {"extra": {"command": "extra-server"}}}`)
	f := Flags{Dir: ws, MCPConfigs: []string{cfg}, Rules: RuleLists{Ask: []string{"mcp__extra__get"}, Deny: []string{"mcp__ext*"}}}
	spec, err := Resolve(Inputs{Flags: f, Places: places})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(spec.Settings.MCPConfigs, []string{cfg}) {
		t.Errorf("settings to record: %+v", spec.Settings)
	}
	kept := &Kept{Settings: spec.Settings, Folder: ws}
	spec, err = Resolve(Inputs{Flags: Flags{Dir: ws}, Places: places, Thread: "th", Kept: kept})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := spec.MCP["extra"]; !ok {
		t.Errorf("the kept file's servers: %v", spec.MCP)
	}
	f.MCPConfigs = nil
	_, err = Resolve(Inputs{Flags: f, Places: places})
	var usage UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "MCP server extra,") || !strings.Contains(err.Error(), "pass --mcp-config") {
		t.Errorf("rules naming an unconfigured server: %v", err)
	}
}

// TestResolveFileCheckpoints: workspace checkpoints of files are on, but
// for the home folder and the root, and when the user's configuration
// says rewind: false.
func TestResolveFileCheckpoints(t *testing.T) {
	places := home(t, "")
	ws := t.TempDir()
	for _, tc := range []struct {
		places Places
		dir    string
		want   bool
	}{
		{places, ws, false},
		{places, places.Home, true},
		{places, "/", true},
		{home(t, "rewind: false\n"), ws, true},
		{home(t, "rewind: true\n"), ws, false},
	} {
		// "/" is a system folder: accepted only with --allow-system-dir.
		spec, err := Resolve(Inputs{Flags: Flags{Dir: tc.dir, AllowSystemDir: tc.dir == "/"}, Places: tc.places})
		if err != nil {
			t.Fatal(err)
		}
		if spec.NoFileCheckpoints != tc.want {
			t.Errorf("dir %s: NoFileCheckpoints = %v, want %v", tc.dir, spec.NoFileCheckpoints, tc.want)
		}
	}
}

// A tool hook in config.yaml whose matcher uses Claude Code's names
// (Write|Edit), which never match the agent's tools, gets a note naming
// the agent's; one with the agent's names gets none.
func TestResolveHooksClaudeMatcher(t *testing.T) {
	for _, c := range []struct {
		matcher string
		note    []string
	}{
		{"Write|Edit", []string{`matcher "Write|Edit"`, "Edit is edit_file, Write is write_file", "hooks.json"}},
		{"write_file|edit_file", nil},
	} {
		places := home(t, "hooks:\n  PreToolUse:\n    - matcher: "+c.matcher+"\n      hooks: [{type: command, command: check}]\n")
		spec, err := Resolve(Inputs{Flags: Flags{Dir: t.TempDir()}, Places: places})
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(spec.Notes, "\n")
		if c.note == nil && notes != "" {
			t.Errorf("%s: notes %q, want none", c.matcher, notes)
		}
		for _, want := range c.note {
			if !strings.Contains(notes, want) {
				t.Errorf("%s: notes %q, want %q in them", c.matcher, notes, want)
			}
		}
	}
}

// On a terminal the file tools that change files or run commands ask, as
// their traits say: multi_edit with --multi-edit (or multi_edit in the
// configuration), execute with a shell.
func TestDefaultApprovalsByTraits(t *testing.T) {
	for _, tc := range []struct {
		config string
		f      Flags
		want   []string
	}{
		{"", Flags{}, []string{"write_file", "edit_file"}},
		{"", Flags{Shell: true}, []string{"write_file", "edit_file", "execute"}},
		{"", Flags{MultiEdit: true}, []string{"write_file", "edit_file", "multi_edit"}},
		{"multi_edit: true\nshell: true\n", Flags{}, []string{"write_file", "edit_file", "multi_edit", "execute"}},
	} {
		f := tc.f
		f.Dir, f.Sandbox, f.Durability = t.TempDir(), "bwrap", "async"
		spec, err := Resolve(Inputs{Flags: f, Places: home(t, tc.config), Interactive: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(spec.InterruptOn, tc.want) {
			t.Errorf("%q %+v: approvals for %v, want %v", tc.config, tc.f, spec.InterruptOn, tc.want)
		}
	}
}
