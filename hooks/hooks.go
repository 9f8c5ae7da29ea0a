package hooks

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/llm"
)

// Dialect is the vocabulary a hook speaks: the agent's tool names and
// arguments, or Claude Code's.
type Dialect int

const (
	// DialectAgent: the agent's names (execute, write_file, ...) and
	// arguments, its paths as the agent sees them.
	DialectAgent Dialect = iota
	// DialectClaude: Claude Code's names (Bash, Write, ...) and input
	// fields, paths as the host's absolute paths (Config.HostPath).
	DialectClaude
)

// Func is a hook in Go. It returns nil to go on. An error is a failed
// hook: a warning, never a block.
type Func func(ctx context.Context, in *Input) (*Output, error)

// Hook is one hook: the event it runs at, which of the event's occurrences
// (Matcher), and what runs: a shell command or a Go function.
type Hook struct {
	Event Event
	// Matcher selects what the hook runs for: the tool's name for
	// PreToolUse, PostToolUse and PostToolUseFailure, the subagent's for
	// SubagentStart and SubagentStop, the
	// trigger, type, source or reason of the others (see the events).
	// "", "*" and no matcher match everything; letters, digits, _ and |
	// name exact values (Edit|Write); anything else is a regular
	// expression, unanchored (mcp__github__.*). Events without a
	// matcher field (UserPromptSubmit, Stop) ignore it.
	Matcher string
	// Command is run by the shell (bash, else sh), in Config.Dir, with
	// the event as JSON on its standard input and $CLAUDE_PROJECT_DIR
	// set. URL is an http hook's: the event is POSTed to it as JSON (see
	// http.go), with Headers, whose $VAR and ${VAR} are expanded for the
	// variables AllowedEnvVars names only. Prompt is a prompt hook's: a
	// model (Config.Model) decides (see prompt.go). Exactly one of
	// Command, URL, Prompt and Func is set.
	Command string
	// Env are more variables of a command hook's environment
	// ("CLAUDE_PLUGIN_ROOT=/path" for a plugin's hooks).
	Env            []string
	URL            string
	Headers        map[string]string
	AllowedEnvVars []string
	Prompt         string
	Func           Func
	// Timeout bounds the hook; zero means DefaultTimeout.
	Timeout time.Duration
	// Dialect is the vocabulary of its input and output.
	Dialect Dialect
	// Name is what messages call the hook; "" means its command.
	Name string
}

// DefaultTimeout bounds a hook that sets no Timeout, as in Claude Code.
const DefaultTimeout = 60 * time.Second

// Bounds of what a hook may hand back: its output read, and each text of
// it kept (what Claude Code keeps of additionalContext).
const (
	maxOutput = 1 << 20
	maxText   = 10_000
)

// Config configures a Runner.
type Config struct {
	Hooks []Hook
	// Dir is the project folder: the working directory of command hooks,
	// their $CLAUDE_PROJECT_DIR and the events' cwd. "" means the
	// process's working directory.
	Dir string
	// HostPath maps a path as the agent sees it (/src/a.go) to the host's
	// (/home/me/proj/src/a.go), for hooks in Claude Code's dialect; false
	// when it has none (a file in the thread's state). AgentPath maps
	// back, for their updatedInput. Nil means paths as they are.
	HostPath  func(agentPath string) (string, bool)
	AgentPath func(hostPath string) (string, bool)
	// Logger receives what no event can carry (a hook's notes outside a
	// run); nil means slog.Default().
	Logger *slog.Logger
	// Getenv reads the variables http hooks' headers name; nil means
	// os.Getenv.
	Getenv func(string) string
	// Model answers prompt hooks; nil fails them (a warning each time).
	// deepagents.New gives its agent's model when this is nil.
	Model llm.Model
}

// promptName is how messages call a prompt hook: its first words.
func promptName(p string) string {
	if p == "" {
		return ""
	}
	if w := strings.Fields(p); len(w) > 6 {
		p = strings.Join(w[:6], " ") + "…"
	}
	return "prompt " + strconv.Quote(p)
}

// countSet counts the conditions that hold.
func countSet(conds ...bool) int {
	n := 0
	for _, c := range conds {
		if c {
			n++
		}
	}
	return n
}

// Runner runs the hooks of a Config. Its methods are safe for concurrent
// use; a nil Runner runs nothing.
type Runner struct {
	cfg   Config
	hooks []compiled
	has   map[Event]bool
}

type compiled struct {
	Hook
	match func(string) bool
}

// New checks the hooks (a known event, a matcher that compiles, one of
// Command and Func) and returns their Runner.
func New(cfg Config) (*Runner, error) {
	if cfg.Dir == "" {
		cfg.Dir, _ = os.Getwd()
	}
	r := &Runner{cfg: cfg, has: make(map[Event]bool)}
	var errs []error
	for i, h := range cfg.Hooks {
		name := cmp.Or(h.Name, h.Command, h.URL, promptName(h.Prompt), fmt.Sprintf("hook %d", i+1))
		if !h.Event.Known() {
			errs = append(errs, fmt.Errorf("hooks: %s: unknown event %q (one of %s)", name, h.Event, eventList()))
			continue
		}
		if countSet(h.Command != "", h.URL != "", h.Prompt != "", h.Func != nil) != 1 {
			errs = append(errs, fmt.Errorf("hooks: %s hook %s: set one of Command, URL, Prompt and Func", h.Event, name))
			continue
		}
		if h.URL != "" {
			if u, err := url.Parse(h.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, fmt.Errorf("hooks: %s hook %s: the URL must be http:// or https:// with a host", h.Event, name))
				continue
			}
		}
		m, err := compileMatcher(h.Matcher)
		if err != nil {
			errs = append(errs, fmt.Errorf("hooks: %s hook %s: %w", h.Event, name, err))
			continue
		}
		h.Name = clip.Text(strings.Join(strings.Fields(name), " "), 60) // a line in notes
		r.hooks = append(r.hooks, compiled{Hook: h, match: m})
		r.has[h.Event] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

func eventList() string {
	s := make([]string, len(Events))
	for i, e := range Events {
		s[i] = string(e)
	}
	return strings.Join(s, ", ")
}

// compileMatcher returns the test of a matcher (see Hook.Matcher).
func compileMatcher(m string) (func(string) bool, error) {
	if m == "" || m == "*" {
		return func(string) bool { return true }, nil
	}
	if plain.MatchString(m) {
		names := strings.Split(m, "|")
		return func(s string) bool {
			for _, n := range names {
				if n == s {
					return true
				}
			}
			return false
		}, nil
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return nil, fmt.Errorf("matcher %q: %w", m, err)
	}
	return re.MatchString, nil
}

var plain = regexp.MustCompile(`^[A-Za-z0-9_|]+$`)

// Has reports whether any hook runs at e.
func (r *Runner) Has(e Event) bool { return r != nil && r.has[e] }

// Dir is the project folder hooks run in.
func (r *Runner) Dir() string {
	if r == nil {
		return ""
	}
	return r.cfg.Dir
}

// Run runs the hooks of in's event that match it, all at once, each within
// its timeout, and returns what they decided together. Identical commands
// run once. in is in the agent's dialect; a hook of Claude Code's gets it
// translated.
func (r *Runner) Run(ctx context.Context, in Input) Result {
	var res Result
	if !r.Has(in.HookEventName) {
		return res
	}
	in.Cwd = cmp.Or(in.Cwd, r.cfg.Dir)
	var run []compiled
	seen := map[string]bool{}
	for _, h := range r.hooks {
		if h.Event != in.HookEventName || !r.matches(h, &in) {
			continue
		}
		if h.Command != "" || h.URL != "" || h.Prompt != "" {
			key := fmt.Sprint(h.Dialect, h.Command, h.URL, h.Prompt, h.Env) // two plugins' same command are two hooks
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		run = append(run, h)
	}
	outs := make([]outcome, len(run))
	var wg sync.WaitGroup
	for i, h := range run {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = r.runOne(ctx, h, &in)
		}()
	}
	wg.Wait()
	res.Ran = len(run)
	for i, o := range outs {
		r.reduce(&res, run[i], &in, o)
	}
	return res
}

// matches reports whether h's matcher selects in. A hook of Claude Code's
// dialect is matched on Claude Code's name of the tool, or the agent's.
func (r *Runner) matches(h compiled, in *Input) bool {
	if !matched(in.HookEventName) {
		return true
	}
	on := in.matchOn()
	if h.Dialect == DialectClaude && in.ToolName != "" {
		for _, c := range claudeAliases[on] { // Edit and MultiEdit for edit_file
			if h.match(c) {
				return true
			}
		}
	}
	return h.match(on)
}

// outcome is how one hook ended: its Output, or a note of what it said
// instead (plain output, a block by exit status 2, a failure).
type outcome struct {
	out   *Output
	plain string // exit 0, output that is not JSON
	block string // exit 2: standard error, the reason
	fail  string // any other end: a warning
}

// runOne runs one hook on in, translated to its dialect.
func (r *Runner) runOne(ctx context.Context, h compiled, in *Input) (o outcome) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(h.Timeout, DefaultTimeout))
	defer cancel()
	hin := in
	if h.Dialect == DialectClaude {
		hin = r.toClaude(in)
	}
	if h.Func != nil {
		// The hook's own copy: what it changes stays its own.
		c := *hin
		c.ToolInput = bytes.Clone(c.ToolInput)
		c.ToolResponse = bytes.Clone(c.ToolResponse)
		done := make(chan outcome, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					done <- outcome{fail: fmt.Sprintf("panicked: %v", p)}
				}
			}()
			out, err := h.Func(ctx, &c)
			if err != nil {
				done <- outcome{fail: err.Error()}
				return
			}
			done <- outcome{out: out}
		}()
		select {
		case o := <-done:
			return o
		case <-ctx.Done():
			return ended(ctx, h) // a hook that ignores its context is left behind
		}
	}
	payload, err := json.Marshal(hin)
	if err != nil {
		return outcome{fail: err.Error()}
	}
	switch {
	case h.URL != "":
		return r.runHTTP(ctx, h, payload)
	case h.Prompt != "":
		return r.runPrompt(ctx, h, payload)
	}
	return r.runCommand(ctx, h, payload)
}

// ended is the outcome of a hook whose context ended: its timeout, or the
// run's end (a cancelled run).
func ended(ctx context.Context, h compiled) outcome {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return outcome{fail: fmt.Sprintf("did not finish within %s; stopped", cmp.Or(h.Timeout, DefaultTimeout))}
	}
	return outcome{fail: "stopped: the run was cancelled"}
}

// reduce adds a hook's outcome to res, as its event takes it.
func (r *Runner) reduce(res *Result, h compiled, in *Input, o outcome) {
	note := func(text string, warning bool) {
		if text = strings.TrimSpace(text); text != "" {
			res.Notes = append(res.Notes, Note{Hook: h.Name, Text: clip.Text(text, maxText), Warning: warning})
		}
	}
	e := in.HookEventName
	if o.fail != "" {
		note(o.fail, true)
		return
	}
	if o.block != "" {
		reason := clip.Text(strings.TrimSpace(o.block), maxText)
		switch e {
		case PreToolUse, PermissionRequest:
			res.decide(DecisionDeny, reason)
		case PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SubagentStop:
			res.decide(DecisionBlock, reason)
		default:
			note(reason, false) // exit 2 blocks nothing here: shown
		}
		return
	}
	if o.plain != "" {
		if e == UserPromptSubmit || e == SessionStart || e == SubagentStart {
			res.Context = append(res.Context, clip.Text(strings.TrimSpace(o.plain), maxText))
		} else {
			note(o.plain, false)
		}
		return
	}
	out := o.out
	if out == nil {
		return
	}
	if out.Continue != nil && !*out.Continue {
		res.Halt = true
		if res.HaltReason == "" {
			res.HaltReason = clip.Text(strings.TrimSpace(out.StopReason), maxText)
		}
	}
	note(out.SystemMessage, false)
	sp := out.Specific
	if sp == nil {
		sp = &Specific{}
	}
	if e == PreToolUse {
		reason := cmp.Or(sp.PermissionDecisionReason, out.Reason)
		d := sp.PermissionDecision
		if d == "" {
			d = map[string]string{"approve": "allow", "block": "deny"}[out.Decision]
		}
		switch d {
		case "":
		case "allow", "ask", "deny":
			res.decide(Decision(d), clip.Text(strings.TrimSpace(reason), maxText))
		default:
			note(fmt.Sprintf("permissionDecision %q is not allow, deny or ask; ignored", d), true)
		}
		if len(sp.UpdatedInput) > 0 && res.UpdatedInput == nil {
			if u, ok := r.updatedInput(h, in.ToolName, sp.UpdatedInput); ok {
				res.UpdatedInput = u
			} else {
				note("updatedInput is not a JSON object; ignored", true)
			}
		}
	} else if e == PermissionRequest {
		if pd := sp.Decision; pd == nil && out.Decision == "block" {
			res.decide(DecisionDeny, clip.Text(strings.TrimSpace(out.Reason), maxText)) // a prompt hook's "ok": false
		} else if pd != nil {
			switch pd.Behavior {
			case "allow", "deny":
				res.decide(Decision(pd.Behavior), clip.Text(strings.TrimSpace(pd.Message), maxText))
			default:
				note(fmt.Sprintf("decision.behavior %q is not allow or deny; ignored", pd.Behavior), true)
			}
		}
	} else if out.Decision == "block" {
		reason := strings.TrimSpace(out.Reason)
		if reason == "" && (e == Stop || e == SubagentStop) {
			// Nothing to tell the agent: it would go back to work
			// without knowing what for.
			note(`decision "block" without a reason; ignored`, true)
		} else {
			res.decide(DecisionBlock, clip.Text(reason, maxText))
		}
	}
	if c := strings.TrimSpace(sp.AdditionalContext); c != "" {
		res.Context = append(res.Context, clip.Text(c, maxText))
	}
}

// updatedInput returns a hook's new arguments in the agent's dialect,
// false when they are not a JSON object.
func (r *Runner) updatedInput(h compiled, tool string, raw json.RawMessage) (json.RawMessage, bool) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, false
	}
	if h.Dialect == DialectClaude {
		return r.fromClaude(tool, obj), true
	}
	return raw, true
}
