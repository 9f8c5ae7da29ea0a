package hooks_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/hooks"
)

// An http hook POSTs the event as JSON, with the headers its settings
// give (only the variables they allow expanded), and a 2xx answer is read
// as a command's output; another status, a redirect or the timeout is a
// warning, never a block.
func TestHTTPHook(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies []map[string]any
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got, bodies = append(got, r), append(bodies, body)
		mu.Unlock()
		switch r.URL.Path {
		case "/deny":
			io.WriteString(w, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"policy says no"}}`)
		case "/context":
			io.WriteString(w, "the tests live in /tests")
		case "/down":
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
		case "/moved":
			http.Redirect(w, r, "/deny", http.StatusFound)
		case "/slow":
			<-release
		}
	}))
	defer srv.Close()
	defer close(release)
	env := map[string]string{"TOKEN": "t0k", "SECRET": "s3cret"}
	run := func(e hooks.Event, path string, timeout time.Duration) hooks.Result {
		t.Helper()
		h := hooks.Hook{Event: e, URL: srv.URL + path, Timeout: timeout, Dialect: hooks.DialectClaude,
			Headers: map[string]string{"Authorization": "Bearer $TOKEN", "X-Leak": "${SECRET}"}, AllowedEnvVars: []string{"TOKEN"}}
		r, err := hooks.New(hooks.Config{Hooks: []hooks.Hook{h}, Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		return r.Run(context.Background(), hooks.Input{HookEventName: e, ToolName: "execute", ToolInput: json.RawMessage(`{"command":"ls"}`)})
	}
	if res := run(hooks.PreToolUse, "/deny", 0); res.Decision != hooks.DecisionDeny || res.Reason != "policy says no" {
		t.Errorf("deny: %+v", res)
	}
	mu.Lock()
	if r := got[0]; r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "Bearer t0k" || r.Header.Get("X-Leak") != "" {
		t.Errorf("the request: %s %v", r.Method, r.Header)
	}
	if b := bodies[0]; b["hook_event_name"] != "PreToolUse" || b["tool_name"] != "Bash" {
		t.Errorf("the body: %v", b)
	}
	mu.Unlock()
	if res := run(hooks.UserPromptSubmit, "/context", 0); len(res.Context) != 1 || res.Context[0] != "the tests live in /tests" {
		t.Errorf("plain text: %+v", res)
	}
	for _, path := range []string{"/down", "/moved"} {
		res := run(hooks.PreToolUse, path, 0)
		if res.Decision != "" || len(res.Notes) != 1 || !res.Notes[0].Warning {
			t.Errorf("%s: %+v", path, res)
		}
	}
	if res := run(hooks.PreToolUse, "/slow", 50*time.Millisecond); res.Decision != "" || len(res.Notes) != 1 || !strings.Contains(res.Notes[0].Text, "did not finish") {
		t.Errorf("slow: %+v", res)
	}
	if _, err := hooks.New(hooks.Config{Hooks: []hooks.Hook{{Event: hooks.Stop, URL: "file:///etc/passwd"}}}); err == nil {
		t.Error("a file URL was accepted")
	}
}
