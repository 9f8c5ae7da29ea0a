package subagents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/thread"
	"github.com/deepagents-go/deepagents/tool"
)

// TaskTool is the name of the tool that delegates to a subagent.
const TaskTool = "task"

// GeneralPurpose is the name of the subagent that exists unless the caller
// defines one of that name.
const GeneralPurpose = "general-purpose"

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
	// Workspace is the host folder the caller's files are (its backend's
	// backend.HostRoot), which a subagent's workspace of its own copies;
	// "" isolates no subagent.
	Workspace string
	// Isolation is the isolation of the subagents that set none (see
	// Subagent.Isolation); "" is isolate.Auto.
	Isolation isolate.Mode
	// WorkspaceOptions configures the workspaces (isolate.Fork); its
	// Label is each task call's own.
	WorkspaceOptions isolate.Options
}

// Middleware adds the task tool, which runs a subagent on a task in a
// context of its own (fresh, or forked from the caller's conversation: see
// Mode) and returns its final answer. Parallel task calls are
// independent: one that fails gets an error result, the others finish.
type Middleware struct {
	launcher
	tool   tool.Tool
	prompt string
	forks  bool // some subagent runs in fork mode

	workspace string
	wsOpts    isolate.Options
	// groups holds the isolate.Group of each turn whose task calls work
	// in workspaces (turnKey), until all of them forked.
	groups sync.Map
}

// turnKey names a turn's task calls: the run and the first call's ID.
type turnKey struct {
	rt    *agent.Runtime
	first string
}

// turnGroup is the workspaces' group of a turn, and how many of its
// task calls have yet to fork.
type turnGroup struct {
	g    isolate.Group
	mu   sync.Mutex
	left int
}

// GeneralPurposePrompt is the general-purpose subagent's system prompt.
const GeneralPurposePrompt = `You are a general-purpose assistant working on a task delegated to you by another agent. Work on it independently with your tools until it is done. Your final message is all the other agent will see of your work, so make it a complete, self-contained report: what you found or did, with the specifics it needs (names, paths, numbers), and nothing else.`

// Prompt is the default system prompt section.
const Prompt = `## Delegating with task

- Delegate work that is large, needs many tool calls or would fill your context with detail you do not need to keep, and independent parts of a task, several at once.
- Do it yourself when it takes only a few steps, or when you need to see the intermediate results.
- A subagent knows only what you tell it: say where to look, what to produce and how to report back.
- Subagents share your files, so large results can be left in files for you to read.`

// forkPromptNote ends the default prompt section when a subagent runs in
// fork mode.
const forkPromptNote = `- A subagent marked "forked" starts from a copy of this conversation instead, so it already knows what was said here: give it the task itself, without repeating the context.`

// New builds the subagents middleware.
func New(cfg Config) (*Middleware, error) {
	s := &Middleware{launcher: newLauncher(cfg.Parent, "subagents"), prompt: cfg.Prompt, workspace: cfg.Workspace, wsOpts: cfg.WorkspaceOptions}
	defIsolation, err := isolate.ParseMode(string(cfg.Isolation))
	if err != nil {
		return nil, fmt.Errorf("subagents: %w", err)
	}
	subs := cfg.Subagents
	if !cfg.NoGeneralPurpose && !slices.ContainsFunc(subs, func(sa Subagent) bool { return sa.Name == GeneralPurpose }) {
		subs = append([]Subagent{{
			Name:         GeneralPurpose,
			Description:  "A general-purpose agent with your file and planning tools (but not task), for researching complex questions and carrying out multi-step tasks in its own context. Use it to keep your context small, or run several at once for independent parts of a task.",
			SystemPrompt: GeneralPurposePrompt,
		}}, subs...)
	}
	for _, sa := range subs {
		err := s.add(sa, func(e *Entry) error {
			switch sa.Mode {
			case "", Isolated:
			case Fork:
				e.fork = true
				s.forks = true
			default:
				return fmt.Errorf("%w %q (want %q or %q)", ErrMode, sa.Mode, Isolated, Fork)
			}
			e.isolation = defIsolation
			if sa.Isolation != "" {
				m, err := isolate.ParseMode(string(sa.Isolation))
				if err != nil {
					return err
				}
				e.isolation = m
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
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
	t, err := tool.New(TaskTool, desc, s.task, tool.WithTraits(tool.Traits{Delegates: true}))
	if err != nil {
		return nil, fmt.Errorf("subagents: %w", err)
	}
	s.tool = t
	return s, nil
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

// Names returns the subagents' names in the order they are offered.
func (s *Middleware) Names() []string { return slices.Clone(s.names) }

// SystemPromptFor implements agent.ToolPrompter: nothing when task is not
// offered.
func (s *Middleware) SystemPromptFor(offered func(string) bool) string {
	if !offered(TaskTool) {
		return ""
	}
	return s.prompt
}

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
	input := e.Input(rt, call.ID)
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
		// The caller's permission mode now: the user may have changed it
		// (to plan, say) while the subagent waited for its decision.
		if mode, ok := rt.Value(hitl.ModeValue); ok {
			input.Values = map[string]json.RawMessage{hitl.ModeValue: mode}
		}
	} else {
		task := llm.UserText(in.Description)
		if e.fork {
			input.Messages = append(forkedConversation(rt.Messages(), call.ID), task)
		} else {
			input.Messages = []llm.Message{task}
		}
		input.Values, input.Files = SharedState(rt)
	}
	ws, note := s.fork(ctx, rt, e, call.ID)
	runCtx := ctx
	if ws != nil {
		runCtx = backend.WithRedirect(ctx, ws.Redirect())
	}
	res, err := run.Invoke(runCtx, input)
	if res != nil {
		rt.AddUsage(res.Usage)
	}
	if ws != nil {
		// Whatever the run's outcome: its work is never lost, and a
		// question for approval is asked of the folder as it now is.
		note = s.mergeBack(ctx, rt, e, call.ID, ws)
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("Error: subagent %s failed: %v%s", e.name, err, note)
	}
	if res.Status == agent.StatusInterrupted {
		return "", &agent.InterruptError{Requests: res.Interrupts}
	}
	e.MergeBack(rt, nil, res)
	report, ok := FinalReport(res)
	if !ok {
		return "", fmt.Errorf("Error: subagent %s returned no messages%s", e.name, note)
	}
	return report + note, nil
}

// NoticeMerge names the notice of a subagent's workspace merged back into
// its caller's folder (Event.Files: the paths it wrote or removed, as the
// file tools name them), or of a workspace that could not be made.
const NoticeMerge = "workspace_merge"

// isolated reports whether the call callID of rt's turn runs e in a
// workspace of its own (always for Worktree and Copy, for Auto when the
// turn calls task more than once), and the group of the turn's
// workspaces: they all start from the folder as the first found it.
func (s *Middleware) isolated(rt *agent.Runtime, e *Entry, callID string) (bool, *isolate.Group) {
	if s.workspace == "" {
		return false, nil
	}
	var calls []llm.ToolCall
	msgs := rt.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := &msgs[i]; m.Role == llm.RoleAssistant && slices.ContainsFunc(m.ToolCalls, func(c llm.ToolCall) bool { return c.ID == callID }) {
			for _, c := range m.ToolCalls {
				if c.Name == TaskTool {
					calls = append(calls, c)
				}
			}
			break
		}
	}
	if len(calls) < 2 {
		return e.isolation != isolate.Auto && e.isolation != isolate.None, nil
	}
	// The group lasts until each task call of the turn has forked: a
	// call that never runs (refused) leaves a few bytes behind.
	v, _ := s.groups.LoadOrStore(turnKey{rt, calls[0].ID}, &turnGroup{left: len(calls)})
	tg := v.(*turnGroup)
	tg.mu.Lock()
	tg.left--
	if tg.left <= 0 {
		s.groups.Delete(turnKey{rt, calls[0].ID})
	}
	tg.mu.Unlock()
	if e.isolation == isolate.None {
		return false, nil
	}
	return true, &tg.g
}

// fork makes e's workspace for the call callID when it runs in one; a
// workspace that cannot be made leaves the subagent in the caller's
// folder, which note then says.
func (s *Middleware) fork(ctx context.Context, rt *agent.Runtime, e *Entry, callID string) (*isolate.Workspace, string) {
	ok, group := s.isolated(rt, e, callID)
	if !ok {
		return nil, ""
	}
	opts := s.wsOpts
	opts.Group = group
	opts.Label = e.name + "-" + callID
	mode := e.isolation
	if mode == isolate.Auto {
		mode = isolate.Worktree
	}
	ws, err := isolate.Fork(ctx, s.workspace, mode, opts)
	if err != nil {
		msg := fmt.Sprintf("The subagent worked in the shared folder: its own workspace could not be made (%v).", err)
		rt.Emit(agent.Event{Type: agent.EventNotice, Name: NoticeMerge, ToolCallID: callID, Content: msg, Error: err.Error()})
		return nil, "\n\n" + msg
	}
	return ws, ""
}

// mergeBack merges ws into the caller's folder: the report for the
// model, and a notice for the person.
func (s *Middleware) mergeBack(ctx context.Context, rt *agent.Runtime, e *Entry, callID string, ws *isolate.Workspace) string {
	rep, err := ws.Merge(context.WithoutCancel(ctx))
	text := rep.Text()
	if err != nil {
		text += fmt.Sprintf("\nThe merge stopped (%v); the subagent's workspace is kept at %s.", err, rep.Kept)
	}
	paths := rep.Paths()
	for i, p := range paths {
		paths[i] = "/" + p
	}
	summary := fmt.Sprintf("subagent %s (%s): %d file(s) merged back, %d conflict(s)", e.name, callID, len(rep.Applied)+len(rep.Removed)+len(rep.Merged), len(rep.Conflicts))
	if len(rep.Conflicts) > 0 {
		cs := make([]string, len(rep.Conflicts))
		for i, c := range rep.Conflicts {
			cs[i] = "/" + c.Path
		}
		summary += ": " + strings.Join(cs, ", ")
	}
	ev := agent.Event{Type: agent.EventNotice, Name: NoticeMerge, ToolCallID: callID, Content: summary, Files: paths}
	if err != nil {
		ev.Error = err.Error()
	}
	rt.Emit(ev)
	return "\n\n" + text
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
