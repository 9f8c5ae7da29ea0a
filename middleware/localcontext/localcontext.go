// Package localcontext tells the model, once per thread, what the folder it
// works in is: its top-level layout, the build files found and the check
// they imply, the runtimes the sandbox has, and git's branch and status,
// in a section of the system prompt of about 300 tokens at most.
//
// The section is worked out when a thread's first run starts and kept in
// the thread's state (the private value ContextValue, saved with its
// checkpoints), so that every request of the thread, in any process, sends
// the same bytes and the cached prefix holds; Refresh (or deleting the
// value) works it out again.
package localcontext

import (
	"bytes"
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
	// is a backend.Sandbox, the runtimes and git's status are asked of it.
	Backend backend.Backend
	// NoCommands keeps the middleware from running commands in the
	// sandbox (the runtimes' versions, git status): the section then says
	// what the files say.
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
	for _, fi := range top {
		name := path.Base(fi.Path)
		if strings.HasPrefix(name, ".") && name != ".github" || !plain(name) {
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
	if len(dirs)+len(files) == 0 {
		s.WriteString("- The folder is empty.\n")
		return s.String()
	}
	fmt.Fprintf(&s, "- Top level: %s\n", list(append(dirs, files...), 30))

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
		fmt.Fprintf(&s, "- Git: on %s", branch)
		if commands && isSandbox {
			if st := gitStatus(ctx, sb); st != "" {
				s.WriteString("; " + st)
			}
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
// system prompt: short, printable, one line. A repository is not trusted:
// a file named like an instruction stays a file name, and a long or odd
// one is left out.
func plain(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if r < ' ' || r == 0x7f || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
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
	if ref, ok := strings.CutPrefix(head, "ref: refs/heads/"); ok {
		return "branch " + ref
	}
	return "a detached HEAD"
}

// versions asks the sandbox for the runtimes' versions, in one command.
func versions(ctx context.Context, sb backend.Sandbox, runtimes []string) string {
	if len(runtimes) == 0 {
		return ""
	}
	var cmd strings.Builder
	for _, r := range runtimes {
		fmt.Fprintf(&cmd, "%s 2>/dev/null | head -n 1 || true; ", r)
	}
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

// gitStatus is git's count of changed files, and the first few.
func gitStatus(ctx context.Context, sb backend.Sandbox) string {
	res, err := sb.Execute(ctx, "git status --porcelain 2>/dev/null", 10*time.Second)
	if err != nil || res.ExitCode != 0 {
		return ""
	}
	lines := bytes.Count([]byte(res.Output), []byte("\n"))
	if lines == 0 {
		return "no uncommitted changes"
	}
	var names []string
	for line := range strings.Lines(res.Output) {
		if name := strings.TrimSpace(line[min(3, len(line)):]); plain(name) {
			names = append(names, name)
		}
	}
	return fmt.Sprintf("%d uncommitted changes (%s)", lines, list(names, 5))
}
