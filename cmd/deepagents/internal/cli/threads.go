package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"text/tabwriter"
	"time"

	"github.com/deepagents-go/deepagents"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

func newThreadsCmd(env Env) *cobra.Command {
	var db, output string
	var limit int
	cmd := &cobra.Command{
		Use:   "threads [--db DSN] [--output text|jsonl]",
		Short: "List threads, most recently updated first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "jsonl" {
				return usageError{fmt.Errorf("--output must be text or jsonl, not %q", output)}
			}
			if limit < 0 {
				return usageError{fmt.Errorf("--limit must be zero (no limit) or more, not %d", limit)}
			}
			d, err := openDB(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer d.Close()
			threads, err := d.Saver.Threads(cmd.Context(), checkpoint.ListOptions{Limit: limit})
			if err != nil {
				return err
			}
			if output == "jsonl" {
				enc := json.NewEncoder(env.Stdout)
				for _, t := range threads {
					row := struct {
						checkpoint.Thread
						Title string                `json:"title,omitempty"`
						Usage *deepagents.UsageTree `json:"usage,omitempty"`
					}{t, title(cmd.Context(), d, t.ID), nil}
					if u, err := threadUsage(cmd.Context(), d, t.ID); err == nil && (len(u.Models) > 0 || len(u.Subagents) > 0) {
						row.Usage = u
					}
					if err := enc.Encode(row); err != nil {
						return err
					}
				}
				return nil
			}
			w := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
			prices := session.UserPrices(session.Locate(env.Getenv))
			fmt.Fprintln(w, "THREAD\tSTATUS\tUPDATED\tTOKENS\tCOST\tTITLE")
			for _, t := range threads {
				tokens, cost := "-", "-"
				if u, err := threadUsage(cmd.Context(), d, t.ID); err == nil && (len(u.Models) > 0 || len(u.Subagents) > 0) {
					_, used := u.Total()
					tokens = display.Thousands(used.Total())
					if dollars, unpriced := u.Cost(prices); unpriced == "" {
						cost = fmt.Sprintf("$%.4f", dollars)
					} else {
						cost = "?"
					}
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Status, t.UpdatedAt.Local().Format(time.DateTime), tokens, cost, title(cmd.Context(), d, t.ID))
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database (default: deepagents.db in the user's data directory)")
	cmd.Flags().StringVar(&output, "output", "text", "text or jsonl")
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many threads")
	cmd.AddCommand(newThreadsDeleteCmd(env), newThreadsPruneCmd(env), newThreadsRenameCmd(env), newThreadsUsageCmd(env))
	return cmd
}

// threadState is what `deepagents state` prints.
type threadState struct {
	ThreadID     string                     `json:"thread_id"`
	CheckpointID string                     `json:"checkpoint_id"`
	Status       checkpoint.Status          `json:"status"`
	Messages     []llm.Message              `json:"messages"`
	Todos        []todos.Todo               `json:"todos"`
	Files        map[string]string          `json:"files"`
	Values       map[string]json.RawMessage `json:"values,omitempty"`
	// Context is what the conversation fills of a model call's context
	// window, estimated: its system prompt and tools are the agent's,
	// not the thread's, and show in the usage events of a run.
	Context *deepagents.ContextWindow `json:"context"`
}

func newStateCmd(env Env) *cobra.Command {
	var db, checkpointID string
	cmd := &cobra.Command{
		Use:   "state THREAD [--db DSN]",
		Short: "Print a thread's current state as JSON (messages, todos, files)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("state needs exactly one THREAD")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := openDB(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer d.Close()
			snap, err := d.Saver.Load(cmd.Context(), args[0], checkpointID)
			if err != nil {
				return fmt.Errorf("thread %s: %w", args[0], err)
			}
			th, err := d.Saver.Thread(cmd.Context(), args[0])
			if err != nil {
				return fmt.Errorf("thread %s: %w", args[0], err)
			}
			out := threadState{ThreadID: args[0], CheckpointID: snap.ID, Status: th.Status, Messages: snap.Messages,
				Todos: []todos.Todo{}, Files: map[string]string{}, Values: maps.Clone(snap.Values)}
			if out.Messages == nil {
				out.Messages = []llm.Message{}
			}
			// The plan is a value, printed as a field of its own.
			plan, err := todos.Of(snap.Values)
			if err != nil {
				return fmt.Errorf("thread %s: %w", args[0], err)
			}
			if plan != nil {
				out.Todos = plan
			}
			delete(out.Values, todos.Value)
			for p, f := range snap.Files {
				out.Files[p] = f.Content
			}
			out.Context = agent.MeasureContext(&llm.Request{Messages: snap.Messages}, 0)
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database (default: deepagents.db in the user's data directory)")
	cmd.Flags().StringVar(&checkpointID, "checkpoint", "", "show the state as of this checkpoint instead of the latest")
	return cmd
}
