package cli

import (
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/telemetry"
)

// defaultAddr is where `deepagents serve` listens: LangGraph's dev server
// port, on loopback only.
const defaultAddr = "127.0.0.1:2024"

func newServeCmd(env Env) *cobra.Command {
	var f runFlags
	var addr, apiKey, advertise, assistantsPath string
	var maxRuns int
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--api-key KEY] [flags]",
		Short: "Serve the agent over the LangGraph API, for langgraph-sdk clients and the Deep Agents UI",
		Long: `Serve the agent over the LangGraph HTTP API: the JavaScript and Python
langgraph-sdk, React's useStream and the Deep Agents UI drive it unchanged,
with the assistant "deepagent". Threads are kept in --db, the database the
other commands use, so "deepagents threads" lists them.

Without --dir each thread's files live in its state (the UI shows them);
with --dir the agent works in that folder, shared by every thread.
Approvals are off unless --interrupt-on names the tools that need them.

Several servers may serve one database (PostgreSQL, or a SQLite file on
one machine): a run started through one can be read, joined, streamed and
cancelled through any other, which forwards the request to the one running
it (--advertise says where that is).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validateServed(cmd); err != nil {
				return err
			}
			if apiKey == "" {
				apiKey = env.Getenv("DEEPAGENTS_API_KEY")
			}
			ctx := cmd.Context()
			db, err := persist.Open(ctx, f.db, nil)
			if err != nil {
				return fmt.Errorf("--db: %w", err)
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
				s, err := newSession(ctx, env, &f, db, false, nil)
				if err != nil {
					return err
				}
				defer s.close()
				assistants = []server.Assistant{{GraphID: "deepagent", Description: "A deep agent", Agent: s.agent}}
			}
			log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr: %w", err)
			}
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
				APIKey:     apiKey,
				MaxRuns:    maxRuns,
				Logger:     log,
				// A client's traceparent makes its runs part of its trace.
				RunContext: telemetry.ContinueTrace,
			})
			if err != nil {
				ln.Close()
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
	fl := cmd.Flags()
	fl.StringVar(&addr, "addr", defaultAddr, "address to listen on (port 0 picks a free one)")
	fl.StringVar(&apiKey, "api-key", "", "require this key in every request's X-Api-Key header (default: $DEEPAGENTS_API_KEY; none: any key is accepted)")
	fl.IntVar(&maxRuns, "max-runs", server.DefaultMaxRuns, "runs executing at once; further runs wait")
	fl.StringVar(&assistantsPath, "assistants", "", "serve the assistants of this YAML file instead of one \"deepagent\" (see docs/server.md)")
	fl.StringVar(&advertise, "advertise", "", "URL at which the other servers on the same database reach this one (default: http:// and the address listened on)")
	return cmd
}
