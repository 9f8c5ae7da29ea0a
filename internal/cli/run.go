package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/llmtest"
)

// runFlags are the flags shared by commands that run an agent.
type runFlags struct {
	model    string
	dir      string
	output   string
	maxSteps int
}

func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model as provider:model (e.g. anthropic:claude-sonnet-4-5, openai:gpt-4.1, replay:FILE)")
	fl.StringVar(&f.dir, "dir", "", "workspace directory the agent works in (default: the current directory)")
	fl.StringVar(&f.output, "output", "text", "output format: text (the answer on stdout) or jsonl (one event per line)")
	fl.IntVar(&f.maxSteps, "max-steps", 0, fmt.Sprintf("maximum model calls in one run (default %d)", agent.DefaultMaxSteps))
}

func (f *runFlags) validate() error {
	switch f.output {
	case "text", "jsonl":
	default:
		return usageError{fmt.Errorf("--output must be text or jsonl, not %q", f.output)}
	}
	if f.maxSteps < 0 {
		return usageError{errors.New("--max-steps must not be negative")}
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
	return nil
}

func newRunCmd(env Env) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Run one task and exit",
		Long: `Run one task with a deep agent and exit.

The exit status is 0 when the run completed, 1 when it failed, 2 for bad
usage and 3 when it stopped waiting for human decisions.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usageError{errors.New("run needs a PROMPT (the task, as one argument)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			return runTask(cmd.Context(), env, &f, strings.Join(args, " "))
		},
	}
	f.register(cmd)
	return cmd
}

// registry returns the model providers the CLI knows.
func registry() *llm.Registry {
	r := &llm.Registry{}
	llmtest.Register(r)
	return r
}

func openModel(ctx context.Context, spec string) (llm.Model, error) {
	if spec == "" {
		return nil, usageError{errors.New("no model given: pass --model provider:model (for example --model replay:examples/quickstart/script.json to run offline)")}
	}
	return registry().New(ctx, spec)
}

func runTask(ctx context.Context, env Env, f *runFlags, prompt string) error {
	model, err := openModel(ctx, f.model)
	if err != nil {
		return err
	}
	a, err := deepagents.New(deepagents.Config{Model: model, MaxSteps: f.maxSteps})
	if err != nil {
		return err
	}
	out := newRenderer(f.output, env)
	var status agent.RunStatus
	for e, err := range a.Stream(ctx, deepagents.Prompt(prompt)) {
		if err != nil {
			break // already reported by the run_end event
		}
		if err := out.event(e); err != nil {
			return err
		}
		if e.Type == agent.EventRunEnd && len(e.Namespace) == 0 {
			status = e.Status
		}
	}
	if err := out.close(); err != nil {
		return err
	}
	switch status {
	case agent.StatusCompleted:
		return nil
	case agent.StatusInterrupted:
		return exitError{ExitInterrupted}
	}
	return exitError{ExitFailed}
}
