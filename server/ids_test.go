package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// TestUnusableIDs: an ID that cannot survive a trip through a URL path
// (".." is resolved away by clients: runs.wait("..") posted to /runs/wait
// and ran threadless), an escaped "/" and an ID over 256 bytes (a 500
// from the database) are refused with 400 and a message, at a thread's
// creation and wherever a path names a thread, run or assistant. IDs that
// are not UUIDs but are usable still work.
func TestUnusableIDs(t *testing.T) {
	f := newFixture(t, servertest.Options{}, servertest.ReplayTurns("hi")...)
	long := strings.Repeat("x", 257)
	for _, id := range []string{"..", ".", "a%2Fb", "a/b", "a?b", "a#b", "a\\b", long, "a\x01b"} {
		code, body, _ := f.Do(http.MethodPost, "/threads", map[string]any{"thread_id": id})
		if code != http.StatusBadRequest || !strings.Contains(string(body), "Invalid thread ID") {
			t.Errorf("create %q: %d %s, want 400", id, code, body)
		}
	}
	if code, body, _ := f.Do(http.MethodPost, "/assistants", map[string]any{"assistant_id": "..", "graph_id": "deepagent"}); code != http.StatusBadRequest {
		t.Errorf("create assistant \"..\": %d %s, want 400", code, body)
	}
	for _, p := range []string{
		"/threads/a%2Fb", "/threads/" + long, "/threads/" + long + "/state", "/threads/a%2Fb/runs/wait",
		"/threads/t1/runs/" + long, "/threads/t1/runs/a%2Fb/join", "/assistants/" + long,
	} {
		code, body, _ := f.Do(http.MethodGet, p, nil)
		if code != http.StatusBadRequest || !strings.Contains(string(body), "Invalid ") {
			t.Errorf("GET %s: %d %s, want 400", p[:min(len(p), 60)], code, body)
		}
	}
	// Usable IDs, UUIDs or not, are served.
	for _, id := range []string{"t1", "my thread", strings.Repeat("y", 256), "a.b"} {
		f.JSON(http.MethodPost, "/threads", map[string]any{"thread_id": id}, http.StatusOK, nil)
	}
	f.JSON(http.MethodGet, "/threads/my%20thread", nil, http.StatusOK, nil)
	f.JSON(http.MethodGet, "/threads/"+strings.Repeat("y", 256)+"/state", nil, http.StatusOK, nil)
	f.JSON(http.MethodPost, "/threads/search", map[string]any{}, http.StatusOK, nil)
	f.JSON(http.MethodPost, "/assistants/search", map[string]any{}, http.StatusOK, nil)
	f.JSON(http.MethodGet, "/assistants/deepagent", nil, http.StatusOK, nil)
	f.JSON(http.MethodPost, "/threads/t1/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}}, http.StatusOK, nil)
	if code, body, _ := f.Do(http.MethodGet, "/threads/t1/runs/nope", nil); code != http.StatusNotFound {
		t.Errorf("unknown run: %d %s, want 404", code, body)
	}
}
