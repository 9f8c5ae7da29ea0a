package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/deepagents-go/deepagents/middleware/steer"
	"github.com/deepagents-go/deepagents/sqlite"
	"github.com/deepagents-go/deepagents/store"
)

// acpClient is an editor as the tests play it: it records the session
// updates as JSON and answers permission requests with answer.
type acpClient struct {
	mu      sync.Mutex
	updates []string
	asked   []string
	answer  string
	// waiting, when set, is closed when a permission request comes in,
	// which then waits for the client's cancel (cancel) and answers
	// cancelled.
	waiting, cancel chan struct{}

	// log records the permission requests ("permission CALL") and the
	// file system calls ("read PATH", "write PATH CONTENT") in order.
	log []string
	// buffers, when set, make the client answer file system calls as an
	// editor: a read gives the buffer of the path when it has one, the
	// file on disk otherwise; a write is saved to disk (the buffer is then
	// the disk's). Without it they fail, as the client offers none.
	buffers map[string]string
	// fsErr, when set, is every file system call's answer.
	fsErr error
	// hung, when set, is closed when a file system call comes in, which
	// then waits for its context to end (or release to close).
	hung, release chan struct{}
}

func (c *acpClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	data, err := json.Marshal(n.Update)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.updates = append(c.updates, string(data))
	c.mu.Unlock()
	return nil
}

func (c *acpClient) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	data, _ := json.Marshal(p)
	c.mu.Lock()
	c.asked = append(c.asked, string(data))
	c.log = append(c.log, "permission "+string(p.ToolCall.ToolCallId))
	answer, waiting, cancel := c.answer, c.waiting, c.cancel
	c.mu.Unlock()
	if waiting != nil {
		close(waiting)
		<-cancel
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(answer))}, nil
}

// take returns the updates recorded since the last take, joined by lines.
func (c *acpClient) take() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.Join(c.updates, "\n")
	c.updates = nil
	return s
}

// saw reports whether an update recorded holds s.
func (c *acpClient) saw(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Contains(strings.Join(c.updates, "\n"), s)
}

// fsCall logs a file system call and says how to answer it: with fsErr,
// after hanging, or as an editor.
func (c *acpClient) fsCall(ctx context.Context, entry string) (map[string]string, error) {
	c.mu.Lock()
	c.log = append(c.log, entry)
	buffers, fsErr, hung, release := c.buffers, c.fsErr, c.hung, c.release
	c.mu.Unlock()
	if hung != nil {
		close(hung)
		select {
		case <-ctx.Done():
		case <-release:
		}
		return nil, errors.New("gave up")
	}
	if buffers == nil {
		return nil, errors.New("not offered")
	}
	return buffers, fsErr
}

func (c *acpClient) ReadTextFile(ctx context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	buffers, err := c.fsCall(ctx, "read "+p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	c.mu.Lock()
	text, ok := buffers[p.Path]
	c.mu.Unlock()
	if !ok {
		data, err := os.ReadFile(p.Path)
		if err != nil {
			return sdk.ReadTextFileResponse{}, err
		}
		text = string(data)
	}
	return sdk.ReadTextFileResponse{Content: text}, nil
}

func (c *acpClient) WriteTextFile(ctx context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	buffers, err := c.fsCall(ctx, "write "+p.Path+" "+p.Content)
	if err != nil {
		return sdk.WriteTextFileResponse{}, err
	}
	c.mu.Lock()
	delete(buffers, p.Path)
	c.mu.Unlock()
	return sdk.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
}

// logged returns the log since the last call, and empties it.
func (c *acpClient) logged() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.log
	c.log = nil
	return l
}
func (c *acpClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errors.New("not offered")
}
func (c *acpClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errors.New("not offered")
}
func (c *acpClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errors.New("not offered")
}
func (c *acpClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errors.New("not offered")
}
func (c *acpClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errors.New("not offered")
}

// startACP starts deepagents acp and connects c to it, a client that
// offers no capabilities.
// cancelPrompt sends a prompt of script on session id, waits until
// reached says it got where the test wants it (what names it), cancels
// the session, calls then (when set: an editor answering its request),
// and checks that the prompt ends cancelled.
func cancelPrompt(t *testing.T, conn *sdk.ClientSideConnection, id sdk.SessionId, script, what string, reached func() bool, then func()) {
	t.Helper()
	ctx := context.Background()
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(script)}})
		if err != nil {
			t.Errorf("the prompt to cancel: %v", err)
		}
		done <- res
	}()
	for deadline := time.Now().Add(10 * time.Second); !reached(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the prompt to cancel never reached %s", what)
		}
	}
	if err := conn.Cancel(ctx, sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if then != nil {
		then()
	}
	select {
	case res := <-done:
		if res.StopReason != sdk.StopReasonCancelled {
			t.Errorf("stop reason %q, want cancelled", res.StopReason)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the prompt cancelled at %s did not end", what)
	}
}

// closed reports whether ch is closed, without waiting.
func closed(ch <-chan struct{}) func() bool {
	return func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
}

func startACP(t *testing.T, w *world, c *acpClient) *sdk.ClientSideConnection {
	t.Helper()
	return startACPWith(t, w, c, sdk.ClientCapabilities{})
}

// startACPWith starts deepagents acp and connects c to it, a client that
// offers caps.
func startACPWith(t *testing.T, w *world, c *acpClient, caps sdk.ClientCapabilities, flags ...string) *sdk.ClientSideConnection {
	t.Helper()
	conn, _ := startACPProc(t, w, c, caps, flags...)
	return conn
}

// startACPProc is startACPWith, and the function that ends the process
// (as an editor closing: its input closes) and waits for it to exit.
func startACPProc(t *testing.T, w *world, c *acpClient, caps sdk.ClientCapabilities, flags ...string) (*sdk.ClientSideConnection, func()) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"acp", "--db", w.db, "--model", "replay:inline"}, flags...)...)
	cmd.Env = w.env()
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			stdin.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("deepagents acp: %v", err)
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill() //nolint:errcheck // it hangs
				t.Error("deepagents acp did not end when its input closed")
			}
		})
	}
	t.Cleanup(stop)
	conn := sdk.NewClientSideConnection(c, stdin, stdout)
	init, err := conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps})
	if err != nil {
		t.Fatal(err)
	}
	if !init.AgentCapabilities.LoadSession || !init.AgentCapabilities.PromptCapabilities.EmbeddedContext {
		t.Fatalf("capabilities: %+v", init.AgentCapabilities)
	}
	return conn, stop
}

// TestACP drives deepagents acp with the ACP Go SDK's client side: a
// session, a prompt whose write asks permission (allowed), one whose edit
// is rejected, a cancelled prompt, and the session loaded by another
// process.
func TestACP(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	c := &acpClient{answer: "allow_always"}
	conn := startACP(t, w, c)
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: w.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}

	script := `{"turns":[
		{"tool_calls":[{"id":"t1","name":"write_todos","args":{"todos":[{"content":"Write hello","status":"in_progress"}]}}]},
		{"tool_calls":[{"id":"w1","name":"write_file","args":{"file_path":"/hello.txt","content":"hello\n"}}]},
		{"tool_calls":[{"id":"w2","name":"write_file","args":{"file_path":"/again.txt","content":"again\n"}}]},
		{"content":"Wrote hello.txt."}]}`
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(script)}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if data, err := os.ReadFile(filepath.Join(w.dir, "hello.txt")); err != nil || string(data) != "hello\n" {
		t.Fatalf("hello.txt: %q %v", data, err)
	}
	got := c.take()
	for _, want := range []string{
		`{"entries":[{"content":"Write hello","priority":"medium","status":"in_progress"}],"sessionUpdate":"plan"}`,
		`"sessionUpdate":"tool_call"`, `"title":"write_file /hello.txt"`, `"kind":"edit"`,
		`{"newText":"hello\n","path":"` + filepath.Join(w.dir, "hello.txt") + `","type":"diff"}`,
		`"status":"in_progress","toolCallId":"w1"`,
		`"status":"completed","toolCallId":"w1"`,
		`{"content":{"text":"Wrote hello.txt.","type":"text"},"sessionUpdate":"agent_message_chunk"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("updates lack %s:\n%s", want, got)
		}
	}
	// Allowed always: the second write was not asked about.
	if _, err := os.Stat(filepath.Join(w.dir, "again.txt")); err != nil {
		t.Error(err)
	}
	if len(c.asked) != 1 || !strings.Contains(c.asked[0], `"optionId":"allow_always"`) || !strings.Contains(c.asked[0], `"toolCallId":"w1"`) {
		t.Fatalf("permission requests: %v", c.asked)
	}

	// A rejected edit fails its call; the run goes on. (Edits were not
	// allowed always, writes were.)
	c.answer = "reject"
	script = `{"turns":[
		{"tool_calls":[{"id":"e1","name":"edit_file","args":{"file_path":"/hello.txt","old_string":"hello","new_string":"bye"}}]},
		{"content":"Left it."}]}`
	res, err = conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(script)}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	got = c.take()
	for _, want := range []string{`"newText":"bye\n","oldText":"hello\n"`, `"status":"pending","title":"edit_file /hello.txt","toolCallId":"e1"`, `"status":"failed","toolCallId":"e1"`, `"text":"Left it."`} {
		if !strings.Contains(got, want) {
			t.Errorf("updates lack %s:\n%s", want, got)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(w.dir, "hello.txt")); string(data) != "hello\n" {
		t.Errorf("a rejected edit changed hello.txt: %q", data)
	}

	// session/cancel stops a slow model.
	cancelPrompt(t, conn, sess.SessionId, `{"turns":[{"content":"Thinking","delay_ms":30000}]}`, "the slow prompt's text", func() bool { return c.saw("Thinking") }, nil)
	// A cancel while a permission request waits ends the prompt; the
	// pending call is dropped by the next prompt.
	waiting, cancel := make(chan struct{}), make(chan struct{})
	c.mu.Lock()
	c.waiting, c.cancel = waiting, cancel
	c.mu.Unlock()
	cancelPrompt(t, conn, sess.SessionId, `{"turns":[{"tool_calls":[{"id":"e2","name":"edit_file","args":{"file_path":"/hello.txt","old_string":"hello","new_string":"bye"}}]},{"content":"never"}]}`,
		"a permission request", closed(waiting),
		func() { close(cancel) }) // as an editor answers the request once the prompt is cancelled
	c.mu.Lock()
	c.waiting, c.cancel = nil, nil
	c.mu.Unlock()
	if data, _ := os.ReadFile(filepath.Join(w.dir, "hello.txt")); string(data) != "hello\n" {
		t.Errorf("a cancelled edit changed hello.txt: %q", data)
	}

	// The thread goes on after a cancel.
	res, err = conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(`{"turns":[{"content":"Back."}]}`)}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn || !c.saw(`"text":"Back."`) {
		t.Fatalf("prompt after a cancel: %+v %v", res, err)
	}

	// Another process loads the session: its conversation is replayed.
	c2 := &acpClient{}
	conn2 := startACP(t, w, c2)
	if _, err := conn2.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sess.SessionId, Cwd: w.dir, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	got = c2.take()
	for _, want := range []string{`"sessionUpdate":"user_message_chunk"`, `"title":"write_file /hello.txt"`, `"status":"completed","toolCallId":"w1"`, `"status":"failed","toolCallId":"e1"`, `"text":"Wrote hello.txt."`, `"sessionUpdate":"plan"`, `"text":"Back."`} {
		if !strings.Contains(got, want) {
			t.Errorf("replay lacks %s:\n%s", want, got)
		}
	}
	if _, err := conn2.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: "nope", Cwd: w.dir, McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("loading a missing thread succeeded")
	}
}

// TestACPOfficialClient drives deepagents acp with the official ACP
// client, @agentclientprotocol/sdk from npm (testdata/acp/drive.mjs):
// initialize offering the client's file system, a new session, a prompt
// whose read sees the client's buffer and whose write asks permission
// (allowed) and goes through the client, a cancelled prompt, and the
// session loaded by another process. It needs `cd testdata/acp && npm ci` (which .ci/run does).
func TestACPOfficialClient(t *testing.T) {
	if _, err := os.Stat("testdata/acp/node_modules/@agentclientprotocol/sdk"); err != nil {
		t.Skip("needs the official ACP client: cd cmd/deepagents/internal/cli/testdata/acp && npm ci")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("needs node")
	}
	w := newWorld(t)
	cmd := exec.Command(node, "testdata/acp/drive.mjs", binary(t), w.db, w.dir)
	cmd.Env = w.env()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("drive.mjs: %v\n%s", err, out)
	}
}

// ACP's session/new refuses a cwd that is relative (it would be taken
// against the agent process's own folder) or a system folder.
func TestACPRefusesCwd(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	conn := startACP(t, w, &acpClient{answer: "allow_always"})
	for _, cwd := range []string{"project", ".", "/", "/etc", "/usr/local/bin"} {
		if _, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}}); err == nil {
			t.Errorf("session/new with cwd %q was accepted", cwd)
		}
	}
	if _, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: w.dir, McpServers: []sdk.McpServer{}}); err != nil {
		t.Errorf("a project's folder: %v", err)
	}
}

// The CLI refuses a system folder as the workspace, with a usage error
// that names the flag which accepts it.
func TestSystemFolderRefused(t *testing.T) {
	c := newInproc(t)
	s := writeScript(t, `{"turns":[{"content":"done"}]}`)
	for _, dir := range []string{"/usr/local/bin", "/usr/bin", "/etc", "/"} {
		code, _, stderr := c.run("run", "--model", "replay:"+s, "--dir", dir, "--shell", "go")
		if code != ExitUsage || !strings.Contains(stderr, "--allow-system-dir") {
			t.Errorf("--dir %s: exit %d, %q", dir, code, stderr)
		}
	}
	// Accepted with the flag (rewind off: its first point would read the
	// folder's every file).
	mustWrite(t, filepath.Join(c.home, ".deepagents", "config.yaml"), "rewind: false\n")
	if code, _, stderr := c.run("run", "--model", "replay:"+s, "--dir", "/usr/local/bin", "--allow-system-dir", "go"); code != 0 {
		t.Errorf("--allow-system-dir: exit %d, %q", code, stderr)
	}
}

// A prompt sent while another runs steers it: the run's very next model
// request has it (the script's expectation fails the run otherwise), and
// the second prompt answers once the first ends, with its stop reason.
func TestACPSteer(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	c := &acpClient{answer: "allow_always"}
	conn := startACPWith(t, w, c, sdk.ClientCapabilities{}, "--shell", "--sandbox", "none")
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: w.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(t.TempDir(), "go")
	script := `{"turns":[
		{"tool_calls":[{"id":"x1","name":"execute","args":{"command":"while [ ! -e ` + gate + ` ]; do sleep 0.05; done"}}]},
		{"expect":{"messages_contain":["while you were working","STEERMARK try the cache"]},"content":"Trying the cache."}]}`
	type answer struct {
		res sdk.PromptResponse
		err error
	}
	first := make(chan answer, 1)
	go func() {
		res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(script)}})
		first <- answer{res, err}
	}()
	waitUntil(t, "the command to run", func() bool { return c.saw(`"status":"in_progress","toolCallId":"x1"`) })
	second := make(chan answer, 1)
	go func() {
		res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("STEERMARK try the cache")}})
		second <- answer{res, err}
	}()
	// The message is saved once the store has it: then the command ends.
	waitUntil(t, "the message to be saved", func() bool { return steered(t, w, string(sess.SessionId), "STEERMARK") })
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []chan answer{first, second} {
		a := <-ch
		if a.err != nil || a.res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt: %+v %v\n%s", a.res, a.err, c.take())
		}
	}
	if !c.saw(`"text":"Trying the cache."`) {
		t.Errorf("the steered answer is missing:\n%s", c.take())
	}
}

// steered reports whether the database holds a message for thread sent
// to its running task whose text contains s.
func steered(t *testing.T, w *world, thread, s string) bool {
	t.Helper()
	db, err := sqlite.Open(t.Context(), w.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	items, err := db.Store().Search(t.Context(), steer.Namespace(thread), store.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if text, _ := it.Value["text"].(string); strings.Contains(text, s) {
			return true
		}
	}
	return false
}
