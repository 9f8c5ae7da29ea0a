package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/providers"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/tool"
	"github.com/deepagents-go/deepagents/workspace"
)

// session is what a command that runs an agent has opened.
type session struct {
	db      *persist.DB
	agent   *deepagents.Agent
	backend backend.Backend
	// close closes what the session opened (the agent's shell, and the
	// database when openSession opened it); closeAgent the agent's part.
	close      func()
	closeAgent func()
	// settings are how this run runs, to be recorded on its thread.
	settings threadSettings
	// userDir is where the user's own memory, skills and subagents are
	// read from (DEEPAGENTS_HOME or ~/.deepagents); "" without a home.
	userDir string
}

// registry returns the model providers the CLI knows: every provider of
// llm/providers, with keys and base URLs from the environment, and the
// scripted model as "replay".
func registry(env Env) *llm.Registry {
	r := &llm.Registry{}
	providers.RegisterEnv(r, env.Getenv)
	replay.Register(r)
	return r
}

// openModel opens --model, or the default model the environment allows.
func openModel(ctx context.Context, env Env, ms *models, spec string) (llm.Model, error) {
	if spec == "" {
		var err error
		if spec, err = providers.DefaultSpec(env.Getenv); err != nil {
			return nil, usageError{fmt.Errorf("%w; --model replay:FILE plays a script offline", err)}
		}
	}
	return ms.open(ctx, spec)
}

// userDir is ~/.deepagents, or "" when there is no home directory.
func userDir(env Env) string {
	if h := env.Getenv("DEEPAGENTS_HOME"); h != "" {
		return h
	}
	home := homeDir(env)
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".deepagents")
}

// openWorkspace opens the agent's files (package workspace): the
// workspace at "/" (with execute when shell is set), scratch files in the
// thread's state, the user's ~/.deepagents at /user/ and long-term memories
// in the store. Whatever the workspace is, the user's configuration and
// shell start-up files stay read-only and the files that hold keys
// unreadable (see protectHost), in the file tools as in the sandbox, and
// rules denies reading to ls, glob, grep and the terminal's @file as to
// read_file.
func openWorkspace(env Env, f *runFlags, db *persist.DB, rules *permission.Rules) (*workspace.Workspace, error) {
	host := protectHost(env, f, db)
	cfg := workspace.Config{
		Dir:        f.dir,
		Shell:      f.shell,
		HistoryDir: historyDir(db),
		Store:      db.Store,
		ReadOnly:   host.readOnly,
		Unreadable: host.unreadable,
		Rules:      rules,
	}
	if f.stateWorkspace {
		cfg.Dir = ""
	}
	// An assistant of serve's file is not shown the operator's folder.
	if !f.fromAssistant {
		cfg.UserDir = userDir(env)
	}
	if cfg.Dir != "" && f.shell && f.sandbox == "bwrap" {
		protected, err := protectedPaths(env, f)
		if err != nil {
			return nil, err
		}
		cfg.Sandbox = &backend.Bubblewrap{Network: f.network, Protected: protected}
	}
	ws, err := workspace.Open(cfg)
	switch {
	case errors.Is(err, backend.ErrNoSandbox):
		return nil, fmt.Errorf("--shell: %w; install bubblewrap (apt-get install bubblewrap), or pass --sandbox none to run commands unisolated, as yourself", err)
	case errors.Is(err, workspace.ErrReadRules):
		return nil, usageError{err}
	case errors.Is(err, workspace.ErrDir):
		return nil, fmt.Errorf("--dir: %w", err)
	}
	return ws, err
}

// historyDir is where conversation histories are kept beside a SQLite
// database: a folder named after the file with ".history" added. Other
// databases ("" here) keep them in the thread's state, in the database.
func historyDir(db *persist.DB) string {
	if db.Kind != persist.KindSQLite {
		return ""
	}
	return db.Location + ".history"
}

// openSession opens the database, the model and the agent for a run.
func openSession(ctx context.Context, env Env, f *runFlags, interactive bool) (*session, error) {
	db, err := persist.Open(ctx, f.db, nil)
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	switch {
	case f.continueLast:
		f.thread, err = lastThread(ctx, db, f.dir)
	case f.pickOne:
		f.thread, err = pickThread(ctx, env, db)
	case f.resume != "":
		f.thread = f.resume
		if _, err = db.Saver.Thread(ctx, f.resume); errors.Is(err, checkpoint.ErrNotFound) {
			err = usageError{fmt.Errorf("--resume: there is no thread %s (deepagents threads lists them)", f.resume)}
		}
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	s, err := newSession(ctx, env, f, db, interactive, nil)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.close = func() { s.closeAgent(); db.Close() }
	return s, nil
}

// newSession builds the model and the agent for f on an open database,
// which it does not close; configure, when set, adjusts the agent's
// configuration last.
func newSession(ctx context.Context, env Env, f *runFlags, db *persist.DB, interactive bool, configure func(*deepagents.Config) error) (*session, error) {
	s := &session{db: db, closeAgent: func() {}, userDir: userDir(env)}
	fail := func(err error) (*session, error) {
		s.closeAgent()
		return nil, err
	}
	if err := applyConfig(env, f, interactive); err != nil {
		return fail(err)
	}
	// A thread continues as it was run, but for the flags given.
	old, err := f.adoptThreadSettings(ctx, db, env.Stderr)
	if err != nil {
		return fail(err)
	}
	s.settings = f.settings(interactive)
	ms := &models{env: env}
	if f.record != "" {
		ms.rec = replay.NewRecording(f.record)
	}
	model, err := openModel(ctx, env, ms, f.model)
	if err != nil {
		return fail(err)
	}
	rules, err := permissionRules(env, f, env.Stderr)
	if err != nil {
		return fail(err)
	}
	ws, err := openWorkspace(env, f, db, rules)
	if err != nil {
		return fail(err)
	}
	s.backend = ws.Backend
	closeShell := func() { ws.Close() }
	s.closeAgent = closeShell
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	subagents, asyncSubagents, err := loadSubagents(ctx, env, f, ms)
	if err != nil {
		return fail(err)
	}
	s.settings.Subagents = []string{}
	for _, sa := range subagents {
		s.settings.Subagents = append(s.settings.Subagents, sa.Name)
	}
	for _, sa := range asyncSubagents {
		s.settings.Subagents = append(s.settings.Subagents, sa.Name+" (background)")
	}
	noteSubagents(env.Stderr, f.thread, old, s.settings.Subagents)
	on := map[string]deepagents.InterruptOn{}
	for _, name := range f.interruptOn(interactive) {
		on[name] = deepagents.InterruptOn{}
	}
	servers, err := startMCP(ctx, env, f, log)
	if err != nil {
		return fail(err)
	}
	var mcpTools []tool.Tool
	if servers != nil {
		s.closeAgent = func() { servers.Close(); closeShell() }
		mcpTools = servers.Tools()
	}
	cfg := deepagents.Config{
		Model:          model,
		Tools:          mcpTools,
		Backend:        s.backend,
		Checkpointer:   db.Saver,
		Store:          db.Store,
		Subagents:      subagents,
		AsyncSubagents: asyncSubagents,
		InterruptOn:    on,
		Permissions:    rules,
		Memory:         ws.Memory,
		Skills:         ws.Skills,
		Middleware:     ws.Middleware,
		MaxSteps:       f.maxSteps,
		Durability:     deepagents.Durability(f.durability),
		GrepRegexp:     f.grepRegexp,
		Logger:         log,
		// Off (nil) unless the OTEL_* environment asks for traces.
		TracerProvider: tracerProvider(ctx),
	}
	if servers != nil {
		withoutFailedServers(&cfg, servers.Failed())
	}
	if configure != nil {
		if err := configure(&cfg); err != nil {
			return fail(err)
		}
	}
	s.agent, err = deepagents.New(cfg)
	if errors.Is(err, deepagents.ErrUnknownTool) {
		return fail(usageError{err})
	}
	if err != nil {
		return fail(err)
	}
	// Background subagents stop before what their tools use (shells, MCP
	// servers) closes.
	closeRest := s.closeAgent
	s.closeAgent = func() { s.agent.Close(); closeRest() }
	s.close = s.closeAgent
	return s, nil
}

// isTerminal reports whether r (a reader or a writer) is an interactive terminal (not merely a
// character device such as /dev/null).
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// splitList splits a comma-separated flag value.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// models opens model specs for one session, recording them when asked.
type models struct {
	env Env
	rec *replay.Recording
}

func (m *models) open(ctx context.Context, spec string) (llm.Model, error) {
	model, err := registry(m.env).New(ctx, spec)
	if err != nil || m.rec == nil {
		return model, err
	}
	return m.rec.Wrap(model), nil
}
