package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// writerScript is the writer's inline script (its task's description):
// a write_file of /note.txt, which asks, then its answer, what then.
func writerScript(then string) string {
	return `{"turns":[{"tool_calls":[{"id":"wf","name":"write_file","args":{"file_path":"/note.txt","content":"hello from the writer\n"}}]},` + then + `]}`
}

// startWriter is a main agent's inline turn starting writer on script.
func startWriter(script string) string {
	args, _ := json.Marshal(map[string]string{"description": script, "subagent_type": "writer"})
	return `{"tool_calls":[{"id":"s","name":"start_async_task","args":` + string(args) + `}]}`
}

// promptACP sends an inline script as a prompt of session id and checks that
// it ends its turn.
func promptACP(t *testing.T, conn *sdk.ClientSideConnection, c *acpClient, id sdk.SessionId, script string) {
	t.Helper()
	res, err := conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(script)}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v\n%s", res, err, c.take())
	}
}

// bgRequest waits for the client to be asked about a background task's
// call and returns the request, decoded, and the task's id.
func bgRequest(t *testing.T, c *acpClient) (sdk.RequestPermissionRequest, string) {
	t.Helper()
	var req sdk.RequestPermissionRequest
	find := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, a := range c.asked {
			if strings.Contains(a, `"background_task"`) {
				return json.Unmarshal([]byte(a), &req) == nil
			}
		}
		return false
	}
	waitUntil(t, "a background task's permission request", find)
	meta, _ := req.ToolCall.Meta["deepagents"].(map[string]any)
	task, _ := meta["background_task"].(string)
	if task == "" || meta["subagent"] != "writer" {
		t.Fatalf("the request's _meta: %v", req.ToolCall.Meta)
	}
	return req, task
}

// checkBgRequest checks that the request names the subagent, its task and
// the call, and offers the main approvals' options.
func checkBgRequest(t *testing.T, w *world, req sdk.RequestPermissionRequest, task string) {
	t.Helper()
	if title := *req.ToolCall.Title; !strings.HasPrefix(title, "writer (background task "+task+"): write_file /note.txt — ") {
		t.Errorf("title %q", title)
	}
	data, _ := json.Marshal(req)
	for _, want := range []string{
		`"text":"Background task ` + task + `: subagent writer asks to run write_file.`,
		`"newText":"hello from the writer\n","path":"` + filepath.Join(w.dir, "note.txt") + `","type":"diff"`,
		`"optionId":"allow"`, `"optionId":"allow_always"`, `"optionId":"reject"`,
		`"toolCallId":"bg-` + task + `-wf"`,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the request lacks %s:\n%s", want, data)
		}
	}
}

// waitScript is the main agent's prompt that waits for task and expects
// its result to hold want.
func waitScript(task, want string) string {
	return `{"turns":[{"tool_calls":[{"id":"w2","name":"wait_async_task","args":{"task_id":"` + task + `"}}]},
		{"content":"collected","expect":{"last_message_contains":["\"status\":\"success\"","` + want + `"]}}]}`
}

// A background task that parks while a prompt runs is asked about at
// once, the prompt going on: the main agent's command waits for the
// subagent's write, which the client's allow lets happen, and the next
// prompt collects the task's result.
func TestACPBackgroundApprovalDuringPrompt(t *testing.T) {
	w := parkWorld(t, "")
	c := &acpClient{answer: "allow"}
	conn := startACPWith(t, w, c, sdk.ClientCapabilities{}, "--shell", "--sandbox", "none")
	ctx := context.Background()
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: w.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(w.dir, "note.txt")
	promptACP(t, conn, c, sess.SessionId, `{"turns":[`+startWriter(writerScript(`{"content":"note written"}`))+`,
		{"tool_calls":[{"id":"x1","name":"execute","args":{"command":"while [ ! -e `+note+` ]; do sleep 0.05; done"}}]},
		{"content":"the note is there"}]}`)
	req, task := bgRequest(t, c)
	checkBgRequest(t, w, req, task)
	if b, err := os.ReadFile(note); err != nil || string(b) != "hello from the writer\n" {
		t.Fatalf("note.txt: %q, %v", b, err)
	}
	waitUntil(t, "the background call to end", func() bool { return c.saw(`"status":"completed","toolCallId":"bg-` + task + `-wf"`) })
	promptACP(t, conn, c, sess.SessionId, waitScript(task, "note written"))
	if !c.saw(`"text":"collected"`) {
		t.Errorf("the collecting prompt's answer is missing:\n%s", c.take())
	}
}

// A background task that parks while no prompt runs is asked about all
// the same; the client's reject reaches the subagent's next model request
// (its script's expectation fails its run otherwise), and the write does
// not happen.
func TestACPBackgroundApprovalRejectedIdle(t *testing.T) {
	w := parkWorld(t, "")
	c := &acpClient{answer: "reject"}
	conn := startACP(t, w, c)
	ctx := context.Background()
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: w.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	promptACP(t, conn, c, sess.SessionId, `{"turns":[`+startWriter(writerScript(`{"content":"I did not write it","expect":{"last_message_contains":["rejected in the editor"]}}`))+`,
		{"content":"started"}]}`)
	req, task := bgRequest(t, c)
	checkBgRequest(t, w, req, task)
	waitUntil(t, "the background call to fail", func() bool { return c.saw(`"status":"failed","toolCallId":"bg-` + task + `-wf"`) })
	promptACP(t, conn, c, sess.SessionId, waitScript(task, "I did not write it"))
	if _, err := os.Stat(filepath.Join(w.dir, "note.txt")); err == nil {
		t.Error("note.txt was written though rejected")
	}
}

// A task parked when its process ended (the editor's request unanswered)
// is asked about again when a later process loads the session; allowed,
// its subagent resumes there, writes, and the thread collects its result.
func TestACPBackgroundApprovalAfterLoad(t *testing.T) {
	w := parkWorld(t, "")
	waiting, release := make(chan struct{}), make(chan struct{})
	c1 := &acpClient{waiting: waiting, cancel: release}
	conn1, stop1 := startACPProc(t, w, c1, sdk.ClientCapabilities{})
	ctx := context.Background()
	sess, err := conn1.NewSession(ctx, sdk.NewSessionRequest{Cwd: w.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	promptACP(t, conn1, c1, sess.SessionId, `{"turns":[`+startWriter(writerScript(`{"content":"note written"}`))+`,{"content":"started"}]}`)
	<-waiting // the editor got the request, and does not answer it
	_, task := bgRequest(t, c1)
	stop1()
	close(release)

	c2 := &acpClient{answer: "allow"}
	conn2 := startACP(t, w, c2)
	if _, err := conn2.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sess.SessionId, Cwd: w.dir, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	req, task2 := bgRequest(t, c2)
	if task2 != task {
		t.Fatalf("the loaded session asked about task %s, want %s", task2, task)
	}
	checkBgRequest(t, w, req, task)
	waitUntil(t, "the background call to end", func() bool { return c2.saw(`"status":"completed","toolCallId":"bg-` + task + `-wf"`) })
	promptACP(t, conn2, c2, sess.SessionId, waitScript(task, "note written"))
	if b, err := os.ReadFile(filepath.Join(w.dir, "note.txt")); err != nil || string(b) != "hello from the writer\n" {
		t.Errorf("note.txt: %q, %v", b, err)
	}
}

// TestACPBackgroundOfficialClient: the official ACP client
// (testdata/acp/drive_background.mjs) is asked about a background task's
// write while no prompt runs; allowed, the write happens and the next
// prompt collects the task's result.
func TestACPBackgroundOfficialClient(t *testing.T) {
	if _, err := os.Stat("testdata/acp/node_modules/@agentclientprotocol/sdk"); err != nil {
		t.Skip("needs the official ACP client: cd cmd/deepagents/internal/cli/testdata/acp && npm ci")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("needs node")
	}
	w := parkWorld(t, "")
	cmd := exec.Command(node, "testdata/acp/drive_background.mjs", binary(t), w.db, w.dir)
	cmd.Env = w.env()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("drive_background.mjs: %v\n%s", err, out)
	}
}
