package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/tool"
)

// Defaults of Options.
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultCallTimeout    = 10 * time.Minute
	DefaultMaxRestarts    = 3
	// DefaultMaxTools bounds the tools taken from one server: each costs
	// the model context on every step.
	DefaultMaxTools = 128
)

// ErrUnavailable is wrapped by the error of a call to a server that is not
// running and cannot be started again.
var ErrUnavailable = errors.New("mcp: server unavailable")

// Options configures Connect. The zero value uses the defaults.
type Options struct {
	// ConnectTimeout bounds starting a server and listing its tools.
	ConnectTimeout time.Duration
	// CallTimeout bounds one tool call, unless a server's entry sets its
	// own Timeout.
	CallTimeout time.Duration
	// MaxRestarts is how many times a server that stopped is started
	// again before its calls fail for good; negative means never.
	MaxRestarts int
	// MaxTools bounds the tools taken from one server; the rest are left
	// out with a warning.
	MaxTools int
	// Dir is where stdio servers run unless their entry says otherwise;
	// empty means this process's working directory.
	Dir string
	// Getenv is where the few variables a stdio server inherits come from
	// (os.Getenv when nil).
	Getenv func(string) string
	// Logger receives warnings: a server that fails to start, stops or is
	// started again. Nil discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxRestarts == 0 {
		o.MaxRestarts = DefaultMaxRestarts
	}
	if o.MaxTools <= 0 {
		o.MaxTools = DefaultMaxTools
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Servers are the connected MCP servers of a configuration. Close them when
// the agent that uses their tools is done.
type Servers struct {
	servers []*server // sorted by name
	tools   []tool.Tool
}

// Connect starts or reaches every configured server, at once, and lists
// their tools. It does not fail for one server: a server that cannot be
// started, or does not answer within the connect timeout, is left out, and
// Status says why. It fails only for a configuration it cannot use.
func Connect(ctx context.Context, configs map[string]ServerConfig, opts Options) (*Servers, error) {
	opts = opts.withDefaults()
	s := &Servers{}
	for _, name := range slices.Sorted(maps.Keys(configs)) {
		if err := checkName(name); err != nil {
			return nil, err
		}
		cfg := configs[name]
		kind, err := cfg.transport()
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		s.servers = append(s.servers, &server{name: name, cfg: cfg, kind: kind, opts: opts})
	}
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Go(func() {
			if err := srv.start(ctx); err != nil {
				opts.Logger.Warn("MCP server did not start; the agent runs without it", "server", srv.name, "err", err)
			}
		})
	}
	wg.Wait()
	resources := false
	for _, srv := range s.servers {
		s.tools = append(s.tools, srv.tools...)
		resources = resources || srv.resources
	}
	if resources {
		s.tools = append(s.tools, resourceTools(s)...)
	}
	return s, nil
}

// Tools returns the tools of the servers that started, named
// mcp__server__tool, and, when a server offers resources, the tools that
// list and read them.
func (s *Servers) Tools() []tool.Tool { return slices.Clone(s.tools) }

// Status is what Connect made of one server.
type Status struct {
	Name string
	// Err says why the server is not available; nil when it started.
	Err error
	// Tools are the names the model sees.
	Tools []string
	// Resources and Prompts say whether the server offers them.
	Resources, Prompts bool
	// Notes say which of the server's tools were left out or renamed,
	// and why.
	Notes []string
}

// Status returns each server's status, sorted by name.
func (s *Servers) Status() []Status {
	out := make([]Status, 0, len(s.servers))
	for _, srv := range s.servers {
		st := Status{Name: srv.name, Err: srv.startErr, Resources: srv.resources, Prompts: srv.prompts, Notes: srv.notes}
		for _, t := range srv.tools {
			st.Tools = append(st.Tools, t.Spec().Name)
		}
		out = append(out, st)
	}
	return out
}

// Failed returns the names of the servers that did not start.
func (s *Servers) Failed() []string {
	var out []string
	for _, srv := range s.servers {
		if srv.startErr != nil {
			out = append(out, srv.name)
		}
	}
	return out
}

// Close ends every server: their sessions, and for stdio servers their
// process groups. It waits for them to end.
func (s *Servers) Close() error {
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Go(srv.close)
	}
	wg.Wait()
	return nil
}

// server returns the server named name.
func (s *Servers) server(name string) (*server, bool) {
	i, ok := slices.BinarySearchFunc(s.servers, name, func(srv *server, n string) int {
		switch {
		case srv.name < n:
			return -1
		case srv.name > n:
			return 1
		}
		return 0
	})
	if !ok {
		return nil, false
	}
	return s.servers[i], true
}
