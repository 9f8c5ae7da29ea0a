package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"maps"
	"os"
	"strings"
	"sync"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/tui"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/verify"
	"github.com/deepagents-go/deepagents/rewind"
)

// The interactive session's commands beyond a prompt (tui.Commands): !
// commands, /compact, the conversation redrawn on /resume, /model SPEC,
// /mcp, /permissions and /config.

// live is the agent the interactive session runs on: /model SPEC
// replaces it.
type live struct {
	mu  sync.Mutex
	o   *opened
	env Env
	// goal is what /goal (or --goal) set for the next message.
	goal goalHolder
	// bg is the session's watch on the background subagents' approvals.
	bg liveBackground
}

// liveBackground is the agent's background subagents as the session
// sees them (tui.Background): those of the agent in force, which /model
// replaces (the watch moves to the new agent's).
type liveBackground struct {
	l    *live
	mu   sync.Mutex
	f    func(deepagents.AsyncApproval)
	stop func()
}

// middleware is the background subagents of the agent in force, nil when
// it has none.
func (b *liveBackground) middleware() tui.Background {
	s, _ := b.l.current()
	if bg := deepagents.Background(s.Agent); bg != nil {
		return bg
	}
	return nil
}

// Watch implements tui.Background, on the agent in force.
func (b *liveBackground) Watch(f func(deepagents.AsyncApproval)) (stop func()) {
	b.mu.Lock()
	b.f = f
	b.mu.Unlock()
	b.rewatch()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.f = nil
		if b.stop != nil {
			b.stop()
			b.stop = nil
		}
	}
}

// rewatch moves the watch to the agent in force.
func (b *liveBackground) rewatch() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		b.stop()
		b.stop = nil
	}
	if bg := b.middleware(); bg != nil && b.f != nil {
		b.stop = bg.Watch(b.f)
	}
}

// Approvals implements tui.Background: none without background subagents.
func (b *liveBackground) Approvals(ctx context.Context, thread string) ([]deepagents.AsyncApproval, error) {
	if bg := b.middleware(); bg != nil {
		return bg.Approvals(ctx, thread)
	}
	return nil, nil
}

// Answer implements tui.Background.
func (b *liveBackground) Answer(ctx context.Context, thread, task string, decisions []deepagents.Decision) error {
	bg := b.middleware()
	if bg == nil {
		return fmt.Errorf("task %s: %w (this session has no background subagents)", task, deepagents.ErrAsyncNotWaiting)
	}
	return bg.Answer(ctx, thread, task, decisions)
}

// goalHolder holds the goal set for the next message of one thread (""
// for the new thread the next message starts), which that message's run
// puts on the thread. Leaving the thread (/clear, /resume) leaves the goal
// with it: another thread's run never takes it.
type goalHolder struct {
	mu     sync.Mutex
	thread string
	next   *string
}

// set makes goal ("" for none) the next run's on thread.
func (h *goalHolder) set(thread, goal string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.thread, h.next = thread, &goal
}

// peek returns the goal set for thread's next run; ok is false when none
// was.
func (h *goalHolder) peek(thread string) (goal string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.next == nil || h.thread != thread {
		return "", false
	}
	return *h.next, true
}

// take adds the goal set for thread's next run, if any, to values, and
// forgets it: the thread keeps it from then on.
func (h *goalHolder) take(thread string, values map[string]json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.next != nil && h.thread == thread {
		maps.Copy(values, verify.GoalValues(*h.next))
		h.next = nil
	}
}

// customCommands lists the command files' commands for the session's
// /help and tab.
func customCommands(cmds []session.Command) []tui.CustomCommand {
	out := make([]tui.CustomCommand, len(cmds))
	for i, c := range cmds {
		out[i] = tui.CustomCommand{Name: c.Name, ArgumentHint: c.ArgumentHint, Description: c.Description}
	}
	return out
}

// current returns the session and spec in use.
func (l *live) current() (*session.Session, session.Spec) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.o.Session, l.o.spec
}

// errNoShell says how to give the session a shell.
var errNoShell = errors.New("! runs commands only in a session with a shell: start deepagents with --shell (add --sandbox none where bubblewrap is missing), or set shell: true in ~/.deepagents/config.yaml")

// commands returns what the session's commands run on.
func (l *live) commands() tui.Commands {
	return tui.Commands{
		Shell: l.shell,
		Add: func(ctx context.Context, thread, text string) iter.Seq2[deepagents.Event, error] {
			s, spec := l.current()
			in := deepagents.Prompt(text)
			in.ThreadID, in.Values, in.Prepare = thread, spec.Settings.Values(), true
			return s.Agent.Stream(ctx, in)
		},
		Compact: func(ctx context.Context, thread, focus string) iter.Seq2[deepagents.Event, error] {
			s, _ := l.current()
			return s.Agent.Stream(deepagents.CompactNow(ctx, focus), deepagents.Input{ThreadID: thread, Prepare: true})
		},
		History: func(ctx context.Context, thread string) ([]llm.Message, error) {
			snap, err := l.o.db.Saver.Load(ctx, thread, "")
			if err != nil {
				return nil, err
			}
			return snap.Messages, nil
		},
		SwitchModel: l.switchModel,
		Describe:    l.describe,
		Goal: func(ctx context.Context, thread string) (string, error) {
			if goal, ok := l.goal.peek(thread); ok || thread == "" {
				return goal, nil
			}
			snap, err := l.o.db.Saver.Load(ctx, thread, "")
			if errors.Is(err, checkpoint.ErrNotFound) {
				return "", nil
			}
			if err != nil {
				return "", err
			}
			return verify.GoalOf(snap.Values), nil
		},
		SetGoal: l.goal.set,
		Custom:  customCommands(l.o.spec.Commands),
		Expand: func(text string) (string, bool) {
			_, spec := l.current()
			c, args, ok := session.FindCommand(spec.Commands, text)
			if !ok {
				return "", false
			}
			return c.Expand(args), true
		},
		Turns: func(ctx context.Context, thread string) ([]tui.Turn, error) {
			s, _ := l.current()
			rows, err := turnRows(ctx, s.Rewind, thread)
			if err != nil {
				return nil, err
			}
			turns := make([]tui.Turn, len(rows))
			for i, r := range rows {
				turns[i] = tui.Turn{Prompt: r.Prompt, Sent: r.CreatedAt, Changed: r.changed}
				if r.Kind == rewind.KindEnd {
					turns[i].Label = EndLabel
				}
			}
			return turns, nil
		},
		Rewind: func(ctx context.Context, thread string, turn int, files, conversation bool) (string, error) {
			s, _ := l.current()
			opts := rewind.Options{Files: files, Conversation: conversation}
			res, err := s.Rewind.Rewind(ctx, l.o.db.Saver, thread, turn, opts)
			var b strings.Builder
			if res != nil && (err == nil || res.CheckpointID != "" || res.Files != nil) {
				printRewind(&b, thread, turn, res, opts, false)
			}
			return b.String(), err
		},
	}
}

// shell runs a command of the user's (!) as execute runs the model's:
// in the session's sandbox, refused by the rules that deny it. The user
// typed it, so the rules that ask do not ask again.
func (l *live) shell(ctx context.Context, command string) (string, int, error) {
	s, spec := l.current()
	sb, ok := s.Backend.(backend.Sandbox)
	if !spec.Shell || !ok {
		return "", 0, errNoShell
	}
	if why := spec.DeniesCommand(command); why != "" {
		return "", 0, fmt.Errorf("refused: %s", why)
	}
	res, err := sb.Execute(ctx, command, 0)
	return res.Output, res.ExitCode, err
}

// switchModel reopens the agent on the model spec names; the thread's
// settings record it, so that --continue goes on with it.
func (l *live) switchModel(ctx context.Context, model string) (tui.Switched, error) {
	_, spec := l.current()
	spec.Model, spec.Settings.Model = model, model
	// What opening writes (MCP servers' warnings) is shown by the session,
	// not written over it.
	var warnings bytes.Buffer
	deps := sessionDeps(ctx, l.env, l.o.db)
	deps.AskHost = l.o.askHost
	deps.Logger = slog.New(slog.NewTextHandler(&warnings, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := session.Open(ctx, spec, deps)
	if err != nil {
		return tui.Switched{}, err
	}
	l.mu.Lock()
	old := l.o.Session
	l.o.Session, l.o.spec = s, spec
	l.mu.Unlock()
	l.bg.rewatch() // the new agent's background tasks ask the session
	// The old agent's background tasks end with it: recorded as
	// cancelled, not left to read as lost.
	warn := lines(warnings.String())
	if stopped, err := deepagents.ShutdownBackground(ctx, old.Agent); len(stopped) > 0 || err != nil {
		warn = append(warn, backgroundStopped("the model switch", stopped, err)...)
	}
	old.Close()
	return tui.Switched{Model: llm.Describe(s.Agent.Model()), Profile: s.Profile.Name, Files: s.Backend, Warnings: warn}, nil
}

// describe is what /mcp, /permissions and /config show.
func (l *live) describe(_ context.Context, topic string) string {
	s, spec := l.current()
	var b strings.Builder
	switch topic {
	case "mcp":
		if s.MCP == nil || len(s.MCP.Status()) == 0 {
			return "no MCP servers; name them in ~/.deepagents/mcp.json, mcp_servers in config.yaml, --mcp-config FILE, or the workspace's .mcp.json with --trust-workspace"
		}
		for _, st := range s.MCP.Status() {
			if st.Err != nil {
				fmt.Fprintf(&b, "%s  failed: %s\n", st.Name, oneLine(st.Err.Error()))
				continue
			}
			fmt.Fprintf(&b, "%s  connected · %d tools", st.Name, len(st.Tools))
			if st.Resources {
				b.WriteString(" · resources")
			}
			if st.Prompts {
				b.WriteString(" · prompts")
			}
			b.WriteString("\n")
		}
	case "network":
		if s.Proxy == nil {
			return ""
		}
		return display.DescribeNetwork(s.Proxy.Usage(), s.Proxy.BytesOut())
	case "permissions":
		b.WriteString("rules (a deny wins over an ask, an ask over an allow):\n")
		n := 0
		if spec.Rules != nil {
			for i, r := range spec.Rules.Rules() {
				from := ""
				if i < len(spec.RuleSources) {
					from = spec.RuleSources[i]
				}
				if from == "protected_paths" {
					continue // listed below, by path
				}
				fmt.Fprintf(&b, "  %-40s %s\n", r.String(), from)
				n++
			}
		}
		if n == 0 {
			b.WriteString("  none\n")
		}
		fmt.Fprintf(&b, "approval asked for: %s\n", orNone(strings.Join(spec.InterruptOn, ", ")))
		fmt.Fprintf(&b, "protected paths (write_file and edit_file ask; the sandbox keeps them read-only): %s\n", orNone(strings.Join(spec.Protected, ", ")))
		fmt.Fprintf(&b, "never written (your configuration, shell start-up files): %s\n", few(spec.ReadOnly, 4))
		fmt.Fprintf(&b, "never read (files with keys, the database): %s\n", few(spec.Unreadable, 4))
	case "config":
		b.WriteString("configuration files:\n")
		for _, p := range spec.ConfigFiles {
			state := "read"
			if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
				state = "absent"
			}
			fmt.Fprintf(&b, "  %s (%s)\n", p, state)
		}
		info := llm.Describe(s.Agent.Model())
		fmt.Fprintf(&b, "model: %s:%s (profile %s)\n", info.Provider, info.Name, s.Profile.Name)
		fmt.Fprintf(&b, "dir: %s\n", spec.Dir)
		shell := "off (--shell turns it on)"
		if spec.Shell {
			shell = "on, sandbox " + spec.Sandbox
			if spec.Sandbox != "none" {
				shell += ", network " + string(spec.Network)
			}
		}
		fmt.Fprintf(&b, "shell: %s\n", shell)
		if spec.Network == session.NetworkProxy {
			fmt.Fprintf(&b, "network: allowed %s; denied %s\n", orNone(strings.Join(spec.AllowDomains, ", ")), orNone(strings.Join(spec.DenyDomains, ", ")))
		}
		if spec.MaxSteps > 0 {
			fmt.Fprintf(&b, "max steps: %d\n", spec.MaxSteps)
		}
		fmt.Fprintf(&b, "db: %s %s\n", l.o.db.Kind, l.o.db.Location)
	}
	return strings.TrimRight(b.String(), "\n")
}

// orNone is s, or "(none)".
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// few lists the first n of paths, and says how many more there are.
func few(paths []string, n int) string {
	if len(paths) <= n {
		return orNone(strings.Join(paths, ", "))
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:n], ", "), len(paths)-n)
}

// oneLine joins the lines of s.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
