package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestServeAssistantsGetOnlyWhatTheyName: an assistant of serve's file
// gets the subagents, memory and files it names, nothing of the
// operator's ~/.deepagents: not a remote subagent (whose headers carry the
// operator's key), not a local subagent file, not the operator's
// AGENTS.md, not the /user/ folder. Before, every assistant had them all,
// and a client could start tasks on the remote with the operator's key.
func TestServeAssistantsGetOnlyWhatTheyName(t *testing.T) {
	w := newWorld(t)
	var mu sync.Mutex
	var seen []string
	remote := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(rw, "no", http.StatusNotFound)
	}))
	defer remote.Close()
	user := filepath.Join(w.home, ".deepagents")
	os.MkdirAll(filepath.Join(user, "agents"), 0o755)
	os.WriteFile(filepath.Join(user, "agents", "remote.md"), []byte("---\nname: remote\ndescription: The operator's remote agent\nurl: "+remote.URL+"\ngraph_id: agent\nheaders:\n  Authorization: Bearer $REMOTE_KEY\n---\n"), 0o644)
	os.WriteFile(filepath.Join(user, "agents", "helper.md"), []byte("---\nname: helper\ndescription: The operator's helper\n---\nYou help the operator.\n"), 0o644)
	os.WriteFile(filepath.Join(user, "AGENTS.md"), []byte("OPERATOR MEMORY\n"), 0o644)
	file := filepath.Join(t.TempDir(), "assistants.yaml")
	os.WriteFile(file, []byte("assistants:\n  - graph_id: writer\n    model: replay:inline\n    subagents:\n      - {name: critic, description: Reviews drafts}\n"), 0o644)
	p := w.startListeningWith([]string{"REMOTE_KEY=operator-secret"}, "server stopped", "serve", "--db", w.db, "--addr", "127.0.0.1:0", "--assistants", file)
	script := `{"turns":[
		{"tool_calls":[
			{"id":"a","name":"start_async_task","args":{"subagent_type":"remote","description":"use the operator's key"}},
			{"id":"b","name":"task","args":{"subagent_type":"helper","description":"help"}},
			{"id":"c","name":"read_file","args":{"file_path":"/user/AGENTS.md"}}]},
		{"content":"done"}]}`
	body, _ := json.Marshal(map[string]any{"assistant_id": "writer", "input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": script}}}})
	code, out, _ := request(t, "POST", p.url+"/runs/wait", string(body), "Content-Type", "application/json")
	if code != http.StatusOK {
		t.Fatalf("run: %d %s", code, out)
	}
	var res struct {
		Messages []struct {
			Type       string `json:"type"`
			ToolCallID string `json:"tool_call_id"`
			Content    any    `json:"content"`
		} `json:"messages"`
		Error any `json:"__error__"`
	}
	json.Unmarshal([]byte(out), &res)
	if res.Error != nil {
		t.Errorf("the run failed: %v", res.Error)
	}
	results := map[string]string{}
	for _, m := range res.Messages {
		if m.Type == "tool" {
			results[m.ToolCallID] = strings.ToLower(fmtAny(m.Content))
		}
	}
	if r := results["a"]; !strings.Contains(r, "start_async_task") {
		t.Errorf("start_async_task: %q, want an unknown tool", r)
	}
	if r := results["b"]; !strings.Contains(r, "helper") || !strings.Contains(r, "critic") || strings.Contains(r, "you help") {
		t.Errorf("task helper: %q, want it refused with the named subagents offered", r)
	}
	if r := results["c"]; strings.Contains(r, "operator memory") || !strings.Contains(r, "not found") {
		t.Errorf("read_file /user/AGENTS.md: %q", r)
	}
	if strings.Contains(out, "OPERATOR MEMORY") {
		t.Errorf("the operator's AGENTS.md reached the thread: %.300s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) > 0 {
		t.Errorf("the operator's remote subagent was called: %v", seen)
	}
}

func fmtAny(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
