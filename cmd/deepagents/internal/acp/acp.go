// Package acp serves a deep agent to editors over the Agent Client
// Protocol (https://agentclientprotocol.com), on the protocol's Go SDK
// (github.com/coder/acp-go-sdk): each ACP session is a thread of the
// CLI's database working in the session's folder, a prompt is a run, the
// run's events are the session's updates, and the approvals the run stops
// for are the client's permission requests.
//
// The package knows nothing of how an agent is opened: the CLI (deepagents
// acp) gives it Config.Open, which resolves a session as deepagents run
// does. When the client offers its file system, Open gets it (ClientFS),
// for the agent's file tools to read and write the session's text files
// through the editor; the paths are the CLI's to check.
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/tool"
)

// Workspace is an agent opened for one session.
type Workspace struct {
	// Dir is the folder the agent works in, absolute: the agent's paths
	// ("/src/main.go") are under it, and the client's are Dir's.
	Dir string
	// Stream runs (or resumes) a run of the agent, as deepagents.Agent.Stream.
	Stream func(ctx context.Context, in deepagents.Input) iter.Seq2[deepagents.Event, error]
	// Started, when set, is told of a thread's run as it starts, with the
	// prompt's text (so that deepagents --continue finds the thread).
	Started func(ctx context.Context, thread, prompt string)
	// Ended, when set, is told of each run's end (to record its usage).
	Ended func(ctx context.Context, end deepagents.Event, used *deepagents.UsageTree)
	// Steer, when set, sends a message to the run working on thread, for
	// its next model request (saved before it returns): a prompt sent
	// while another runs is given to it so. Unset, such a prompt is
	// refused.
	Steer func(ctx context.Context, thread, text string) error
	// Background, when set, gives the requests for approval of the
	// thread's background tasks: the client is asked about each (while a
	// prompt runs or not), and its answer resumes the task.
	Background *Background
	// Traits, when set, tells what the agent's tool of a name declares it
	// does (deepagents.Agent.ToolTraits), which decides the kind of tool the
	// editor shows; unset, a tool is known by its name alone.
	Traits func(name string) tool.Traits
	// Close closes the agent; nil for nothing to close.
	Close func()
}

// Config is what Serve needs from its command.
type Config struct {
	// Open opens the agent of a session working in dir (the session's
	// cwd), on thread: a new thread's id, or the id of the existing thread
	// session/load resumes (whose kept settings apply). fs is the client's
	// file system for the session, when its capabilities offer reading or
	// writing text files (nil otherwise): the agent's file tools may read
	// and write the session's text files through it, once they have
	// checked each path (ClientFS checks none).
	Open func(ctx context.Context, dir, thread string, fs *ClientFS) (*Workspace, error)
	// Load returns a thread's latest snapshot (checkpoint.ErrNotFound when
	// there is no such thread), for session/load to replay.
	Load func(ctx context.Context, thread string) (*checkpoint.Snapshot, error)
	// NewThreadID returns the id of a new thread (a new session's).
	NewThreadID func() string
	// FSTimeout is how long a call of the client's file system waits for
	// its answer; zero means DefaultFSTimeout.
	FSTimeout time.Duration
	// Version is the agent's version, as initialize reports it.
	Version string
	// Logger receives the connection's diagnostics (nil: discarded).
	Logger *slog.Logger
}

// Serve speaks ACP on in and out (the client's end of standard input and
// output) until the client disconnects or ctx ends, then closes the
// sessions' agents.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	if cfg.Open == nil || cfg.Load == nil || cfg.NewThreadID == nil {
		return errors.New("acp: Config needs Open, Load and NewThreadID")
	}
	s := &server{cfg: cfg, ctx: ctx, sessions: map[sdk.SessionId]*session{}, connected: make(chan struct{})}
	// The client's answers are bounded: one longer than the SDK takes
	// fails its request instead of the connection.
	s.conn = sdk.NewAgentSideConnection(s, out, newBoundedLines(in, maxLine))
	close(s.connected)
	if cfg.Logger != nil {
		s.conn.SetLogger(cfg.Logger)
	} else {
		s.conn.SetLogger(slog.New(slog.DiscardHandler))
	}
	defer s.closeAll()
	select {
	case <-s.conn.Done():
		return nil
	case <-ctx.Done():
		return nil
	}
}

// server is the ACP agent: the sessions of one connection.
type server struct {
	cfg  Config
	conn *sdk.AgentSideConnection // set once connected is closed
	// connected is closed once conn is set: the connection reads the
	// client's first requests, and calls the server's methods, before
	// NewAgentSideConnection returns.
	connected chan struct{}
	// ctx is Serve's: when it ends, so do the prompts (whose contexts are
	// the connection's), so that closing their agents does not wait.
	ctx context.Context

	mu       sync.Mutex
	sessions map[sdk.SessionId]*session
	client   sdk.ClientCapabilities
}

// connection is the connection to the client, once Serve has it.
func (s *server) connection() *sdk.AgentSideConnection {
	<-s.connected
	return s.conn
}

// session is one ACP session: a thread and the agent working on it.
type session struct {
	id sdk.SessionId
	ws *Workspace
	// running holds while a prompt runs: a session runs one at a time.
	running sync.Mutex
	// always are the tools the user allowed always in this session (its
	// background tasks' calls included), under alwaysMu.
	alwaysMu sync.Mutex
	always   map[string]bool
	// bg is what the session asks the client about its background
	// tasks (nil: nothing), under bgMu.
	// bgClosed says that the session closed: it asks about nothing
	// more (under bgMu).
	bgMu     sync.Mutex
	bg       *bgAsking
	bgClosed bool
	// started says whether the thread's first run has been reported.
	started bool
	// lastStop and lastErr are how the last prompt ended (under running).
	lastStop sdk.StopReason
	lastErr  error
	// working says that a prompt's run works and can take messages: a
	// prompt sent meanwhile steers it. Not once cancelled or ending.
	working atomic.Bool
	// stop ends the prompt running, if one is (session/cancel).
	stopMu sync.Mutex
	stop   context.CancelFunc
}

// setStop calls the stop of the prompt that ran and keeps stop, the one
// of the prompt that runs now (nil: none).
func (ss *session) setStop(stop context.CancelFunc) {
	ss.stopMu.Lock()
	defer ss.stopMu.Unlock()
	if stop == nil {
		ss.working.Store(false)
	}
	if ss.stop != nil && stop == nil {
		ss.stop()
	}
	ss.stop = stop
}

var (
	_ sdk.Agent       = (*server)(nil)
	_ sdk.AgentLoader = (*server)(nil)
)

// Initialize answers with what this agent offers: sessions that load,
// prompts with embedded resources.
func (s *server) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	s.mu.Lock()
	s.client = p.ClientCapabilities
	s.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true},
		},
		AgentInfo:   &sdk.Implementation{Name: "deepagents", Title: sdk.Ptr("Deep Agents"), Version: s.cfg.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate has nothing to do: the agent uses the providers' keys of its
// environment.
func (s *server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession opens the agent in the session's folder on a new thread,
// whose id is the session's.
func (s *server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	id := s.cfg.NewThreadID()
	ss, err := s.open(ctx, id, p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	s.watchBackground(ss, false)
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(id)}, nil
}

// LoadSession opens the agent on an existing thread and replays its
// conversation as session updates before answering.
func (s *server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	snap, err := s.cfg.Load(ctx, string(p.SessionId))
	if errors.Is(err, checkpoint.ErrNotFound) {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"sessionId": fmt.Sprintf("there is no thread %s", p.SessionId)})
	}
	if err != nil {
		return sdk.LoadSessionResponse{}, fmt.Errorf("loading thread %s: %w", p.SessionId, err)
	}
	ss, err := s.open(ctx, string(p.SessionId), p.Cwd)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	ss.started = true // the thread exists
	for _, u := range replay(snap, ss.ws) {
		if err := s.update(ctx, ss.id, u); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
	}
	// The background tasks parked before (by an earlier process) are
	// asked about now, each on a goroutine of its own.
	s.watchBackground(ss, true)
	return sdk.LoadSessionResponse{}, nil
}

// open opens the agent of session id in dir, replacing a session of that
// id that was open.
func (s *server) open(ctx context.Context, id, dir string) (*session, error) {
	ws, err := s.cfg.Open(ctx, dir, id, s.clientFS(sdk.SessionId(id)))
	if err != nil {
		return nil, err
	}
	ss := &session{id: sdk.SessionId(id), ws: ws, always: map[string]bool{}}
	s.mu.Lock()
	old := s.sessions[ss.id]
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	return ss, nil
}

// clientFS is the client's file system for session id, as initialize
// offered it; nil when it offered neither reading nor writing.
func (s *server) clientFS(id sdk.SessionId) *ClientFS {
	s.mu.Lock()
	caps := s.client.Fs
	s.mu.Unlock()
	if !caps.ReadTextFile && !caps.WriteTextFile {
		return nil
	}
	timeout := s.cfg.FSTimeout
	if timeout <= 0 {
		timeout = DefaultFSTimeout
	}
	return &ClientFS{conn: s.connection(), session: id, read: caps.ReadTextFile, write: caps.WriteTextFile, timeout: timeout}
}

// allowedAlways says whether the user allowed tool always in this
// session.
func (ss *session) allowedAlways(tool string) bool {
	ss.alwaysMu.Lock()
	defer ss.alwaysMu.Unlock()
	return ss.always[tool]
}

// allowAlways allows tool always in this session.
func (ss *session) allowAlways(tool string) {
	ss.alwaysMu.Lock()
	defer ss.alwaysMu.Unlock()
	ss.always[tool] = true
}

// close closes the session's agent once no prompt runs on it, and stops
// asking about its background tasks (which wait on, parked).
func (ss *session) close() {
	ss.stopBackground()
	ss.running.Lock()
	defer ss.running.Unlock()
	if ss.ws.Close != nil {
		ss.ws.Close()
	}
}

// closeAll closes every session's agent.
func (s *server) closeAll() {
	s.mu.Lock()
	all := s.sessions
	s.sessions = map[sdk.SessionId]*session{}
	s.mu.Unlock()
	for _, ss := range all {
		ss.close()
	}
}

// session returns the open session id.
func (s *server) session(id sdk.SessionId) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss == nil {
		return nil, sdk.NewInvalidParams(map[string]any{"sessionId": fmt.Sprintf("no session %s is open (session/new or session/load opens one)", id)})
	}
	return ss, nil
}

// Cancel has nothing to do of its own: the SDK cancels the context of the
// session's prompt, which stops the run (and a permission request it
// waits on).
func (s *server) Cancel(_ context.Context, p sdk.CancelNotification) error {
	s.mu.Lock()
	ss := s.sessions[p.SessionId]
	s.mu.Unlock()
	if ss != nil {
		ss.setStop(nil)
	}
	return nil
}

// CloseSession closes the session's agent; its thread stays in the
// database.
func (s *server) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s.mu.Lock()
	ss := s.sessions[p.SessionId]
	delete(s.sessions, p.SessionId)
	s.mu.Unlock()
	if ss != nil {
		ss.close()
	}
	return sdk.CloseSessionResponse{}, nil
}

// ListSessions lists none: the capability is not offered (deepagents
// threads lists the threads).
func (s *server) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}, nil
}

// ResumeSession is not offered (session/load is).
func (s *server) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound("session/resume")
}

// SetSessionConfigOption is not offered.
func (s *server) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound("session/set_config_option")
}

// SetSessionMode is not offered: the permission mode is the command's
// (--permission-mode).
func (s *server) SetSessionMode(context.Context, sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, sdk.NewMethodNotFound("session/set_mode")
}

// logf logs a diagnostic of the connection's.
func (s *server) logf(format string, args ...any) {
	if s.cfg.Logger != nil {
		s.cfg.Logger.Warn(fmt.Sprintf(format, args...))
	}
}

// update sends one session update.
func (s *server) update(ctx context.Context, id sdk.SessionId, u sdk.SessionUpdate) error {
	if err := s.connection().SessionUpdate(ctx, sdk.SessionNotification{SessionId: id, Update: u}); err != nil {
		return fmt.Errorf("sending a session update: %w", err)
	}
	return nil
}
