package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"sync"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/tui"
	"github.com/deepagents-go/deepagents/hooks"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/steer"
	"github.com/deepagents-go/deepagents/netproxy"
	"github.com/deepagents-go/deepagents/persist"
)

// runInteractive is `deepagents` on a terminal: the session (package
// tui) on the agent the flags open, each run's settings recorded on its
// thread, each thread remembered for --continue and its usage recorded.
func runInteractive(ctx context.Context, env Env, f *runFlags) error {
	// What opening the session writes on stderr (notes, warnings) is
	// shown by the session, as its first lines: the terminal library
	// draws the session from the line above the cursor.
	held := &heldWriter{w: env.Stderr, held: true}
	stderr := env.Stderr
	env.Stderr = held
	hostQuestions := make(chan tui.HostQuestion)
	o, err := openSession(ctx, env, f, true, false, askInTerminal(hostQuestions))
	before := held.release()
	if err != nil {
		io.WriteString(stderr, before)
		return err
	}
	defer o.close()
	in, _ := env.Stdin.(*os.File)
	out, _ := env.Stdout.(*os.File)
	// /model SPEC replaces the agent: the runs use the one in force.
	l := &live{o: o, env: env}
	l.bg.l = l
	if f.Given("goal") {
		l.goal.set(o.spec.Thread, f.goal) // the thread the session starts on
	}
	// The permission mode the user chose last (shift+tab, a plan's
	// approval) goes with every run, onto its thread.
	var mode modeHolder
	mode.set(o.spec.PermissionMode)
	// What is still running in the background ends with the session.
	defer stopBackground(ctx, env, o)
	// The session's hooks: SessionStart now, SessionEnd when it ends, on
	// /clear both, and the idle Notification.
	hk := &sessionHooks{r: o.Hooks, mode: mode.get}
	ts := newTermSession(hk, o.spec.Thread)
	source := "startup"
	if hk.active() {
		source = sessionSource(ctx, o.db, o.spec.Thread)
	}
	var started []string
	ts.begin(ctx, source, func(l []string) { started = l })
	before += strings.Join(append(started, ""), "\n")
	defer func() {
		reason := "prompt_input_exit"
		if ctx.Err() != nil {
			reason = "other"
		}
		printLines(Env{Stderr: stderr}, hk.end(ctx, ts.on(), reason))
	}()
	var idle func(context.Context, string) []string
	if o.Hooks.Has(hooks.Notification) {
		idle = func(ctx context.Context, thread string) []string { return hk.idle(ctx, ts.thread(thread)) }
	}
	cmds := l.commands()
	add := cmds.Add
	cmds.Add = func(ctx context.Context, thread, text string) iter.Seq2[deepagents.Event, error] {
		return add(ctx, ts.thread(thread), text)
	}
	return tui.Run(ctx, tui.Config{
		In:  in,
		Out: out,
		Prompt: func(ctx context.Context, thread, text string) iter.Seq2[deepagents.Event, error] {
			s, spec := l.current()
			in := deepagents.Prompt(text)
			spec.PermissionMode = mode.get()
			values := spec.Values()
			l.goal.take(thread, values)
			thread = ts.thread(thread)
			in.ThreadID, in.Values = thread, values
			in.Messages = withContext(in.Messages, ts.take(thread))
			return s.Agent.Stream(ctx, in)
		},
		Clear: ts.clear,
		Idle:  idle,
		Decide: func(ctx context.Context, thread string, ds []deepagents.Decision) iter.Seq2[deepagents.Event, error] {
			s, _ := l.current()
			return s.Agent.Stream(ctx, deepagents.Input{ThreadID: thread, Decisions: ds, Values: hitl.ModeValues(mode.get())})
		},
		Steer: func(ctx context.Context, thread, text string) error {
			return steer.Send(ctx, o.db.Store, thread, text)
		},
		Commands: cmds,
		Mode:     o.spec.PermissionMode,
		SetMode:  mode.set,
		// Every run, so that --continue finds the thread worked on last,
		// whether new, resumed or continued.
		Started: func(ctx context.Context, thread, prompt string) error {
			ts.ran(thread)
			return rememberThread(ctx, o.db, o.spec.Dir, thread, prompt)
		},
		Ended: func(ctx context.Context, thread string, used *deepagents.UsageTree) error {
			return recordUsage(ctx, o.db, thread, used)
		},
		Recent: func(ctx context.Context) ([]tui.Thread, error) {
			return recentThreads(ctx, o.db, 10)
		},
		Lookup: func(ctx context.Context, id string) (tui.Thread, error) {
			t, err := o.db.Saver.Thread(ctx, id)
			if err != nil {
				return tui.Thread{}, err
			}
			return tui.Thread{ID: t.ID, Title: title(ctx, o.db, t.ID), Status: string(t.Status), Updated: t.UpdatedAt}, nil
		},
		Thread:        o.spec.Thread,
		Model:         llm.Describe(o.Agent.Model()),
		Profile:       o.Profile.Name,
		Dir:           o.spec.Dir,
		UserDir:       o.spec.UserDir,
		SkillDirs:     o.SkillDirs,
		Subagents:     o.spec.Settings.Subagents,
		Files:         o.Backend,
		Prices:        o.spec.Prices,
		PromptLimit:   maxPromptBytes,
		Before:        lines(before),
		HostQuestions: hostQuestions,
		Background:    &l.bg,
	})
}

// askInTerminal asks the network's questions in the session: each goes to
// qs, which the session reads, and waits for its answer or for the
// command to end.
func askInTerminal(qs chan<- tui.HostQuestion) session.HostAsker {
	return func(ctx context.Context, q netproxy.Question) (netproxy.Answer, error) {
		answered := make(chan netproxy.Answer, 1)
		withdrawn := make(chan struct{})
		defer close(withdrawn)
		hq := tui.HostQuestion{Host: q.Host, Port: q.Port, Command: q.Command, Withdrawn: withdrawn,
			Answer: func(a netproxy.Answer) {
				select {
				case answered <- a:
				default:
				}
			}}
		select {
		case qs <- hq:
		case <-ctx.Done():
			return netproxy.Deny, ctx.Err()
		}
		select {
		case a := <-answered:
			return a, nil
		case <-ctx.Done():
			return netproxy.Deny, ctx.Err()
		}
	}
}

// modeHolder holds the session's permission mode, which the session sets
// and its runs read.
type modeHolder struct {
	mu   sync.Mutex
	mode hitl.Mode
}

func (h *modeHolder) set(m hitl.Mode) {
	h.mu.Lock()
	h.mode = m
	h.mu.Unlock()
}

func (h *modeHolder) get() hitl.Mode {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mode
}

// lines splits text into its lines, without the last newline.
func lines(text string) []string {
	if text = strings.TrimSuffix(text, "\n"); text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// heldWriter keeps what is written while held, and writes through once
// released.
type heldWriter struct {
	mu   sync.Mutex
	w    io.Writer
	buf  bytes.Buffer
	held bool
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held {
		return h.buf.Write(p)
	}
	return h.w.Write(p)
}

// release returns what was held, and writes through from then on.
func (h *heldWriter) release() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = false
	return h.buf.String()
}

// recentThreads are the n most recent top-level threads (the user's, not
// their subagents'), with their titles.
func recentThreads(ctx context.Context, db *persist.DB, n int) ([]tui.Thread, error) {
	threads, err := db.Saver.Threads(ctx, checkpoint.ListOptions{Limit: n, TopLevel: true})
	if err != nil {
		return nil, err
	}
	out := make([]tui.Thread, 0, len(threads))
	for _, t := range threads {
		out = append(out, tui.Thread{ID: t.ID, Title: title(ctx, db, t.ID), Status: string(t.Status), Updated: t.UpdatedAt})
	}
	return out, nil
}

// maxPicked is how many recent threads the picker offers.
const maxPicked = 50

// pickThread lets the user pick one of the most recent threads on the
// terminal (tui.Pick).
func pickThread(ctx context.Context, env Env, db *persist.DB) (string, error) {
	in, okIn := env.Stdin.(*os.File)
	out, okOut := env.Stdout.(*os.File)
	if !okIn || !okOut || !isTerminal(in) || !isTerminal(out) {
		return "", usageError{errPickNeedsTerminal}
	}
	threads, err := recentThreads(ctx, db, maxPicked)
	if err != nil {
		return "", fmt.Errorf("--resume: %w", err)
	}
	if len(threads) == 0 {
		return "", usageError{errors.New("--resume: there are no threads yet")}
	}
	return tui.Pick(ctx, in, out, threads)
}
