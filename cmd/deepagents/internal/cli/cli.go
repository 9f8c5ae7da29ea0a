package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/tui"
)

// Exit statuses.
const (
	ExitOK          = 0 // the run completed
	ExitFailed      = 1 // the run failed, or the command could not start it
	ExitUsage       = 2 // bad flags or arguments
	ExitInterrupted = 3 // the run stopped waiting for human decisions
	ExitStopped     = 4 // a guard ended the run early: a loop, a budget (agent.EndCode)
)

// Env is what a command reads and writes besides its arguments.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// usageError marks errors in how the command was called.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitError carries an exit status without a message (the run already
// reported itself).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Main runs the command line args and returns the exit status.
func Main(args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Traces, when the OTEL_* environment asks for them, are flushed
	// before the command returns its status.
	tr := &tracing{log: slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	defer tr.close()
	ctx = withTracing(ctx, tr)

	root := newRoot(env)
	if c, _, err := root.Find(args); err == nil && c == root {
		args = resumeArgs(root.Flags(), args)
	}
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(env.Stderr, "deepagents: %s\n", errorText(err))
	if isUsage(err) || isCobraUsage(err) {
		return ExitUsage
	}
	return ExitFailed
}

// errorText is err's message on one line, without the "deepagents: "
// the library starts its own errors with: the CLI's line says it once.
func errorText(err error) string {
	return withoutPrefix(display.OneLine(err.Error()))
}

// withoutPrefix strips the "deepagents: " prefixes of a message.
func withoutPrefix(msg string) string {
	for strings.HasPrefix(msg, "deepagents: ") {
		msg = strings.TrimPrefix(msg, "deepagents: ")
	}
	return msg
}

// isUsage reports whether err is a usage error, the command's or the
// session's (a configuration or subagent file, say).
func isUsage(err error) bool {
	var ue usageError
	var se session.UsageError
	return errors.As(err, &ue) || errors.As(err, &se)
}

func newRoot(env Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "deepagents",
		Short:         "Run deep agents: planning, files, subagents and memory around a tool-calling model",
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version(),
		Example: `  deepagents                            a session on this terminal
  deepagents -p "explain this repo"     one task, its answer on stdout (as run)
  git diff | deepagents -p "review it"  the piped input follows the prompt
  deepagents --resume [ID]              continue a thread (without an ID, pick one)`,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	// deepagents on a terminal is an interactive session; -p (or a prompt
	// on standard input) runs one task, as run does, with the same flags.
	// -p is a switch, as Claude Code's: the prompt is the arguments, so a
	// flag after -p stays a flag (deepagents -p --model X "task").
	var f runFlags
	var printMode bool
	f.register(root)
	f.registerGoal(root)
	root.Flags().BoolVarP(&printMode, "print", "p", false, "run the task of the arguments (or of standard input) non-interactively and print the answer, as run does")
	// --resume ID continues a thread; --resume alone lets the user pick
	// one. resumeArgs has rewritten both forms as --resume=VALUE before
	// the flags are parsed.
	root.Flags().StringVarP(&f.resume, "resume", "r", "", "continue thread `ID`; --resume alone picks one of the recent threads")
	root.Args = func(cmd *cobra.Command, args []string) error {
		if printMode || len(args) == 0 {
			return nil // the prompt
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			return usageError{fmt.Errorf("unknown command %q; did you mean %s?", args[0], s[0])}
		}
		return usageError{fmt.Errorf("unknown command %q (a task is run with -p: deepagents -p %q)", args[0], strings.Join(args, " "))}
	}
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if f.resume == pickSentinel {
			f.resume, f.pickOne = "", true
		}
		if err := f.validate(cmd); err != nil {
			return err
		}
		onTerminal := isTerminal(env.Stdin) && isTerminal(env.Stdout)
		if !printMode && onTerminal {
			err := runInteractive(cmd.Context(), env, &f)
			if errors.Is(err, tui.ErrNothingPicked) {
				return nil // the user left the picker
			}
			return err
		}
		if f.pickOne && !onTerminal {
			return usageError{errPickNeedsTerminal}
		}
		if !printMode && env.Stdin == nil {
			return cmd.Help()
		}
		p, err := promptOf(cmd.Context(), env, args)
		if errors.Is(err, errEmptyStdin) && !printMode && cmd.Flags().NFlag() == 0 {
			return cmd.Help() // nothing came: deepagents < /dev/null
		}
		if err != nil {
			return err
		}
		in := deepagents.Prompt(p)
		in.ThreadID = f.thread
		if err := runAgent(cmd.Context(), env, &f, in); !errors.Is(err, tui.ErrNothingPicked) {
			return err
		}
		return nil // the user left the picker
	}
	root.AddCommand(newRunCmd(env), newResumeCmd(env), newServeCmd(env), newMCPServeCmd(env), newMCPCmd(env), newACPCmd(env), newThreadsCmd(env), newStateCmd(env), newRewindCmd(env), newDBCmd(env), newHooksCmd(env), newPluginCmd(env), newEvalCmd(env))
	return root
}

// pickSentinel is the value resumeArgs gives --resume given without an
// id: a NUL byte cannot come from the command line.
const pickSentinel = "\x00pick"

// errPickNeedsTerminal refuses --resume without an id where there is no
// terminal to pick the thread on.
var errPickNeedsTerminal = errors.New("--resume without a thread id needs a terminal to pick one on; give the id (deepagents threads lists them)")

// resumeArgs rewrites the root command's --resume (-r) as --resume=VALUE:
// the argument after it is its thread id unless it looks like a flag
// ("--resume ID"), and --resume alone becomes --resume=pickSentinel. A
// pflag flag with an optional value (NoOptDefVal) takes it only after "=",
// and shows it badly in the help; the id, taken as an argument, would mix
// with -p's prompt. The values of the other flags are skipped, so that
// "--dir -r" stays as it is, and nothing after "--" is touched.
func resumeArgs(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	resume := func(i int) int {
		if i+1 < len(args) && args[i+1] != "" && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, "--resume="+args[i+1])
			return i + 1
		}
		out = append(out, "--resume="+pickSentinel)
		return i
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...)
		case a == "--resume":
			i = resume(i)
			continue
		case strings.HasPrefix(a, "--"):
			out = append(out, a)
			if fl := fs.Lookup(a[2:]); fl != nil && fl.NoOptDefVal == "" && i+1 < len(args) {
				out = append(out, args[i+1]) // its value
				i++
			}
			continue
		case len(a) > 1 && a[0] == '-':
			// Shorthands, one or several (-pr): the first that takes a
			// value takes the rest of a, or the next argument.
			for j := 1; j < len(a); j++ {
				fl := fs.ShorthandLookup(a[j : j+1])
				if fl == nil {
					break // pflag reports it
				}
				if fl.Name == "resume" && j == len(a)-1 {
					if j > 1 {
						out = append(out, a[:j])
					}
					i = resume(i)
					a = ""
					break
				}
				if fl.NoOptDefVal == "" {
					if j == len(a)-1 && i+1 < len(args) {
						out = append(out, a, args[i+1])
						i++
						a = ""
					}
					break
				}
			}
			if a != "" {
				out = append(out, a)
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// isCobraUsage recognises cobra's own argument errors.
func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "accepts ") ||
		strings.HasPrefix(s, "requires at least") || strings.HasPrefix(s, "unknown flag") ||
		strings.Contains(s, "flag needs an argument")
}
