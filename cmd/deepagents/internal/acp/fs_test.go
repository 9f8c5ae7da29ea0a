package acp

import (
	"context"
	"errors"
	"io"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
)

// fsClient is a client whose file system answers with text, fails with
// fail, or hangs until its context ends.
type fsClient struct {
	mu     sync.Mutex
	text   string
	fail   error
	hang   bool
	writes []sdk.WriteTextFileRequest
}

func (c *fsClient) answer(ctx context.Context) error {
	c.mu.Lock()
	fail, hang := c.fail, c.hang
	c.mu.Unlock()
	if hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return fail
}

func (c *fsClient) ReadTextFile(ctx context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	if err := c.answer(ctx); err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	return sdk.ReadTextFileResponse{Content: c.text + " of " + p.Path + " in " + string(p.SessionId)}, nil
}

func (c *fsClient) WriteTextFile(ctx context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	if err := c.answer(ctx); err != nil {
		return sdk.WriteTextFileResponse{}, err
	}
	c.mu.Lock()
	c.writes = append(c.writes, p)
	c.mu.Unlock()
	return sdk.WriteTextFileResponse{}, nil
}

func (c *fsClient) SessionUpdate(context.Context, sdk.SessionNotification) error { return nil }
func (c *fsClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{}, errors.New("not asked")
}
func (c *fsClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errors.New("no")
}
func (c *fsClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errors.New("no")
}
func (c *fsClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errors.New("no")
}
func (c *fsClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errors.New("no")
}
func (c *fsClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errors.New("no")
}

// serveFS serves ACP in process to client, which initializes with caps
// and opens a session; it returns the ClientFS Open was given.
func serveFS(t *testing.T, client sdk.Client, caps sdk.FileSystemCapabilities, timeout time.Duration) *ClientFS {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	opened := make(chan *ClientFS, 1)
	cfg := Config{
		Open: func(_ context.Context, dir, thread string, fs *ClientFS) (*Workspace, error) {
			opened <- fs
			return &Workspace{Dir: dir, Stream: func(context.Context, agent.Input) iter.Seq2[agent.Event, error] {
				return func(func(agent.Event, error) bool) {}
			}}, nil
		},
		Load:        func(context.Context, string) (*checkpoint.Snapshot, error) { return nil, checkpoint.ErrNotFound },
		NewThreadID: func() string { return "t1" },
		FSTimeout:   timeout,
	}
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, cfg, agentIn, agentOut) }()
	t.Cleanup(func() {
		cancel()
		clientOut.Close()
		agentOut.Close()
		<-served
	})
	conn := sdk.NewClientSideConnection(client, clientOut, clientIn)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: sdk.ClientCapabilities{Fs: caps}}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "/w", McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	return <-opened
}

// TestClientFSCapabilities: a session's agent gets the client's file
// system as initialize offered it, each capability on its own.
func TestClientFSCapabilities(t *testing.T) {
	for _, caps := range []sdk.FileSystemCapabilities{{}, {ReadTextFile: true}, {WriteTextFile: true}, {ReadTextFile: true, WriteTextFile: true}} {
		c := &fsClient{text: "buffer"}
		fs := serveFS(t, c, caps, 0)
		if !caps.ReadTextFile && !caps.WriteTextFile {
			if fs != nil {
				t.Errorf("%+v: a file system", caps)
			}
			continue
		}
		if fs == nil || fs.CanRead() != caps.ReadTextFile || fs.CanWrite() != caps.WriteTextFile {
			t.Fatalf("%+v: file system %+v", caps, fs)
		}
		ctx := context.Background()
		text, err := fs.ReadTextFile(ctx, "/w/a.txt")
		if caps.ReadTextFile != (err == nil) || caps.ReadTextFile && text != "buffer of /w/a.txt in t1" {
			t.Errorf("%+v: read %q %v", caps, text, err)
		}
		if !caps.ReadTextFile && !errors.Is(err, ErrNotOffered) {
			t.Errorf("%+v: a read not offered: %v", caps, err)
		}
		err = fs.WriteTextFile(ctx, "/w/b.txt", "new")
		if caps.WriteTextFile != (err == nil) || !caps.WriteTextFile && !errors.Is(err, ErrNotOffered) {
			t.Errorf("%+v: write: %v", caps, err)
		}
		if caps.WriteTextFile && (len(c.writes) != 1 || c.writes[0].Path != "/w/b.txt" || c.writes[0].Content != "new" || c.writes[0].SessionId != "t1") {
			t.Errorf("%+v: the client got %+v", caps, c.writes)
		}
	}
}

// TestClientFSErrors: a client's error, its silence and the caller's
// context ending are errors that say which, never a wait past the time
// allowed.
func TestClientFSErrors(t *testing.T) {
	both := sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name   string
		client *fsClient
		ctx    context.Context
		is     error
		says   string
	}{
		{name: "the client fails", client: &fsClient{fail: errors.New("no such buffer")}, ctx: context.Background(), says: "the editor failed fs/read_text_file"},
		{name: "the client never answers", client: &fsClient{hang: true}, ctx: context.Background(), is: context.DeadlineExceeded, says: "the editor did not answer fs/read_text_file within 100ms"},
		{name: "the run ends", client: &fsClient{hang: true}, ctx: cancelled, is: context.Canceled, says: "fs/read_text_file: context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := serveFS(t, tc.client, both, 100*time.Millisecond)
			start := time.Now()
			_, err := fs.ReadTextFile(tc.ctx, "/w/a.txt")
			if err == nil || !strings.Contains(err.Error(), tc.says) || tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("read: %v, want %q (%v)", err, tc.says, tc.is)
			}
			werr := fs.WriteTextFile(tc.ctx, "/w/a.txt", "x")
			if werr == nil || !strings.Contains(werr.Error(), strings.ReplaceAll(tc.says, "read", "write")) {
				t.Errorf("write: %v", werr)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the calls took %v", d)
			}
			if tc.name == "the client fails" && !strings.Contains(err.Error(), "no such buffer") {
				t.Errorf("read: %v, want the client's message", err)
			}
		})
	}
}

// TestClientFSHugeAnswer: an answer longer than the SDK reads fails its
// call, and the connection goes on.
func TestClientFSHugeAnswer(t *testing.T) {
	c := &fsClient{text: strings.Repeat("x", 11<<20)}
	fs := serveFS(t, c, sdk.FileSystemCapabilities{ReadTextFile: true}, 0)
	ctx := context.Background()
	if _, err := fs.ReadTextFile(ctx, "/w/a.txt"); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("a huge answer: %v", err)
	}
	c.mu.Lock()
	c.text = "small"
	c.mu.Unlock()
	if text, err := fs.ReadTextFile(ctx, "/w/a.txt"); err != nil || !strings.HasPrefix(text, "small") {
		t.Errorf("after a huge answer: %q %v", text, err)
	}
}
