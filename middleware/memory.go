package middleware

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/llm"
)

// AgentsMemory loads AGENTS.md files through a backend at the start of every run
// and puts them in the system prompt, with guidance on keeping them up to
// date. Missing files are skipped. Because the files are read through the
// agent's own backend, the agent updates its memory with edit_file and
// write_file like any other file.
type AgentsMemory struct {
	backend backend.Backend
	sources []string
	// Logger receives warnings about unreadable files.
	Logger *slog.Logger
}

// NewAgentsMemory returns the memory middleware reading the given paths, in
// order.
func NewAgentsMemory(b backend.Backend, sources ...string) *AgentsMemory {
	return &AgentsMemory{backend: b, sources: sources}
}

// Name implements agent.Middleware.
func (*AgentsMemory) Name() string { return "memory" }

// PrivateValues implements agent.PrivateValuer: each agent loads its own
// AGENTS.md.
func (*AgentsMemory) PrivateValues() []string { return []string{MemoryValue} }

// Sources returns the memory file paths.
func (m *AgentsMemory) Sources() []string { return m.sources }

type memoryKey struct{}

// BeforeAgent implements agent.BeforeAgentHook.
func (m *AgentsMemory) BeforeAgent(ctx context.Context, rt *agent.Runtime) error {
	contents := make(map[string]string)
	for _, r := range m.backend.Download(ctx, m.sources) {
		switch {
		case r.Err == nil:
			contents[r.Path] = string(r.Content)
		case backend.ErrorCode(r.Err) != "file_not_found":
			logger(m.Logger).Warn("memory: skipping unreadable file", "path", r.Path, "err", r.Err)
		}
	}
	rt.SetLocal(memoryKey{}, m.section(contents))
	// Keep the loaded memory in the state for inspection; write it only
	// when it changed, so checkpoints do not repeat it.
	raw, err := json.Marshal(contents)
	if err != nil {
		return err
	}
	if old, ok := rt.Value(MemoryValue); !ok || string(old) != string(raw) {
		rt.SetValue(MemoryValue, raw)
	}
	return nil
}

// WrapModel implements agent.ModelWrapper.
func (m *AgentsMemory) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	if s, ok := req.Runtime.Local(memoryKey{}); ok && s.(string) != "" {
		req.System = joinSections(req.System, s.(string))
	}
	return next(ctx, req)
}

// section renders the memory block for the system prompt.
func (m *AgentsMemory) section(contents map[string]string) string {
	if len(m.sources) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Memory\n\n<agent_memory>\n")
	found := false
	for _, p := range m.sources {
		c, ok := contents[p]
		if !ok {
			continue
		}
		found = true
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

func joinSections(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

func logger(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.Default()
}
