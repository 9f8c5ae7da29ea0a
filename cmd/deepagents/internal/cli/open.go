package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/trace"
	"golang.org/x/term"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/persist"
)

// opened is what a command that runs an agent on its own database has
// opened: the database, the session as resolved, and the agent.
type opened struct {
	*session.Session
	db   *persist.DB
	spec session.Spec
	// askHost is the session's question about hosts (nil: none asked),
	// for the agents a model switch reopens.
	askHost session.HostAsker
}

// close closes the agent, then the database.
func (o *opened) close() {
	o.Session.Close()
	o.db.Close()
}

// openDB opens the database --db names (the default one when dsn is ""),
// its errors saying so.
func openDB(ctx context.Context, dsn string) (*persist.DB, error) {
	d, err := persist.Open(ctx, dsn, nil)
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	return d, nil
}

// openSession opens the database, finds the thread the flags name
// (--thread, --continue, --resume), resolves the session and opens it.
//
// ask, when set, asks the person about the hosts sandboxed commands want
// to reach that no rule names (session.Deps.AskHost).
func openSession(ctx context.Context, env Env, f *runFlags, interactive, served bool, ask session.HostAsker) (*opened, error) {
	db, err := openDB(ctx, f.db)
	if err != nil {
		return nil, err
	}
	thread, err := chooseThread(ctx, env, db, f)
	if err != nil {
		db.Close()
		return nil, err
	}
	spec, err := resolve(ctx, env, db, f.Flags, thread, interactive, served)
	if err != nil {
		db.Close()
		return nil, err
	}
	deps := sessionDeps(ctx, env, db)
	deps.AskHost = ask
	deps.Middleware = f.middleware
	deps.NewTaskID = testTaskIDs
	s, err := session.Open(ctx, spec, deps)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &opened{Session: s, db: db, spec: spec, askHost: ask}, nil
}

// chooseThread returns the thread the flags name: --continue's (the last
// to run in the workspace), the one picked on the terminal, --resume's
// (which must exist) or --thread's.
func chooseThread(ctx context.Context, env Env, db *persist.DB, f *runFlags) (string, error) {
	switch {
	case f.continueLast:
		return lastThread(ctx, db, f.Dir)
	case f.pickOne:
		return pickThread(ctx, env, db)
	case f.resume != "":
		_, err := db.Saver.Thread(ctx, f.resume)
		if errors.Is(err, checkpoint.ErrNotFound) {
			err = usageError{fmt.Errorf("--resume: there is no thread %s (deepagents threads lists them)", f.resume)}
		}
		return f.resume, err
	}
	return f.thread, nil
}

// resolve resolves the session of flags on db, thread continuing as it
// was run, and prints what resolving noted.
func resolve(ctx context.Context, env Env, db *persist.DB, flags session.Flags, thread string, interactive, served bool) (session.Spec, error) {
	var kept *session.Kept
	if thread != "" {
		var err error
		if kept, err = session.LoadKept(ctx, db.Saver, thread); err != nil {
			return session.Spec{}, err
		}
	}
	spec, err := session.Resolve(session.Inputs{
		Flags:       flags,
		Getenv:      env.Getenv,
		Places:      session.Locate(env.Getenv),
		DB:          db,
		Thread:      thread,
		Kept:        kept,
		Interactive: interactive,
		Served:      served,
	})
	if err != nil {
		return session.Spec{}, err
	}
	printNotes(env, spec)
	return spec, nil
}

func printNotes(env Env, spec session.Spec) {
	printLines(env, spec.Notes)
}

// printLines writes lines on stderr.
func printLines(env Env, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(env.Stderr, l)
	}
}

// sessionDeps are what session.Open uses on db: the environment, a logger
// of warnings on stderr, and the process's tracing (see telemetry.go).
func sessionDeps(ctx context.Context, env Env, db *persist.DB) session.Deps {
	return session.Deps{
		DB:     db,
		Getenv: env.Getenv,
		Logger: slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		// Off (nil) unless the OTEL_* environment asks for traces.
		TracerProvider: func() trace.TracerProvider { return tracerProvider(ctx) },
	}
}

// isTerminal reports whether r (a reader or a writer) is an interactive terminal (not merely a
// character device such as /dev/null).
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
