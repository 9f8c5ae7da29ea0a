// Package memory is the memory middleware: AGENTS.md files, loaded through
// the agent's backend into its system prompt at the start of every run.
package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path"
	"regexp"
	"slices"
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
// to date. Missing files are skipped. A file's imports, as Claude Code's
// CLAUDE.md has them ("@docs/style.md", outside code), are shown after it,
// read through the same backend; a text shown already is not shown again. Because the files are read through
// the agent's own backend, the agent updates its memory with edit_file and
// write_file like any other file.
type Middleware struct {
	backend backend.Backend
	sources []string
	logger  *slog.Logger
	// prompt appends the section to the system prompt: the same
	// section to the same prompt, step after step.
	prompt llm.SystemMemo
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
	m.load(ctx, m.sources, contents)
	order := m.withImports(ctx, contents)
	rt.SetLocal(memoryKey{}, m.section(order, contents))
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
		m.prompt.Append(&req.Request, s.(string))
	}
	return next(ctx, req)
}

// load reads paths into contents; a missing file is skipped, an
// unreadable one logged.
func (m *Middleware) load(ctx context.Context, paths []string, contents map[string]string) {
	for _, r := range m.backend.Download(ctx, paths) {
		switch {
		case r.Err == nil:
			contents[r.Path] = string(r.Content)
		case backend.ErrorCode(r.Err) != "file_not_found":
			cmp.Or(m.logger, slog.Default()).Warn("memory: skipping unreadable file", "path", r.Path, "err", r.Err)
		}
	}
}

// The bounds of imports: how deep they go, how many files and bytes they
// add at most.
const (
	maxImportDepth = 4
	maxImports     = 32
	maxImportBytes = 256 << 10
)

// withImports follows the imports of the files loaded (Claude Code's
// "@path" words, outside code: a file of the backend, relative to the
// importing one unless absolute), loading what they name into contents,
// and returns the paths to show in order: each source followed by what it
// imports, depth first, each file once. Bounded by maxImportDepth,
// maxImports and maxImportBytes.
func (m *Middleware) withImports(ctx context.Context, contents map[string]string) []string {
	seen := make(map[string]bool, len(m.sources))
	for _, p := range m.sources {
		seen[p] = true
	}
	imported := map[string][]string{} // a file's imports that loaded
	frontier := slices.Clone(m.sources)
	added, size := 0, 0
	for depth := 0; depth < maxImportDepth && len(frontier) > 0; depth++ {
		var next []string
		for _, p := range frontier {
			c, ok := contents[p]
			if !ok {
				continue
			}
			for _, target := range importsOf(p, c) {
				if seen[target] || added >= maxImports {
					continue
				}
				seen[target] = true
				added++
				next = append(next, target)
				imported[p] = append(imported[p], target)
			}
		}
		m.load(ctx, next, contents)
		for _, p := range next {
			if size += len(contents[p]); size > maxImportBytes {
				delete(contents, p)
			}
		}
		frontier = next
	}
	var order []string
	var walk func(p string)
	walk = func(p string) {
		order = append(order, p)
		for _, t := range imported[p] {
			walk(t)
		}
	}
	for _, p := range m.sources {
		walk(p)
	}
	return order
}

// importWord is an import: @ and a path, at the start of a line or after
// a space.
var importWord = regexp.MustCompile(`(?:^|[\s(])@([A-Za-z0-9_./-]+)`)

// importsOf returns the paths text (the file at p) imports, outside code
// blocks and code spans, resolved against p's folder.
func importsOf(p, text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.Contains(line, "@") {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range importWord.FindAllStringSubmatch(line, -1) {
			target := strings.TrimRight(m[1], ".,;:")
			if target == "" || strings.HasSuffix(target, "/") {
				continue
			}
			if !strings.HasPrefix(target, "/") {
				target = path.Join(path.Dir(p), target)
			}
			out = append(out, path.Clean(target))
		}
	}
	return out
}

// codeSpan is Markdown's inline code.
var codeSpan = regexp.MustCompile("`[^`]*`")

// section renders the memory block for the system prompt: the files of
// order that loaded.
func (m *Middleware) section(order []string, contents map[string]string) string {
	if len(m.sources) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Memory\n\n<agent_memory>\n")
	found := false
	shown := make(map[string]bool, len(order))
	for _, p := range order {
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
