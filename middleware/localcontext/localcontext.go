// Package localcontext tells the model, once per thread, what the folder it
// works in is: its top-level layout, the build files found and the check
// they imply, the runtimes the sandbox has, and git's branch, in a section
// of the system prompt of about 300 tokens at most.
//
// The section is worked out when a thread's first run starts and kept in
// the thread's state (the private value ContextValue, saved with its
// checkpoints), so that every request of the thread, in any process, sends
// the same bytes and the cached prefix holds; Refresh (or deleting the
// value) works it out again.
package localcontext

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/llm"
)

// ContextValue is the state value that keeps a thread's section.
const ContextValue = "local_context"

// MaxBytes bounds the section: about 300 tokens.
const MaxBytes = 1200

// Config sets the middleware.
type Config struct {
	// Backend is the agent's: the folder is read through it, and when it
	// is a backend.Sandbox, the runtimes' versions are asked of it (from
	// /, so that nothing of the workspace chooses what runs).
	Backend backend.Backend
	// NoCommands keeps the middleware from running commands in the
	// sandbox (the runtimes' versions): the section then says what the
	// files say.
	NoCommands bool
}

// Middleware adds the section.
type Middleware struct{ cfg Config }

// New returns the middleware; Config.Backend is required.
func New(cfg Config) (*Middleware, error) {
	if cfg.Backend == nil {
		return nil, fmt.Errorf("localcontext: Config.Backend is required")
	}
	return &Middleware{cfg: cfg}, nil
}

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "local_context" }

// PrivateValues implements agent.PrivateValuer: a subagent works out its
// own, and returns nothing of it.
func (*Middleware) PrivateValues() []string { return []string{ContextValue} }

// BeforeAgent implements agent.BeforeAgentHook: a thread's first run
// works the section out.
func (m *Middleware) BeforeAgent(ctx context.Context, rt *agent.Runtime) error {
	if _, ok := rt.Value(ContextValue); ok {
		return nil
	}
	return m.Refresh(ctx, rt)
}

// Refresh works the section out again and keeps it in rt's state.
func (m *Middleware) Refresh(ctx context.Context, rt *agent.Runtime) error {
	text := Describe(ctx, m.cfg.Backend, !m.cfg.NoCommands)
	raw, err := json.Marshal(text)
	if err != nil {
		return err
	}
	rt.SetValue(ContextValue, raw)
	return nil
}

// WrapModel implements agent.ModelWrapper: the section, as the thread
// keeps it, ends the system prompt.
func (m *Middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	raw, ok := req.Runtime.Value(ContextValue)
	var text string
	if !ok || json.Unmarshal(raw, &text) != nil || text == "" {
		return next(ctx, req)
	}
	r := *req
	r.AppendSystem(text)
	return next(ctx, &r)
}

// buildFile is a file at the top of a project that says what it is.
type buildFile struct {
	name, kind string
	runtime    string // the command whose version the sandbox is asked
	check      func(content string) string
}

var buildFiles = []buildFile{
	{"go.mod", "Go module", "go version", func(string) string { return "go build ./... && go test ./..." }},
	{"package.json", "Node package", "node --version", npmCheck},
	{"pyproject.toml", "Python project", "python3 --version", pythonCheck},
	{"setup.py", "Python package", "python3 --version", func(string) string { return "python3 -m pytest" }},
	{"requirements.txt", "Python requirements", "python3 --version", nil},
	{"Cargo.toml", "Rust crate", "cargo --version", func(string) string { return "cargo test" }},
	{"pom.xml", "Maven project", "mvn --version", func(string) string { return "mvn test" }},
	{"build.gradle", "Gradle project", "gradle --version", func(string) string { return "gradle test" }},
	{"Makefile", "Makefile", "make --version", makeCheck},
}

// npmCheck is npm test when package.json has a test script.
func npmCheck(content string) string {
	var p struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal([]byte(content), &p) == nil && p.Scripts["test"] != "" {
		return "npm test"
	}
	return ""
}

func pythonCheck(content string) string {
	if strings.Contains(content, "pytest") {
		return "python3 -m pytest"
	}
	return ""
}

var makeTest = regexp.MustCompile(`(?m)^(test|check):`)

func makeCheck(content string) string {
	if m := makeTest.FindString(content); m != "" {
		return "make " + strings.TrimSuffix(m, ":")
	}
	return ""
}

// Describe works the section out of the folder b holds; with commands, it
// asks a sandbox for the runtimes' versions and git's status.
func Describe(ctx context.Context, b backend.Backend, commands bool) string {
	top, _ := b.List(ctx, "/")
	var dirs, files []string
	odd := 0
	for _, fi := range top {
		name := path.Base(fi.Path)
		if strings.HasPrefix(name, ".") && name != ".github" {
			continue
		}
		if !plain(name) {
			odd++
			continue
		}
		if fi.IsDir {
			dirs = append(dirs, name+"/")
		} else {
			files = append(files, name)
		}
	}
	var s strings.Builder
	s.WriteString("## The workspace\n\nWorked out when this conversation started; it may have changed since.\n")
	if len(dirs)+len(files)+odd == 0 {
		s.WriteString("- The folder is empty.\n")
		return s.String()
	}
	top0 := list(append(dirs, files...), 30)
	if odd > 0 {
		top0 += fmt.Sprintf(" (and %d with names not shown here)", odd)
	}
	fmt.Fprintf(&s, "- Top level: %s\n", top0)

	var found []buildFile
	var paths []string
	for _, bf := range buildFiles {
		if slices.Contains(files, bf.name) {
			found = append(found, bf)
			paths = append(paths, "/"+bf.name)
		}
	}
	var checks, runtimes []string
	for i, r := range b.Download(ctx, paths) {
		bf := found[i]
		if r.Err != nil || len(r.Content) > 256<<10 {
			continue
		}
		if bf.check != nil {
			if c := bf.check(string(r.Content)); c != "" && !slices.Contains(checks, c) {
				checks = append(checks, c)
			}
		}
		if !slices.Contains(runtimes, bf.runtime) {
			runtimes = append(runtimes, bf.runtime)
		}
	}
	if len(found) > 0 {
		kinds := make([]string, len(found))
		for i, bf := range found {
			kinds[i] = bf.name + " (" + bf.kind + ")"
		}
		fmt.Fprintf(&s, "- Build files: %s\n", strings.Join(kinds, ", "))
	}
	if len(checks) > 0 {
		fmt.Fprintf(&s, "- The check they imply: `%s`\n", strings.Join(checks, "`, `"))
	}
	branch := gitBranch(ctx, b)
	sb, isSandbox := b.(backend.Sandbox)
	if commands && isSandbox {
		if v := versions(ctx, sb, runtimes); v != "" {
			fmt.Fprintf(&s, "- Runtimes: %s\n", v)
		}
	}
	if branch != "" {
		// Read from .git, never by running git (see gitindex.go).
		fmt.Fprintf(&s, "- Git: on %s", branch)
		if st := gitChanges(ctx, b); st != "" {
			s.WriteString("; " + st)
		}
		s.WriteString("\n")
	}
	out := s.String()
	if len(out) > MaxBytes {
		out = out[:strings.LastIndexByte(out[:MaxBytes], '\n')+1]
	}
	return out
}

// plain reports whether a name the repository chose may be shown in the
// system prompt: short, one word of letters, digits and the punctuation of
// file names. A repository is not trusted: a name that could read as a
// sentence (spaces, line or paragraph separators, control or format
// characters) is left out, and counted with the others.
func plain(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-+@=,~", r)) {
			return false
		}
	}
	return true
}

// list is at most n names, then how many more.
func list(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, " ")
	}
	return strings.Join(names[:n], " ") + fmt.Sprintf(" (and %d more)", len(names)-n)
}

// gitBranch reads .git/HEAD: the branch, or "a detached HEAD".
func gitBranch(ctx context.Context, b backend.Backend) string {
	r := b.Download(ctx, []string{"/.git/HEAD"})
	if len(r) != 1 || r[0].Err != nil {
		return ""
	}
	head := strings.TrimSpace(string(r[0].Content))
	ref, ok := strings.CutPrefix(head, "ref: refs/heads/")
	if !ok {
		return "a detached HEAD"
	}
	if !refName.MatchString(ref) {
		return "a branch with a name not shown here" // the repository's text, not the model's instructions
	}
	return "branch " + ref
}

// refName is a branch name shown as it is: git's usual characters, short.
var refName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$`)

// versions asks the sandbox for the runtimes' versions, in one command.
func versions(ctx context.Context, sb backend.Sandbox, runtimes []string) string {
	if len(runtimes) == 0 {
		return ""
	}
	var cmd strings.Builder
	// From /, not the workspace: a version manager's shim (pyenv, asdf,
	// rustup) or a build tool (Maven's .mvn) reads the folder it runs in,
	// and a repository's files there could choose what runs.
	cmd.WriteString("cd / && { ")
	for _, r := range runtimes {
		fmt.Fprintf(&cmd, "%s 2>/dev/null | head -n 1; ", r)
	}
	cmd.WriteString("true; }")
	res, err := sb.Execute(ctx, cmd.String(), 10*time.Second)
	if err != nil {
		return ""
	}
	var out []string
	for line := range strings.Lines(res.Output) {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "; ")
}
