package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/mcp"
)

// defaultInterruptOn are the tools that ask for approval on a terminal.
var defaultInterruptOn = []string{"write_file", "edit_file", "execute"}

// runFlags are the flags of commands that run an agent.
type runFlags struct {
	model       string
	dir         string
	output      string
	maxSteps    int
	durability  string
	shell       bool
	sandbox     string // "bwrap" or "none": how execute is isolated
	network     bool   // execute may use the network
	grepRegexp  bool   // --grep-regexp
	db          string
	thread      string
	interrupt   string
	interruptOK bool // --interrupt-on was given
	autoApprove bool
	record      string
	rules       ruleLists // --allow, --ask, --deny
	// mcpConfigs are --mcp-config files; mcpWorkspace starts the servers
	// of the workspace's .mcp.json too.
	mcpConfigs   []string
	mcpWorkspace bool
	// continueLast continues the thread that last ran in the workspace.
	continueLast bool
	// resume is the thread of deepagents --resume; pickOne asks the user
	// to pick it from a list.
	resume  string
	pickOne bool
	// configMCP are the MCP servers of the user's configuration file.
	configMCP map[string]mcp.ServerConfig
	// fromAssistant marks the flags of an assistant of serve's
	// --assistants file, which the configuration file does not change.
	fromAssistant bool
	// stateWorkspace puts the workspace in each thread's state instead of
	// --dir (deepagents serve without --dir, as the references' default).
	stateWorkspace bool
	// given reports whether a flag was set on the command line.
	given func(name string) bool
	// configs are the configuration files read so far, by path.
	configs map[string]configRead
	// protected is --protected-paths.
	protected string
}

func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model as provider:model (e.g. anthropic:claude-sonnet-4-5, openai:gpt-4.1, ollama:qwen3, replay:FILE)")
	fl.StringVar(&f.dir, "dir", "", "workspace directory the agent works in (default: the current directory)")
	fl.StringVar(&f.output, "output", "text", "output format: text (the answer on stdout) or jsonl (one event per line)")
	fl.IntVar(&f.maxSteps, "max-steps", 0, fmt.Sprintf("maximum model calls in one run (default %d)", agent.DefaultMaxSteps))
	fl.StringVar(&f.durability, "durability", "async", "when steps are checkpointed: async (while the next step runs; a crash loses at most the steps not yet shown as checkpoint events), sync (before the next step) or exit (once, when the run ends)")
	fl.BoolVar(&f.shell, "shell", false, "let the agent run shell commands in the workspace (the execute tool), isolated as --sandbox says")
	fl.StringVar(&f.sandbox, "sandbox", "bwrap", "how execute is isolated: bwrap (bubblewrap: no network, the system read-only, only the workspace writable, no process outlives its command) or none (commands run as you, unisolated)")
	fl.BoolVar(&f.network, "network", false, "with --shell and --sandbox bwrap: let commands use the network")
	fl.BoolVar(&f.grepRegexp, "grep-regexp", false, "grep takes RE2 regular expressions instead of literal text")
	fl.StringVar(&f.db, "db", "", "database for threads and memories: a SQLite file path or a postgres:// URL (default: deepagents.db in the user's data directory)")
	fl.StringVar(&f.thread, "thread", "", "thread to start or continue (default: a new thread, whose id run_start shows)")
	fl.BoolVarP(&f.continueLast, "continue", "c", false, "continue the thread that last ran in the workspace (--dir)")
	fl.StringVar(&f.interrupt, "interrupt-on", "", "comma-separated tools that need approval (default: write_file,edit_file,execute on a terminal, none otherwise)")
	fl.BoolVar(&f.autoApprove, "auto-approve", false, "run every tool without asking (permission rules still apply)")
	fl.StringArrayVar(&f.rules.Allow, "allow", nil, "permission rule: run matching calls without asking, such as 'execute(go test)' or 'write_file(/src/**)' (repeatable)")
	fl.StringArrayVar(&f.rules.Ask, "ask", nil, "permission rule: ask before matching calls run, such as 'execute(git push)' (repeatable)")
	fl.StringArrayVar(&f.rules.Deny, "deny", nil, "permission rule: refuse matching calls, such as 'execute(rm)' or 'read_file(**/.env)' (repeatable)")
	fl.StringVar(&f.record, "record", "", "record every model request and response to FILE, for --model replay:FILE")
	fl.StringArrayVar(&f.mcpConfigs, "mcp-config", nil, "start the MCP servers of this JSON file ({\"mcpServers\": ...}, as .mcp.json) besides ~/.deepagents/mcp.json's (repeatable)")
	fl.BoolVar(&f.mcpWorkspace, "mcp-workspace", false, "also start the MCP servers of the workspace's .mcp.json (they run commands the repository names)")
	fl.StringVar(&f.protected, "protected-paths", strings.Join(backend.ProtectedPaths, ","), "comma-separated workspace paths (at any depth) that write_file and edit_file ask before changing and the sandbox keeps read-only, such as .git/hooks; none turns this off")
}

// validateServed checks the flags of an agent served to clients (serve,
// mcp-serve): without --dir each thread has its workspace in its state,
// where no command can run.
func (f *runFlags) validateServed(cmd *cobra.Command) error {
	if err := f.validate(cmd); err != nil {
		return err
	}
	f.stateWorkspace = !cmd.Flags().Changed("dir")
	if f.stateWorkspace && f.shell {
		return usageError{errors.New("--shell needs --dir: commands run in a folder, not in a thread's state")}
	}
	return nil
}

// countTrue counts the conditions that hold.
func countTrue(conds ...bool) int {
	n := 0
	for _, c := range conds {
		if c {
			n++
		}
	}
	return n
}

func (f *runFlags) validate(cmd *cobra.Command) error {
	f.interruptOK = cmd.Flags().Changed("interrupt-on")
	f.given = cmd.Flags().Changed
	switch f.output {
	case "text", "jsonl":
	default:
		return usageError{fmt.Errorf("--output must be text or jsonl, not %q", f.output)}
	}
	if f.maxSteps < 0 {
		return usageError{errors.New("--max-steps must not be negative")}
	}
	if _, err := agent.ParseDurability(f.durability); err != nil {
		return usageError{fmt.Errorf("--durability must be async, sync or exit, not %q", f.durability)}
	}
	switch f.sandbox {
	case "bwrap", "none":
	default:
		return usageError{fmt.Errorf("--sandbox must be bwrap or none, not %q", f.sandbox)}
	}
	if f.network && f.sandbox == "none" {
		return usageError{errors.New("--network needs --sandbox bwrap (without a sandbox commands have the network anyway)")}
	}
	if n := countTrue(f.continueLast, f.thread != "", f.resume != "" || f.pickOne); n > 1 {
		return usageError{errors.New("--continue, --resume and --thread each name a thread; give one")}
	}
	if f.autoApprove && f.interruptOK && f.interrupt != "" {
		return usageError{errors.New("--auto-approve and --interrupt-on contradict each other")}
	}
	if f.dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		f.dir = wd
	}
	st, err := os.Stat(f.dir)
	if err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("--dir: %s is not a directory", f.dir)
	}
	// The workspace is kept, on the thread and in --continue's records,
	// as the folder it is, not as typed: a thread resumed from another
	// directory goes on in the same folder.
	if f.dir, err = workspacePath(f.dir); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	return nil
}

// workspacePath returns dir absolute and clean, its symbolic links
// resolved.
func workspacePath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// interruptOn returns the tools that need approval.
func (f *runFlags) interruptOn(interactive bool) []string {
	switch {
	case f.autoApprove:
		return nil
	case f.interruptOK:
		return splitList(f.interrupt)
	case interactive && f.shell:
		return defaultInterruptOn
	case interactive: // execute is not offered
		return slices.DeleteFunc(slices.Clone(defaultInterruptOn), func(name string) bool { return name == "execute" })
	}
	return nil
}

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

Every step is saved in the database (--db); --thread continues a thread.

The exit status is 0 when the run completed, 1 when it failed, 2 for bad
usage and 3 when it stopped waiting for approval (see deepagents resume).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.validate(cmd); err != nil {
				return err
			}
			prompt, err := promptOf(env, args)
			if err != nil {
				return err
			}
			in := deepagents.Prompt(prompt)
			in.ThreadID = f.thread
			return runAgent(cmd.Context(), env, &f, in)
		},
	}
	f.register(cmd)
	return cmd
}

func newResumeCmd(env Env) *cobra.Command {
	var f runFlags
	var decisions []string
	cmd := &cobra.Command{
		Use:   "resume THREAD --decision DECISION [--decision DECISION ...] [flags]",
		Short: "Continue a thread that stopped waiting for approval",
		Long: `Continue a thread that stopped waiting for approval, with one decision per
pending action, in the order the interrupt listed them:

  approve            run the tool call as the agent asked
  reject:REASON      do not run it; the agent sees REASON
  edit:JSON-ARGS     run it with these arguments instead (a JSON object)`,
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
			return runAgent(cmd.Context(), env, &f, deepagents.Input{ThreadID: args[0], Decisions: ds})
		},
	}
	f.register(cmd)
	cmd.Flags().StringArrayVar(&decisions, "decision", nil, "approve, reject:REASON or edit:JSON-ARGS (repeat for several pending actions)")
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
var errEmptyStdin = errors.New("run needs a PROMPT (the task, as one argument, or on standard input); standard input was empty")

// maxPromptBytes bounds a prompt read from standard input.
const maxPromptBytes = 1 << 20

// promptOf returns the prompt: the arguments, or standard input when there
// are none (or just "-") and it is not a terminal.
func promptOf(env Env, args []string) (string, error) {
	if len(args) > 0 && !(len(args) == 1 && args[0] == "-") {
		if p := strings.Join(args, " "); strings.TrimSpace(p) != "" {
			return p, nil
		}
		return "", usageError{errors.New("run needs a PROMPT (the task, as one argument, or on standard input)")}
	}
	if env.Stdin == nil || isTerminal(env.Stdin) {
		return "", usageError{errors.New("run needs a PROMPT (the task, as one argument, or on standard input)")}
	}
	data, err := io.ReadAll(io.LimitReader(env.Stdin, maxPromptBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading the prompt from standard input: %w", err)
	}
	if len(data) > maxPromptBytes {
		return "", usageError{fmt.Errorf("the prompt on standard input is over %d bytes", maxPromptBytes)}
	}
	if strings.TrimSpace(string(data)) == "" {
		return "", usageError{errEmptyStdin}
	}
	return string(data), nil
}

// runAgent runs (or resumes) one task, asking for approvals on a terminal.
func runAgent(ctx context.Context, env Env, f *runFlags, in deepagents.Input) error {
	interactive := isTerminal(env.Stdin)
	s, err := openSession(ctx, env, f, interactive)
	if err != nil {
		return err
	}
	defer s.close()
	if in.ThreadID == "" {
		in.ThreadID = f.thread // --continue found it
	}
	in.Values = settingsValues(s.settings)
	var used agent.UsageTree // each run's, reset when the next starts
	out := newRenderer(f.output, env, f.userPrices(env), &used)
	defer out.close()
	for {
		var end agent.Event
		var runErr error
		used = agent.UsageTree{}
		for e, err := range s.agent.Stream(ctx, in) {
			if err != nil {
				runErr = err
				break
			}
			used.Add(e) // before the renderer, whose run_end reports it
			if err := out.event(e); err != nil {
				return err
			}
			if e.Type == agent.EventRunEnd && len(e.Namespace) == 0 {
				end = e
			}
			if e.Type == agent.EventRunStart && len(e.Namespace) == 0 {
				if err := rememberThread(ctx, s.db, f.dir, e.ThreadID, promptText(in)); err != nil {
					fmt.Fprintf(env.Stderr, "warning: --continue will not find this thread: %v\n", err)
				}
			}
		}
		if end.ThreadID != "" {
			if err := recordUsage(ctx, s.db, end.ThreadID, &used); err != nil {
				fmt.Fprintf(env.Stderr, "warning: the thread's usage was not recorded: %v\n", err)
			}
		}
		switch end.Status {
		case agent.StatusCompleted:
			return nil
		case agent.StatusInterrupted:
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
