package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/rewind"
	"github.com/deepagents-go/deepagents/thread"
	"github.com/deepagents-go/deepagents/workspace"
)

// The commands that manage what accumulates in the database: deleting and
// pruning threads, and seeing and reclaiming the database's size.

func newThreadsDeleteCmd(env Env) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "delete THREAD... [--db DSN]",
		Short: "Delete threads with all their checkpoints (and their subagents' threads)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("threads delete needs at least one THREAD")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := openDB(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer d.Close()
			all, err := allThreads(cmd.Context(), d.Saver)
			if err != nil {
				return err
			}
			var missing []string
			deleted := 0
			for _, id := range args {
				found := false
				for _, t := range all {
					if t.ID != id && !strings.HasPrefix(t.ID, id+"/") {
						continue
					}
					found = true
					if t.Status == checkpoint.StatusBusy {
						return fmt.Errorf("thread %s is running; stop its run first", t.ID)
					}
				}
				if !found {
					missing = append(missing, id)
					continue
				}
				n, err := deleteTree(cmd.Context(), d, all, id)
				deleted += n
				if err != nil {
					return err
				}
			}
			fmt.Fprintf(env.Stderr, "deleted %d thread(s)%s\n", deleted, reclaimHint(d))
			if len(missing) > 0 {
				return fmt.Errorf("no such thread: %s", strings.Join(missing, ", "))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database (default: deepagents.db in the user's data directory)")
	return cmd
}

func newThreadsPruneCmd(env Env) *cobra.Command {
	var db, olderThan string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "prune --older-than DURATION [--dry-run] [--db DSN]",
		Short: "Delete the threads not updated for DURATION (such as 30d or 12h)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if olderThan == "" {
				return usageError{errors.New("threads prune needs --older-than, such as 30d or 12h")}
			}
			age, err := parseAge(olderThan)
			if err != nil {
				return usageError{fmt.Errorf("--older-than: %w", err)}
			}
			d, err := openDB(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer d.Close()
			all, err := allThreads(cmd.Context(), d.Saver)
			if err != nil {
				return err
			}
			cutoff := time.Now().Add(-age)
			deleted := 0
			for _, t := range all {
				if thread.IsChild(t.ID) || t.Status == checkpoint.StatusBusy || !t.UpdatedAt.Before(cutoff) {
					continue // subagent threads go with their parent; running ones stay
				}
				if dryRun {
					fmt.Fprintf(env.Stdout, "%s\t%s\t%s\n", t.ID, t.Status, t.UpdatedAt.Local().Format(time.DateTime))
					deleted++
					continue
				}
				n, err := deleteTree(cmd.Context(), d, all, t.ID)
				deleted += n
				if err != nil {
					return err
				}
			}
			if dryRun {
				fmt.Fprintf(env.Stderr, "would delete %d thread(s) not updated since %s\n", deleted, cutoff.Local().Format(time.DateTime))
				return nil
			}
			fmt.Fprintf(env.Stderr, "deleted %d thread(s) not updated since %s%s\n", deleted, cutoff.Local().Format(time.DateTime), reclaimHint(d))
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database (default: deepagents.db in the user's data directory)")
	cmd.Flags().StringVar(&olderThan, "older-than", "", "delete threads last updated longer ago than this: 30d, 12h, 90m")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be deleted, delete nothing")
	return cmd
}

// parseAge reads a duration with days allowed ("30d", "1d12h") besides
// Go's units.
func parseAge(s string) (time.Duration, error) {
	days := 0
	rest := s
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration such as 30d or 12h", s)
		}
		days, rest = n, s[i+1:]
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil {
			return 0, fmt.Errorf("%q is not a duration such as 30d or 12h", s)
		}
	}
	d += time.Duration(days) * 24 * time.Hour
	if d <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	return d, nil
}

// allThreads lists every thread.
func allThreads(ctx context.Context, s checkpoint.Saver) ([]checkpoint.Thread, error) {
	const page = 500
	var out []checkpoint.Thread
	for {
		ts, err := s.Threads(ctx, checkpoint.ListOptions{Limit: page, Offset: len(out)})
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
		if len(ts) < page {
			return out, nil
		}
	}
}

// deleteTree deletes the thread id and its subagents' threads (id/...),
// and returns how many it deleted.
func deleteTree(ctx context.Context, d *persist.DB, all []checkpoint.Thread, id string) (int, error) {
	n := 0
	hist := session.HistoryDir(d)
	for _, t := range all {
		if t.ID == id || strings.HasPrefix(t.ID, id+"/") {
			if err := d.Saver.DeleteThread(ctx, t.ID); err != nil {
				return n, fmt.Errorf("deleting thread %s: %w", t.ID, err)
			}
			n++
			if err := forgetThread(ctx, d, t.ID); err != nil {
				return n, fmt.Errorf("deleting the title of thread %s: %w", t.ID, err)
			}
			// Its workspace checkpoints (their contents stay until
			// db vacuum: other threads may share them).
			if err := rewind.Forget(ctx, d.Store, t.ID); err != nil {
				return n, fmt.Errorf("deleting the workspace checkpoints of thread %s: %w", t.ID, err)
			}
			// The thread's conversation history, if summarization kept
			// one: the folder of its top-level thread.
			if err := workspace.RemoveHistory(hist, t.ID); err != nil {
				return n, fmt.Errorf("deleting the history of thread %s: %w", t.ID, err)
			}
		}
	}
	return n, nil
}

func reclaimHint(d *persist.DB) string {
	if d.Kind == persist.KindSQLite {
		return "; run `deepagents db vacuum` to give the space back to the disk"
	}
	return ""
}

func newDBCmd(env Env) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "db [--db DSN]",
		Short: "Show where the database is, its size and its number of threads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := openDB(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer d.Close()
			size, err := d.Size(cmd.Context())
			if err != nil {
				return err
			}
			all, err := allThreads(cmd.Context(), d.Saver)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "database\t%s (%s)\nsize\t%s\nthreads\t%d\n", d.Location, d.Kind, display.Bytes(size), len(all))
			return nil
		},
	}
	cmd.PersistentFlags().StringVar(&db, "db", "", "database (default: deepagents.db in the user's data directory)")
	cmd.AddCommand(&cobra.Command{
		Use:   "vacuum [--db DSN]",
		Short: "Reclaim the space of deleted threads (and of workspace checkpoints no thread uses); run it while no agent runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := openDB(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer d.Close()
			before, err := d.Size(cmd.Context())
			if err != nil {
				return err
			}
			// The contents of workspace checkpoints that no thread's
			// points refer to any more, then the database's own space.
			blobs, err := rewind.Vacuum(cmd.Context(), d.Store)
			if err != nil {
				return err
			}
			if err := d.Vacuum(cmd.Context()); err != nil {
				return err
			}
			after, err := d.Size(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "%s: %s before, %s after (%d workspace checkpoint contents no thread used)\n", d.Location, display.Bytes(before), display.Bytes(after), blobs)
			return nil
		},
	})
	return cmd
}
