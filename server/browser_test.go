//go:build linux

package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server"
)

// chromiumPath is the browser the browser tests drive ($CHROMIUM, or
// /usr/bin/chromium).
func chromiumPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is missing in CI: %v", err)
		}
		t.Skipf("needs Chromium (%s: %v); apt-get install chromium, or set CHROMIUM", p, err)
	}
	return p
}

// countCalls counts a model's calls.
type countCalls struct {
	llm.Model
	n atomic.Int32
}

func (m *countCalls) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	m.n.Add(1)
	return m.Model.Stream(ctx, req)
}

// pageScript tries what a hostile page would against the server at
// target ("" for its own origin), then reports what it got to its own
// origin's /report. RUN is a run whose script writes a file in the
// agent's folder.
const pageScript = `
const target = %q, page = %q, run = %q;
const results = {};
async function attempt(name, url, init) {
  try {
    const r = await fetch(url, init);
    let body = "";
    try { body = await r.text(); } catch (e) { body = "unreadable: " + e; }
    results[name] = { status: r.status, type: r.type, body: body.slice(0, 4000) };
  } catch (e) {
    results[name] = { error: String(e) };
  }
}
(async () => {
  await attempt("text/plain POST /runs/wait (no-cors)", target + "/runs/wait", { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body: run });
  await attempt("text/plain POST /runs/wait", target + "/runs/wait", { method: "POST", headers: { "Content-Type": "text/plain" }, body: run });
  await attempt("form POST /threads/t1/runs/wait (no-cors)", target + "/threads/t1/runs/wait", { method: "POST", mode: "no-cors", body: new URLSearchParams({ a: run }) });
  await attempt("JSON POST /threads/t1/runs/wait", target + "/threads/t1/runs/wait", { method: "POST", headers: { "Content-Type": "application/json", "X-Api-Key": "" }, body: run });
  await attempt("JSON POST /threads/search", target + "/threads/search", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
  await attempt("text/plain POST /threads/search", target + "/threads/search", { method: "POST", headers: { "Content-Type": "text/plain" }, body: "{}" });
  await attempt("GET /threads/t1", target + "/threads/t1");
  await attempt("GET /threads/t1/state", target + "/threads/t1/state");
  await fetch("/report?page=" + page, { method: "POST", body: JSON.stringify(results) });
})();
`

// result is what a page got for one request.
type result struct {
	Status int    `json:"status"`
	Type   string `json:"type"`
	Body   string `json:"body"`
	Error  string `json:"error"`
}

// pages serves the test's web pages and collects their reports.
type pages struct {
	mu      sync.Mutex
	scripts map[string]string // by page name
	reports chan report
}

type report struct {
	page    string
	results map[string]result
}

func (p *pages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/report":
		var res map[string]result
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &res)
		p.reports <- report{page: r.URL.Query().Get("page"), results: res}
	case strings.HasSuffix(r.URL.Path, ".html"):
		p.mu.Lock()
		js, ok := p.scripts[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), ".html")]
		p.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>page</title><script>%s</script>", js)
	default:
		http.NotFound(w, r)
	}
}

// postJSON posts a JSON body, which must be answered 200.
func postJSON(t *testing.T, url, body string) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", url, res.StatusCode, b)
	}
}

// listenOn serves h on a free port of ip, until the test ends.
func listenOn(t *testing.T, ip string, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// visit opens url in headless Chromium (evil.test resolving to
// 127.0.0.1) and waits for the page's report.
func visit(t *testing.T, chromium, url string, reports <-chan report) report {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-features=HttpsUpgrades",
		"--user-data-dir="+t.TempDir(), "--host-resolver-rules=MAP evil.test 127.0.0.1", url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its renderers end with it
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}()
	select {
	case rep := <-reports:
		return rep
	case <-exited:
		t.Fatalf("chromium exited before %s reported: %s", url, out.String())
	case <-ctx.Done():
		t.Fatalf("no report from %s: %s", url, out.String())
	}
	return report{}
}

// TestBrowserPagesOfOtherOrigins drives headless Chromium to pages of
// other origins that try to drive the server with fetch(): a page of
// http://evil.test:PORT (another origin, a non-loopback name), a page of
// another loopback address (127.0.0.2), and a DNS-rebinding page served
// by the server's own listener under the name evil.test, so that its
// requests are same-origin. Each tries a simple text/plain POST to
// /runs/wait whose run writes a file, a form POST, a preflighted JSON
// run, POST /threads/search and GETs of a thread. Nothing runs (no file,
// no model call, no new thread) and no page reads the thread's messages.
// Then a page of the Deep Agents UI's origin (http://localhost:PORT)
// does read the threads and start a run, as the UI must. Before, the
// server answered Access-Control-Allow-Origin: * to everyone: the
// text/plain POST ran, and every page read the threads.
func TestBrowserPagesOfOtherOrigins(t *testing.T) {
	chromium := chromiumPath(t)
	ws := t.TempDir()
	fs, err := backend.NewFilesystemBackend(ws, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	saver := checkpoint.NewMemorySaver()
	model := &countCalls{Model: replay.Inline{}}
	a, err := deepagents.New(deepagents.Config{Model: model, Checkpointer: saver, Backend: fs})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Config{Assistants: []server.Assistant{{GraphID: "deepagent", Agent: a}}, Saver: saver})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srvPort := listenOn(t, "127.0.0.1", s)
	target := "http://127.0.0.1:" + srvPort
	postJSON(t, target+"/threads", `{"thread_id":"t1"}`)
	postJSON(t, target+"/threads/t1/state", `{"values":{"messages":[{"type":"human","content":"my secret plans"}]}}`)

	writes := func(file string) string {
		script := fmt.Sprintf(`{"turns":[{"tool_calls":[{"name":"write_file","args":{"file_path":"/%s","content":"x"}}]},{"content":"done"}]}`, file)
		b, _ := json.Marshal(map[string]any{"assistant_id": "deepagent", "input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": script}}}, "on_completion": "keep"})
		return string(b)
	}
	pg := &pages{scripts: map[string]string{}, reports: make(chan report, 1)}
	pg.scripts["attack"] = fmt.Sprintf(pageScript, target, "attack", writes("from-web"))
	pg.scripts["rebind"] = fmt.Sprintf(pageScript, "", "rebind", writes("from-web"))
	pg.scripts["ui"] = fmt.Sprintf(pageScript, target, "ui", writes("from-ui"))
	pagesPort := listenOn(t, "127.0.0.1", pg)
	otherPort := listenOn(t, "127.0.0.2", pg)
	// The rebinding page: the attacker's name first served the page, then
	// resolved to the server, so the page and the server share an origin.
	rebindPort := listenOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/rebind.html" || r.URL.Path == "/report" {
			pg.ServeHTTP(w, r)
			return
		}
		s.ServeHTTP(w, r)
	}))

	for _, url := range []string{
		"http://evil.test:" + pagesPort + "/attack.html",
		"http://127.0.0.2:" + otherPort + "/attack.html",
		"http://evil.test:" + rebindPort + "/rebind.html",
	} {
		t.Run(url, func(t *testing.T) {
			rep := visit(t, chromium, url, pg.reports)
			if len(rep.results) != 8 {
				t.Fatalf("the page reported %v", rep.results)
			}
			for name, r := range rep.results {
				t.Logf("%s: %d %s %.120s", name, r.Status, r.Error, r.Body)
				if strings.Contains(r.Body, "secret") {
					t.Errorf("%s: the page read the thread: %.200s", name, r.Body)
				}
				if r.Status >= 200 && r.Status < 300 {
					t.Errorf("%s: %d %.200s: the request was served", name, r.Status, r.Body)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(ws, "from-web")); err == nil {
		t.Error("a page's run wrote from-web")
	}
	if n := model.n.Load(); n != 0 {
		t.Errorf("the model was called %d times by the pages", n)
	}
	if ths, _ := saver.Threads(context.Background(), checkpoint.ListOptions{}); len(ths) != 1 {
		t.Errorf("%d threads after the pages, want only t1", len(ths))
	}

	t.Run("the UI's origin", func(t *testing.T) {
		rep := visit(t, chromium, "http://localhost:"+pagesPort+"/ui.html", pg.reports)
		for name, r := range rep.results {
			t.Logf("%s: %d %s %.120s", name, r.Status, r.Error, r.Body)
		}
		for _, name := range []string{"JSON POST /threads/search", "GET /threads/t1", "GET /threads/t1/state"} {
			if r := rep.results[name]; r.Status != http.StatusOK || !strings.Contains(r.Body, "secret plans") {
				t.Errorf("%s from the UI's origin: %+v", name, r)
			}
		}
		if r := rep.results["JSON POST /threads/t1/runs/wait"]; r.Status != http.StatusOK || !strings.Contains(r.Body, "done") {
			t.Errorf("a run from the UI's origin: %+v", r)
		}
		for _, name := range []string{"text/plain POST /runs/wait", "text/plain POST /threads/search"} {
			if r := rep.results[name]; r.Status != http.StatusUnsupportedMediaType {
				t.Errorf("%s from the UI's origin: %+v, want 415", name, r)
			}
		}
		if _, err := os.Stat(filepath.Join(ws, "from-ui")); err != nil {
			t.Errorf("the UI's run wrote no file: %v", err)
		}
	})
}
