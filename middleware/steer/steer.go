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
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
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

// DeliveredValue is the private state value holding the keys of the
// messages delivered to the thread that may still be in the store: saved
// with the step's checkpoint that holds them, so that a message is
// delivered once even when the process dies before the store forgets it.
const DeliveredValue = "steer_delivered"

// NoticeName names the notice a run emits for each message it delivered;
// its content is DeliveredNotice's.
const NoticeName = "steer"

const deliveredLead = "delivered to the model: "

// DeliveredNotice is the content of the notice of a message delivered.
func DeliveredNotice(text string) string { return deliveredLead + text }

// DeliveredText returns the message a steer notice's content says was
// delivered, and whether content is such a notice's.
func DeliveredText(content string) (string, bool) { return strings.CutPrefix(content, deliveredLead) }

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
	// Keys sort as they were sent, within a process: the time, a counter
	// for two sends in one nanosecond, and random bytes so that two
	// processes never make one key. (Delivery does not trust the order:
	// a message saved after a later one is delivered at the next look.)
	var salt [4]byte
	_, _ = rand.Read(salt[:])
	key := fmt.Sprintf("%020d-%010d-%x", time.Now().UnixNano(), seq.Add(1), salt)
	if err := st.Put(ctx, Namespace(threadID), key, map[string]any{"text": text}); err != nil {
		return fmt.Errorf("steer: saving the message: %w", err)
	}
	flag(threadID).Store(true)
	return nil
}

// Middleware delivers the messages Send saved.
type Middleware struct{}

// Enabled reports whether a's runs read what Send saves: a has a store
// and the steer middleware in its stack.
func Enabled(a *agent.Agent) bool {
	if a == nil || a.Store() == nil {
		return false
	}
	for _, mw := range a.Middleware() {
		if _, ok := mw.(*Middleware); ok {
			return true
		}
	}
	return false
}

// New returns the middleware.
func New() *Middleware { return &Middleware{} }

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "steer" }

// PrivateValues implements agent.PrivateValuer.
func (*Middleware) PrivateValues() []string { return []string{DeliveredValue} }

// delivery is what a run delivered, for its end to forget.
type delivery struct {
	mu   sync.Mutex
	keys []string
}

type deliveryKey struct{}

// WrapRun implements agent.RunWrapper. Once the run has ended (and so
// committed every step) the store forgets what it delivered, so that no
// fork or rewind to before a delivery brings a message back; and the
// thread's flag goes (a message sent after is found in the store by the
// next run's start), so that a server's many threads leave nothing
// behind.
func (m *Middleware) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	d := &delivery{}
	defer pending.Delete(req.ThreadID)
	res, err := next(context.WithValue(ctx, deliveryKey{}, d), req)
	if st := req.Agent.Store(); st != nil {
		d.mu.Lock()
		keys := d.keys
		d.mu.Unlock()
		for _, k := range keys {
			// A failure leaves the key in the state, which the next run's
			// start forgets.
			_ = st.Delete(context.WithoutCancel(ctx), Namespace(req.ThreadID), k)
		}
	}
	return res, err
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
		if !delivered[it.Key] {
			flag(rt.ThreadID()).Store(true)
			continue
		}
		if err := rt.Store().Delete(ctx, ns, it.Key); err != nil {
			return fmt.Errorf("steer: forgetting a delivered message: %w", err)
		}
	}
	if len(delivered) > 0 {
		rt.SetValue(DeliveredValue, nil) // all forgotten: the store holds none of them
	}
	return nil
}

// WrapModel implements agent.ModelWrapper: the messages sent since the
// last request join the conversation before this one.
func (m *Middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	rt := req.Runtime
	if !m.mayHave(rt) {
		return next(ctx, req)
	}
	texts, err := m.take(ctx, rt)
	if err != nil {
		return nil, err
	}
	if len(texts) > 0 {
		tail := make([]llm.Message, 0, len(texts))
		for _, t := range texts {
			tail = append(tail, llm.UserText(Lead+t))
		}
		rt.RewriteMessages(len(rt.Messages()), tail)
		// The request as the middleware outside made it (a budget's
		// last-turn note, say), with the messages after it.
		req.Request.Messages = append(slices.Clip(req.Request.Messages), tail...)
	}
	return next(ctx, req)
}

// BeforeStop implements agent.StopHook: a message sent while the model
// wrote its final answer keeps the run going, so that the model reads it
// now rather than at the thread's next run.
func (m *Middleware) BeforeStop(ctx context.Context, s *agent.Stop) (string, error) {
	if !m.mayHave(s.Runtime) {
		return "", nil
	}
	texts, err := m.take(ctx, s.Runtime)
	if err != nil || len(texts) == 0 {
		return "", err
	}
	return Lead + strings.Join(texts, "\n\n"), nil
}

// mayHave reports whether messages may wait for rt's run: Send said so
// in this process since the last look (or the run's start found some).
func (m *Middleware) mayHave(rt *agent.Runtime) bool {
	return rt != nil && rt.Store() != nil && len(rt.Namespace()) == 0 && flag(rt.ThreadID()).Swap(false)
}

// take returns the texts of the messages not delivered yet, in the order
// they were sent, and records them as delivered: in the state (saved with
// the step that holds them) and for the run's end to forget.
func (m *Middleware) take(ctx context.Context, rt *agent.Runtime) ([]string, error) {
	items, delivered, err := m.sent(ctx, rt)
	if err != nil {
		return nil, err
	}
	var texts, keys []string
	for _, it := range items {
		if delivered[it.Key] {
			continue
		}
		text, _ := it.Value["text"].(string)
		texts = append(texts, text)
		keys = append(keys, it.Key)
		delivered[it.Key] = true
	}
	if len(keys) == 0 {
		return nil, nil
	}
	all, _ := json.Marshal(slices.Sorted(maps.Keys(delivered)))
	rt.SetValue(DeliveredValue, all)
	if d, ok := ctx.Value(deliveryKey{}).(*delivery); ok {
		d.mu.Lock()
		d.keys = append(d.keys, keys...)
		d.mu.Unlock()
	}
	for _, t := range texts {
		rt.Emit(agent.Event{Type: agent.EventNotice, Name: NoticeName, Content: DeliveredNotice(t)})
	}
	return texts, nil
}

// sent returns the thread's messages in the store, in the order they were
// sent, and the keys of those delivered.
func (m *Middleware) sent(ctx context.Context, rt *agent.Runtime) (items []store.Item, delivered map[string]bool, err error) {
	delivered = map[string]bool{}
	if raw, ok := rt.Value(DeliveredValue); ok && len(raw) > 0 {
		var keys []string
		_ = json.Unmarshal(raw, &keys)
		for _, k := range keys {
			delivered[k] = true
		}
	}
	ns := Namespace(rt.ThreadID())
	const page = 100
	for off := 0; ; off += page {
		got, err := rt.Store().Search(ctx, ns, store.SearchOptions{Limit: page, Offset: off})
		if err != nil {
			return nil, nil, fmt.Errorf("steer: reading the messages sent: %w", err)
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
