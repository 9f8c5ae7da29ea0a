package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/rewind"
)

func newRewindCmd(env Env) *cobra.Command {
	var db string
	var to int
	var opts rewind.Options
	cmd := &cobra.Command{
		Use:   "rewind THREAD [--to N [--files] [--conversation] [--force] [--dry-run]] [--db DSN]",
		Short: "List a thread's prompts, or put its workspace and conversation back as they were before one",
		Long: `Without --to, list the thread's turns: each prompt, when it was sent, and how many
workspace entries the agent changed while working on it; and, after a rewind, the
thread as that rewind found it (its files and conversation), so that a rewind can be
undone by rewinding to it.

With --to N, put the thread back as it was before its Nth prompt: the workspace's
files (what the file tools and commands changed alike), and the conversation,
which forks at that point; the later turns stay in the thread's history. --files or
--conversation rewinds only one of them. Files changed outside the agent since that
point (by hand, between runs or after its last step) are kept and listed, unless
--force; a file edited by hand while the agent worked counts as the agent's change.
--dry-run says what would change and changes nothing.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("rewind needs exactly one THREAD")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, thread := cmd.Context(), args[0]
			if cmd.Flags().Changed("to") && to < 1 {
				return usageError{fmt.Errorf("--to must be a turn number from 1, not %d", to)}
			}
			if to == 0 && (opts.Files || opts.Conversation || opts.Force || opts.DryRun) {
				return usageError{errors.New("--files, --conversation, --force and --dry-run go with --to N")}
			}
			d, err := openDB(ctx, db)
			if err != nil {
				return err
			}
			defer d.Close()
			tr, err := trackerOf(ctx, d, thread)
			if err != nil {
				return err
			}
			defer tr.Close()
			turns, err := tr.Turns(ctx, thread)
			if err != nil {
				return err
			}
			if len(turns) == 0 {
				return fmt.Errorf("thread %s has no recorded turns to rewind to", thread)
			}
			if to == 0 {
				return listTurns(ctx, env.Stdout, tr, thread)
			}
			if !opts.Files && !opts.Conversation {
				opts.Files, opts.Conversation = true, true
			}
			res, err := tr.Rewind(ctx, d.Saver, thread, to, opts)
			if err != nil && res != nil && (res.CheckpointID != "" || res.Files != nil) {
				// Part of it was done: say what, then why the rest was not.
				printRewind(env.Stdout, thread, to, res, opts, false)
			}
			if err != nil {
				return err
			}
			printRewind(env.Stdout, thread, to, res, opts, true)
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database (default: deepagents.db in the user's data directory)")
	cmd.Flags().IntVar(&to, "to", 0, "the turn to rewind to: the thread as it was before its Nth prompt")
	cmd.Flags().BoolVar(&opts.Files, "files", false, "rewind the workspace's files only")
	cmd.Flags().BoolVar(&opts.Conversation, "conversation", false, "rewind the conversation only")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "also put back files changed outside the agent since that turn")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would change; change nothing")
	return cmd
}

// trackerOf opens the workspace checkpoints of a thread: of its folder, or
// its turns alone when its files are in its state.
func trackerOf(ctx context.Context, d *persist.DB, thread string) (*rewind.Tracker, error) {
	if _, err := d.Saver.Thread(ctx, thread); err != nil {
		return nil, fmt.Errorf("thread %s: %w", thread, err)
	}
	// The folder the points were recorded in ("" when they recorded no
	// files): only its points may put a folder back. A thread forked back
	// to its start keeps no settings, but its points know.
	dir, err := rewind.FolderOf(ctx, d.Store, thread)
	if err != nil {
		return nil, err
	}
	if dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("thread %s worked in %s, which is not a folder now", thread, dir)
		}
	}
	return rewind.New(rewind.Config{Dir: dir, Store: d.Store})
}

// turnRow is a turn as the list shows it, with the entries the agent
// changed after its prompt.
type turnRow struct {
	*rewind.Point
	changed int
}

// turnRows are the thread's turns, oldest first.
func turnRows(ctx context.Context, tr *rewind.Tracker, thread string) ([]turnRow, error) {
	points, err := tr.Points(ctx, thread)
	if err != nil {
		return nil, err
	}
	var rows []turnRow
	for _, p := range points {
		switch {
		case p.Kind == rewind.KindTurn || p.Kind == rewind.KindEnd:
			rows = append(rows, turnRow{Point: p})
		case p.Kind == rewind.KindStep && len(rows) > 0:
			// The agent's changes; a restore's are not.
			rows[len(rows)-1].changed += len(p.Changes)
		}
	}
	return rows, nil
}

// listTurns prints the turns: number, time, entries the agent changed in
// the turn, prompt.
func listTurns(ctx context.Context, w io.Writer, tr *rewind.Tracker, thread string) error {
	rows, err := turnRows(ctx, tr, thread)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TURN\tSENT\tCHANGED\tPROMPT")
	for i, t := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", i+1, t.CreatedAt.Local().Format(time.DateTime), t.changed, display.Clip(turnLabel(t.Point), 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nRewind with: deepagents rewind %s --to N (--files or --conversation for one of them)\n", thread)
	return err
}

// turnLabel is what the list says of a turn: its prompt, or what an end
// point is.
func turnLabel(p *rewind.Point) string {
	if p.Kind == rewind.KindEnd {
		return EndLabel
	}
	return p.Prompt
}

// EndLabel is what the lists of turns say of a point a rewind recorded
// before it changed anything.
const EndLabel = "(the files and conversation as a rewind found them: rewind here to undo it)"

// printRewind says what a rewind did, or would do; withPrompt repeats the
// turn's prompt (the terminal puts it in the input instead).
func printRewind(w io.Writer, thread string, to int, res *rewind.Result, opts rewind.Options, withPrompt bool) {
	verb := "Rewound"
	if opts.DryRun {
		verb = "Would rewind"
	}
	when := "sent"
	if res.Turn.Kind == rewind.KindEnd {
		when = "as a rewind found it"
	}
	fmt.Fprintf(w, "%s thread %s to turn %d (%s %s).\n", verb, thread, to, when, res.Turn.CreatedAt.Local().Format(time.DateTime))
	if p := res.Files; p != nil {
		fmt.Fprintf(w, "Files: %d put back, %d removed.\n", len(p.Written), len(p.Removed))
		list := func(what string, paths []string) {
			if len(paths) > 0 {
				shown := make([]string, len(paths))
				for i, p := range paths {
					shown[i] = display.OneLine(p) // a name with a newline stays one line
				}
				fmt.Fprintf(w, "%s:\n  %s\n", what, strings.Join(shown, "\n  "))
			}
		}
		list("Put back", p.Written)
		list("Removed", p.Removed)
		list("Kept, changed outside the agent since (--force puts them back too)", p.Kept)
		list("Left as they are, their contents not stored (over the size bound or the thread's quota)", p.Unrestorable)
		list("Kept, still holding files no turn records (ignored ones)", p.NotEmpty)
	}
	if res.CheckpointID != "" {
		fmt.Fprintf(w, "Conversation: forked at the turn; the later turns stay in the thread's history (deepagents state %s --checkpoint ID).\n", thread)
	} else if opts.Conversation && opts.DryRun {
		fmt.Fprintln(w, "Conversation: would fork at the turn.")
	}
	if withPrompt && res.Turn.Prompt != "" {
		fmt.Fprintf(w, "The prompt of that turn, to send again:\n  %s\n", strings.ReplaceAll(display.TerminalSafe(strings.TrimSpace(res.Turn.Prompt)), "\n", "\n  "))
	}
}
