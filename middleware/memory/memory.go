// Package memory is the memory middleware: AGENTS.md files, loaded through
// the agent's backend into its system prompt at the start of every run.
package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/llm"
)

// Value is the state value in which a run keeps the memory it loaded: a
// JSON object from path to content, for inspection.
const Value = "memory_contents"

// Config configures the memory middleware.
type Config struct {
	// Backend is where the files are read. Required.
	Backend backend.Backend
	// Sources are the paths of the AGENTS.md files, in the order they are
	// shown.
	Sources []string
	// Logger receives warnings about unreadable files; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Middleware loads AGENTS.md files through a backend at the start of every
// run and puts them in the system prompt, with guidance on keeping them up
// to date. Missing files are skipped. Because the files are read through
// the agent's own backend, the agent updates its memory with edit_file and
// write_file like any other file.
type Middleware struct {
	backend backend.Backend
	sources []string
	logger  *slog.Logger
}

// New returns the memory middleware. It fails without a Backend.
func New(cfg Config) (*Middleware, error) {
	if cfg.Backend == nil {
		return nil, errors.New("memory: Config.Backend is required")
	}
	return &Middleware{backend: cfg.Backend, sources: cfg.Sources, logger: cfg.Logger}, nil
}

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "memory" }

// PrivateValues implements agent.PrivateValuer: each agent loads its own
// AGENTS.md.
func (*Middleware) PrivateValues() []string { return []string{Value} }

// Sources returns the memory file paths.
func (m *Middleware) Sources() []string { return m.sources }

type memoryKey struct{}

// BeforeAgent implements agent.BeforeAgentHook.
func (m *Middleware) BeforeAgent(ctx context.Context, rt *agent.Runtime) error {
	contents := make(map[string]string)
	for _, r := range m.backend.Download(ctx, m.sources) {
		switch {
		case r.Err == nil:
			contents[r.Path] = string(r.Content)
		case backend.ErrorCode(r.Err) != "file_not_found":
			cmp.Or(m.logger, slog.Default()).Warn("memory: skipping unreadable file", "path", r.Path, "err", r.Err)
		}
	}
	rt.SetLocal(memoryKey{}, m.section(contents))
	// Keep the loaded memory in the state for inspection; write it only
	// when it changed, so checkpoints do not repeat it.
	raw, err := json.Marshal(contents)
	if err != nil {
		return err
	}
	if old, ok := rt.Value(Value); !ok || string(old) != string(raw) {
		rt.SetValue(Value, raw)
	}
	return nil
}

// WrapModel implements agent.ModelWrapper.
func (m *Middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	if s, ok := req.Runtime.Local(memoryKey{}); ok && s.(string) != "" {
		req.AppendSystem(s.(string))
	}
	return next(ctx, req)
}

// section renders the memory block for the system prompt.
func (m *Middleware) section(contents map[string]string) string {
	if len(m.sources) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Memory\n\n<agent_memory>\n")
	found := false
	shown := make(map[string]bool, len(m.sources))
	for _, p := range m.sources {
		c, ok := contents[p]
		// A file that says what an earlier one says (CLAUDE.md, a link
		// to AGENTS.md) is shown once.
		if !ok || shown[c] {
			continue
		}
		found, shown[c] = true, true
		b.WriteString("### ")
		b.WriteString(p)
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(c, "\n"))
		b.WriteString("\n\n")
	}
	if !found {
		b.WriteString("(nothing saved yet)\n")
	}
	b.WriteString("</agent_memory>\n\n<memory_guidelines>\n")
	b.WriteString("The memory above persists across conversations. It lives in these files: ")
	b.WriteString(strings.Join(m.sources, ", "))
	b.WriteString(`.
Keep it useful:
- When the user corrects you, states a preference, or tells you how they want things done, update the memory right away with edit_file (or write_file if the file does not exist yet), before you continue.
- Record lasting lessons: conventions of the project, commands that work, mistakes to avoid. Write the general rule, not the one-off incident.
- Do not save transient details of the current task, and never save secrets such as passwords, tokens or API keys.
- Keep it short and organised; rewrite entries that became wrong.
</memory_guidelines>`)
	return b.String()
}
