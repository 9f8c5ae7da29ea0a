package session

import (
	"errors"
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
