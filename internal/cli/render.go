package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
)

// renderer shows a run's events.
type renderer interface {
	event(e agent.Event) error
	close() error
}

func newRenderer(format string, env Env) renderer {
	if format == "jsonl" {
		return &jsonlRenderer{w: bufio.NewWriter(env.Stdout)}
	}
	return &textRenderer{out: env.Stdout, log: env.Stderr}
}

// jsonlRenderer writes one JSON object per event and nothing else.
type jsonlRenderer struct {
	w *bufio.Writer
}

func (r *jsonlRenderer) event(e agent.Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	r.w.Write(b)
	r.w.WriteByte('\n')
	// Flush per line so that a reader sees events as they happen.
	return r.w.Flush()
}

func (r *jsonlRenderer) close() error { return r.w.Flush() }

// textRenderer streams the main agent's answer to stdout and a short log of
// its actions to stderr.
type textRenderer struct {
	out, log io.Writer
	midLine  bool // the last thing written to out did not end a line
}

func (r *textRenderer) event(e agent.Event) error {
	sub := len(e.Namespace) > 0
	prefix := ""
	if sub {
		prefix = "[" + strings.Join(e.Namespace, "/") + "] "
	}
	switch e.Type {
	case agent.EventTextDelta:
		if sub {
			return nil
		}
		_, err := io.WriteString(r.out, e.Delta)
		r.midLine = !strings.HasSuffix(e.Delta, "\n")
		return err
	case agent.EventMessage:
		if !sub && r.midLine {
			io.WriteString(r.out, "\n")
			r.midLine = false
		}
	case agent.EventToolCall:
		fmt.Fprintf(r.log, "%s> %s %s\n", prefix, e.Name, clip(string(e.Args), 120))
	case agent.EventToolResult:
		if e.IsError {
			fmt.Fprintf(r.log, "%s! %s: %s\n", prefix, e.Name, clip(e.Content, 200))
		}
	case agent.EventState:
		if e.Todos != nil {
			for _, t := range e.Todos {
				mark := map[agent.TodoStatus]string{agent.TodoCompleted: "[x]", agent.TodoInProgress: "[>]"}[t.Status]
				if mark == "" {
					mark = "[ ]"
				}
				fmt.Fprintf(r.log, "%s  %s %s\n", prefix, mark, t.Content)
			}
		}
	case agent.EventInterrupt:
		for _, req := range e.Interrupts {
			fmt.Fprintf(r.log, "%s? approval needed: %s %s\n", prefix, req.Tool, clip(string(req.Args), 200))
		}
	case agent.EventRunEnd:
		if sub {
			return nil
		}
		if r.midLine {
			io.WriteString(r.out, "\n")
			r.midLine = false
		}
		if e.Status == agent.StatusFailed && e.Error != "" {
			fmt.Fprintf(r.log, "deepagents: %s\n", oneLine(e.Error))
		}
		if e.Status == agent.StatusInterrupted {
			fmt.Fprintf(r.log, "deepagents: run interrupted, waiting for decisions on thread %s\n", e.ThreadID)
		}
	}
	return nil
}

func (r *textRenderer) close() error { return nil }

// clip shortens s to at most n runes on one line.
func clip(s string, n int) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
