package session

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/netproxy"
	"github.com/deepagents-go/deepagents/store"
)

// The network sandboxed commands have, as flags, the user's file, a
// thread's settings and an assistant say.
func TestResolveNetwork(t *testing.T) {
	ws := t.TempDir()
	base := Flags{Dir: ws, Sandbox: "bwrap", Shell: true, Durability: "async"}
	withFlags := func(f func(*Flags)) Flags { g := base; f(&g); return g }
	for _, c := range []struct {
		name   string
		config string
		flags  Flags
		kept   *Kept
		want   NetworkMode
		allow  []string
	}{
		{name: "default", flags: base, want: NetworkOff},
		{name: "--network", flags: withFlags(func(f *Flags) { f.Network, f.Given = "proxy", given("network") }), want: NetworkProxy},
		{name: "--network=host", flags: withFlags(func(f *Flags) { f.Network, f.Given = "host", given("network") }), want: NetworkHost},
		{name: "an allowed domain turns the proxy on", flags: withFlags(func(f *Flags) { f.AllowDomains = []string{"github.com"} }), want: NetworkProxy, allow: []string{"github.com"}},
		{name: "--network=off wins over an allowed domain", flags: withFlags(func(f *Flags) {
			f.AllowDomains, f.Network, f.Given = []string{"github.com"}, "off", given("network")
		}), want: NetworkOff, allow: []string{"github.com"}},
		{name: "the old configuration's true", config: "sandbox:\n  network: true\n", flags: base, want: NetworkProxy},
		{name: "the configuration's domains, then the flags'", config: "sandbox:\n  allow_domains: [\"@go\"]\n", flags: withFlags(func(f *Flags) { f.AllowDomains = []string{"x.test"} }), want: NetworkProxy, allow: []string{"@go", "x.test"}},
		{name: "no sandbox", flags: withFlags(func(f *Flags) { f.Sandbox, f.Network, f.Given = "none", "proxy", given("network") }), want: NetworkOff},
		{name: "no shell", flags: withFlags(func(f *Flags) { f.Shell = false; f.AllowDomains = []string{"github.com"} }), want: NetworkOff, allow: []string{"github.com"}},
		{name: "the thread's", flags: base, kept: &Kept{Settings: Settings{Dir: ws, Shell: true, Network: NetworkHost}, Folder: ws}, want: NetworkHost},
		{name: "the thread's domains", flags: base, kept: &Kept{Settings: Settings{Dir: ws, Shell: true, AllowDomains: []string{"kept.test"}}, Folder: ws}, want: NetworkProxy, allow: []string{"kept.test"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := Inputs{Flags: c.flags, Places: home(t, c.config), Kept: c.kept}
			if c.kept != nil {
				in.Thread = "th"
			}
			spec, err := Resolve(in)
			if err != nil {
				t.Fatal(err)
			}
			if spec.Network != c.want || !slices.Equal(spec.AllowDomains, c.allow) {
				t.Errorf("network %q, allowed %q; want %q, %q", spec.Network, spec.AllowDomains, c.want, c.allow)
			}
		})
	}
	// A bad pattern in the user's file is a usage error naming the file.
	_, err := Resolve(Inputs{Flags: base, Places: home(t, "sandbox:\n  allow_domains: [\"10.0.0.1\"]\n")})
	var ue UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "sandbox: netproxy: bad host pattern") {
		t.Errorf("a bad pattern: %v", err)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Threads kept "network": true before modes; it reads as the proxy.
func TestNetworkModeJSON(t *testing.T) {
	for in, want := range map[string]NetworkMode{`true`: NetworkProxy, `false`: NetworkOff, `"host"`: NetworkHost, `"proxy"`: NetworkProxy, `null`: ""} {
		var s Settings
		if err := json.Unmarshal([]byte(`{"dir":"/x","network":`+in+`}`), &s); err != nil || s.Network != want {
			t.Errorf("%s: %q %v", in, s.Network, err)
		}
	}
	var s Settings
	if err := json.Unmarshal([]byte(`{"network":"everything"}`), &s); err == nil {
		t.Error("an unknown mode was read")
	}
}

func TestAssistantDomains(t *testing.T) {
	file := filepath.Join(t.TempDir(), "assistants.yaml")
	os.WriteFile(file, []byte("assistants:\n  - graph_id: a\n    dir: "+t.TempDir()+"\n    shell: true\n    allow_domains: [\"@npm\"]\n    deny_domains: [evil.test]\n"), 0o644)
	specs, err := LoadAssistants(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Resolve(Inputs{Flags: Flags{Dir: t.TempDir(), Sandbox: "bwrap"}, Served: true, Assistant: &specs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if c.Network != NetworkProxy || !slices.Equal(c.AllowDomains, []string{"@npm"}) || !slices.Equal(c.DenyDomains, []string{"evil.test"}) {
		t.Errorf("network %q, allowed %q, denied %q", c.Network, c.AllowDomains, c.DenyDomains)
	}
}

// "always" goes into the user's file, which keeps what it held.
func TestAddAllowedDomain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(path, []byte("# my settings\nmodel: anthropic:x # the model\nsandbox:\n  resolve:\n    a.test:80: 127.0.0.1:9\n"), 0o600)
	for _, h := range []string{"one.test", "two.test:8443", "one.test"} {
		if err := addAllowedDomain(path, h); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	c, err := loadConfig(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !slices.Equal(c.Sandbox.AllowDomains, []string{"one.test", "two.test:8443"}) || c.values["model"] != "anthropic:x" || c.Sandbox.Resolve["a.test:80"] != "127.0.0.1:9" {
		t.Errorf("%+v\n%s", c, data)
	}
	if !strings.Contains(string(data), "# my settings") || !strings.Contains(string(data), "# the model") {
		t.Errorf("comments lost:\n%s", data)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	// A missing file is made; a file that is not a mapping is refused.
	fresh := filepath.Join(t.TempDir(), "sub", "config.yaml")
	if err := addAllowedDomain(fresh, "x.test"); err != nil {
		t.Fatal(err)
	}
	if c, _ := loadConfig(fresh); !slices.Equal(c.Sandbox.AllowDomains, []string{"x.test"}) {
		t.Errorf("fresh file: %+v", c.Sandbox)
	}
	bad := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(bad, []byte("- a\n- b\n"), 0o600)
	if err := addAllowedDomain(bad, "x.test"); err == nil {
		t.Error("a list was taken for a configuration")
	}
}

// The memory of answers keeps a thread's in the store under the server's
// reserved namespace (the tmux test TestNetworkAsksInTerminal drives it
// with threads); without anyone to ask, a host is refused as unlisted.
func TestHostMemory(t *testing.T) {
	st := store.NewMemoryStore()
	asked := 0
	m := &hostMemory{store: st, always: map[string]bool{}, log: discard(), ask: func(ctx context.Context, q netproxy.Question) (netproxy.Answer, error) {
		asked++
		return netproxy.AllowThread, nil
	}}
	ctx := context.Background()
	q := netproxy.Question{Host: "a.test", Port: 443}
	// Without a thread (no run), nothing is kept.
	if a, _ := m.answer(ctx, q); a != netproxy.AllowThread || asked != 1 {
		t.Fatalf("%v %d", a, asked)
	}
	if threadHostsNamespace[0] != "deepagents" || threadHostsNamespace[1] != "server" {
		t.Errorf("the namespace %v is not under the server's reserved one", threadHostsNamespace)
	}
	headless := &hostMemory{store: st, always: map[string]bool{}, log: discard()}
	if a, err := headless.answer(ctx, q); a != netproxy.Deny || err != netproxy.ErrUnlisted {
		t.Errorf("headless: %v %v", a, err)
	}
}
