package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// fakeFlags is a FlagSet that parses values as the command line would.
type fakeFlags struct {
	set  map[string]func(string) error
	defs map[string]string
}

func newFakeFlags() *fakeFlags {
	return &fakeFlags{set: map[string]func(string) error{}, defs: map[string]string{}}
}

func (fs *fakeFlags) add(name, def string, set func(string) error) {
	fs.set[name], fs.defs[name] = set, def
}

func (fs *fakeFlags) StringVar(p *string, name, value, _ string) {
	*p = value
	fs.add(name, value, func(s string) error { *p = s; return nil })
}

func (fs *fakeFlags) IntVar(p *int, name string, value int, _ string) {
	*p = value
	fs.add(name, strconv.Itoa(value), func(s string) (err error) { *p, err = strconv.Atoi(s); return err })
}

func (fs *fakeFlags) BoolVar(p *bool, name string, value bool, _ string) {
	*p = value
	fs.add(name, strconv.FormatBool(value), func(s string) (err error) { *p, err = strconv.ParseBool(s); return err })
}

func (fs *fakeFlags) Float64Var(p *float64, name string, value float64, _ string) {
	*p = value
	fs.add(name, strconv.FormatFloat(value, 'g', -1, 64), func(s string) (err error) { *p, err = strconv.ParseFloat(s, 64); return err })
}

// tableValues are a value for each row of settingTable, other than its
// default: a new row needs one here.
var tableValues = map[string]any{
	"model":              "replay:table.json",
	"shell":              true,
	"sandbox":            "none",
	"grep-regexp":        true,
	"max-steps":          7,
	"max-parallel-tools": 3,
	"multi-edit":         true,
	"isolation":          "worktree",
	"max-cost":           2.5,
	"durability":         "sync",
	"record":             "calls.json",
	"trust-workspace":    true,
	SystemDirFlag:        true,
	"protected-paths":    ".git/hooks,.envrc",
}

// Each row of the table: its flag sets the value a run resolves and a
// thread records; its configuration key sets the same; a thread that
// kept it goes on with it, through the JSON it is kept as.
func TestSettingTableRoundTrips(t *testing.T) {
	flags, keys := map[string]bool{}, map[string]bool{}
	for _, s := range settingTable {
		if flags[s.flagName()] || s.configKey() != "" && keys[s.configKey()] {
			t.Errorf("--%s (%q): declared twice", s.flagName(), s.configKey())
		}
		flags[s.flagName()], keys[s.configKey()] = true, true
		v, ok := tableValues[s.flagName()]
		if !ok {
			t.Errorf("--%s: no value in tableValues", s.flagName())
			continue
		}
		t.Run(s.flagName(), func(t *testing.T) {
			switch rw := s.(type) {
			case row[string]:
				roundTrip(t, rw, v.(string))
			case row[int]:
				roundTrip(t, rw, v.(int))
			case row[bool]:
				roundTrip(t, rw, v.(bool))
			case row[float64]:
				roundTrip(t, rw, v.(float64))
			default:
				t.Fatalf("a row of %T", s)
			}
		})
	}
}

// resolveTable resolves in, returning the flags as resolved.
func resolveTable(t *testing.T, in Inputs) (Spec, Flags) {
	t.Helper()
	r := newResolver(in)
	spec, err := r.resolve()
	if err != nil {
		t.Fatal(err)
	}
	return spec, r.f
}

func roundTrip[T comparable](t *testing.T, rw row[T], v T) {
	if rw.keep == notKept && rw.kept != nil || rw.keep != notKept && rw.kept == nil {
		t.Fatalf("keep %d with kept %v", rw.keep, rw.kept != nil)
	}
	ws := t.TempDir()
	// defaults returns the flags as registered, and where they are set.
	defaults := func() (*Flags, *fakeFlags) {
		f := new(Flags)
		fs := newFakeFlags()
		RegisterFlags(fs, f)
		f.Dir = ws
		return f, fs
	}
	f, fs := defaults()
	if _, ok := fs.set[rw.flag]; !ok {
		t.Fatalf("--%s is not registered", rw.flag)
	}
	if *rw.flags(f) != rw.def || v == rw.def {
		t.Fatalf("--%s: default %v, registered %v, test value %v", rw.flag, rw.def, *rw.flags(f), v)
	}
	check := func(how string, spec Spec, got Flags) {
		t.Helper()
		if *rw.flags(&got) != v {
			t.Errorf("%s: resolved %v, want %v", how, *rw.flags(&got), v)
		}
		if rw.kept != nil && *rw.kept(&spec.Settings) != v {
			t.Errorf("%s: the settings to record hold %v, want %v", how, *rw.kept(&spec.Settings), v)
		}
	}

	// The flag, as the command line gives it.
	if err := fs.set[rw.flag](fmt.Sprint(v)); err != nil {
		t.Fatal(err)
	}
	f.Given = given(rw.flag)
	if err := CheckFlags(*f); err != nil {
		t.Fatal(err)
	}
	spec, got := resolveTable(t, Inputs{Flags: *f, Places: home(t, "")})
	check("the flag", spec, got)

	// The user's configuration file.
	if rw.key != "" {
		var doc any = v
		parts := strings.Split(rw.key, ".")
		for i := len(parts) - 1; i >= 0; i-- {
			doc = map[string]any{parts[i]: doc}
		}
		data, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := defaults()
		spec, got := resolveTable(t, Inputs{Flags: *f, Places: home(t, string(data))})
		check("the configuration's "+rw.key, spec, got)
		// A flag given wins over it.
		f.Given = given(rw.flag)
		if _, got := resolveTable(t, Inputs{Flags: *f, Places: home(t, string(data))}); *rw.flags(&got) != rw.def {
			t.Errorf("the flag at its default under the configuration: %v", *rw.flags(&got))
		}
		// A workspace's configuration comes with the repository: it may
		// set none of the table's keys, and is told so.
		f, _ = defaults()
		mustWrite(t, filepath.Join(ws, ".deepagents", "config.yaml"), string(data))
		spec, got = resolveTable(t, Inputs{Flags: *f, Places: home(t, "")})
		os.RemoveAll(filepath.Join(ws, ".deepagents"))
		if *rw.flags(&got) != rw.def {
			t.Errorf("the workspace's %s set it: %v", rw.key, *rw.flags(&got))
		}
		if len(spec.Notes) != 1 || !strings.Contains(spec.Notes[0], "are ignored") || !strings.Contains(spec.Notes[0], strings.Split(rw.key, ".")[0]) {
			t.Errorf("the workspace's %s: notes %q", rw.key, spec.Notes)
		}
	}

	// A thread that kept it, through the JSON it is kept as.
	if rw.kept != nil {
		var s Settings
		*rw.kept(&s) = v
		var back Settings
		if err := json.Unmarshal(s.Values()[SettingsValue], &back); err != nil {
			t.Fatal(err)
		}
		back.Dir = ws
		f, _ := defaults()
		spec, got := resolveTable(t, Inputs{Flags: *f, Places: home(t, ""), Thread: "th", Kept: &Kept{Settings: back, Folder: ws}})
		check("the thread's", spec, got)
	}
}

// Every flag of the table is in docs/CLI.md, and every configuration key
// in its configuration file's example.
func TestSettingTableDocumented(t *testing.T) {
	data, err := os.ReadFile("../../../../docs/CLI.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, s := range settingTable {
		if !strings.Contains(doc, "`--"+s.flagName()) {
			t.Errorf("--%s is not in docs/CLI.md", s.flagName())
		}
		if k := s.configKey(); k != "" {
			indent := ""
			for _, part := range strings.Split(k, ".") {
				if !regexp.MustCompile(`(?m)^` + indent + regexp.QuoteMeta(part) + `:`).MatchString(doc) {
					t.Errorf("the configuration key %s is not in docs/CLI.md", k)
				}
				indent = `\s+`
			}
		}
	}
}

// A configuration value that is wrong, or a key nobody knows, is an error
// naming it.
func TestSettingTableBadConfig(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{"shell: maybe\n", "shell: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `maybe` into bool"},
		{"model: [a, b]\n", "model: yaml: unmarshal errors"},
		{"sandbox:\n  mode: fast\n", `sandbox.mode must be bwrap or none, not "fast"`},
		{"max_parallel_tools: -1\n", "max_parallel_tools must not be negative"},
		{"max_parallel_tools: many\n", "max_parallel_tools: yaml: unmarshal errors"},
		{"modle: x\n", "line 1: field modle not found in type session.config"},
		{"sandbox:\n  network: off\n  mdoe: bwrap\n", "line 3: field mdoe not found in type session.sandboxConfig"},
		{"model: x\nbogus:\n  a: 1\n", "line 2: field bogus not found in type session.config"},
		// "" is the key of no row (the rows without one have it).
		{"\"\": true\n", "line 1: field  not found in type session.config"},
		{"sandbox:\n  \"\": none\n", "line 2: field  not found in type session.sandboxConfig"},
	} {
		places := home(t, tc.config)
		_, err := Resolve(Inputs{Flags: Flags{Dir: t.TempDir(), Sandbox: "bwrap", Durability: "async"}, Places: places})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), places.Config) {
			t.Errorf("%q: %v, want %q", tc.config, err, tc.want)
		}
	}
	// The flags' checks name theirs.
	f := Flags{Sandbox: "fast", Durability: "async"}
	if err := CheckFlags(f); err == nil || err.Error() != `--sandbox must be bwrap or none, not "fast"` {
		t.Errorf("--sandbox fast: %v", err)
	}
	f = Flags{Sandbox: "bwrap", Durability: "async", MaxSteps: -1}
	if err := CheckFlags(f); err == nil || err.Error() != "--max-steps must not be negative" {
		t.Errorf("--max-steps -1: %v", err)
	}
}

// A thread's kept values are checked as the flags are: a record that says
// sandbox Bwrap (which is not bwrap, so no sandbox) or a negative
// max_parallel_tools is refused, not run; the flag given runs it.
func TestSettingTableBadKept(t *testing.T) {
	ws := t.TempDir()
	for _, tc := range []struct {
		name, flag string
		kept       Settings
		want       string
	}{
		{"sandbox", "sandbox", Settings{Dir: ws, Shell: true, Sandbox: "Bwrap"}, `thread th ran with --sandbox Bwrap, which must be bwrap or none, not "Bwrap"; pass the flag`},
		{"max-parallel-tools", "max-parallel-tools", Settings{Dir: ws, MaxParallelTools: -1}, "thread th ran with --max-parallel-tools -1, which must not be negative; pass the flag"},
		{"max-steps", "max-steps", Settings{Dir: ws, MaxSteps: -3}, "thread th ran with --max-steps -3, which must not be negative; pass the flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Flags{Dir: ws, Sandbox: "bwrap", Durability: "async"}
			in := Inputs{Flags: f, Places: home(t, ""), Thread: "th", Kept: &Kept{Settings: tc.kept, Folder: ws}}
			_, err := Resolve(in)
			var ue UsageError
			if !errors.As(err, &ue) || err.Error() != tc.want {
				t.Errorf("got %v, want %q", err, tc.want)
			}
			in.Flags.Given = given(tc.flag)
			spec, err := Resolve(in)
			if err != nil {
				t.Fatalf("with --%s: %v", tc.flag, err)
			}
			if spec.Sandbox != "bwrap" || spec.Settings.MaxParallelTools != 0 || spec.MaxSteps != 0 {
				t.Errorf("with --%s: sandbox %q, max parallel %d, max steps %d", tc.flag, spec.Sandbox, spec.Settings.MaxParallelTools, spec.MaxSteps)
			}
		})
	}
}

// A hostile repository's .deepagents/config.yaml loosens nothing: each of
// these keys alone resolves as without the file (with a note), and the
// keys only the command line sets are errors.
func TestSettingTableHostileWorkspace(t *testing.T) {
	const user = "model: replay:mine.json\nshell: true\nsandbox: {mode: bwrap}\n"
	resolve := func(t *testing.T, ws string) (Spec, error) {
		t.Helper()
		f := Flags{Dir: ws, Sandbox: "bwrap", Durability: "async", ProtectedPaths: ".git/hooks"}
		return Resolve(Inputs{Flags: f, Places: home(t, user)})
	}
	base, err := resolve(t, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// what is compared: every setting that loosens, or picks what runs.
	view := func(s Spec) string {
		return fmt.Sprintf("model %q shell %v sandbox %q network %q allow %v mode %q classifier %q profile %+v mcp %v budget %+v wait %v max %d steps %d grep %v protected %v settings %+v",
			s.Model, s.Shell, s.Sandbox, s.Network, s.AllowDomains, s.PermissionMode, s.ClassifierModel, s.Profile, s.MCP, s.Budget, s.ApprovalWait,
			s.Settings.MaxParallelTools, s.MaxSteps, s.GrepRegexp, s.Protected, s.Settings)
	}
	for _, cfg := range []string{
		"model: openai:evil\n",
		"shell: false\n",
		"sandbox:\n  mode: none\n",
		"sandbox:\n  network: host\n",
		"sandbox:\n  allow_domains: [evil.test]\n",
		"max_parallel_tools: 64\n",
		"profile: {name: gpt}\n",
		"permission_mode: bypass\n",
		"classifier_model: openai:evil\n",
		"mcp_servers: {evil: {command: evil}}\n",
		"budget: {dollars: 1000}\n",
		"background_approval_wait: 0s\n",
	} {
		ws := t.TempDir()
		mustWrite(t, filepath.Join(ws, ".deepagents", "config.yaml"), cfg)
		spec, err := resolve(t, ws)
		if err != nil {
			t.Errorf("%q: %v", cfg, err)
			continue
		}
		b := base
		b.Settings.Dir = spec.Settings.Dir
		if got, want := view(spec), view(b); got != want {
			t.Errorf("%q set something:\n got %s\nwant %s", cfg, got, want)
		}
		if len(spec.Notes) != 1 || !strings.Contains(spec.Notes[0], "are ignored") {
			t.Errorf("%q: notes %q", cfg, spec.Notes)
		}
	}
	for _, cfg := range []string{"trust_workspace: true\n", "allow_system_dir: true\n", "max_steps: 1\n", "durability: exit\n", "record: /tmp/x\n", "max_cost: 0\n", "grep_regexp: true\n"} {
		ws := t.TempDir()
		mustWrite(t, filepath.Join(ws, ".deepagents", "config.yaml"), cfg)
		if _, err := resolve(t, ws); err == nil || !strings.Contains(err.Error(), "not found in type session.config") {
			t.Errorf("%q: %v", cfg, err)
		}
	}
}
