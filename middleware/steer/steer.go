// Package steer delivers messages a person sends while a run works — a
// correction, a hint, "stop touching that file" — to the run's next model
// request, as user messages marked as sent mid-turn, rather than after the
// task ends.
//
// [Send] saves a message in the run's store before it returns, so that a
// message acknowledged is never lost: a process killed between the send
// and the delivery delivers it at the thread's next run. The [Middleware]
// (one per agent, in the main agent's stack) looks for messages at a run's
// start, and then only when [Send] said in this process that one came: a
// step costs an atomic load, not a read of the store.
package steer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/store"
)

// MaxBytes bounds one message.
const MaxBytes = 64 << 10

// Errors of Send.
var (
	ErrNoStore = errors.New("steer: the agent has no store to keep the message in")
	ErrEmpty   = errors.New("steer: the message is empty")
	ErrTooLong = fmt.Errorf("steer: the message is longer than %d bytes", MaxBytes)
	ErrThread  = errors.New("steer: no thread named")
)

// Namespace is where a thread's undelivered messages are kept: under the
// server's reserved namespace, which its store API refuses to clients.
func Namespace(threadID string) []string {
	return []string{"deepagents", "server", "steer", threadID}
}

// Lead is what comes before a message in the conversation: the model is
// told that the person wrote it while it worked.
const Lead = "The user sent this message while you were working:\n\n"

// DeliveredValue is the private state value holding the key of the last
// message delivered to the thread: saved with the step's checkpoint that
// holds the message, so that a message is delivered once even when the
// process dies before the store forgets it.
const DeliveredValue = "steer_delivered"

// pending says, per thread, that Send saved a message in this process
// since the thread's run last looked.
var pending sync.Map // thread ID -> *atomic.Bool

func flag(threadID string) *atomic.Bool {
	if f, ok := pending.Load(threadID); ok {
		return f.(*atomic.Bool)
	}
	f, _ := pending.LoadOrStore(threadID, new(atomic.Bool))
	return f.(*atomic.Bool)
}

var seq atomic.Uint64

// Send saves text as a message for the run working on threadID, to be
// delivered at its next model request, or at the thread's next run when
// none works on it. It returns once the message is in st.
func Send(ctx context.Context, st store.Store, threadID, text string) error {
	text = strings.TrimSpace(text)
	switch {
	case st == nil:
		return ErrNoStore
	case threadID == "":
		return ErrThread
	case text == "":
		return ErrEmpty
	case len(text) > MaxBytes:
		return ErrTooLong
	case !utf8.ValidString(text):
		return errors.New("steer: the message is not UTF-8")
	}
	// Keys sort as they were sent: the time, then a counter of this
	// process for two sends in one nanosecond.
	key := fmt.Sprintf("%020d-%010d", time.Now().UnixNano(), seq.Add(1))
	if err := st.Put(ctx, Namespace(threadID), key, map[string]any{"text": text}); err != nil {
		return fmt.Errorf("steer: saving the message: %w", err)
	}
	flag(threadID).Store(true)
	return nil
}

// Middleware delivers the messages Send saved.
type Middleware struct{}

// New returns the middleware.
func New() *Middleware { return &Middleware{} }

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "steer" }

// PrivateValues implements agent.PrivateValuer.
func (*Middleware) PrivateValues() []string { return []string{DeliveredValue} }

type startedKey struct{}

// WrapRun implements agent.RunWrapper: once a run of the thread ends, its
// flag goes (a message sent after is found in the store by the next run's
// start), so that a server's many threads leave nothing behind.
func (m *Middleware) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	defer pending.Delete(req.ThreadID)
	return next(ctx, req)
}

// BeforeAgent implements agent.BeforeAgentHook: a run looks for messages
// once at its start (sent while no run worked on the thread, or before a
// crash), and forgets those an earlier run delivered: its checkpoints are
// committed by now.
func (m *Middleware) BeforeAgent(ctx context.Context, rt *agent.Runtime) error {
	if rt.Store() == nil || len(rt.Namespace()) > 0 {
		return nil
	}
	items, delivered, err := m.sent(ctx, rt)
	if err != nil {
		return err
	}
	ns := Namespace(rt.ThreadID())
	for _, it := range items {
		if it.Key > delivered {
			flag(rt.ThreadID()).Store(true)
			continue
		}
		if err := rt.Store().Delete(ctx, ns, it.Key); err != nil {
			return fmt.Errorf("steer: forgetting a delivered message: %w", err)
		}
	}
	return nil
}

// WrapModel implements agent.ModelWrapper: the messages sent since the
// last request join the conversation before this one.
func (m *Middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	rt := req.Runtime
	if rt == nil || rt.Store() == nil || len(rt.Namespace()) > 0 || !flag(rt.ThreadID()).Swap(false) {
		return next(ctx, req)
	}
	items, err := m.undelivered(ctx, rt)
	if err != nil {
		return nil, err
	}
	if len(items) > 0 {
		msgs := rt.Messages()
		tail := make([]llm.Message, 0, len(items))
		for _, it := range items {
			text, _ := it.Value["text"].(string)
			tail = append(tail, llm.UserText(Lead+text))
		}
		rt.RewriteMessages(len(msgs), tail)
		last, _ := json.Marshal(items[len(items)-1].Key)
		rt.SetValue(DeliveredValue, last)
		req.Request.Messages = rt.Messages()
		for _, it := range items {
			text, _ := it.Value["text"].(string)
			rt.Emit(agent.Event{Type: agent.EventNotice, Name: "steer", Content: "delivered to the model: " + text})
		}
	}
	return next(ctx, req)
}

// sent returns the thread's messages in the store, in order, and the key
// of the last one delivered ("" for none).
func (m *Middleware) sent(ctx context.Context, rt *agent.Runtime) (items []store.Item, delivered string, err error) {
	if raw, ok := rt.Value(DeliveredValue); ok {
		_ = json.Unmarshal(raw, &delivered)
	}
	ns := Namespace(rt.ThreadID())
	const page = 100
	for off := 0; ; off += page {
		got, err := rt.Store().Search(ctx, ns, store.SearchOptions{Limit: page, Offset: off})
		if err != nil {
			return nil, "", fmt.Errorf("steer: reading the messages sent: %w", err)
		}
		for _, it := range got {
			if len(it.Namespace) == len(ns) { // not a thread whose ID extends this one's
				items = append(items, it)
			}
		}
		if len(got) < page {
			return items, delivered, nil
		}
	}
}

// undelivered returns the thread's messages after the last delivered one.
func (m *Middleware) undelivered(ctx context.Context, rt *agent.Runtime) ([]store.Item, error) {
	items, delivered, err := m.sent(ctx, rt)
	if err != nil {
		return nil, err
	}
	var out []store.Item
	for _, it := range items {
		if it.Key > delivered {
			out = append(out, it)
		}
	}
	return out, nil
}
