package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents/tool"
)

// clientInfo is how this program introduces itself to servers.
var clientInfo = &sdk.Implementation{Name: "deepagents-go", Version: "1"}

// server is one configured MCP server and its current session.
type server struct {
	name string
	cfg  ServerConfig
	kind string
	opts Options

	// Set by start, before Connect returns; read-only after.
	tools     []tool.Tool
	notes     []string // what listTools left out or renamed, and why
	resources bool
	prompts   bool
	startErr  error

	mu       sync.Mutex
	sess     *sdk.ClientSession // nil while stopped
	proc     *process           // a stdio server's current process
	dialed   bool               // a session was opened once
	restarts int
	closed   bool

	// stderr is the current stdio process's standard error; apart from mu,
	// so that a failed call can quote it while a restart holds mu.
	stderr atomic.Pointer[tail]

	// tasks are the tools that run only as tasks (taskOnly).
	tasksMu sync.Mutex
	tasks   map[string]bool
}

// start connects for the first time and lists the server's tools.
func (s *server) start(ctx context.Context) error {
	sess, err := s.session(ctx)
	if err == nil {
		err = s.listTools(ctx, sess)
	}
	if err != nil {
		s.startErr = err
		s.close()
		return err
	}
	if caps := sess.InitializeResult().Capabilities; caps != nil {
		s.resources = caps.Resources != nil
		s.prompts = caps.Prompts != nil
	}
	return nil
}

// dial starts or reaches the server and opens a session.
func (s *server) dial(ctx context.Context) (*sdk.ClientSession, *tail, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
	defer cancel()
	var t sdk.Transport
	var stderr *tail
	switch s.kind {
	case TypeStdio:
		stderr = &tail{}
		t = taskScan{&stdioTransport{cfg: s.cfg, dir: s.opts.Dir, getenv: s.opts.Getenv, stderr: stderr, started: func(p *process) { s.proc = p }}, s}
	case TypeHTTP:
		t = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxRetries: 2}
	case TypeSSE:
		t = detached{&sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient()}}
	}
	c := sdk.NewClient(clientInfo, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	sess, err := c.Connect(ctx, t, nil)
	if err != nil {
		if s.proc != nil {
			s.proc.Close() // a process that started but never answered
		}
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s", s.opts.ConnectTimeout)
		}
		return nil, stderr, withStderr(err, stderr)
	}
	return sess, stderr, nil
}

// session returns the server's live session, starting the server again
// when it stopped, at most MaxRestarts times.
func (s *server) session(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("%w: %q is closed", ErrUnavailable, s.name)
	}
	if s.sess != nil {
		return s.sess, nil
	}
	first := !s.dialed
	if !first {
		if s.restarts >= s.opts.MaxRestarts {
			return nil, fmt.Errorf("%w: %q stopped and was started again %d times already", ErrUnavailable, s.name, s.restarts)
		}
		s.restarts++
		s.opts.Logger.Warn("starting MCP server again", "server", s.name, "restart", s.restarts)
	}
	sess, stderr, err := s.dial(ctx)
	s.stderr.Store(stderr)
	s.dialed = true
	if err != nil {
		if first {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %q could not be started again: %w", ErrUnavailable, s.name, err)
	}
	s.sess = sess
	go func() {
		// The session ends when the server exits or the connection drops:
		// the next call starts it again.
		sess.Wait()
		s.mu.Lock()
		if s.sess == sess {
			s.sess = nil
			if !s.closed {
				s.opts.Logger.Warn("MCP server stopped", "server", s.name, "stderr", s.stderr.Load().String())
			}
		}
		s.mu.Unlock()
	}()
	return sess, nil
}

// drop ends sess, so that the next call starts the server again: for a
// server that stopped answering.
func (s *server) drop(sess *sdk.ClientSession) {
	s.mu.Lock()
	if s.sess == sess {
		s.sess = nil
	}
	s.mu.Unlock()
	sess.Close()
}

// close ends the session for good.
func (s *server) close() {
	s.mu.Lock()
	s.closed = true
	sess := s.sess
	s.sess = nil
	s.mu.Unlock()
	if sess != nil {
		sess.Close()
	}
}

// listTools lists the server's tools, page by page, up to MaxTools.
func (s *server) listTools(ctx context.Context, sess *sdk.ClientSession) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
	defer cancel()
	var listed []*mcpTool
	params := &sdk.ListToolsParams{}
list:
	for pages := 0; pages < 100; pages++ {
		res, err := sess.ListTools(ctx, params)
		if err != nil {
			return fmt.Errorf("listing tools: %w", withStderr(err, s.stderr.Load()))
		}
		for _, t := range res.Tools {
			if s.requiresTask(t.Name) {
				s.note("MCP tool left out: it runs only as a task (execution.taskSupport \"required\"), which this client does not support", "tool", t.Name)
				continue
			}
			if len(listed) == s.opts.MaxTools {
				s.note("MCP server has more tools than the limit; the rest are left out", "limit", s.opts.MaxTools)
				break list
			}
			mt, err := newTool(s, t)
			if err != nil {
				s.note("MCP tool left out", "tool", t.Name, "err", err)
				continue
			}
			listed = append(listed, mt)
		}
		if res.NextCursor == "" {
			break
		}
		params.Cursor = res.NextCursor
	}
	s.tools = s.nameTools(listed)
	return nil
}

// nameTools gives each tool a name of its own. A tool whose name needed no
// change keeps it: another whose name became the same once its
// characters were replaced (a.b and a_b both give mcp__s__a_b) is renamed
// with a hash of its own name, whatever the order the server lists them
// in, so that the model and rules reach the one they name exactly.
func (s *server) nameTools(listed []*mcpTool) []tool.Tool {
	exact := map[string]bool{}
	for _, mt := range listed {
		if mt.exact() {
			exact[mt.spec.Name] = true
		}
	}
	taken := map[string]bool{}
	var out []tool.Tool
	for _, mt := range listed {
		name := mt.spec.Name
		if !mt.exact() && exact[name] || taken[name] {
			renamed := withHash(name, mt.remote)
			if taken[renamed] || exact[renamed] {
				s.note("MCP tool left out: its name is taken", "tool", mt.remote, "name", name)
				continue
			}
			s.note("MCP tool renamed: its name is taken by another of the server's tools", "tool", mt.remote, "name", renamed, "taken", name)
			mt.spec.Name = renamed
		}
		taken[mt.spec.Name] = true
		out = append(out, mt)
	}
	return out
}

// note logs a warning about one of the server's tools and keeps it for
// Status.
func (s *server) note(msg string, args ...any) {
	s.opts.Logger.Warn(msg, append([]any{"server", s.name}, args...)...)
	var b strings.Builder
	b.WriteString(msg)
	for i := 0; i+1 < len(args); i += 2 {
		fmt.Fprintf(&b, " %v=%v", args[i], args[i+1])
	}
	s.notes = append(s.notes, b.String())
}

// callTimeout is how long one call of this server may take.
func (s *server) callTimeout() time.Duration {
	if s.cfg.Timeout > 0 {
		return time.Duration(s.cfg.Timeout) * time.Millisecond
	}
	return s.opts.CallTimeout
}

// alive reports whether the server answers a ping within a few seconds.
func alive(ctx context.Context, sess *sdk.ClientSession) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return sess.Ping(ctx, nil) == nil
}

// detached gives a transport whose stream lives as long as the connection
// (SSE's) a context that the connect timeout ends only while connecting.
type detached struct{ sdk.Transport }

func (d detached) Connect(ctx context.Context) (sdk.Connection, error) {
	live, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := d.Transport.Connect(live)
	if !stop() && err == nil { // the timeout struck while connecting
		conn.Close()
		return nil, ctx.Err()
	}
	if err != nil {
		cancel()
	}
	return conn, err
}

// httpClient sends the server's headers with every request, and reads
// its answers for tools that require tasks.
func (s *server) httpClient() *http.Client {
	var next http.RoundTripper = http.DefaultTransport
	if len(s.cfg.Headers) > 0 {
		next = headerTransport{s.cfg.Headers, next}
	}
	return &http.Client{Transport: scanTransport{next, s}}
}

type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.next.RoundTrip(r)
}
