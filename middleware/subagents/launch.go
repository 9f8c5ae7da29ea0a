package subagents

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/budget"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/thread"
)

// Entry is a subagent ready to run: built once, when its middleware is,
// and run for each task call or background task. NewEntry builds one: the
// task tool builds its subagents so, and package
// middleware/subagents/background its local ones.
type Entry struct {
	name, description string
	run               Runnable
	durable           bool         // keeps its state in a Checkpointer (it can stop for approval)
	compiled          bool         // a Runnable given by the caller
	private           []string     // state values it keeps to itself (see agent.PrivateValuer)
	fork              bool         // starts from the caller's conversation (Fork; the task tool's only)
	isolation         isolate.Mode // a workspace of its own (the task tool's only)

	// The resumer of a declarative subagent that is not durable (it asks
	// for no approval) but whose thread waits for decisions, as it asked
	// under an earlier configuration, in an earlier process: see resumer.
	// resumerCfg reports false without a Checkpointer.
	resumerOnce sync.Once
	resumerCfg  func() (agent.Config, bool, error)
	resumerRun  Runnable
	resumerErr  error
}

// NewEntry builds sa: a compiled subagent as it is, a declarative one as
// an agent of parent's configuration with what it overrides. It checks
// neither sa's name nor its Mode: that is its middleware's part.
func NewEntry(parent Parent, sa Subagent) (*Entry, error) {
	e := newEntry(sa)
	if err := e.build(parent, sa); err != nil {
		return nil, err
	}
	return e, nil
}

// Name returns the subagent's name.
func (e *Entry) Name() string { return e.name }

// Description returns what the subagent is for.
func (e *Entry) Description() string { return e.description }

// Runnable returns what runs the subagent.
func (e *Entry) Runnable() Runnable { return e.run }

// Durable reports whether the subagent keeps its state in a Checkpointer
// (it can stop for approval).
func (e *Entry) Durable() bool { return e.durable }

func newEntry(sa Subagent) *Entry {
	return &Entry{name: sa.Name, description: sa.Description, run: sa.Runnable, compiled: sa.Runnable != nil}
}

// build makes the agent of a declarative entry and reads the private
// values of its Runnable.
func (e *Entry) build(parent Parent, sa Subagent) error {
	if e.run == nil {
		a, durable, err := buildSubagent(parent, sa)
		if err != nil {
			return err
		}
		e.run, e.durable = a, durable
		e.resumerCfg = func() (agent.Config, bool, error) {
			c, _, err := subagentConfig(parent, sa)
			c.Checkpointer = parent.Agent.Checkpointer
			return c, c.Checkpointer != nil, err
		}
	}
	if p, ok := e.run.(interface{ PrivateValues() []string }); ok {
		e.private = p.PrivateValues()
	}
	return nil
}

// launcher builds and keeps the subagents of the task tool.
type launcher struct {
	parent Parent
	what   string // names the middleware in the errors of its New
	byName map[string]*Entry
	names  []string
}

func newLauncher(parent Parent, what string) launcher {
	return launcher{parent: parent, what: what, byName: make(map[string]*Entry)}
}

// add checks sa's name and builds its entry (see NewEntry). prepare, when
// set, vets and completes the entry first (its mode).
func (l *launcher) add(sa Subagent, prepare func(e *Entry) error) error {
	if sa.Name == "" {
		return fmt.Errorf("%s: a subagent has no name", l.what)
	}
	if _, dup := l.byName[sa.Name]; dup {
		return fmt.Errorf("%s: two subagents are named %q", l.what, sa.Name)
	}
	e := newEntry(sa)
	if prepare != nil {
		if err := prepare(e); err != nil {
			return fmt.Errorf("%s: %s: %w", l.what, sa.Name, err)
		}
	}
	if err := e.build(l.parent, sa); err != nil {
		return fmt.Errorf("%s: %s: %w", l.what, sa.Name, err)
	}
	l.byName[sa.Name] = e
	l.names = append(l.names, sa.Name)
	return nil
}

// resumer returns the Runnable that continues the subagent's waiting
// thread: the subagent itself when it keeps one (durable or compiled), an
// agent of the same configuration with the Checkpointer otherwise, nil
// when there is none.
func (e *Entry) resumer() (Runnable, error) {
	if e.durable || e.compiled {
		return e.run, nil
	}
	e.resumerOnce.Do(func() {
		c, ok, err := e.resumerCfg()
		if err != nil || !ok {
			e.resumerErr = err
			return
		}
		a, err := agent.New(c)
		if err != nil {
			e.resumerErr = err
			return
		}
		e.resumerRun = a
	})
	return e.resumerRun, e.resumerErr
}

// Input begins the input of a run of e for the tool call callID of rt's
// run: its namespace under the caller's, and the caller's events while its
// stream lasts.
func (e *Entry) Input(rt *agent.Runtime, callID string) agent.Input {
	in := agent.Input{Namespace: append(slices.Clone(rt.Namespace()), e.name+":"+callID)}
	if rt.Streaming() {
		// The run's Emit does nothing once the run has ended.
		in.Events = rt.Emit
	}
	return in
}

// buildSubagent makes an agent of a declarative subagent.
func buildSubagent(cfg Parent, sa Subagent) (*agent.Agent, bool, error) {
	c, durable, err := subagentConfig(cfg, sa)
	if err != nil {
		return nil, false, err
	}
	a, err := agent.New(c)
	return a, durable, err
}

// subagentConfig is the configuration of a declarative subagent: cfg.Agent
// with what the subagent overrides, and whether it keeps its state in a
// Checkpointer (it can stop for approval). TestSubagentInheritsEveryOption
// checks that each field of agent.Config is either inherited or listed
// here as overridden.
func subagentConfig(cfg Parent, sa Subagent) (agent.Config, bool, error) {
	c := cfg.Agent
	c.Name = sa.Name
	c.SystemPrompt = sa.SystemPrompt
	c.AllowedTools = sa.AllowedTools
	c.ResponseSchema = nil
	if sa.Model != nil {
		c.Model = sa.Model
	}
	if sa.Tools != nil {
		c.Tools = sa.Tools
	}
	var stack []agent.Middleware
	if cfg.Middleware != nil {
		stack = cfg.Middleware()
	}
	own := sa.Middleware
	if sa.Budget != nil {
		b, err := budget.New(*sa.Budget)
		if err != nil {
			return agent.Config{}, false, err
		}
		// In the place of the task's: its ledger is a child of the task's,
		// which still counts what the subagent spends.
		own = append([]agent.Middleware{b}, own...)
	}
	stack = withOwn(stack, own)
	on := sa.InterruptOn
	if on == nil {
		on = cfg.InterruptOn
	}
	durable := len(on) > 0 || cfg.Permissions != nil
	// The caller honours permission modes: so does the subagent, which
	// gets the caller's mode with its state values.
	modes := len(cfg.InterruptOn) > 0 || cfg.Permissions != nil || cfg.PermissionMode != ""
	durable = durable || cfg.PreToolUse != nil // a hook may ask
	c.Checkpointer = nil
	if durable || modes {
		approvals, err := hitl.New(hitl.Config{On: on, Rules: cfg.Permissions, Mode: cfg.PermissionMode, PreToolUse: cfg.PreToolUse, PermissionRequest: cfg.PermissionRequest})
		if err != nil {
			return agent.Config{}, false, err
		}
		stack = append(stack, approvals)
	}
	if durable {
		c.Checkpointer = cfg.Agent.Checkpointer
		if c.Checkpointer == nil {
			c.Checkpointer = checkpoint.NewMemorySaver()
		}
	}
	c.Middleware = stack
	return c, durable, nil
}

// withOwn adds a subagent's own middleware to its default stack: one with
// the name of a default replaces it in place (as deepagents.Config's
// Middleware does at the top), the others come after; two of its own of a
// name are agent.New's error.
func withOwn(stack, own []agent.Middleware) []agent.Middleware {
	defaults := len(stack)
	for _, m := range own {
		if i := slices.IndexFunc(stack[:defaults], func(d agent.Middleware) bool { return d.Name() == m.Name() }); i >= 0 {
			stack[i] = m
			continue
		}
		stack = append(stack, m)
	}
	return stack
}

// SharedState is what a subagent gets of its caller's state: the values
// the caller's middleware do not keep to it, and the files.
func SharedState(rt *agent.Runtime) (map[string]json.RawMessage, map[string]thread.FileData) {
	values := rt.Values()
	for k := range values {
		if rt.IsPrivate(k) {
			delete(values, k)
		}
	}
	return values, rt.Files().Snapshot()
}

// FinalReport is a subagent's answer: the text of its last message; ok is
// false when it has none. A run a guard ended early (a loop, a budget)
// says so first, with its last answer when its last message is not one
// (a tool's result is no report).
func FinalReport(res *agent.Result) (report string, ok bool) {
	last := res.LastMessage()
	if last == nil {
		return "", false
	}
	if res.EndCode == "" {
		return strings.TrimRight(last.Text(), " \t\n"), true
	}
	report = fmt.Sprintf("The subagent was stopped (%s): %s.", res.EndCode, res.EndReason)
	for i := len(res.State.Messages) - 1; i >= 0; i-- {
		if m := &res.State.Messages[i]; m.Role == llm.RoleAssistant && strings.TrimSpace(m.Text()) != "" {
			return report + " Its last words:\n" + strings.TrimRight(m.Text(), " \t\n"), true
		}
	}
	return report, true
}

// MergeBack applies the files and values e's run changed to the caller's
// state. Only what differs from the caller's current state is written, so
// files the subagent merely received do not count as changes. With base,
// the caller's files as the subagent got them (a background task, which
// ran while the caller went on), a file the caller changed too since is
// left as the caller has it, and returned.
func (e *Entry) MergeBack(rt *agent.Runtime, base map[string]thread.FileData, res *agent.Result) (conflicts []string) {
	if res.State == nil {
		return nil
	}
	if res.State.Files != nil {
		files := rt.Files()
		for _, p := range res.ChangedFiles {
			d, ok := res.State.Files.Get(p)
			if !ok {
				continue
			}
			cur, had := files.Get(p)
			if had && cur.Content == d.Content {
				continue
			}
			if base != nil {
				if b, hadBase := base[p]; had != hadBase || had && cur.Content != b.Content {
					conflicts = append(conflicts, p)
					continue
				}
			}
			files.Put(p, d)
		}
	}
	mergeValues(rt, e.private, res)
	return conflicts
}

// mergeValues applies the values a subagent changed to the caller's state,
// but its own and the caller's private ones, and those it left as they
// were.
func mergeValues(rt *agent.Runtime, private []string, res *agent.Result) {
	for _, k := range res.ChangedValues {
		if rt.IsPrivate(k) || slices.Contains(private, k) {
			continue
		}
		v := res.State.Values[k]
		if old, ok := rt.Value(k); ok && string(old) == string(v) {
			continue
		}
		rt.SetValue(k, json.RawMessage(v))
	}
}

// Resumer returns what continues a run of the subagent that stopped for
// decisions, in its thread: the subagent itself when it keeps one, an
// agent of the same configuration with the Checkpointer otherwise, nil
// when there is none.
func (e *Entry) Resumer() (Runnable, error) { return e.resumer() }
