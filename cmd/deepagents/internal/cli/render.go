package cli

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/netproxy"
)

// renderer shows a run's events.
type renderer interface {
	event(e deepagents.Event) error
	close() error
}

// newRenderer returns the renderer of format. used is the run's usage as
// its caller adds it up, which the text format's summary reports.
//
// proxy, when set, is the network proxy of the run's commands, whose use
// the text output's summary tells.
func newRenderer(format string, env Env, prices map[string]llm.Price, used *deepagents.UsageTree, proxy *netproxy.Proxy) renderer {
	if format == "jsonl" {
		return &jsonlRenderer{w: bufio.NewWriterSize(env.Stdout, 64<<10)}
	}
	return &textRenderer{out: env.Stdout, log: env.Stderr, prices: prices, usage: used, proxy: proxy, onTerminal: isTerminal(env.Stdout)}
}

// flushDelay bounds how long an event may wait in the jsonl buffer. A step
// produces several events within microseconds; writing each with its own
// system call would cost more than the step itself, while a reader
// following the stream sees every event within this delay.
const flushDelay = 10 * time.Millisecond

// jsonlRenderer writes one JSON object per event and nothing else.
type jsonlRenderer struct {
	mu      sync.Mutex
	w       *bufio.Writer
	timer   *time.Timer // pending flush, when armed
	err     error       // a failed background flush
	scratch []byte
}

func (r *jsonlRenderer) event(e deepagents.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	// AppendJSON into a reused buffer: json.Marshal would validate and
	// compact the output a second time, and allocate.
	b, err := e.AppendJSON(r.scratch[:0])
	if err != nil {
		return err
	}
	r.scratch = b
	r.w.Write(b)
	r.w.WriteByte('\n')
	switch {
	case e.Type == deepagents.EventRunEnd || e.Type == deepagents.EventInterrupt:
		return r.flushLocked()
	case r.timer == nil:
		r.timer = time.AfterFunc(flushDelay, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if err := r.flushLocked(); err != nil && r.err == nil {
				r.err = err
			}
		})
	}
	return nil
}

// flushLocked writes the buffer out and disarms the timer.
func (r *jsonlRenderer) flushLocked() error {
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	return r.w.Flush()
}

func (r *jsonlRenderer) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.flushLocked(); err != nil {
		return err
	}
	return r.err
}

// textRenderer streams the main agent's answer to stdout and a short log of
// its actions to stderr.
type textRenderer struct {
	out, log io.Writer
	midLine  bool // the last thing written to out did not end a line
	// onTerminal: out is a terminal, where the answer goes without
	// control characters (see terminalSafe); a pipe gets it as it is.
	onTerminal bool
	// prices are the user's, over llm's list prices; usage is the run's
	// so far, added up by the renderer's caller.
	prices map[string]llm.Price
	usage  *deepagents.UsageTree
	// proxy is the network proxy of the run's commands (nil for none).
	proxy *netproxy.Proxy
}

func (r *textRenderer) event(e deepagents.Event) error {
	sub := len(e.Namespace) > 0
	prefix := ""
	if sub {
		prefix = "[" + strings.Join(e.Namespace, "/") + "] "
	}
	switch e.Type {
	case deepagents.EventTextDelta:
		if sub {
			return nil
		}
		delta := e.Delta
		if r.onTerminal {
			delta = display.TerminalSafe(delta)
		}
		_, err := io.WriteString(r.out, delta)
		r.midLine = !strings.HasSuffix(delta, "\n")
		return err
	case deepagents.EventMessage:
		if !sub && r.midLine {
			io.WriteString(r.out, "\n")
			r.midLine = false
		}
	case deepagents.EventToolCall:
		fmt.Fprintf(r.log, "%s> %s %s\n", prefix, e.Name, display.Clip(string(e.Args), 120))
	case deepagents.EventToolResult:
		if e.IsError {
			fmt.Fprintf(r.log, "%s! %s: %s\n", prefix, e.Name, display.Clip(e.Content, 200))
		}
	case deepagents.EventState:
		if plan, ok := todos.FromEvent(e); ok {
			for _, t := range plan {
				mark := map[todos.Status]string{todos.Completed: "[x]", todos.InProgress: "[>]"}[t.Status]
				if mark == "" {
					mark = "[ ]"
				}
				fmt.Fprintf(r.log, "%s  %s %s\n", prefix, mark, t.Content)
			}
		}
	case deepagents.EventNotice:
		if display.NoticeQuiet(e) {
			return nil
		}
		kind := "note"
		if display.NoticeWarns(e) {
			kind = "warning"
		}
		fmt.Fprintf(r.log, "%s%s: %s\n", prefix, kind, display.OneLine(e.Content))
	case deepagents.EventInterrupt:
		if sub {
			return nil // the main run's interrupt lists it, with who asks
		}
		for _, req := range e.Interrupts {
			who := ""
			if by := display.AskedBy(req.Namespace); by != "" {
				who = " from " + by
			}
			fmt.Fprintf(r.log, "? approval needed%s: %s %s\n", who, req.Tool, display.Clip(string(req.Args), 200))
		}
	case deepagents.EventRunEnd:
		if sub {
			return nil
		}
		if r.midLine {
			io.WriteString(r.out, "\n")
			r.midLine = false
		}
		if e.Status == deepagents.StatusFailed && e.Error != "" {
			fmt.Fprintf(r.log, "deepagents: %s\n", withoutPrefix(display.OneLine(e.Error)))
		}
		if e.Status == deepagents.StatusInterrupted {
			fmt.Fprintf(r.log, "deepagents: run interrupted, waiting for decisions on thread %s\n", e.ThreadID)
		}
		if line := display.Ended(e); line != "" {
			fmt.Fprintf(r.log, "deepagents: %s\n", line)
		}
		r.summary(e.ThreadID)
	}
	return nil
}

// summary ends a run's log with its thread and what it used (usageLines).
func (r *textRenderer) summary(threadID string) {
	used := r.usage
	if used == nil {
		used = &deepagents.UsageTree{}
	}
	for _, l := range display.UsageLines(threadID, used, r.prices) {
		fmt.Fprintln(r.log, l)
	}
	if r.proxy != nil {
		if hosts := r.proxy.Usage(); len(hosts) > 0 {
			fmt.Fprintln(r.log, "deepagents: "+display.DescribeNetwork(hosts, r.proxy.BytesOut()))
		}
	}
}

func (r *textRenderer) close() error { return nil }
