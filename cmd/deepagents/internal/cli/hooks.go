package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/hooks"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/persist"
)

// The session events are the command's, not the agent's: SessionStart
// when run, -p or the interactive session starts, SessionEnd when it ends,
// and the idle Notification of the interactive session. They run the
// hooks of the session's configuration (session.Session.Hooks), the same
// the agent runs on its own events.

// idleMessage is the idle Notification's message, as Claude Code words it.
const idleMessage = "The agent is waiting for your input"

// sessionHooks runs the session events' hooks; a nil one, or one without
// a Runner, runs nothing.
type sessionHooks struct {
	r    *hooks.Runner
	mode func() hitl.Mode
}

// active reports whether a hook runs at any of the session's events, for
// which a new thread needs its id before its first run.
func (h *sessionHooks) active() bool {
	return h != nil && (h.r.Has(hooks.SessionStart) || h.r.Has(hooks.SessionEnd) || h.r.Has(hooks.Notification))
}

func (h *sessionHooks) run(ctx context.Context, in hooks.Input) hooks.Result {
	if h == nil || !h.r.Has(in.HookEventName) {
		return hooks.Result{}
	}
	if h.mode != nil {
		in.PermissionMode = string(h.mode())
	}
	// A session that ends because its context did (a signal) still runs
	// its SessionEnd hooks, each within its own timeout.
	return h.r.Run(context.WithoutCancel(ctx), in)
}

// start runs the SessionStart hooks of thread (source "startup", "resume"
// or "clear") and returns their context for the model ("" for none) and
// the lines to show.
func (h *sessionHooks) start(ctx context.Context, thread, source string) (string, []string) {
	res := h.run(ctx, hooks.Input{SessionID: thread, HookEventName: hooks.SessionStart, Source: source})
	return res.ContextText(), hookLines(hooks.SessionStart, &res)
}

// end runs the SessionEnd hooks of thread, for reason
// ("prompt_input_exit", "clear" or "other"), and returns the lines to
// show.
func (h *sessionHooks) end(ctx context.Context, thread, reason string) []string {
	res := h.run(ctx, hooks.Input{SessionID: thread, HookEventName: hooks.SessionEnd, Reason: reason})
	return hookLines(hooks.SessionEnd, &res)
}

// idle runs the Notification hooks of a session that has waited for the
// user's input, and returns the lines to show.
func (h *sessionHooks) idle(ctx context.Context, thread string) []string {
	res := h.run(ctx, hooks.Input{SessionID: thread, HookEventName: hooks.Notification,
		NotificationType: hooks.NotifyIdle, Message: idleMessage})
	return hookLines(hooks.Notification, &res)
}

// hookLines are the lines that show what the hooks of event e said: a
// note each, "warning:" for a hook that failed, as the agent's hook
// notices read.
func hookLines(e hooks.Event, res *hooks.Result) []string {
	var out []string
	for _, n := range res.Notes {
		kind := "note"
		if n.Warning {
			kind = "warning"
		}
		out = append(out, fmt.Sprintf("%s: %s hook %s: %s", kind, e, n.Hook, display.OneLine(n.Text)))
	}
	if res.Decision == hooks.DecisionBlock && res.Reason != "" {
		out = append(out, fmt.Sprintf("note: %s hook: %s", e, display.OneLine(res.Reason)))
	}
	return out
}

// sessionContext is the message that gives the model the context of the
// SessionStart hooks: a user message of its own, before the session's
// first prompt, in the tags the agent's hooks use for theirs, so that the
// prompt stays the user's (a UserPromptSubmit hook sees it alone, a new
// thread's title is it).
func sessionContext(text string) llm.Message {
	return llm.UserText(fmt.Sprintf("<%s-hook-context>\n%s\n</%s-hook-context>", hooks.SessionStart, text, hooks.SessionStart))
}

// sessionSource is SessionStart's source for a session on thread:
// "resume" when the thread exists, "startup" for a new one.
func sessionSource(ctx context.Context, db *persist.DB, thread string) string {
	if thread == "" {
		return "startup"
	}
	if _, err := db.Saver.Thread(ctx, thread); err != nil {
		return "startup"
	}
	return "resume"
}

// newThreadID returns a new thread's id, as the agent makes them: the
// session's hooks need it before the thread's first run.
func newThreadID() string {
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// termSession follows the threads of an interactive session for its
// hooks: the id the next new thread gets, the thread the session is on,
// and the SessionStart context still to give the model, by thread.
type termSession struct {
	h *sessionHooks

	mu      sync.Mutex
	next    string        // the id of the session's next new thread
	current string        // the thread the session is on
	started chan struct{} // closed once the last SessionStart's hooks ran
	context map[string]string
}

func newTermSession(h *sessionHooks, thread string) *termSession {
	s := &termSession{h: h, context: map[string]string{}, current: thread, started: make(chan struct{})}
	close(s.started)
	if thread == "" {
		s.next = newThreadID()
		s.current = s.next
	}
	return s
}

// begin runs the SessionStart hooks of the session's thread, the lines
// they show going to show.
func (s *termSession) begin(ctx context.Context, source string, show func([]string)) {
	s.mu.Lock()
	thread, done := s.current, make(chan struct{})
	s.started = done
	s.mu.Unlock()
	text, lines := s.h.start(ctx, thread, source)
	s.mu.Lock()
	if text != "" {
		s.context[thread] = text
	}
	s.mu.Unlock()
	close(done)
	show(lines)
}

// thread is the thread a message to thread goes to: the session's next
// new one for "".
func (s *termSession) thread(thread string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if thread == "" {
		return s.next
	}
	return thread
}

// take returns the SessionStart context still to give thread's model, ""
// when none, once: it waits for the SessionStart hooks under way.
func (s *termSession) take(thread string) string {
	s.mu.Lock()
	done := s.started
	s.mu.Unlock()
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	text := s.context[thread]
	delete(s.context, thread)
	return text
}

// ran records the thread a run started on: the one the session is on.
func (s *termSession) ran(thread string) {
	s.mu.Lock()
	s.current = thread
	s.mu.Unlock()
}

// on is the thread the session is on.
func (s *termSession) on() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// clear ends thread, the session's ("" for a new one not started yet)
// on /clear: its SessionEnd hooks run, and the SessionStart hooks of the
// next new thread, whose id it makes now. It returns at once; the
// function it returns waits for the hooks and returns the lines they
// show.
func (s *termSession) clear(ctx context.Context, thread string) func() []string {
	s.mu.Lock()
	old := thread
	if old == "" {
		old = s.current
	}
	s.next = newThreadID()
	s.current = s.next
	thread = s.next
	done := make(chan struct{})
	s.started = done // a message sent now waits for the context
	s.mu.Unlock()
	var lines []string
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		lines = append(lines, s.h.end(ctx, old, "clear")...)
		text, more := s.h.start(ctx, thread, "clear")
		s.mu.Lock()
		if text != "" {
			s.context[thread] = text
		}
		s.mu.Unlock()
		close(done)
		lines = append(lines, more...)
	}()
	return func() []string {
		<-finished
		return lines
	}
}

// withContext returns msgs with the SessionStart context text, if any,
// before them.
func withContext(msgs []llm.Message, text string) []llm.Message {
	if strings.TrimSpace(text) == "" {
		return msgs
	}
	return append([]llm.Message{sessionContext(text)}, msgs...)
}
