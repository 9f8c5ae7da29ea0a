package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/mcp"
	"github.com/deepagents-go/deepagents/server"
)

func newMCPServeCmd(env Env) *cobra.Command {
	var f runFlags
	var access accessFlags
	var httpAddr string
	cmd := &cobra.Command{
		Use:   "mcp-serve [--http HOST:PORT [--api-key KEY]] [flags]",
		Short: "Serve the agent to MCP hosts (Claude Code, Cursor, other agents) over stdio or HTTP",
		Long: `Serve the agent as a Model Context Protocol server, so that an MCP host can
hand it whole tasks. Its tools:

  run_task            run a task on a thread (new, or thread_id to continue) and
                      return the answer; progress notifications while it
                      works; cancelling the request stops the run
  get_todos           a thread's todo list
  list_thread_files   the files in a thread's state
  read_thread_file    one of them
  list_background_approvals, answer_background_approval
                      with background subagents: the requests for approval
                      a thread's background tasks wait on, and their answer
                      (run_task's result lists them too)

Without --dir each thread's files live in its state (read them with
read_thread_file); with --dir the agent works in that folder.

By default it speaks over standard input and output (add it to a host as
{"command": "deepagents", "args": ["mcp-serve", "--dir", "/path"]});
--http serves streamable HTTP at /mcp instead. Standard output belongs to
the protocol: messages go to standard error.

Over HTTP only its user drives it, as with serve: pages of other origins
than loopback ones (--allow-origin) and requests naming a host other than
localhost or an IP address (--allow-host) are refused, and so is a body
that is not JSON; beyond loopback it needs a key (--api-key or
DEEPAGENTS_API_KEY, sent as X-Api-Key or Authorization: Bearer), or
--insecure-no-auth.

Approvals are off unless --interrupt-on names tools; a run that stops for one
answers with the calls awaiting a decision, which run_task takes as
decision approve or reject.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validateServed(cmd); err != nil {
				return err
			}
			if httpAddr == "" {
				for _, name := range []string{"api-key", "allow-origin", "allow-host", "insecure-no-auth"} {
					if cmd.Flags().Changed(name) {
						return usageError{fmt.Errorf("--%s needs --http: over stdio the host that started the server is its only client", name)}
					}
				}
			}
			var ln net.Listener
			if httpAddr != "" {
				var err error
				if ln, err = access.listen(env, "--http", httpAddr); err != nil {
					return err
				}
				defer ln.Close()
			}
			ctx := cmd.Context()
			o, err := openSession(ctx, env, &f, false, true, nil)
			if err != nil {
				return err
			}
			defer o.close()
			srv := mcp.NewServer(o.Agent, mcp.ServeOptions{Version: version(), Values: o.spec.Settings.Values()})
			if httpAddr == "" {
				err := srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}})
				if ctx.Err() != nil || errors.Is(err, io.EOF) {
					return nil // the host closed the connection, or we were stopped
				}
				return err
			}
			return serveMCPHTTP(ctx, env, srv, ln, &access)
		},
	}
	f.register(cmd)
	access.register(cmd)
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0 picks a free one)")
	return cmd
}

// MCP's streamable HTTP headers, for CORS.
var (
	mcpAllowHeaders  = []string{"content-type", "accept", "authorization", "x-api-key", "mcp-session-id", "mcp-protocol-version", "last-event-id"}
	mcpExposeHeaders = []string{"mcp-session-id", "mcp-protocol-version"}
)

// serveMCPHTTP serves srv over streamable HTTP on ln until ctx ends,
// behind access's rules (server.Protect, as deepagents serve).
func serveMCPHTTP(ctx context.Context, env Env, srv *sdk.Server, ln net.Listener, access *accessFlags) error {
	mux := http.NewServeMux()
	// The SDK's own check refuses a loopback connection naming another
	// host; Protect checks hosts for every connection, and answers the
	// names --allow-host adds.
	opts := &sdk.StreamableHTTPOptions{DisableLocalhostProtection: len(access.hosts) > 0}
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, opts))
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	h, err := server.Protect(mux, access.access(mcpAllowHeaders, mcpExposeHeaders))
	if err != nil {
		return usageError{fmt.Errorf("--allow-origin: %w", err)}
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fmt.Fprintf(env.Stderr, "deepagents: serving MCP on http://%s/mcp\n", ln.Addr())
	if err := serveUntilDone(ctx, ln, h, log, nil); err != nil {
		return err
	}
	fmt.Fprintln(env.Stderr, "deepagents: MCP server stopped")
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func newMCPCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Inspect the MCP servers the agent would use",
	}
	var f runFlags
	list := &cobra.Command{
		Use:   "list [flags]",
		Short: "Start the configured MCP servers and list their tools, resources and prompts",
		Long: `Start the MCP servers the agent would use (~/.deepagents/mcp.json, --mcp-config
files, and with --trust-workspace the workspace's .mcp.json), list what each
offers, and stop them. A server that fails says why.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(cmd); err != nil {
				return err
			}
			ctx := cmd.Context()
			places := session.Locate(env.Getenv)
			spec, err := session.Resolve(session.Inputs{Flags: f.Flags, Getenv: env.Getenv, Places: places})
			if err != nil {
				return err
			}
			printNotes(env, spec)
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			servers, err := session.ConnectMCP(ctx, spec, session.Deps{Getenv: env.Getenv, Logger: log})
			if err != nil {
				return err
			}
			if servers == nil {
				fmt.Fprintf(env.Stdout, "No MCP servers are configured (see %s, --mcp-config and --trust-workspace).\n", places.MCPFile())
				return nil
			}
			defer servers.Close()
			failed := 0
			for _, st := range servers.Status() {
				if st.Err != nil {
					failed++
					fmt.Fprintf(env.Stdout, "%s: failed: %s\n", st.Name, display.OneLine(st.Err.Error()))
					continue
				}
				var offers []string
				offers = append(offers, fmt.Sprintf("%d tools", len(st.Tools)))
				if st.Resources {
					offers = append(offers, "resources")
				}
				if st.Prompts {
					offers = append(offers, "prompts")
				}
				fmt.Fprintf(env.Stdout, "%s: ok (%s)\n", st.Name, strings.Join(offers, ", "))
				for _, name := range st.Tools {
					fmt.Fprintf(env.Stdout, "  %s\n", name)
				}
				for _, note := range st.Notes {
					fmt.Fprintf(env.Stdout, "  note: %s\n", display.OneLine(note))
				}
			}
			if prompts, err := servers.Prompts(ctx); err == nil && len(prompts) > 0 {
				fmt.Fprintln(env.Stdout, "prompts:")
				for _, p := range prompts {
					fmt.Fprintf(env.Stdout, "  %s: %s\n", p.Server, p.Name)
				}
			}
			if failed > 0 {
				return exitError{ExitFailed}
			}
			return nil
		},
	}
	f.register(list)
	cmd.AddCommand(list)
	return cmd
}

// serveUntilDone serves h on ln until ctx ends, then stops: stop (when
// set) first, then the HTTP server, which waits up to 5 s for the
// requests in flight.
func serveUntilDone(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger, stop func()) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if stop != nil {
		stop()
	}
	if err := hs.Shutdown(shutdown); err != nil {
		hs.Close()
	}
	return nil
}
