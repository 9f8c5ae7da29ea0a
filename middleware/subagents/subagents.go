package subagents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/thread"
	"github.com/deepagents-go/deepagents/tool"
)

// TaskTool is the name of the tool that delegates to a subagent.
const TaskTool = "task"

// GeneralPurpose is the name of the subagent that exists unless the caller
// defines one of that name.
const GeneralPurpose = "general-purpose"

// Runnable is a compiled subagent: anything that takes a conversation and
// returns the state it ends in. *agent.Agent is one. The task tool passes
// the task as the only message (in fork mode, after a copy of the caller's
// conversation), with the caller's files and custom values; the last
// message of the result is the answer. A Runnable should honour
// Input.Events and Input.Namespace to show its progress, and Input.Decisions
// if it can stop for human approval.
type Runnable interface {
	Invoke(ctx context.Context, in agent.Input) (*agent.Result, error)
}

// Mode says what conversation a subagent starts from.
type Mode string

// Subagent modes.
const (
	// Isolated starts the subagent from a fresh conversation
	// holding only the task description. It is the default.
	Isolated Mode = "isolated"
	// Fork starts the subagent from a copy of its caller's
	// conversation so far (without the caller's turn that calls task,
	// which is still pending), followed by the task description as a new
	// user message. Its system prompt, tools and state stay its own.
	Fork Mode = "fork"
)

// Subagent describes an agent the main agent can delegate to with the task
// tool. Either fill in the declarative fields, or set Runnable to a
// compiled agent (the other fields are then ignored, but Name,
// Description and Mode).
type Subagent struct {
	Name string
	// Description tells the main agent when to use this subagent.
	Description string
	// SystemPrompt is the subagent's own prompt.
	SystemPrompt string
	// Tools are the subagent's tools besides its middleware's; nil means
	// the main agent's tools.
	Tools []tool.Tool
	// Model overrides the main agent's model.
	Model llm.Model
	// Middleware is added after the subagent's default stack.
	Middleware []agent.Middleware
	// InterruptOn asks for human approval of these tools; nil means the
	// main agent's InterruptOn.
	InterruptOn map[string]hitl.InterruptOn
	// AllowedTools, when set, limits the subagent to the tools of these
	// names (its middleware's tools included).
	AllowedTools []string
	// Mode is Isolated (the default, also for "") or Fork.
	Mode Mode

	Runnable Runnable
}

// Parent is what a declarative subagent inherits from the agent that
// calls it, the task tool's and the background ones alike.
type Parent struct {
	// Agent is the configuration a declarative subagent inherits: the main
	// agent's, as deepagents.New passes it. A subagent overrides its Name,
	// SystemPrompt, Middleware and AllowedTools, and Model and Tools when it
	// sets them; it has no ResponseSchema (its final message is its report),
	// and a Checkpointer only when it can stop for approval. Every other
	// field (MaxSteps, MaxParallelTools, Store, Logger, ...) it inherits as
	// it is. See subagentConfig.
	Agent agent.Config
	// InterruptOn is the default approval rules of declarative subagents.
	InterruptOn map[string]hitl.InterruptOn
	// Permissions are the rules every declarative subagent's calls
	// follow (see hitl.Config.Rules).
	Permissions *permission.Rules
	// Middleware returns the default stack of a declarative subagent,
	// fresh for each; nil means none.
	Middleware func() []agent.Middleware
}

// Config configures the subagents middleware (the task tool).
type Config struct {
	// Parent is what declarative subagents inherit.
	Parent
	// Subagents are the available subagents. A general-purpose one is added
	// unless one of that name is given or NoGeneralPurpose is set.
	Subagents        []Subagent
	NoGeneralPurpose bool
	// Prompt and TaskDescription replace the default prompt section and
	// tool description.
	Prompt          string
	TaskDescription string
}

// Middleware adds the task tool, which runs a subagent on a task in a
// context of its own (fresh, or forked from the caller's conversation: see
// Mode) and returns its final answer. Parallel task calls are
// independent: one that fails gets an error result, the others finish.
type Middleware struct {
	byName map[string]*subagentEntry
	names  []string
	tool   tool.Tool
	prompt string
	forks  bool // some subagent runs in fork mode
}

// ErrMode is returned by New for a Subagent.Mode that is neither
// Isolated nor Fork.
var ErrMode = errors.New("unknown subagent mode")

type subagentEntry struct {
	name, description string
	run               Runnable
	fork              bool     // starts from the caller's conversation (Fork)
	durable           bool     // keeps its state in a Checkpointer
	compiled          bool     // a Runnable given by the caller
	private           []string // state values it keeps to itself (see agent.PrivateValuer)

	// The resumer of a declarative subagent that is not durable (it asks
	// for no approval) but whose thread waits for decisions, as it asked
	// under an earlier configuration, in an earlier process: see resumer.
	// resumerCfg reports false without a Checkpointer.
	resumerOnce sync.Once
	resumerCfg  func() (agent.Config, bool, error)
	resumerRun  Runnable
	resumerErr  error
}

// resumer returns the Runnable that continues the subagent's waiting
// thread: the subagent itself when it keeps one (durable or compiled), an
// agent of the same configuration with the Checkpointer otherwise, nil
// when there is none.
func (e *subagentEntry) resumer() (Runnable, error) {
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

// GeneralPurposePrompt is the general-purpose subagent's system prompt.
const GeneralPurposePrompt = `You are a general-purpose assistant working on a task delegated to you by another agent. Work on it independently with your tools until it is done. Your final message is all the other agent will see of your work, so make it a complete, self-contained report: what you found or did, with the specifics it needs (names, paths, numbers), and nothing else.`

// Prompt is the default system prompt section.
const Prompt = `## Delegating with task

The task tool hands a self-contained piece of work to a subagent that runs in its own fresh context and returns only its final report.

- Delegate work that is large, needs many tool calls, or would fill your context with detail you do not need to keep, and work that splits into independent parts: call task several times in one turn to run them in parallel.
- Do it yourself when it takes only a few steps, or when you need to see the intermediate results.
- A subagent knows nothing but what you tell it: describe the task completely, including where to look, what to produce and how to report back.
- Subagents share your files, so large results can be left in files for you to read.`

// forkPromptNote ends the default prompt section when a subagent runs in
// fork mode.
const forkPromptNote = `- A subagent marked "forked" starts from a copy of this conversation instead, so it already knows what was said here: give it the task itself, without repeating the context.`

// New builds the subagents middleware.
func New(cfg Config) (*Middleware, error) {
	s := &Middleware{byName: make(map[string]*subagentEntry), prompt: cfg.Prompt}
	subs := cfg.Subagents
	if !cfg.NoGeneralPurpose && !slices.ContainsFunc(subs, func(sa Subagent) bool { return sa.Name == GeneralPurpose }) {
		subs = append([]Subagent{{
			Name:         GeneralPurpose,
			Description:  "A general-purpose agent with your file and planning tools (but not task), for researching complex questions and carrying out multi-step tasks in its own context. Use it to keep your context small, or run several at once for independent parts of a task.",
			SystemPrompt: GeneralPurposePrompt,
		}}, subs...)
	}
	for _, sa := range subs {
		if sa.Name == "" {
			return nil, errors.New("subagents: a subagent has no name")
		}
		if _, dup := s.byName[sa.Name]; dup {
			return nil, fmt.Errorf("subagents: two subagents are named %q", sa.Name)
		}
		e := &subagentEntry{name: sa.Name, description: sa.Description, run: sa.Runnable, compiled: sa.Runnable != nil}
		switch sa.Mode {
		case "", Isolated:
		case Fork:
			e.fork = true
			s.forks = true
		default:
			return nil, fmt.Errorf("subagents: %s: %w %q (want %q or %q)", sa.Name, ErrMode, sa.Mode, Isolated, Fork)
		}
		if e.run == nil {
			a, durable, err := buildSubagent(cfg.Parent, sa)
			if err != nil {
				return nil, fmt.Errorf("subagents: %s: %w", sa.Name, err)
			}
			e.run, e.durable = a, durable
			e.resumerCfg = func() (agent.Config, bool, error) {
				c, _, err := subagentConfig(cfg.Parent, sa)
				c.Checkpointer = cfg.Agent.Checkpointer
				return c, c.Checkpointer != nil, err
			}
		}
		if p, ok := e.run.(interface{ PrivateValues() []string }); ok {
			e.private = p.PrivateValues()
		}
		s.byName[sa.Name] = e
		s.names = append(s.names, sa.Name)
	}
	if s.prompt == "" {
		s.prompt = Prompt
		if s.forks {
			s.prompt += "\n" + forkPromptNote
		}
	}
	desc := cfg.TaskDescription
	if desc == "" {
		desc = s.taskDescription()
	}
	s.tool = tool.Must(tool.New(TaskTool, desc, s.task))
	return s, nil
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
	stack = append(stack, sa.Middleware...)
	on := sa.InterruptOn
	if on == nil {
		on = cfg.InterruptOn
	}
	durable := len(on) > 0 || cfg.Permissions != nil
	c.Checkpointer = nil
	if durable {
		approvals, err := hitl.New(hitl.Config{On: on, Rules: cfg.Permissions})
		if err != nil {
			return agent.Config{}, false, err
		}
		stack = append(stack, approvals)
		c.Checkpointer = cfg.Agent.Checkpointer
		if c.Checkpointer == nil {
			c.Checkpointer = checkpoint.NewMemorySaver()
		}
	}
	c.Middleware = stack
	return c, durable, nil
}

func (s *Middleware) taskDescription() string {
	var b strings.Builder
	if s.forks {
		b.WriteString("Launch a subagent to carry out a task on its own and get back its final report.\n\n")
		b.WriteString("subagent_type picks the subagent; description is the task for it. A subagent starts in a fresh context and sees nothing else of this conversation, so describe the task completely, unless it is marked (forked): a forked subagent starts from a copy of this conversation so far. Call task several times in one turn to run independent tasks in parallel.\n\nAvailable subagents:\n")
	} else {
		b.WriteString("Launch a subagent to carry out a task on its own, in a fresh context, and get back its final report.\n\n")
		b.WriteString("subagent_type picks the subagent; description is the complete task for it, since it sees nothing else of this conversation. Call task several times in one turn to run independent tasks in parallel.\n\nAvailable subagents:\n")
	}
	for _, n := range s.names {
		e := s.byName[n]
		if e.fork {
			fmt.Fprintf(&b, "- %s (forked): %s\n", n, e.description)
			continue
		}
		fmt.Fprintf(&b, "- %s: %s\n", n, e.description)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "subagents" }

// Tools implements agent.ToolProvider.
func (s *Middleware) Tools() []tool.Tool { return []tool.Tool{s.tool} }

// SystemPrompt implements agent.SystemPrompter.
func (s *Middleware) SystemPrompt() string { return s.prompt }

// SystemPromptFor implements agent.ToolPrompter: nothing when task is not
// offered.
func (s *Middleware) SystemPromptFor(offered func(string) bool) string {
	if !offered(TaskTool) {
		return ""
	}
	return s.prompt
}

// Names returns the subagents' names in the order they are offered.
func (s *Middleware) Names() []string { return slices.Clone(s.names) }

type taskIn struct {
	Description  string `json:"description" jsonschema:"the complete task for the subagent, with everything it needs to know"`
	SubagentType string `json:"subagent_type" jsonschema:"which subagent to use"`
}

func (s *Middleware) task(ctx context.Context, in taskIn) (string, error) {
	rt := agent.RuntimeFromContext(ctx)
	call := agent.ToolCallFromContext(ctx)
	if rt == nil || call == nil {
		return "", errors.New("Error: task can only run inside an agent run")
	}
	e, ok := s.byName[in.SubagentType]
	if !ok {
		return "", fmt.Errorf("We cannot invoke subagent %s because it does not exist, the only allowed types are %s", in.SubagentType, quotedNames(s.names))
	}
	input := agent.Input{Namespace: append(slices.Clone(rt.Namespace()), e.name+":"+call.ID)}
	if rt.Streaming() {
		input.Events = rt.Emit
	}
	// A subagent that keeps a thread (it can stop for approval, or it is
	// compiled and may keep its own) has one per task call, under the
	// caller's. A call run again on resume continues it with the
	// decisions, whatever the subagent's configuration is now.
	run := e.run
	ds, resuming := agent.NestedDecisions(ctx)
	if resuming {
		r, err := e.resumer()
		if err != nil {
			return "", fmt.Errorf("Error: subagent %s cannot resume: %v", e.name, err)
		}
		if r == nil {
			resuming = false // nothing kept its thread: it starts again
		} else {
			run = r
		}
	}
	if e.durable || e.compiled || resuming {
		input.ThreadID = thread.ChildID(rt.ThreadID(), call.ID)
	}
	if resuming {
		input.Decisions = ds
	} else {
		task := llm.UserText(in.Description)
		if e.fork {
			input.Messages = append(forkedConversation(rt.Messages(), call.ID), task)
		} else {
			input.Messages = []llm.Message{task}
		}
		input.Values, input.Files = sharedState(rt)
	}
	res, err := run.Invoke(ctx, input)
	if res != nil {
		rt.AddUsage(res.Usage)
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("Error: subagent %s failed: %v", e.name, err)
	}
	if res.Status == agent.StatusInterrupted {
		return "", &agent.InterruptError{Requests: res.Interrupts}
	}
	mergeBack(rt, nil, e.private, res)
	report, ok := finalReport(res)
	if !ok {
		return "", fmt.Errorf("Error: subagent %s returned no messages", e.name)
	}
	return report, nil
}

// sharedState is what a subagent gets of its caller's state: the values
// the caller's middleware do not keep to it, and the files.
func sharedState(rt *agent.Runtime) (map[string]json.RawMessage, map[string]thread.FileData) {
	values := rt.Values()
	for k := range values {
		if rt.IsPrivate(k) {
			delete(values, k)
		}
	}
	return values, rt.Files().Snapshot()
}

// finalReport is a subagent's answer: the text of its last message; ok is
// false when it has none.
func finalReport(res *agent.Result) (report string, ok bool) {
	last := res.LastMessage()
	if last == nil {
		return "", false
	}
	return strings.TrimRight(last.Text(), " \t\n"), true
}

// forkedConversation is what a forked subagent starts from: a copy of the
// caller's conversation up to, and without, the assistant message that
// holds the task call callID. That message is the caller's turn in
// progress: its calls (this one and its siblings) have no results yet, and
// results of siblings already answered (on a resumed turn) would answer
// calls the copy does not hold, so both are left out. The slice is the
// subagent's own (its run appends to it and may rewrite it); the messages'
// contents are shared, as runs never change a message in place.
func forkedConversation(msgs []llm.Message, callID string) []llm.Message {
	end := len(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant && slices.ContainsFunc(msgs[i].ToolCalls, func(c llm.ToolCall) bool { return c.ID == callID }) {
			end = i
			break
		}
	}
	out := make([]llm.Message, end, end+1)
	copy(out, msgs)
	return out
}

// mergeBack applies the files and values a subagent changed to the caller's
// state. Only what differs from the caller's current state is written, so
// files the subagent merely received do not count as changes. With base,
// the caller's files as the subagent got them (a background task, which
// ran while the caller went on), a file the caller changed too since is
// left as the caller has it, and returned.
func mergeBack(rt *agent.Runtime, base map[string]thread.FileData, private []string, res *agent.Result) (conflicts []string) {
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
	mergeValues(rt, private, res)
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

// clip shortens an argument echoed in an error to at most n bytes: the
// model sent it, and need not read all of a huge one back.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("... (%d bytes)", len(s))
}

// quotedNames lists subagent names for the model: `a`, `b`.
func quotedNames(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "`" + n + "`"
	}
	return strings.Join(quoted, ", ")
}
