package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/verify"
)

func newRunCmd(env Env) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT|-",
		Short: "Run one task and exit",
		Long: `Run one task with a deep agent and exit.

The agent works in --dir: its files are the directory's files ("/src/main.go" is
DIR/src/main.go). Scratch files (large tool results, summarized history) stay in
the thread's state; /memories/ lives in the database and persists across
threads; /user/ is ~/.deepagents. Memory comes from ~/.deepagents/AGENTS.md and
DIR/AGENTS.md, skills from ~/.deepagents/skills/ and DIR/.deepagents/skills/,
subagents from ~/.deepagents/agents/*.md and DIR/.deepagents/agents/*.md.
Hooks (docs/hooks.md) come from hooks: in ~/.deepagents/config.yaml and from
~/.claude/settings.json, and with --trust-workspace from DIR's
.deepagents/config.yaml, .claude/settings.json and .claude/settings.local.json.

Every step is saved in the database (--db); --thread continues a thread.

The exit status is 0 when the run completed, 1 when it failed, 2 for bad
usage and 3 when it stopped waiting for approval (see deepagents resume).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.validate(cmd); err != nil {
				return err
			}
			prompt, err := promptOf(cmd.Context(), env, args)
			if err != nil {
				return err
			}
			in := deepagents.Prompt(prompt)
			in.ThreadID = f.thread
			return runAgent(cmd.Context(), env, &f, in)
		},
	}
	f.register(cmd)
	f.registerGoal(cmd)
	return cmd
}

func newResumeCmd(env Env) *cobra.Command {
	var f runFlags
	var decisions []string
	var task string
	cmd := &cobra.Command{
		Use:   "resume THREAD [--task TASK_ID] --decision DECISION [--decision DECISION ...] [flags]",
		Short: "Continue a thread that stopped waiting for approval",
		Long: `Continue a thread that stopped waiting for approval, with one decision per
pending action, in the order the interrupt listed them:

  approve            run the tool call as the agent asked
  reject:REASON      do not run it; the agent sees REASON
  edit:JSON-ARGS     run it with these arguments instead (a JSON object)

With --task, the decisions answer the request of a background task of the
thread that waits for approval (the end of a run lists them, with the command
to answer each): the task's subagent resumes from where it stopped, and the
main agent runs a turn that waits for the task and reports its result.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("resume needs exactly one THREAD")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.thread = args[0]
			if err := f.validate(cmd); err != nil {
				return err
			}
			ds, err := parseDecisions(decisions)
			if err != nil {
				return usageError{err}
			}
			if task != "" {
				f.answer = &taskAnswer{task: task, decisions: ds}
				return runAgent(cmd.Context(), env, &f, deepagents.Input{ThreadID: args[0], Messages: []llm.Message{llm.UserText(answeredNotice(task))}})
			}
			return runAgent(cmd.Context(), env, &f, deepagents.Input{ThreadID: args[0], Decisions: ds})
		},
	}
	f.register(cmd)
	cmd.Flags().StringArrayVar(&decisions, "decision", nil, "approve, reject:REASON or edit:JSON-ARGS (repeat for several pending actions)")
	cmd.Flags().StringVar(&task, "task", "", "answer the request for approval of this background task of the thread (its task_id), then run a turn that collects its result")
	return cmd
}

// promptText is the text of a run's new user messages: a new thread's
// title.
func promptText(in deepagents.Input) string {
	var parts []string
	for _, m := range in.Messages {
		if m.Role == llm.RoleUser {
			parts = append(parts, m.Text())
		}
	}
	return strings.Join(parts, " ")
}

// errEmptyStdin says that no prompt came on standard input.
var errEmptyStdin = errors.New("run needs a PROMPT (the task, as one argument, after -p, or on standard input); standard input was empty")

// errNoPrompt says that run, or deepagents -p, was given no prompt.
var errNoPrompt = errors.New("run needs a PROMPT: the task, as one argument (deepagents -p \"the task\", deepagents run \"the task\"), or on standard input")

// maxPromptBytes bounds a prompt read from standard input.
const maxPromptBytes = 1 << 20

// stdinWait is how long a prompt given as arguments waits for the first
// bytes of a standard input that is neither a terminal nor closed (a pipe
// its writer keeps open without writing, say) before going on without it.
var stdinWait = 3 * time.Second

// promptOf returns the prompt: the arguments, followed by what is piped to
// standard input (pipedInput); or, when there are none (or just "-"),
// standard input alone, when it is not a terminal.
func promptOf(ctx context.Context, env Env, args []string) (string, error) {
	if len(args) > 0 && !(len(args) == 1 && args[0] == "-") {
		p := strings.Join(args, " ")
		if strings.TrimSpace(p) == "" {
			return "", usageError{errNoPrompt}
		}
		piped, err := pipedInput(ctx, env)
		if err != nil || piped == "" {
			return p, err
		}
		return p + "\n\n" + piped, nil
	}
	if env.Stdin == nil || isTerminal(env.Stdin) {
		return "", usageError{errNoPrompt}
	}
	data, err := readStdin(env.Stdin)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(string(data)) == "" {
		return "", usageError{errEmptyStdin}
	}
	return string(data), nil
}

// readStdin reads standard input to its end, up to maxPromptBytes.
func readStdin(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPromptBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the prompt from standard input: %w", err)
	}
	if len(data) > maxPromptBytes {
		return nil, usageError{fmt.Errorf("the prompt on standard input is over %d bytes (1 MiB)", maxPromptBytes)}
	}
	return data, nil
}

// pipedInput is what standard input holds when it is not a terminal, to be
// added to a prompt given as arguments (echo data | deepagents -p
// explain): "" when it is closed or empty, or when nothing comes within
// stdinWait, which is then said on stderr. Once something comes, it is
// read to its end.
func pipedInput(ctx context.Context, env Env) (string, error) {
	if env.Stdin == nil || isTerminal(env.Stdin) {
		return "", nil
	}
	type result struct {
		data []byte
		err  error
	}
	first := make(chan struct{})
	done := make(chan result, 1)
	go func() {
		data, err := readStdin(&firstRead{r: env.Stdin, first: first})
		done <- result{data, err}
	}()
	timer := time.NewTimer(stdinWait)
	defer timer.Stop()
	var res result
	select {
	case res = <-done:
	case <-first:
		select {
		case res = <-done:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	case <-timer.C:
		// The reader is left blocked; the process ends without it.
		fmt.Fprintf(env.Stderr, "deepagents: warning: nothing came on standard input within %s; going on with the prompt alone (redirect it from /dev/null not to wait)\n", stdinWait)
		return "", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if res.err != nil {
		return "", res.err
	}
	if strings.TrimSpace(string(res.data)) == "" {
		return "", nil
	}
	return string(res.data), nil
}

// firstRead closes first when its first read returns, with data or not.
type firstRead struct {
	r     io.Reader
	first chan struct{}
	once  sync.Once
}

func (f *firstRead) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.once.Do(func() { close(f.first) })
	return n, err
}

// runAgent runs (or resumes) one task, asking for approvals on a terminal.
func runAgent(ctx context.Context, env Env, f *runFlags, in deepagents.Input) error {
	interactive := isTerminal(env.Stdin)
	o, err := openSession(ctx, env, f, interactive, false, nil)
	if err != nil {
		return err
	}
	defer o.close()
	if in.ThreadID == "" {
		in.ThreadID = o.spec.Thread // --continue found it
	}
	defer stopBackground(ctx, env, o)
	if f.answer != nil {
		if err := answerTask(ctx, o, in.ThreadID, f.answer); err != nil {
			printParked(ctx, env, o, in.ThreadID) // what does wait, and how to answer it
			return err
		}
	}
	defer func() { printParked(ctx, env, o, in.ThreadID) }()
	in.Values = o.spec.Values()
	if f.Given("goal") {
		maps.Copy(in.Values, verify.GoalValues(f.goal))
	}
	title := promptText(in)
	// deepagents -p '/NAME ARGS' runs a command file's prompt.
	if len(in.Messages) == 1 && in.Messages[0].Role == llm.RoleUser {
		if c, args, ok := session.FindCommand(o.spec.Commands, in.Messages[0].Text()); ok {
			in.Messages[0] = llm.UserText(c.Expand(args))
		}
	}
	// A task is a session of the hooks (deepagents resume finishes the
	// run of one that ended waiting for approval, and is none).
	if in.Decisions == nil {
		sh := &sessionHooks{r: o.Hooks, mode: func() hitl.Mode { return o.spec.PermissionMode }}
		if in.ThreadID == "" && sh.active() {
			in.ThreadID = newThreadID()
		}
		source := "startup"
		if sh.active() {
			source = sessionSource(ctx, o.db, in.ThreadID)
		}
		text, notes := sh.start(ctx, in.ThreadID, source)
		printLines(env, notes)
		in.Messages = withContext(in.Messages, text)
		defer func() { printLines(env, sh.end(ctx, in.ThreadID, "other")) }()
	}
	var used deepagents.UsageTree // each run's, reset when the next starts
	out := newRenderer(f.output, env, o.spec.Prices, &used, o.Proxy)
	defer out.close()
	for {
		var end deepagents.Event
		var runErr error
		used = deepagents.UsageTree{}
		for e, err := range o.Agent.Stream(ctx, in) {
			if err != nil {
				runErr = err
				break
			}
			used.Add(e) // before the renderer, whose run_end reports it
			if err := out.event(e); err != nil {
				return err
			}
			if e.Type == deepagents.EventRunEnd && len(e.Namespace) == 0 {
				end = e
			}
			if e.Type == deepagents.EventRunStart && len(e.Namespace) == 0 {
				if err := rememberThread(ctx, o.db, o.spec.Dir, e.ThreadID, title); err != nil {
					fmt.Fprintf(env.Stderr, "warning: --continue will not find this thread: %v\n", err)
				}
			}
		}
		if end.ThreadID != "" {
			if err := recordUsage(ctx, o.db, end.ThreadID, &used); err != nil {
				fmt.Fprintf(env.Stderr, "warning: the thread's usage was not recorded: %v\n", err)
			}
		}
		switch end.Status {
		case deepagents.StatusCompleted:
			if end.EndCode != "" {
				return exitError{ExitStopped}
			}
			return nil
		case deepagents.StatusInterrupted:
			if !interactive {
				return exitError{ExitInterrupted}
			}
			ds, err := askDecisions(env, end.Interrupts)
			if err != nil {
				return err
			}
			in = deepagents.Input{ThreadID: end.ThreadID, Decisions: ds}
			continue
		case "":
			// The run failed before it started (a busy or missing
			// thread, say), so no event reported it.
			if runErr == nil {
				runErr = errors.New("the run ended without reporting its end")
			}
			return runErr
		}
		return exitError{ExitFailed}
	}
}
