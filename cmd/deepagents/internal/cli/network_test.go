package cli

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
)

// needsNetTools skips a test without the sandbox, curl or nc, except in
// CI, which installs them (.ci/run).
func needsNetTools(t *testing.T) {
	t.Helper()
	for _, prog := range []string{"bwrap", "curl", "nc"} {
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing in CI", prog)
			}
			t.Skipf("needs %s", prog)
		}
	}
}

// standIn is a site on the loopback that names the host it was asked
// for, and a user configuration that resolves each of names to it
// (sandbox.resolve: there is no DNS here).
func standIn(t *testing.T, home string, names ...string) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	t.Cleanup(site.Close)
	var b strings.Builder
	b.WriteString("sandbox:\n  resolve:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "    %s:80: %s\n", n, site.Listener.Addr())
	}
	mustWrite(t, filepath.Join(home, ".deepagents", "config.yaml"), b.String())
	return site
}

// networkNotices are the proxy's decisions a jsonl run printed.
func networkNotices(t *testing.T, stdout string) []string {
	t.Helper()
	var out []string
	for _, e := range events(t, stdout) {
		if e.Type == deepagents.EventNotice && e.Name == display.NetworkNotice {
			out = append(out, e.Content)
		}
	}
	return out
}

// TestNetworkByName runs commands through the CLI with --allow-domain: an
// allowed name is reached, another is refused with the proxy's reason and
// how to allow it, a deny rule wins over a wildcard, and each decision is
// a notice of the run.
func TestNetworkByName(t *testing.T) {
	needsNetTools(t)
	c := newInproc(t)
	standIn(t, c.home, "allowed.test", "other.test", "a.example.test", "bad.example.test")
	script := writeScript(t, `{"turns":[{"tool_calls":[{"id":"x","name":"execute","args":{"command":"curl -sS http://allowed.test/; echo; curl -sS http://a.example.test/; echo; curl -sS -i http://other.test/ | head -1; curl -sS -i http://bad.example.test/ | head -1"}}]},{"content":"ok"}]}`)
	code, stdout, stderr := c.run("run", "--model", "replay:"+script, "--dir", t.TempDir(), "--shell", "--auto-approve", "--output", "jsonl",
		"--allow-domain", "allowed.test", "--allow-domain", "*.example.test", "--deny-domain", "bad.example.test", "go")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	r := toolResults(t, stdout)["x"].Content
	for _, want := range []string{
		"hello from allowed.test",
		"hello from a.example.test",
		"403 Forbidden: other.test is not an allowed host (allow it with --allow-domain other.test",
		`403 Forbidden: bad.example.test is denied by the rule "bad.example.test"`,
	} {
		if !strings.Contains(r, want) {
			t.Errorf("the command's output lacks %q:\n%s", want, r)
		}
	}
	// The text output ends with what went through the proxy.
	_, _, textErr := c.run("run", "--model", "replay:"+script, "--dir", t.TempDir(), "--shell", "--auto-approve",
		"--allow-domain", "allowed.test", "--allow-domain", "*.example.test", "--deny-domain", "bad.example.test", "go")
	if !strings.Contains(textErr, "deepagents: network (through the proxy):") || !strings.Contains(textErr, "allowed.test:80") || !strings.Contains(textErr, "note: network: refused other.test:80") {
		t.Errorf("the text output's summary:\n%s", textErr)
	}
	notices := strings.Join(networkNotices(t, stdout), "\n")
	for _, want := range []string{"network: allowed allowed.test:80 (allowed by allowed.test)", "network: refused other.test:80", "network: refused bad.example.test:80"} {
		if !strings.Contains(notices, want) {
			t.Errorf("the notices lack %q:\n%s", want, notices)
		}
	}
}

// Without --network and without an allowed host, commands have no
// network: no proxy to reach, no variables naming one, and the host's
// loopback unreachable. --network=host is the host's network, as
// --network was before the proxy.
func TestNetworkOffAndHost(t *testing.T) {
	needsNetTools(t)
	c := newInproc(t)
	site := standIn(t, c.home, "allowed.test")
	_, port, _ := net.SplitHostPort(site.Listener.Addr().String())
	cmd := "echo proxy=[$HTTP_PROXY]; curl -sS --max-time 5 --proxy http://127.0.0.1:3128 http://allowed.test/; curl -sS --max-time 5 http://127.0.0.1:" + port + "/"
	script := writeScript(t, `{"turns":[{"tool_calls":[{"id":"x","name":"execute","args":{"command":"`+cmd+`"}}]},{"content":"ok"}]}`)
	for _, c2 := range []struct {
		flags   []string
		reached bool
	}{
		{nil, false},
		{[]string{"--network=off", "--allow-domain", "allowed.test"}, false},
		{[]string{"--network=host"}, true},
	} {
		args := append([]string{"run", "--model", "replay:" + script, "--dir", t.TempDir(), "--shell", "--auto-approve", "--output", "jsonl"}, c2.flags...)
		code, stdout, stderr := c.run(append(args, "go")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s\n%s", c2.flags, code, stderr, stdout)
		}
		r := toolResults(t, stdout)["x"].Content
		if !strings.Contains(r, "proxy=[]") || strings.Count(r, "hello from") != map[bool]int{true: 1, false: 0}[c2.reached] {
			t.Errorf("%v: %s", c2.flags, r)
		}
	}
}

// TestNetworkAsksInTerminal: in the interactive session a host no rule
// names asks, once per command; "for this thread" holds for the rest of
// the thread and when it is continued, "always" goes into the user's
// configuration, and a deny rule wins without a question.
func TestNetworkAsksInTerminal(t *testing.T) {
	needsNetTools(t)
	w := newWorld(t)
	standIn(t, w.home, "ask.test", "forever.test", "denied.test")
	curl := func(host string) string {
		return "curl -sS http://" + host + "/; echo; curl -sS http://" + host + "/; echo"
	}
	script := w.script(`{"turns":[
 {"tool_calls":[{"id":"a","name":"execute","args":{"command":"` + curl("ask.test") + `; curl -sS -i http://denied.test/ | head -1"}}]},
 {"content":"first done","expect":{"last_message_contains":["hello from ask.test\nhello from ask.test","denied.test is denied by the rule"]}},
 {"tool_calls":[{"id":"b","name":"execute","args":{"command":"` + curl("ask.test") + `; curl -sS http://forever.test/"}}]},
 {"content":"second done","expect":{"last_message_contains":["hello from ask.test","hello from forever.test"]}}]}`)
	args := []string{"--model", "replay:" + script, "--dir", w.dir, "--db", w.db, "--shell", "--network", "--deny-domain", "denied.test", "--permission-mode", "bypass"}
	s := startTmux(t, w, args...)
	s.waitFor("> ")
	s.typeLine("fetch it")
	s.waitFor("the command wants to reach ask.test")
	s.waitFor("[t] for this thread")
	s.keys("t")
	s.waitFor("first done")
	s.typeLine("and the other")
	s.waitFor("the command wants to reach forever.test")
	s.waitFor("[a] always")
	s.keys("a")
	s.waitFor("second done")
	scr := strings.Join(s.scrollback(), "\n")
	if n := strings.Count(scr, "✓ network: ask.test allowed for this thread"); n != 1 {
		t.Errorf("ask.test was asked %d times:\n%s", n, scr)
	}
	if strings.Contains(scr, "network: denied.test") || !strings.Contains(scr, "note: network: refused denied.test:80") || strings.Contains(scr, "network: allowed") {
		t.Errorf("a denied host was asked about, its refusal not shown, or allowed connections shown:\n%s", scr)
	}
	s.typeLine("/context")
	ctxShown := s.waitFor("network (through the proxy)")
	if !strings.Contains(ctxShown, "ask.test:80") || !strings.Contains(ctxShown, "forever.test:80") || !strings.Contains(ctxShown, "denied.test:80") {
		t.Errorf("/context's network:\n%s", ctxShown)
	}
	cfg, _ := os.ReadFile(filepath.Join(w.home, ".deepagents", "config.yaml"))
	if !strings.Contains(string(cfg), "allow_domains:") || !strings.Contains(string(cfg), "- forever.test") || !strings.Contains(string(cfg), "ask.test:80:") {
		t.Errorf("the configuration after \"always\":\n%s", cfg)
	}
	s.keys("C-d")
	s.waitFor(exitedMark)

	// The thread continued: ask.test is the thread's, forever.test the
	// user's; neither asks.
	again := w.script(`{"turns":[
 {"tool_calls":[{"id":"c","name":"execute","args":{"command":"` + curl("ask.test") + `; curl -sS http://forever.test/"}}]},
 {"content":"third done","expect":{"last_message_contains":["hello from ask.test","hello from forever.test"]}}]}`)
	s = startTmux(t, w, "--model", "replay:"+again, "--dir", w.dir, "--db", w.db, "--continue")
	s.waitFor("> ")
	s.typeLine("once more")
	s.waitFor("third done")
	if scr := strings.Join(s.scrollback(), "\n"); strings.Contains(scr, "✓ network:") {
		t.Errorf("the continued thread asked again:\n%s", scr)
	}
}
