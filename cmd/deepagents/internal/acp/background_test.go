package acp

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
)

// fakeBackground is a Background whose news the test gives (fire), and
// which counts the watches not stopped.
type fakeBackground struct {
	mu      sync.Mutex
	watches map[int]func(TaskApproval)
	next    int
	// during, when set, runs inside Watch (a session closing meanwhile).
	during func()
	// waiting is what Waiting returns.
	waiting []TaskApproval
}

func (f *fakeBackground) background() *Background {
	return &Background{
		Watch: func(fn func(TaskApproval)) func() {
			f.mu.Lock()
			if f.watches == nil {
				f.watches = map[int]func(TaskApproval){}
			}
			k := f.next
			f.next++
			f.watches[k] = fn
			f.mu.Unlock()
			if f.during != nil {
				f.during()
			}
			return func() {
				f.mu.Lock()
				delete(f.watches, k)
				f.mu.Unlock()
			}
		},
		Waiting: func(context.Context) ([]TaskApproval, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.waiting, nil
		},
		Answer: func(context.Context, string, []agent.Decision) error { return nil },
	}
}

func (f *fakeBackground) active() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watches)
}

func (f *fakeBackground) fire(a TaskApproval) {
	f.mu.Lock()
	fs := make([]func(TaskApproval), 0, len(f.watches))
	for _, fn := range f.watches {
		fs = append(fs, fn)
	}
	f.mu.Unlock()
	for _, fn := range fs {
		fn(a)
	}
}

// A session closed before its watch starts, or while it starts (a second
// session/load of its id replacing it during the first's replay), leaves
// no watch behind.
func TestWatchBackgroundClosedSession(t *testing.T) {
	for _, tc := range []struct {
		name         string
		before, with bool
	}{
		{name: "closed before", before: true},
		{name: "closed while the watch starts", with: true},
		{name: "open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeBackground{}
			ss := &session{id: "s", ws: &Workspace{Background: f.background()}, always: map[string]bool{}}
			s := &server{ctx: t.Context()}
			if tc.with {
				f.during = ss.close
			}
			if tc.before {
				ss.close()
			}
			s.watchBackground(ss, false)
			want := 0
			if !tc.before && !tc.with {
				want = 1
			}
			if got := f.active(); got != want {
				t.Fatalf("%d watches after watchBackground, want %d", got, want)
			}
			ss.close()
			if got := f.active(); got != 0 {
				t.Fatalf("%d watches after close, want 0", got)
			}
		})
	}
}

// bgClient is an ACP client that records the updates and hands the
// permission requests to the test, answering none (until cancelled).
type bgClient struct {
	sdk.Client // the methods the tests do not call
	mu         sync.Mutex
	updates    []string
	changed    chan struct{} // receives after each update
	asked      chan sdk.RequestPermissionRequest
	// giveUp is how many requests, the first, the client cancels at once.
	giveUp int
}

func (c *bgClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	b, _ := json.Marshal(n)
	c.mu.Lock()
	c.updates = append(c.updates, string(b))
	c.mu.Unlock()
	c.changed <- struct{}{}
	return nil
}

func (c *bgClient) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.asked <- p
	c.mu.Lock()
	giveUp := c.giveUp > 0
	c.giveUp--
	c.mu.Unlock()
	if !giveUp {
		<-ctx.Done()
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
}

// waitUpdate waits for an update holding want and returns it.
func (c *bgClient) waitUpdate(t *testing.T, want string) string {
	t.Helper()
	for {
		c.mu.Lock()
		for _, u := range c.updates {
			if strings.Contains(u, want) {
				c.mu.Unlock()
				return u
			}
		}
		c.mu.Unlock()
		select {
		case <-c.changed:
		case <-t.Context().Done():
			t.Fatalf("no update holding %s", want)
		}
	}
}

// connectBackground serves a server of sessions whose agents have
// background f to a bgClient over pipes.
func connectBackground(t *testing.T, f *fakeBackground) (*server, *sdk.ClientSideConnection, *bgClient) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := Config{
		Open: func(context.Context, string, string, *ClientFS) (*Workspace, error) {
			return &Workspace{Dir: t.TempDir(), Background: f.background(), Stream: func(context.Context, agent.Input) iter.Seq2[agent.Event, error] {
				return func(yield func(agent.Event, error) bool) {
					yield(agent.Event{Type: agent.EventRunEnd, Status: agent.StatusCompleted}, nil)
				}
			}}, nil
		},
		Load:        func(context.Context, string) (*checkpoint.Snapshot, error) { return nil, checkpoint.ErrNotFound },
		NewThreadID: func() string { return "t1" },
	}
	toAgent, fromClient := io.Pipe()
	toClient, fromAgent := io.Pipe()
	t.Cleanup(func() { fromClient.Close(); fromAgent.Close() })
	s := &server{cfg: cfg, ctx: ctx, sessions: map[sdk.SessionId]*session{}, connected: make(chan struct{})}
	s.conn = sdk.NewAgentSideConnection(s, fromAgent, toAgent)
	close(s.connected)
	c := &bgClient{changed: make(chan struct{}, 1000), asked: make(chan sdk.RequestPermissionRequest, 10)}
	conn := sdk.NewClientSideConnection(c, fromClient, toClient)
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	return s, conn, c
}

var waitingTask = TaskApproval{TaskID: "T", Subagent: "writer", Task: "write", Waiting: true,
	Requests: []agent.ActionRequest{{ToolCallID: "c1", Tool: "execute", Args: json.RawMessage(`{"command":"ls"}`)}}}

// A request withdrawn because its task waits no more (denied for want of
// an answer, say) says so, not that the task still waits.
func TestBackgroundWithdrawnNoLongerWaits(t *testing.T) {
	f := &fakeBackground{}
	_, conn, c := connectBackground(t, f)
	if _, err := conn.NewSession(t.Context(), sdk.NewSessionRequest{Cwd: "/", McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	f.fire(waitingTask)
	<-c.asked
	f.fire(TaskApproval{TaskID: "T", Subagent: "writer", Waiting: false})
	u := c.waitUpdate(t, `"status":"failed","toolCallId":"bg-T-c1"`)
	if !strings.Contains(u, "no longer waits") || strings.Contains(u, "still waits") {
		t.Errorf("the withdrawn call's update: %s", u)
	}
}

// A session that closed is told nothing of its withdrawn requests: a
// session loaded in its place asks about them again, under the same call
// ids, and must not see them failed.
func TestBackgroundWithdrawnClosedSaysNothing(t *testing.T) {
	f := &fakeBackground{}
	s, conn, c := connectBackground(t, f)
	sess, err := conn.NewSession(t.Context(), sdk.NewSessionRequest{Cwd: "/", McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := s.session(sess.SessionId)
	if err != nil {
		t.Fatal(err)
	}
	bc := backgroundCall(ss.ws, waitingTask, waitingTask.Requests[0])
	ss.close()
	s.withdrawn(ss, waitingTask, []*call{bc})
	// Notifications arrive in order: once the marker is there, anything
	// withdrawn sent would be too.
	if err := s.update(t.Context(), ss.id, sdk.UpdateAgentMessageText("marker")); err != nil {
		t.Fatal(err)
	}
	c.waitUpdate(t, "marker")
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, u := range c.updates {
		if strings.Contains(u, "bg-T-c1") {
			t.Errorf("a closed session was sent %s", u)
		}
	}
}

// A hostile model's arguments and task, however long, make titles of a
// bounded length.
func TestTitlesClipped(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	args, _ := json.Marshal(map[string]string{"command": huge})
	ws := &Workspace{Dir: t.TempDir()}
	if c := newCall(ws, "id", "execute", args); len(c.title) > maxTitle+40 {
		t.Errorf("a call's title is %d bytes", len(c.title))
	}
	a := TaskApproval{TaskID: "T", Subagent: "writer", Task: huge, Waiting: true}
	c := backgroundCall(ws, a, agent.ActionRequest{ToolCallID: "c1", Tool: "execute", Args: args})
	if len(c.title) > maxTitle+40 {
		t.Errorf("a background call's title is %d bytes", len(c.title))
	}
	if b, _ := json.Marshal(c.about); len(b) > 2*maxTitle {
		t.Errorf("a background call's content is %d bytes", len(b))
	}
	if !strings.HasPrefix(c.title, "writer (background task T): execute: xxx") {
		t.Errorf("title %.80q", c.title)
	}
}

// A request the client gave up (session/cancel cancels every pending
// one) while its task still waits is asked again at the next prompt.
func TestBackgroundGivenUpAskedAgain(t *testing.T) {
	f := &fakeBackground{waiting: []TaskApproval{waitingTask}}
	_, conn, c := connectBackground(t, f)
	c.giveUp = 1
	sess, err := conn.NewSession(t.Context(), sdk.NewSessionRequest{Cwd: "/", McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	f.fire(waitingTask)
	<-c.asked
	if u := c.waitUpdate(t, `"status":"failed","toolCallId":"bg-T-c1"`); !strings.Contains(u, "still waits") {
		t.Fatalf("the given up call's update: %s", u)
	}
	res, err := conn.Prompt(t.Context(), sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("go on")}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if p := <-c.asked; p.ToolCall.ToolCallId != "bg-T-c1" {
		t.Errorf("asked again about %s", p.ToolCall.ToolCallId)
	}
}
