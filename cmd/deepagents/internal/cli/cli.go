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
	fmt.Fprintf(env.Stderr, "deepagents: %s\n", display.OneLine(err.Error()))
	if isUsage(err) || isCobraUsage(err) {
		return ExitUsage
	}
	return ExitFailed
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
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	// deepagents on a terminal is an interactive session; -p PROMPT (or a
	// prompt on standard input) runs one task, as run does, with the same
	// flags.
	var f runFlags
	var prompt string
	f.register(root)
	root.Flags().StringVarP(&prompt, "print", "p", "", "run this task non-interactively and print the answer (as run PROMPT)")
	// --resume ID continues a thread; --resume alone lets the user pick
	// one. (A flag with an optional value takes it only after "=", so the
	// id may also come as the one argument.)
	root.Flags().StringVarP(&f.resume, "resume", "r", "", "continue thread `ID`; without an ID, pick one of the recent threads")
	root.Flags().Lookup("resume").NoOptDefVal = pickSentinel
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 && f.resume == pickSentinel {
			return nil
		}
		return cobra.NoArgs(cmd, args)
	}
	root.RunE = func(cmd *cobra.Command, ids []string) error {
		if f.resume == pickSentinel {
			f.resume, f.pickOne = "", len(ids) == 0
			if len(ids) == 1 {
				f.resume = ids[0]
			}
		}
		if err := f.validate(cmd); err != nil {
			return err
		}
		if prompt == "" && isTerminal(env.Stdin) && isTerminal(env.Stdout) {
			err := runInteractive(cmd.Context(), env, &f)
			if errors.Is(err, tui.ErrNothingPicked) {
				return nil // the user left the picker
			}
			return err
		}
		if prompt == "" && env.Stdin == nil {
			return cmd.Help()
		}
		var args []string
		if prompt != "" {
			args = []string{prompt}
		}
		p, err := promptOf(env, args)
		if errors.Is(err, errEmptyStdin) && prompt == "" {
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
	root.AddCommand(newRunCmd(env), newResumeCmd(env), newServeCmd(env), newMCPServeCmd(env), newMCPCmd(env), newThreadsCmd(env), newStateCmd(env), newDBCmd(env))
	return root
}

// pickSentinel is the value of --resume given without an id.
const pickSentinel = "\x00pick"

// isCobraUsage recognises cobra's own argument errors.
func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "accepts ") ||
		strings.HasPrefix(s, "requires at least") || strings.HasPrefix(s, "unknown flag") ||
		strings.Contains(s, "flag needs an argument")
}
