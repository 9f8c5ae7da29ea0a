package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/store"
)

// What the CLI keeps about its sessions, in the database's store: the
// thread that last ran in each workspace (what --continue continues), and
// each thread's title.
var (
	lastThreadNamespace = []string{"cli", "last_thread"}
	titleNamespace      = []string{"cli", "titles"}
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
	return db.Store.Put(ctx, titleNamespace, thread, map[string]any{"title": clip(title, maxTitle)})
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
	return db.Store.Delete(ctx, titleNamespace, thread)
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
			d, err := persist.Open(ctx, db, nil)
			if err != nil {
				return fmt.Errorf("--db: %w", err)
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
