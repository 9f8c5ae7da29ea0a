package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// callResult is the result of tool call id as its last update in updates
// (take's lines) gives it: its text, whether it failed, and whether it
// ended at all.
func callResult(t *testing.T, updates, id string) (text string, failed, ended bool) {
	t.Helper()
	for line := range strings.SplitSeq(updates, "\n") {
		var u struct {
			SessionUpdate string `json:"sessionUpdate"`
			ToolCallID    string `json:"toolCallId"`
			Status        string `json:"status"`
			RawOutput     struct {
				Content string `json:"content"`
			} `json:"rawOutput"`
		}
		if json.Unmarshal([]byte(line), &u) != nil || u.SessionUpdate != "tool_call_update" || u.ToolCallID != id {
			continue
		}
		if u.Status == "completed" || u.Status == "failed" {
			text, failed, ended = u.RawOutput.Content, u.Status == "failed", true
		}
	}
	return text, failed, ended
}

// TestACPClientFS drives deepagents acp with a client that offers its file
// system (fs/read_text_file, fs/write_text_file) and keeps a buffer that
// differs from the disk, as an editor with unsaved changes: a read sees
// the buffer; an edit and a new file go through the client after their
// approvals, and the client saves them; paths that escape the folder never
// reach the client and fail as on disk; a client's error fails the call
// and the run goes on; a client that never answers is cancelled cleanly;
// a rewind point after the client's write records it; and a client that
// offers no file system reads and writes the disk, with the same errors.
func TestACPClientFS(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	// The folder as the agent names it to the client: its real path.
	dir, err := filepath.EvalSymlinks(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir() // beside the workspace
	for p, c := range map[string]string{filepath.Join(out, "secret.txt"): "TOPSECRET-42\n", filepath.Join(dir, "a.txt"): "on disk\n"} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"link.txt": filepath.Join(out, "secret.txt"), "linkdir": out} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	a := filepath.Join(dir, "a.txt")
	c := &acpClient{answer: "allow", buffers: map[string]string{a: "in the buffer\n"}}
	conn := startACPWith(t, w, c, sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}})
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: w.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt := func(conn *sdk.ClientSideConnection, id sdk.SessionId, script string) sdk.PromptResponse {
		t.Helper()
		res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(script)}})
		if err != nil {
			t.Fatalf("prompt: %v", err)
		}
		return res
	}
	checkLog := func(c *acpClient, want ...string) {
		t.Helper()
		if got := c.logged(); !slices.Equal(got, want) {
			t.Errorf("the client was asked\n  %q\nwant\n  %q", got, want)
		}
	}

	// A read sees the buffer, not the disk.
	prompt(conn, sess.SessionId, `{"turns":[{"tool_calls":[{"id":"r1","name":"read_file","args":{"file_path":"/a.txt"}}]},{"content":"Read."}]}`)
	if text, failed, _ := callResult(t, c.take(), "r1"); failed || !strings.Contains(text, "in the buffer") || strings.Contains(text, "on disk") {
		t.Errorf("read_file saw %q (failed %v), want the buffer", text, failed)
	}
	checkLog(c, "read "+a)

	// An edit of the buffer and a new file go through the client, each
	// after its approval; the client saves them.
	prompt(conn, sess.SessionId, `{"turns":[
		{"tool_calls":[{"id":"e1","name":"edit_file","args":{"file_path":"/a.txt","old_string":"in the buffer","new_string":"edited"}}]},
		{"tool_calls":[{"id":"w1","name":"write_file","args":{"file_path":"/sub/new.txt","content":"new\n"}}]},
		{"content":"Done."}]}`)
	got := c.take()
	for _, id := range []string{"e1", "w1"} {
		if text, failed, _ := callResult(t, got, id); failed {
			t.Errorf("%s failed: %s", id, text)
		}
	}
	checkLog(c, "permission e1", "read "+a, "write "+a+" edited\n", "permission w1", "write "+filepath.Join(dir, "sub", "new.txt")+" new\n")
	for p, want := range map[string]string{"a.txt": "edited\n", "sub/new.txt": "new\n"} {
		if data, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(data) != want {
			t.Errorf("%s on disk: %q %v, want %q", p, data, err, want)
		}
	}

	// Paths that escape the folder never reach the client.
	escapes := strings.ReplaceAll(`{"turns":[{"tool_calls":[
		{"id":"x1","name":"read_file","args":{"file_path":"/../a.txt"}},
		{"id":"x2","name":"read_file","args":{"file_path":"/link.txt"}},
		{"id":"x3","name":"read_file","args":{"file_path":"/linkdir/secret.txt"}},
		{"id":"x4","name":"read_file","args":{"file_path":"OUT/secret.txt"}},
		{"id":"x5","name":"write_file","args":{"file_path":"/linkdir/evil.txt","content":"evil\n"}},
		{"id":"x6","name":"edit_file","args":{"file_path":"/link.txt","old_string":"TOP","new_string":"evil"}},
		{"id":"x7","name":"write_file","args":{"file_path":"/link.txt","content":"evil\n"}}]},
		{"content":"Tried."}]}`, "OUT", out)
	calls := []string{"x1", "x2", "x3", "x4", "x5", "x6", "x7"}
	prompt(conn, sess.SessionId, escapes)
	got = c.take()
	withFS := map[string]string{}
	for _, id := range calls {
		text, failed, ended := callResult(t, got, id)
		if !ended || !failed || strings.Contains(text, "TOPSECRET") {
			t.Errorf("%s: %q (ended %v, failed %v), want a failure", id, text, ended, failed)
		}
		withFS[id] = text
	}
	checkLog(c, "permission x5", "permission x6", "permission x7") // and no file system call
	if data, _ := os.ReadFile(filepath.Join(out, "secret.txt")); string(data) != "TOPSECRET-42\n" {
		t.Errorf("the file out of the folder was changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(out, "evil.txt")); err == nil {
		t.Error("a file was written out of the folder")
	}

	// A client's error fails the call; the run goes on.
	c.mu.Lock()
	c.fsErr = errors.New("the buffer is locked")
	c.mu.Unlock()
	if res := prompt(conn, sess.SessionId, `{"turns":[{"tool_calls":[{"id":"r2","name":"read_file","args":{"file_path":"/a.txt"}}]},{"content":"Went on."}]}`); res.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason %q after a client's error", res.StopReason)
	}
	got = c.take()
	if text, failed, _ := callResult(t, got, "r2"); !failed || !strings.Contains(text, "the buffer is locked") || !strings.Contains(text, "fs/read_text_file") {
		t.Errorf("read_file with a failing client: %q (failed %v)", text, failed)
	}
	if !strings.Contains(got, `"text":"Went on."`) {
		t.Errorf("the run did not go on:\n%s", got)
	}
	checkLog(c, "read "+a)
	c.mu.Lock()
	c.fsErr = nil
	c.mu.Unlock()

	// A client that never answers: the prompt is cancelled, cleanly, and
	// the thread goes on.
	hung, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	c.mu.Lock()
	c.hung, c.release = hung, release
	c.mu.Unlock()
	cancelPrompt(t, conn, sess.SessionId, `{"turns":[{"tool_calls":[{"id":"r3","name":"read_file","args":{"file_path":"/a.txt"}}]},{"content":"never"}]}`,
		"a file system call", closed(hung), nil)
	c.mu.Lock()
	c.hung, c.release = nil, nil
	c.mu.Unlock()
	if res := prompt(conn, sess.SessionId, `{"turns":[{"content":"Back."}]}`); res.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason %q after a cancel", res.StopReason)
	}
	c.take()
	c.logged()

	// The points recorded the client's writes: rewinding to the second
	// prompt puts a.txt back and removes the new file.
	if code, stdout, stderr := w.run("rewind", string(sess.SessionId), "--db", w.db, "--to", "2", "--files"); code != 0 {
		t.Fatalf("rewind: exit %d: %s%s", code, stdout, stderr)
	}
	if data, err := os.ReadFile(a); err != nil || string(data) != "on disk\n" {
		t.Errorf("a.txt after the rewind: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "new.txt")); err == nil {
		t.Error("the rewind left sub/new.txt")
	}

	// A client that offers no file system: the disk, as before, and the
	// same errors for the paths that escape.
	c2 := &acpClient{answer: "allow"}
	conn2 := startACP(t, w, c2)
	sess2, err := conn2.NewSession(ctx, sdk.NewSessionRequest{Cwd: w.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(conn2, sess2.SessionId, `{"turns":[
		{"tool_calls":[{"id":"r1","name":"read_file","args":{"file_path":"/a.txt"}}]},
		{"tool_calls":[{"id":"w1","name":"write_file","args":{"file_path":"/plain.txt","content":"plain\n"}}]},
		{"content":"Done."}]}`)
	if text, failed, _ := callResult(t, c2.take(), "r1"); failed || !strings.Contains(text, "on disk") {
		t.Errorf("read_file without the client's file system saw %q (failed %v), want the disk", text, failed)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "plain.txt")); err != nil || string(data) != "plain\n" {
		t.Errorf("plain.txt: %q %v", data, err)
	}
	checkLog(c2, "permission w1")
	prompt(conn2, sess2.SessionId, escapes)
	got = c2.take()
	for _, id := range calls {
		if text, _, _ := callResult(t, got, id); text != withFS[id] {
			t.Errorf("%s on disk: %q; through the client: %q", id, text, withFS[id])
		}
	}
}
