package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/server/a2aserve"
	"github.com/deepagents-go/deepagents/server/mcpserve"
	"github.com/deepagents-go/deepagents/telemetry"
)

// defaultAddr is where `deepagents serve` listens: LangGraph's dev server
// port, on loopback only.
const defaultAddr = "127.0.0.1:2024"

// accessFlags are who may drive a server (serve, mcp-serve --http): its
// key, the origins and host names it answers, and the opt-out from the
// key beyond loopback.
type accessFlags struct {
	apiKey         string
	origins, hosts []string
	insecure       bool
}

func (a *accessFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&a.apiKey, "api-key", "", "require this key in every request's X-Api-Key header (or as a bearer token) but GET /ok's (default: $DEEPAGENTS_API_KEY; required to listen beyond loopback)")
	fl.StringArrayVar(&a.origins, "allow-origin", nil, "let pages of this origin (scheme://host:port; a port of * is any port; * is any origin) call the server from a browser, instead of the default loopback origins http://localhost:*, http://127.0.0.1:* and http://[::1]:* (repeatable)")
	fl.StringArrayVar(&a.hosts, "allow-host", nil, "answer requests naming this host (Host header) besides localhost and IP addresses, as behind a proxy; * is any (repeatable)")
	fl.BoolVar(&a.insecure, "insecure-no-auth", false, "listen beyond loopback without a key: anyone who reaches the port can run the agent")
}

// listen listens on addr (named by flag in errors) and holds the access
// rules: beyond loopback a key is required, unless --insecure-no-auth,
// which is warned about.
func (a *accessFlags) listen(env Env, flag, addr string) (net.Listener, error) {
	if a.apiKey == "" {
		a.apiKey = env.Getenv("DEEPAGENTS_API_KEY")
	}
	if _, err := server.Protect(http.NotFoundHandler(), a.access(nil, nil)); err != nil {
		return nil, usageError{fmt.Errorf("--allow-origin: %w", err)}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && a.apiKey == "" {
		if !a.insecure {
			ln.Close()
			return nil, usageError{fmt.Errorf("%s %s listens beyond loopback: pass --api-key KEY (or set DEEPAGENTS_API_KEY), or --insecure-no-auth to let anyone who reaches it run the agent", flag, addr)}
		}
		fmt.Fprintf(env.Stderr, "deepagents: warning: listening on %s without a key (--insecure-no-auth): anyone who reaches this port can run the agent and read its threads\n", ln.Addr())
	}
	if host, _, err := net.SplitHostPort(addr); err == nil && host != "" && net.ParseIP(host) == nil {
		// The name listened on is one clients use.
		a.hosts = append(a.hosts, host)
	}
	return ln, nil
}

// allowedOrigins is --allow-origin's list; nil (the server's loopback
// default) when not given.
func (a *accessFlags) allowedOrigins() []string {
	if len(a.origins) == 0 {
		return nil
	}
	return a.origins
}

// access is the flags' rules, for a handler whose CORS header lists are
// allow and expose (nil: the LangGraph SDK's).
func (a *accessFlags) access(allow, expose []string) server.Access {
	return server.Access{APIKey: a.apiKey, AllowedOrigins: a.allowedOrigins(), AllowedHosts: a.hosts,
		Open: []string{"/ok"}, AllowHeaders: allow, ExposeHeaders: expose}
}

// notServed are the run flags serve does not take: a server's clients
// name each run's thread (--thread, --continue) and read its events as
// they ask (--output), and each run has its durability (the request's
// durability, sync by default, so that each values event is its step's
// committed state), whatever --durability would say. They are refused,
// and not shown, rather than ignored.
var notServed = []string{"thread", "continue", "output", "durability"}

func newServeCmd(env Env) *cobra.Command {
	var f runFlags
	var access accessFlags
	var addr, advertise, assistantsPath string
	var maxRuns int
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--api-key KEY] [--allow-origin ORIGIN] [flags]",
		Short: "Serve the agent over the LangGraph API, for langgraph-sdk clients and the Deep Agents UI",
		Long: `Serve the agent over the LangGraph HTTP API: the JavaScript and Python
langgraph-sdk, React's useStream and the Deep Agents UI drive it unchanged,
with the assistant "deepagent". Threads are kept in --db, the database the
other commands use, so "deepagents threads" lists them.

Without --dir each thread's files live in its state (the UI shows them);
with --dir the agent works in that folder, shared by every thread.
Approvals are off unless --interrupt-on names the tools that need them.
Clients name each run's thread and choose its durability (the request's
durability: sync unless it asks for async or exit).

Each assistant is also an MCP tool, for MCP hosts, at /mcp (streamable
HTTP, stateless): the tool takes and answers what mcp-serve's run_task
does, each call a run of a thread of the server's (docs/server.md).

Each assistant is also an A2A agent, for other agents: its card at
/.well-known/agent-card.json?assistant_id=ID (or /a2a/ID/.well-known/
agent-card.json), its JSON-RPC endpoint at /a2a/ID; a context is a thread,
and a task that waits for approval is input-required until a message on
it says "approve" or "reject: REASON" (docs/a2a.md).

Several servers may serve one database (PostgreSQL, or a SQLite file on
one machine): a run started through one can be read, joined, streamed and
cancelled through any other, which forwards the request to the one running
it (--advertise says where that is).

Only its user drives it: browsers' pages may call it only from loopback
origins (the Deep Agents UI on http://localhost:3000) unless --allow-origin
says otherwise, and a request from any other page is refused before it is
read; so is one naming a host other than localhost or an IP address
(--allow-host adds names), and one whose body is not JSON. Beyond loopback
it needs a key (--api-key or DEEPAGENTS_API_KEY), or --insecure-no-auth.
GET /ok answers without a key, for health probes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, name := range notServed {
				if cmd.Flags().Changed(name) {
					return usageError{fmt.Errorf("--%s is not a serve flag: clients name each run's thread, read its events as they ask for them, and choose its durability (sync unless the run asks for async or exit)", name)}
				}
			}
			if err := f.validateServed(cmd); err != nil {
				return err
			}
			ln, err := access.listen(env, "--addr", addr)
			if err != nil {
				return err
			}
			defer ln.Close()
			ctx := cmd.Context()
			db, err := openDB(ctx, f.db)
			if err != nil {
				return err
			}
			defer db.Close()
			var assistants []server.Assistant
			if assistantsPath != "" {
				var closeAssistants func()
				assistants, closeAssistants, err = openAssistants(ctx, env, f, db, assistantsPath)
				if err != nil {
					return err
				}
				defer closeAssistants()
			} else {
				spec, err := resolve(ctx, env, db, f.Flags, "", false, true)
				if err != nil {
					return err
				}
				s, err := session.Open(ctx, spec, sessionDeps(ctx, env, db))
				if err != nil {
					return err
				}
				defer s.Close()
				assistants = []server.Assistant{{GraphID: "deepagent", Description: "A deep agent: it plans its work with a todo list, reads and writes files, and hands parts of it to subagents.", Agent: s.Agent}}
			}
			log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			if advertise == "" {
				advertise = "http://" + ln.Addr().String()
			}
			// Every server on the database shares its runs through the
			// database's store, so several can serve one database.
			srv, err := server.New(server.Config{
				Assistants: assistants,
				Saver:      db.Saver,
				Store:      db.Store,
				URL:        advertise,
				APIKey:     access.apiKey,
				// Pages of other origins neither start nor read anything,
				// and a client never writes how a thread runs (its sandbox,
				// approvals, rules, workspace, permission mode), which a
				// later deepagents run --thread would adopt.
				AllowedOrigins:  access.allowedOrigins(),
				AllowedHosts:    access.hosts,
				ProtectedValues: []string{session.SettingsValue, hitl.ModeValue, hitl.DecisionsValue},
				MaxRuns:         maxRuns,
				Logger:          log,
				// A client's traceparent makes its runs part of its trace.
				RunContext: telemetry.ContinueTrace,
				// Each assistant an A2A agent, and an MCP tool at /mcp.
				Protocols: []server.Protocol{a2aserve.Protocol{}, mcpserve.Protocol{}},
			})
			if err != nil {
				return err
			}
			defer srv.Close()
			names := make([]string, len(assistants))
			for i, a := range assistants {
				names[i] = fmt.Sprintf("%q", a.GraphID)
			}
			fmt.Fprintf(env.Stderr, "deepagents: serving the LangGraph API on http://%s (assistants %s)\n", ln.Addr(), strings.Join(names, ", "))
			// On the way out: stop taking requests, end the runs (their
			// checkpoints are saved step by step), then close the streams
			// still open.
			if err := serveUntilDone(ctx, ln, srv, log, func() { srv.Close() }); err != nil {
				return err
			}
			fmt.Fprintln(env.Stderr, "deepagents: server stopped")
			return nil
		},
	}
	f.register(cmd)
	access.register(cmd)
	fl := cmd.Flags()
	for _, name := range notServed {
		fl.MarkHidden(name) //nolint:errcheck // registered just above
	}
	fl.StringVar(&addr, "addr", defaultAddr, "address to listen on (port 0 picks a free one)")
	fl.IntVar(&maxRuns, "max-runs", server.DefaultMaxRuns, "runs executing at once; further runs wait")
	fl.StringVar(&assistantsPath, "assistants", "", "serve the assistants of this YAML file instead of one \"deepagent\" (see docs/server.md)")
	fl.StringVar(&advertise, "advertise", "", "URL at which the other servers on the same database reach this one (default: http:// and the address listened on)")
	return cmd
}

// openAssistants builds the assistants of an assistants file on an open
// database, each resolved over the command's flags (session.Assistant).
// The returned function closes what they opened (shells, MCP servers).
func openAssistants(ctx context.Context, env Env, base runFlags, db *persist.DB, path string) ([]server.Assistant, func(), error) {
	specs, err := session.LoadAssistants(path)
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("--assistants: %w", err)}
	}
	var out []server.Assistant
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	places := session.Locate(env.Getenv)
	for i := range specs {
		a := &specs[i]
		fail := func(err error) ([]server.Assistant, func(), error) {
			closeAll()
			if isUsage(err) {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("--assistants: assistant %q: %w", a.GraphID, err)
		}
		spec, err := session.Resolve(session.Inputs{Flags: base.Flags, Getenv: env.Getenv, Places: places, DB: db, Served: true, Assistant: a})
		if err != nil {
			return fail(err)
		}
		printNotes(env, spec)
		s, err := session.Open(ctx, spec, sessionDeps(ctx, env, db))
		if err != nil {
			return fail(err)
		}
		closers = append(closers, s.Close)
		out = append(out, server.Assistant{GraphID: a.GraphID, Description: a.Description, Agent: s.Agent})
	}
	return out, closeAll, nil
}
