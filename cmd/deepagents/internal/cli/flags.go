package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/netproxy"
)

// runFlags are the flags of commands that run an agent: those the session
// resolves (session.Flags), and those that say which thread and how to
// show it.
type runFlags struct {
	session.Flags
	output string
	db     string
	thread string
	// continueLast continues the thread that last ran in the workspace.
	continueLast bool
	// resume is the thread of deepagents --resume; pickOne asks the user
	// to pick it from a list.
	resume  string
	pickOne bool
	// goal is --goal: the thread's goal (docs/harness.md), graded before
	// the agent's final answers; only run and deepagents itself have it.
	goal string
	// middleware is added to the session's agent (session.Deps): eval's
	// broken tools in its tests, nothing otherwise.
	middleware []deepagents.Middleware
	// answer is resume --task's: the background task whose request for
	// approval the decisions answer, before the run.
	answer *taskAnswer
}

// registerGoal adds --goal, which only the commands that take a prompt
// have (a served agent's clients set a thread's goal in their input).
func (f *runFlags) registerGoal(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.goal, "goal", "", "the thread's goal: what the task must achieve, which a grader (the model, in a call of its own) checks each final answer against, sending the agent back once when it falls short; the thread keeps it (see docs/harness.md)")
}

func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	// The plain settings' flags are the table's (session.RegisterFlags);
	// those resolved by hand are registered here.
	session.RegisterFlags(fl, &f.Flags)
	fl.StringVar(&f.Profile, "profile", "", "harness profile: claude, gpt, codex, open or default (default: the model's; see docs/profiles.md)")
	fl.StringVar(&f.Dir, "dir", "", "workspace directory the agent works in (default: the current directory)")
	fl.StringVar(&f.output, "output", "text", "output format: text (the answer on stdout) or jsonl (one event per line)")
	fl.Var(networkValue{&f.Network}, "network", "with --shell and --sandbox bwrap: let commands reach the hosts --allow-domain and sandbox.allow_domains allow, through a proxy (a host no rule names asks in the terminal and is refused elsewhere); --network=host is all of the host's network, unfiltered; --network=off none (the default)")
	fl.Lookup("network").NoOptDefVal = "true"
	fl.StringArrayVar(&f.AllowDomains, "allow-domain", nil, "a host commands may reach through the proxy: github.com, *.example.com (every name under it), example.com:8443 (another port than 80 and 443), or a preset: @go, @npm, @pip, @cargo, @apt, @github (repeatable; turns --network proxy on)")
	fl.StringArrayVar(&f.DenyDomains, "deny-domain", nil, "a host commands may never reach, whatever allows it (repeatable)")
	fl.StringVar(&f.db, "db", "", "database for threads and memories: a SQLite file path or a postgres:// URL (default: deepagents.db in the user's data directory)")
	fl.StringVar(&f.thread, "thread", "", "thread to start or continue (default: a new thread, whose id run_start shows)")
	fl.BoolVarP(&f.continueLast, "continue", "c", false, "continue the thread that last ran in the workspace (--dir)")
	fl.StringVar(&f.InterruptOn, "interrupt-on", "", "comma-separated tools that need approval (default on a terminal: write_file,edit_file, and execute with --shell; none otherwise)")
	fl.StringVar(&f.PermissionMode, "permission-mode", "", "how tools ask for approval: ask (the tools of --interrupt-on ask), accept-edits (file edits run without asking), plan (read-only until you approve a plan), auto (a classifier, the session's model, decides what would ask; what it cannot decide asks) or bypass (nothing asks but ask rules); deny and ask rules and the protected paths hold in every mode (default: the thread's mode, else permission_mode of ~/.deepagents/config.yaml, else ask)")
	fl.BoolVar(&f.AutoApprove, "auto-approve", false, "the same as --permission-mode bypass: run every tool without asking (deny and ask rules and the protected paths still apply)")
	fl.StringArrayVar(&f.Rules.Allow, "allow", nil, "permission rule: run matching calls without asking, such as 'execute(go test)' or 'write_file(/src/**)' (repeatable)")
	fl.StringArrayVar(&f.Rules.Ask, "ask", nil, "permission rule: ask before matching calls run, such as 'execute(git push)' (repeatable)")
	fl.StringArrayVar(&f.Rules.Deny, "deny", nil, "permission rule: refuse matching calls, such as 'execute(rm)' or 'read_file(**/.env)' (repeatable)")
	fl.StringArrayVar(&f.MCPConfigs, "mcp-config", nil, "start the MCP servers of this JSON file ({\"mcpServers\": ...}, as .mcp.json) besides ~/.deepagents/mcp.json's (repeatable)")
	// The flag's name before it covered hooks too.
	fl.BoolVar(&f.TrustWorkspace, "mcp-workspace", false, "the same as --trust-workspace")
	fl.MarkDeprecated("mcp-workspace", "use --trust-workspace") //nolint:errcheck // the flag exists
}

// validateServed checks the flags of an agent served to clients (serve,
// mcp-serve): without --dir each thread has its workspace in its state,
// where no command can run.
func (f *runFlags) validateServed(cmd *cobra.Command) error {
	if err := f.validate(cmd); err != nil {
		return err
	}
	if !f.Given("dir") && f.Shell {
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
	f.Given = cmd.Flags().Changed
	switch f.output {
	case "text", "jsonl":
	default:
		return usageError{fmt.Errorf("--output must be text or jsonl, not %q", f.output)}
	}
	if err := session.CheckFlags(f.Flags); err != nil {
		return usageError{err}
	}
	if f.Given("network") {
		m, err := session.ParseNetworkMode(f.Network)
		if err != nil {
			return usageError{fmt.Errorf("--network: %w", err)}
		}
		if m != session.NetworkOff && f.Sandbox == "none" {
			return usageError{errors.New("--network needs --sandbox bwrap (without a sandbox commands have the network anyway)")}
		}
	}
	if _, err := netproxy.ParseRules(f.AllowDomains, f.DenyDomains); err != nil {
		return usageError{fmt.Errorf("--allow-domain, --deny-domain: %w", err)}
	}
	if n := countTrue(f.continueLast, f.thread != "", f.resume != "" || f.pickOne); n > 1 {
		return usageError{errors.New("--continue, --resume and --thread each name a thread; give one")}
	}
	if f.Given("permission-mode") {
		m, err := hitl.ParseMode(f.PermissionMode)
		if err != nil || f.PermissionMode == "" {
			return usageError{fmt.Errorf("--permission-mode must be ask, accept-edits, plan, auto or bypass, not %q", f.PermissionMode)}
		}
		if f.AutoApprove && m != hitl.ModeBypass {
			return usageError{fmt.Errorf("--auto-approve and --permission-mode %s contradict each other", m)}
		}
	}
	if f.AutoApprove && f.Given("interrupt-on") && f.InterruptOn != "" {
		return usageError{errors.New("--auto-approve and --interrupt-on contradict each other")}
	}
	if f.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		f.Dir = wd
	}
	st, err := os.Stat(f.Dir)
	if err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("--dir: %s is not a directory", f.Dir)
	}
	// The workspace is kept, on the thread and in --continue's records,
	// as the folder it is, not as typed: a thread resumed from another
	// directory goes on in the same folder.
	if f.Dir, err = session.WorkspacePath(f.Dir); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	return nil
}

// networkValue is --network's value: a mode's text (session.ParseNetworkMode),
// "true" when the flag stands alone. Its type is a boolean's, for the
// flag to take no value unless written --network=MODE, and the help to
// show it so.
type networkValue struct{ s *string }

func (v networkValue) String() string { return *v.s }
func (v networkValue) Type() string   { return "bool" }

func (v networkValue) Set(s string) error {
	if _, err := session.ParseNetworkMode(s); err != nil {
		return err
	}
	*v.s = s
	return nil
}
