package mcp

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// inherited are the variables a stdio server gets from this process's
// environment: what interpreters and npx need to run, and no secrets. The
// official TypeScript SDK passes on the same few.
var inherited = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR"}

// serverEnv is a stdio server's environment: the inherited variables, then
// its entry's.
func serverEnv(own map[string]string, getenv func(string) string) []string {
	env := make([]string, 0, len(inherited)+len(own))
	for _, k := range inherited {
		if _, set := own[k]; set {
			continue
		}
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range own {
		env = append(env, k+"="+v)
	}
	return env
}

// shutdownGrace is how long a stdio server may take to exit once its
// input is closed before its process group is killed.
const shutdownGrace = 2 * time.Second

// stdioTransport starts a server's command, contained so that what it
// starts dies with it (see containAttr), and speaks to it over its
// standard input and output.
type stdioTransport struct {
	cfg    ServerConfig
	dir    string
	getenv func(string) string
	stderr *tail
	// started, when set, learns of the process once it runs.
	started func(*process)
}

// Connect implements sdk.Transport.
func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	dir := t.dir
	if t.cfg.Cwd != "" {
		dir = t.cfg.Cwd
		if !filepath.IsAbs(dir) && t.dir != "" {
			dir = filepath.Join(t.dir, dir)
		}
	}
	// Pipes of our own rather than cmd's: Wait must not close the server's
	// output before its last message has been read.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd, err := startContained(func() *exec.Cmd {
		cmd := exec.Command(t.cfg.Command, t.cfg.Args...)
		cmd.Env = serverEnv(t.cfg.Env, t.getenv)
		cmd.Dir = dir
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		return cmd
	})
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	p := &process{cmd: cmd, in: inW, out: outR, exited: make(chan struct{}), stderrDone: make(chan struct{})}
	if t.started != nil {
		t.started(p)
	}
	go func() {
		io.Copy(t.stderr, errR)
		errR.Close()
		close(p.stderrDone)
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return (&sdk.IOTransport{Reader: p, Writer: stdinOf{p}}).Connect(ctx)
}

// process is a running stdio server: reading it reads its output, and
// closing it ends it and everything it started.
type process struct {
	cmd    *exec.Cmd
	in     *os.File
	out    *os.File
	exited chan struct{}
	err    error // once exited is closed
	// stderrDone is closed once the server's standard error is read to
	// its end, so that a message about its exit can quote all of it.
	stderrDone chan struct{}
	once       sync.Once
}

func (p *process) Read(b []byte) (int, error) { return p.out.Read(b) }

// Close closes the server's input, as the protocol asks, gives it
// shutdownGrace to exit, and then kills its process group: whatever it
// started (npx starts node, for example) ends with it.
func (p *process) Close() error {
	p.once.Do(func() {
		p.in.Close()
		select {
		case <-p.exited:
		case <-time.After(shutdownGrace):
		}
		killGroup(p.cmd)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
		}
		p.out.Close()
		select {
		case <-p.stderrDone: // the group is gone, so its end is near
		case <-time.After(time.Second):
		}
	})
	return nil
}

// stdinOf is the server's input; closing it is left to process.Close.
type stdinOf struct{ p *process }

func (w stdinOf) Write(b []byte) (int, error) { return w.p.in.Write(b) }
func (w stdinOf) Close() error                { return nil }

// tail keeps the last bytes written to it: a server's standard error, for
// the message that says why it failed.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 4 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(b), nil
}

// String returns the last lines written, trimmed, for an error message.
func (t *tail) String() string {
	if t == nil {
		return "" // not a stdio server
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if len(s) > 1000 {
		s = "..." + s[len(s)-1000:]
	}
	return s
}

// withStderr adds what a stdio server last wrote on standard error to err.
func withStderr(err error, t *tail) error {
	if s := t.String(); s != "" {
		return fmt.Errorf("%w; its standard error ends with: %s", err, s)
	}
	return err
}
