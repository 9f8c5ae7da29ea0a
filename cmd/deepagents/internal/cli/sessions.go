package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/store"
)

// What the CLI keeps about its sessions, in the database's store: the
// thread that last ran in each workspace (what --continue continues), and
// each thread's title and usage.
var (
	lastThreadNamespace = []string{"cli", "last_thread"}
	titleNamespace      = []string{"cli", "titles"}
	usageNamespace      = []string{"cli", "usage"}
)

// maxTitle bounds a title, in characters.
const maxTitle = 80

// rememberThread records that thread ran in dir, and gives a thread without
// a title its first prompt as one.
func rememberThread(ctx context.Context, db *persist.DB, dir, thread, prompt string) error {
	if err := db.Store.Put(ctx, lastThreadNamespace, dir, map[string]any{"thread_id": thread}); err != nil {
		return err
	}
	if strings.TrimSpace(prompt) == "" {
		return nil
	}
	if _, err := db.Store.Get(ctx, titleNamespace, thread); !errors.Is(err, store.ErrNotFound) {
		return err // titled already, or the store failed
	}
	return setTitle(ctx, db, thread, prompt)
}

// setTitle sets a thread's title: one line, at most maxTitle characters.
func setTitle(ctx context.Context, db *persist.DB, thread, title string) error {
	return db.Store.Put(ctx, titleNamespace, thread, map[string]any{"title": display.Clip(title, maxTitle)})
}

// title returns a thread's title, "" when it has none.
func title(ctx context.Context, db *persist.DB, thread string) string {
	it, err := db.Store.Get(ctx, titleNamespace, thread)
	if err != nil {
		return ""
	}
	t, _ := it.Value["title"].(string)
	return t
}

// forgetThread removes what the CLI kept about a deleted thread.
func forgetThread(ctx context.Context, db *persist.DB, thread string) error {
	return errors.Join(db.Store.Delete(ctx, titleNamespace, thread), db.Store.Delete(ctx, usageNamespace, thread))
}

// recordUsage adds what a run used to its thread's usage, by subagent
// (the subagents' calls of one name counted together).
func recordUsage(ctx context.Context, db *persist.DB, thread string, run *deepagents.UsageTree) error {
	if len(run.Models) == 0 && len(run.Subagents) == 0 {
		return nil
	}
	total, err := threadUsage(ctx, db, thread)
	if err != nil {
		return err
	}
	total.Merge(bySubagent(run))
	data, err := json.Marshal(total)
	if err != nil {
		return err
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return db.Store.Put(ctx, usageNamespace, thread, v)
}

// threadUsage returns what a thread's runs in the CLI used so far.
func threadUsage(ctx context.Context, db *persist.DB, thread string) (*deepagents.UsageTree, error) {
	var t deepagents.UsageTree
	it, err := db.Store.Get(ctx, usageNamespace, thread)
	if errors.Is(err, store.ErrNotFound) {
		return &t, nil
	}
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(it.Value)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("thread %s: its usage record: %w", thread, err)
	}
	return &t, nil
}

// bySubagent is t with each subagent named by its name alone, without the
// call that started it ("researcher:call_1" is "researcher").
func bySubagent(t *deepagents.UsageTree) *deepagents.UsageTree {
	name, _, _ := strings.Cut(t.Agent, ":")
	out := &deepagents.UsageTree{Agent: name, Models: slices.Clone(t.Models)}
	for _, c := range t.Subagents {
		out.Merge(&deepagents.UsageTree{Subagents: []*deepagents.UsageTree{bySubagent(c)}})
	}
	return out
}

// lastThread returns the thread that last ran in dir.
func lastThread(ctx context.Context, db *persist.DB, dir string) (string, error) {
	it, err := db.Store.Get(ctx, lastThreadNamespace, dir)
	if errors.Is(err, store.ErrNotFound) {
		return "", usageError{fmt.Errorf("--continue: no thread has run in %s yet", dir)}
	}
	if err != nil {
		return "", fmt.Errorf("--continue: %w", err)
	}
	id, _ := it.Value["thread_id"].(string)
	if id == "" {
		return "", fmt.Errorf("--continue: the record of %s's last thread is unreadable", dir)
	}
	if _, err := db.Saver.Thread(ctx, id); err != nil {
		return "", usageError{fmt.Errorf("--continue: thread %s, the last to run in %s, is gone: %w", id, dir, err)}
	}
	return id, nil
}

func newThreadsRenameCmd(env Env) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "rename THREAD TITLE [--db DSN]",
		Short: "Give a thread a title (threads shows it; a new thread's is its first prompt)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 || strings.TrimSpace(args[1]) == "" {
				return usageError{errors.New("rename needs a THREAD and a TITLE")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			d, err := openDB(ctx, db)
			if err != nil {
				return err
			}
			defer d.Close()
			if _, err := d.Saver.Thread(ctx, args[0]); err != nil {
				return fmt.Errorf("thread %s: %w", args[0], err)
			}
			return setTitle(ctx, d, args[0], args[1])
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database (default: deepagents.db in the user's data directory)")
	return cmd
}

func newThreadsUsageCmd(env Env) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "usage THREAD [--db DSN]",
		Short: "Show what a thread's runs used: tokens and cost, by agent and model",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := openDB(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer d.Close()
			if _, err := d.Saver.Thread(cmd.Context(), args[0]); err != nil {
				return fmt.Errorf("thread %s: %w", args[0], err)
			}
			u, err := threadUsage(cmd.Context(), d, args[0])
			if err != nil {
				return err
			}
			for _, l := range display.UsageLines(args[0], u, session.UserPrices(session.Locate(env.Getenv))) {
				fmt.Fprintln(env.Stdout, strings.TrimPrefix(l, "deepagents: "))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database (default: deepagents.db in the user's data directory)")
	return cmd
}
