package cli

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"path/filepath"

	"github.com/deepagents-go/deepagents"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/acp"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/middleware/steer"
)

func newACPCmd(env Env) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "acp [flags]",
		Short: "Serve the agent to editors (Zed, JetBrains, Neovim) over the Agent Client Protocol on stdio",
		Long: `Serve the agent to an editor over the Agent Client Protocol
(https://agentclientprotocol.com), on standard input and output: configure
the editor to start "deepagents acp" (see docs/acp.md).

Each session is a thread of the database (--db), working in the session's
folder (the editor's project: --dir is not taken); session/load continues a
thread (deepagents threads lists them). The session's updates stream the
agent's answer, its tool calls with their status (and diffs for edits), and
its plan. Approvals (--interrupt-on; by default write_file, edit_file and
execute) are the editor's permission requests: allow, always allow the tool
in the session, or reject; a background subagent's calls that wait
for approval are asked about too, as they park (idle or not) and at
session/load. When the editor offers its file system
(fs/read_text_file, fs/write_text_file), read_file, write_file and
edit_file read and write the folder's text files through it, unsaved
changes included, each path checked as on disk first; listings, searches
and commands stay on disk. Standard output belongs to the protocol:
messages go to standard error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, name := range []string{"dir", "thread", "continue", "output"} {
				if cmd.Flags().Changed(name) {
					return usageError{fmt.Errorf("acp does not take --%s: each session names its folder and its thread", name)}
				}
			}
			if err := f.validate(cmd); err != nil {
				return err
			}
			return serveACP(cmd.Context(), env, &f)
		},
	}
	f.register(cmd)
	return cmd
}

// serveACP serves ACP on env's standard input and output, each session
// opened as deepagents run opens its agent, on one database.
func serveACP(ctx context.Context, env Env, f *runFlags) error {
	db, err := openDB(ctx, f.db)
	if err != nil {
		return err
	}
	defer db.Close()
	cfg := acp.Config{
		NewThreadID: newThreadID,
		Version:     version(),
		Logger:      slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Load: func(ctx context.Context, thread string) (*checkpoint.Snapshot, error) {
			if _, err := db.Saver.Thread(ctx, thread); err != nil {
				return nil, err
			}
			return db.Saver.Load(ctx, thread, "")
		},
		Open: func(ctx context.Context, dir, thread string, fs *acp.ClientFS) (*acp.Workspace, error) {
			flags := f.Flags
			if dir == "" {
				return nil, errors.New("the session has no cwd")
			}
			if !filepath.IsAbs(dir) {
				// ACP's cwd is absolute; a relative one would be taken
				// against this process's own folder.
				return nil, fmt.Errorf("the session's cwd %q is not an absolute path", dir)
			}
			dir, err := session.WorkspacePath(dir)
			if err != nil {
				return nil, fmt.Errorf("the session's cwd: %w", err)
			}
			flags.Dir = dir
			given := flags.Given
			flags.Given = func(name string) bool { return name == "dir" || given(name) }
			// A thread that does not exist yet is new: nothing kept.
			kept := thread
			if _, err := db.Saver.Thread(ctx, thread); errors.Is(err, checkpoint.ErrNotFound) {
				kept = ""
			}
			spec, err := resolve(ctx, env, db, flags, kept, true, false)
			if err != nil {
				return nil, err
			}
			deps := sessionDeps(ctx, env, db)
			deps.Buffers = editorBuffers(fs)
			s, err := session.Open(ctx, spec, deps)
			if err != nil {
				return nil, err
			}
			values := spec.Values()
			o := &opened{Session: s, db: db, spec: spec}
			return &acp.Workspace{
				Dir:        spec.Dir,
				Traits:     s.Agent.ToolTraits,
				Background: acpBackground(s.Agent, thread),
				Steer: func(ctx context.Context, thread, text string) error {
					return steer.Send(ctx, db.Store, thread, text)
				},
				Stream: func(ctx context.Context, in deepagents.Input) iter.Seq2[deepagents.Event, error] {
					if in.Decisions == nil {
						in.Values = values // as deepagents run sets them on a prompt
					}
					return s.Agent.Stream(ctx, in)
				},
				Started: func(ctx context.Context, thread, prompt string) {
					if err := rememberThread(ctx, db, spec.Dir, thread, prompt); err != nil {
						fmt.Fprintf(env.Stderr, "warning: --continue will not find thread %s: %v\n", thread, err)
					}
				},
				Ended: func(ctx context.Context, end deepagents.Event, used *deepagents.UsageTree) {
					if err := recordUsage(ctx, db, end.ThreadID, used); err != nil {
						fmt.Fprintf(env.Stderr, "warning: the usage of thread %s was not recorded: %v\n", end.ThreadID, err)
					}
				},
				Close: func() {
					stopBackground(ctx, env, o)
					s.Close()
				},
			}, nil
		},
	}
	return acp.Serve(ctx, cfg, env.Stdin, env.Stdout)
}

// editorBuffers are the client's file system as the workspace's buffers
// (backend.Buffered, which checks each path before the client sees it):
// reads when the client offers them, writes when it offers them, the disk
// for the rest.
func editorBuffers(fs *acp.ClientFS) backend.Buffers {
	var b backend.Buffers
	if fs == nil {
		return b
	}
	if fs.CanRead() {
		b.ReadText = fs.ReadTextFile
	}
	if fs.CanWrite() {
		b.WriteText = fs.WriteTextFile
	}
	return b
}

// acpBackground is the requests for approval of thread's background
// tasks, as an ACP session asks its client about them; nil when the
// agent has no background subagents.
func acpBackground(a *deepagents.Agent, thread string) *acp.Background {
	bg := deepagents.Background(a)
	if bg == nil {
		return nil
	}
	convert := func(a deepagents.AsyncApproval) acp.TaskApproval {
		return acp.TaskApproval{TaskID: a.TaskID, Subagent: a.Subagent, Task: a.Task, Requests: a.Requests, Waiting: a.Status == deepagents.AsyncAwaitingApproval}
	}
	return &acp.Background{
		Watch: func(f func(acp.TaskApproval)) func() {
			return bg.Watch(func(a deepagents.AsyncApproval) {
				if a.ThreadID == thread {
					f(convert(a))
				}
			})
		},
		Waiting: func(ctx context.Context) ([]acp.TaskApproval, error) {
			list, err := bg.Approvals(ctx, thread)
			out := make([]acp.TaskApproval, len(list))
			for i, a := range list {
				out[i] = convert(a)
			}
			return out, err
		},
		Answer: func(ctx context.Context, task string, ds []deepagents.Decision) error {
			return bg.Answer(ctx, thread, task, ds)
		},
	}
}
