// Package summarization keeps a long conversation inside the model's
// context window: older messages are replaced by a summary, their full
// text offloaded to a history file in the backend.
package summarization

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

// Summarization defaults, from the contract.
const (
	// DefaultTriggerTokens is the trigger when the context window is
	// unknown.
	DefaultTriggerTokens = 170000
	// DefaultContextWindow is the window assumed when the model reports
	// none: a request estimated above it is trimmed rather than sent.
	DefaultContextWindow = 200000
	// DefaultKeepMessages is how many recent messages are kept when the
	// context window is unknown.
	DefaultKeepMessages = 6
	// TriggerFraction and KeepFraction apply to a known context window.
	TriggerFraction = 0.85
	KeepFraction    = 0.10
	// DefaultRetryGrowth is how much a request must grow, as a fraction of
	// its size at a failed summary, before summarizing is tried again.
	DefaultRetryGrowth = 0.10
	// DefaultMaxFailures is how many summary calls in a row may fail in
	// one run before the run stops trying and only trims.
	DefaultMaxFailures = 3
	// HistoryDir is where summarized conversation text is saved.
	HistoryDir = "/conversation_history/"
	// Value is the state value in which a thread keeps its summary.
	Value = "summarization"
	// SummarizerAgent names the summary calls (the scripted model serves
	// them from turns with "agent": "summarizer").
	SummarizerAgent = "summarizer"
)

// Names of the notice events the middleware emits (agent.EventNotice).
const (
	NoticeSummarized     = "summarized"      // older messages were replaced by a summary
	NoticeSummaryFailed  = "summary_failed"  // a summary call failed; nothing changed
	NoticeContextTrimmed = "context_trimmed" // older messages were dropped without a summary
	// NoticeNothingToCompact says CompactNow found nothing to summarize.
	NoticeNothingToCompact = "nothing_to_compact"
)

// TokenCounter estimates the tokens of messages.
type TokenCounter func(msgs []llm.Message) int

// Middleware keeps a long conversation inside the model's context
// window. When a request grows past the trigger (85% of the window), the
// older messages are summarized by a model call; the most recent messages
// (10% of the window) stay as they are, and a tool call is never separated
// from its results. Once the summary is made, the full text of the older
// messages is appended to /conversation_history/{thread}.md, and the
// thread's messages become the summary (which names that file) followed by
// the kept messages. The replaced messages stay in the thread's earlier
// checkpoints.
//
// A summary call that fails or answers nothing changes nothing: the full
// conversation is sent, and the next attempt waits until the request has
// grown by Config.RetryGrowth; after Config.MaxFailures failures in a row
// the run stops trying. A request that would exceed the context window while no summary
// can be made is trimmed instead: the oldest messages are offloaded to the
// history file and replaced by a note saying so. Each of these is reported
// as an agent.EventNotice.
type Middleware struct {
	cfg Config
}

// Config configures the summarization middleware.
type Config struct {
	// Model writes the summaries; nil means the agent's own model.
	Model llm.Model
	// Backend is where the history files are saved. Required.
	Backend backend.Backend
	// TriggerTokens and KeepTokens override the fractions of the window.
	TriggerTokens int
	KeepTokens    int
	// KeepMessages is how many messages are kept when neither KeepTokens
	// nor the context window is known; zero means DefaultKeepMessages.
	KeepMessages int
	// ContextWindow overrides the model's reported window.
	ContextWindow int
	// RetryGrowth and MaxFailures pace attempts after a failed summary;
	// zero means DefaultRetryGrowth and DefaultMaxFailures.
	RetryGrowth float64
	MaxFailures int
	// Counter estimates tokens of messages added since the model last
	// reported its input size; nil means about four characters a token.
	Counter TokenCounter
	// Prompt replaces the summarizer's instructions (SummarizerPrompt).
	Prompt string
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// BeforeSummary, when set, is called before each summary is written:
	// manual says the user asked for it (CompactNow, CompactFirst) rather
	// than the context filling, focus is WithFocus's instructions. The
	// PreCompact hooks of package hooks run here.
	BeforeSummary func(ctx context.Context, rt *agent.Runtime, manual bool, focus string)
}

// New returns the summarization middleware. It fails without a Backend.
func New(cfg Config) (*Middleware, error) {
	if cfg.Backend == nil {
		return nil, errors.New("summarization: Config.Backend is required")
	}
	return &Middleware{cfg: cfg}, nil
}

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "summarization" }

// summaryState is what the thread keeps of its summary.
type summaryState struct {
	// Summary is the text of the summary in force: the thread's first
	// message holds it.
	Summary string `json:"summary"`
	// History is the file the replaced messages were appended to.
	History string `json:"history"`
	// Offloaded counts the messages replaced so far, for the headings of
	// the history file.
	Offloaded int `json:"offloaded"`
}

// sumRun is the run-local bookkeeping: the token estimate anchored on the
// provider's last report, and the pacing of failed summaries.
type sumRun struct {
	loaded bool
	st     summaryState

	anchor   int // input+output tokens the provider reported last
	anchorAt int // state messages covered by anchor
	// prefix[i] estimates the tokens of the first i messages; it grows
	// with the conversation, so an estimate costs O(new messages).
	prefix []int

	failures int // summary calls failed in a row
	retryAt  int // estimate a request must reach before the next attempt

	compacted bool // CompactFirst's summary was tried
}

type sumKey struct{}

// asAsked is the why of a summary the user asked for.
const asAsked = "as asked"

// compactKey marks a context of CompactFirst.
type compactKey struct{}

// CompactFirst returns a context whose run begins by summarizing the
// conversation so far, however short, keeping only the newest message (the
// prompt of the run): what a user asks for with /compact. The summary and
// the history file are made as when the context fills; a summary that
// fails changes nothing, and the run goes on.
func CompactFirst(ctx context.Context) context.Context {
	return context.WithValue(ctx, compactKey{}, true)
}

// nowKey marks a context of CompactNow, and focusKey holds WithFocus's
// instructions.
type (
	nowKey   struct{}
	focusKey struct{}
)

// CompactNow returns a context whose run begins, before anything else (in
// BeforeAgent, its input already added), by summarizing the whole
// conversation. Run with agent.Input.Prepare and no messages, it compacts
// a thread at once, without a model turn: what a user asks for with
// /compact. A summary that fails changes nothing and is told as a notice.
func CompactNow(ctx context.Context) context.Context {
	return context.WithValue(ctx, nowKey{}, true)
}

// WithFocus returns a context whose summaries follow the user's focus
// instructions as well (what to keep, what matters next): /compact's
// argument. An empty focus changes nothing.
func WithFocus(ctx context.Context, focus string) context.Context {
	if strings.TrimSpace(focus) == "" {
		return ctx
	}
	return context.WithValue(ctx, focusKey{}, strings.TrimSpace(focus))
}

// BeforeAgent implements agent.BeforeAgentHook: a run of CompactNow's
// context summarizes the whole conversation of the top-level agent.
func (s *Middleware) BeforeAgent(ctx context.Context, rt *agent.Runtime) error {
	if ctx.Value(nowKey{}) == nil || len(rt.Namespace()) > 0 {
		return nil
	}
	r := s.run(rt)
	model := rt.Model()
	req := &agent.ModelRequest{Request: llm.Request{Messages: rt.Messages()}, Model: model, Runtime: rt}
	window := s.cfg.ContextWindow
	if window == 0 {
		window = llm.Describe(model).ContextWindow
	}
	if !s.summarize(ctx, req, r, window, s.estimate(req, r), len(req.Messages), asAsked) {
		if r.failures == 0 {
			rt.Emit(agent.Event{Type: agent.EventNotice, Name: NoticeNothingToCompact, Content: "Nothing to compact: the conversation is only its summary so far."})
		}
	}
	return nil
}

// SummarizerPrompt instructs the summary call.
const SummarizerPrompt = `You condense the earlier part of a conversation between a user and an AI agent that works with tools, so the agent can continue the task with a much shorter context.

Write a summary that lets the agent carry on without the original messages:
- the user's goal and every requirement, preference and constraint they stated;
- what has been done so far, with the concrete results: file paths, names, numbers, commands and decisions;
- what was tried and failed, and why;
- open questions and what remains to be done.
Be specific and complete, but leave out chatter and anything already superseded. Write only the summary.`

// WrapModel implements agent.ModelWrapper.
func (s *Middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	rt := req.Runtime
	r := s.run(rt)
	window := s.cfg.ContextWindow
	if window == 0 {
		window = llm.Describe(req.Model).ContextWindow
	}
	limit := window
	if limit == 0 {
		limit = DefaultContextWindow
	}
	trigger := s.cfg.TriggerTokens
	if trigger == 0 {
		trigger = DefaultTriggerTokens
		if window > 0 {
			trigger = int(float64(window) * TriggerFraction)
		}
	}
	est := s.estimate(req, r)
	if !r.compacted && ctx.Value(compactKey{}) != nil && len(rt.Namespace()) == 0 {
		r.compacted = true
		// Everything but the newest message; summarize keeps a tool
		// call with its results.
		s.summarize(ctx, req, r, window, est, keepCalls(req.Messages, len(req.Messages)-1), asAsked)
		est = s.estimate(req, r)
	}
	if est > trigger {
		replaced := false
		if r.failures < s.maxFailures() && est >= r.retryAt {
			replaced = s.summarize(ctx, req, r, window, est, s.newCutoff(req.Messages, window), "to fit the context window")
		}
		if !replaced && est > limit {
			s.trim(ctx, req, r, window, est, limit)
		}
	}
	resp, err := next(ctx, req)
	if err == nil && resp.Usage.InputTokens > 0 {
		r.anchor = resp.Usage.InputTokens + resp.Usage.OutputTokens
		// The provider counted this request, which stands for every
		// message so far; the answer comes next.
		r.anchorAt = len(req.Messages) + 1
	}
	return resp, err
}

func (s *Middleware) maxFailures() int {
	if s.cfg.MaxFailures > 0 {
		return s.cfg.MaxFailures
	}
	return DefaultMaxFailures
}

func (s *Middleware) retryGrowth() float64 {
	if s.cfg.RetryGrowth > 0 {
		return s.cfg.RetryGrowth
	}
	return DefaultRetryGrowth
}

func (s *Middleware) counter() TokenCounter {
	if s.cfg.Counter != nil {
		return s.cfg.Counter
	}
	return EstimateTokens
}

// run returns the run-local state, loading the thread's summary once.
func (s *Middleware) run(rt *agent.Runtime) *sumRun {
	v, _ := rt.Local(sumKey{})
	r, _ := v.(*sumRun)
	if r == nil {
		r = &sumRun{}
		rt.SetLocal(sumKey{}, r)
	}
	if !r.loaded {
		r.loaded = true
		if raw, ok := rt.Value(Value); ok {
			if err := json.Unmarshal(raw, &r.st); err != nil {
				cmp.Or(s.cfg.Logger, slog.Default()).Warn("ignoring unreadable summary state", "thread", rt.ThreadID(), "err", err)
				r.st = summaryState{}
			}
		}
	}
	return r
}

// estimate returns the request's size in tokens: the provider's last count
// plus an estimate of what was added since, or an estimate of everything.
func (s *Middleware) estimate(req *agent.ModelRequest, r *sumRun) int {
	msgs := req.Messages
	count := s.counter()
	if len(r.prefix) > len(msgs)+1 {
		// The conversation was rewritten: the anchor and the prefix sums
		// no longer describe it.
		r.prefix, r.anchor, r.anchorAt = r.prefix[:0], 0, 0
	}
	if r.anchor > 0 && r.anchorAt <= len(msgs) {
		return r.anchor + count(msgs[r.anchorAt:])
	}
	n := (len(req.System) + 3) / 4
	for _, t := range req.Tools {
		n += (len(t.Name) + len(t.Description) + len(t.Parameters) + 3) / 4
	}
	if len(r.prefix) == 0 {
		r.prefix = append(r.prefix, 0)
	}
	for i := len(r.prefix) - 1; i < len(msgs); i++ {
		r.prefix = append(r.prefix, r.prefix[i]+count(msgs[i:i+1]))
	}
	return n + r.prefix[len(msgs)]
}

// EstimateTokens estimates tokens at about four characters each, plus a
// little per message.
func EstimateTokens(msgs []llm.Message) int {
	n := 0
	for i := range msgs {
		m := &msgs[i]
		c := 0
		for _, p := range m.Parts {
			c += len(p.Text)
			if p.Type == llm.PartImage {
				c += 4000 // images cost on the order of a thousand tokens
			}
		}
		for _, tc := range m.ToolCalls {
			c += len(tc.Name) + len(tc.Args)
		}
		n += 4 + (c+3)/4
	}
	return n
}

// summaryPreamble opens every summary message; it lets a later summary
// recognise the one it replaces.
const summaryPreamble = "The earlier part of this conversation was summarized to save context."

func summaryMessage(summary, history string, plan []todos.Todo) llm.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "%s Its full text is saved in %s; read it with read_file if you need details the summary lacks.\n\n<summary>\n%s\n</summary>", summaryPreamble, history, strings.TrimSpace(summary))
	writeTodoList(&b, plan)
	return llm.UserText(strings.TrimRight(b.String(), "\n"))
}

// trimmedMessage replaces messages dropped without a summary, keeping the
// summary in force, if any.
func trimmedMessage(st summaryState, dropped int, history string, saveErr error, plan []todos.Todo) llm.Message {
	var b strings.Builder
	if st.Summary != "" {
		fmt.Fprintf(&b, "%s\n\n<summary>\n%s\n</summary>\n\n", summaryPreamble, strings.TrimSpace(st.Summary))
	}
	fmt.Fprintf(&b, "%d earlier messages were removed without a summary because the conversation no longer fit in the context window.", dropped)
	if saveErr == nil {
		fmt.Fprintf(&b, " Their full text is saved in %s; read it with read_file if you need it.", history)
	} else {
		b.WriteString(" Their text could not be saved.")
	}
	writeTodoList(&b, plan)
	return llm.UserText(strings.TrimRight(b.String(), "\n"))
}

func writeTodoList(b *strings.Builder, plan []todos.Todo) {
	if len(plan) == 0 {
		return
	}
	b.WriteString("\n\nThe todo list at that point:\n")
	for _, t := range plan {
		fmt.Fprintf(b, "- [%s] %s\n", t.Status, t.Content)
	}
}

// previousSummary reports whether msgs starts with the summary in force.
func previousSummary(st summaryState, msgs []llm.Message) bool {
	return st.Summary != "" && len(msgs) > 0 && msgs[0].Role == llm.RoleUser &&
		strings.HasPrefix(msgs[0].Text(), summaryPreamble)
}

// summarize replaces the messages before cut (where no tool result is:
// see keepCalls) with a summary, and says why in its notice. It reports
// whether it did; a failure changes nothing but
// the pacing of later attempts.
func (s *Middleware) summarize(ctx context.Context, req *agent.ModelRequest, r *sumRun, window, est, cut int, why string) bool {
	rt := req.Runtime
	msgs := req.Messages
	from := 0
	if previousSummary(r.st, msgs) {
		from = 1
	}
	if cut <= from {
		return false // everything is recent; nothing to summarize
	}
	if s.cfg.BeforeSummary != nil {
		focus, _ := ctx.Value(focusKey{}).(string)
		s.cfg.BeforeSummary(ctx, rt, why == asAsked, focus)
	}
	summary, err := s.callSummarizer(ctx, req, r, msgs[from:cut], window)
	history := HistoryDir + sanitizeName(rt.ThreadID()) + ".md"
	if err == nil {
		err = s.saveHistory(ctx, history, r.st.Offloaded, msgs[from:cut])
	}
	if err != nil {
		r.failures++
		r.retryAt = est + int(float64(est)*s.retryGrowth())
		text := fmt.Sprintf("Summarizing the conversation failed (%v); nothing was changed.", err)
		if r.failures >= s.maxFailures() {
			text += fmt.Sprintf(" After %d failures in a row, this run stops trying; the oldest messages will be dropped if the context window fills.", r.failures)
		} else {
			text += fmt.Sprintf(" Trying again when the context has grown to about %d tokens.", r.retryAt)
		}
		// The notice tells whoever watches the run; the log is for
		// diagnostics (Info: the CLI shows the notice instead).
		cmp.Or(s.cfg.Logger, slog.Default()).Info("summarization failed", "thread", rt.ThreadID(), "err", err, "failures", r.failures)
		rt.Emit(agent.Event{Type: agent.EventNotice, Name: NoticeSummaryFailed, Content: text, Error: err.Error()})
		return false
	}
	r.failures, r.retryAt = 0, 0
	n := cut - from
	r.st = summaryState{Summary: summary, History: history, Offloaded: r.st.Offloaded + n}
	s.replace(req, r, summaryMessage(summary, history, todos.Get(rt)), cut)
	rt.Emit(agent.Event{Type: agent.EventNotice, Name: NoticeSummarized,
		Content: fmt.Sprintf("Summarized %d older messages (about %d tokens in all) %s; their full text is in %s.", n, est, why, history)})
	return true
}

// trim drops the oldest messages without a summary, when the request
// would not fit the window otherwise.
func (s *Middleware) trim(ctx context.Context, req *agent.ModelRequest, r *sumRun, window, est, limit int) {
	rt := req.Runtime
	msgs := req.Messages
	cut := s.newCutoff(msgs, window)
	from := 0
	if previousSummary(r.st, msgs) {
		from = 1
	}
	if cut <= from {
		return // only recent messages left: nothing to drop
	}
	history := HistoryDir + sanitizeName(rt.ThreadID()) + ".md"
	saveErr := s.saveHistory(ctx, history, r.st.Offloaded, msgs[from:cut])
	n := cut - from
	r.st.History, r.st.Offloaded = history, r.st.Offloaded+n
	s.replace(req, r, trimmedMessage(r.st, n, history, saveErr, todos.Get(rt)), cut)
	// The next summary may be tried as soon as the trimmed conversation
	// grows past the trigger again.
	r.retryAt = 0
	text := fmt.Sprintf("The conversation (about %d tokens) would not fit the context window (%d tokens) and no summary could be made: dropped the %d oldest messages", est, limit, n)
	if saveErr == nil {
		text += "; their full text is in " + history + "."
	} else {
		text += fmt.Sprintf("; saving their text failed: %v.", saveErr)
	}
	ev := agent.Event{Type: agent.EventNotice, Name: NoticeContextTrimmed, Content: text}
	if saveErr != nil {
		ev.Error = saveErr.Error()
	}
	rt.Emit(ev)
}

// replace makes head followed by msgs[cut:] the thread's messages and the
// request's, and records the summary state.
func (s *Middleware) replace(req *agent.ModelRequest, r *sumRun, head llm.Message, cut int) {
	rt := req.Runtime
	for cut < len(req.Messages) && req.Messages[cut].Role == llm.RoleTool {
		cut++ // never keep a result without its call
	}
	tail := make([]llm.Message, 0, len(req.Messages)-cut+1)
	tail = append(tail, head)
	tail = append(tail, req.Messages[cut:]...)
	rt.RewriteMessages(0, tail)
	req.Messages = rt.Messages()
	if raw, err := json.Marshal(r.st); err == nil {
		rt.SetValue(Value, raw)
	}
	r.prefix, r.anchor, r.anchorAt = r.prefix[:0], 0, 0
}

// maxTranscriptShare is the part of the summarizer's window (in tokens)
// the transcript of the messages to summarize may take.
const maxTranscriptShare = 0.5

// callSummarizer asks the model for a summary of msgs, which replace the
// summary in force, if any.
func (s *Middleware) callSummarizer(ctx context.Context, req *agent.ModelRequest, r *sumRun, msgs []llm.Message, window int) (string, error) {
	model := s.cfg.Model
	if model == nil {
		model = req.Model
	}
	if window == 0 {
		window = DefaultContextWindow
	}
	// Long messages are clipped so that the transcript fits the
	// summarizer's own window.
	budget := int(float64(window)*maxTranscriptShare) * 4 // characters
	perMessage := 4000
	if per := budget / max(len(msgs), 1); per < perMessage {
		perMessage = max(per, 200)
	}
	var prompt strings.Builder
	if r.st.Summary != "" {
		prompt.WriteString("Summary of the conversation before these messages:\n<previous_summary>\n")
		prompt.WriteString(r.st.Summary)
		prompt.WriteString("\n</previous_summary>\n\n")
	}
	prompt.WriteString("Messages to summarize:\n<conversation>\n")
	writeTranscript(&prompt, msgs, perMessage)
	prompt.WriteString("</conversation>\n\nWrite the new summary, covering the previous summary too.")
	if focus, ok := ctx.Value(focusKey{}).(string); ok {
		prompt.WriteString("\n\nThe user asked this summary to focus on the following; give it the most detail, and keep what the task still needs:\n<focus>\n")
		prompt.WriteString(focus)
		prompt.WriteString("\n</focus>")
	}
	sys := s.cfg.Prompt
	if sys == "" {
		sys = SummarizerPrompt
	}
	resp, err := llm.Generate(llm.WithAgent(ctx, SummarizerAgent), model, &llm.Request{
		System:   sys,
		Messages: []llm.Message{llm.UserText(prompt.String())},
	})
	if err != nil {
		return "", fmt.Errorf("summary call: %w", err)
	}
	rt := req.Runtime
	rt.AddCallUsage(model, SummarizerAgent, resp.Usage) // an agent of its own under the one it summarizes for
	summary := strings.TrimSpace(resp.Message.Text())
	if summary == "" {
		return "", errors.New("the summary call returned no text")
	}
	return summary, nil
}

// newCutoff picks the first message to keep: the most recent messages
// within the keep budget, moved back so that a tool call keeps its results.
func (s *Middleware) newCutoff(msgs []llm.Message, window int) int {
	count := s.counter()
	keepTokens := s.cfg.KeepTokens
	if keepTokens == 0 && window > 0 {
		keepTokens = int(float64(window) * KeepFraction)
	}
	cut := len(msgs)
	if keepTokens > 0 {
		budget := keepTokens
		for cut > 0 {
			t := count(msgs[cut-1 : cut])
			if t > budget {
				break
			}
			budget -= t
			cut--
		}
	} else {
		keep := s.cfg.KeepMessages
		if keep == 0 {
			keep = DefaultKeepMessages
		}
		cut = max(len(msgs)-keep, 0)
	}
	cut = min(cut, len(msgs)-1) // always keep the newest message
	return keepCalls(msgs, max(cut, 0))
}

// keepCalls moves a cut back before the tool results at it, so that the
// call they answer is kept with them.
func keepCalls(msgs []llm.Message, cut int) int {
	for cut > 0 && cut < len(msgs) && msgs[cut].Role == llm.RoleTool {
		cut--
	}
	return cut
}

// historyHeader opens a new history file.
const historyHeader = "# Conversation history\n\nMessages replaced by summaries, oldest first.\n"

// saveHistory appends the replaced messages to the history file; before
// counts the messages the file already holds.
func (s *Middleware) saveHistory(ctx context.Context, path string, before int, msgs []llm.Message) error {
	var b strings.Builder
	// Sized up front: a long run's spans are hundreds of kilobytes, and a
	// builder grown by doubling copies them over and over.
	b.Grow(len(historyHeader) + 64 + transcriptSize(msgs))
	if before == 0 {
		b.WriteString(historyHeader)
	}
	b.WriteString("\n## Messages ")
	b.WriteString(strconv.Itoa(before + 1))
	b.WriteString(" to ")
	b.WriteString(strconv.Itoa(before + len(msgs)))
	b.WriteString("\n\n")
	writeTranscript(&b, msgs, 0)
	if err := backend.Append(ctx, s.cfg.Backend, path, b.String()); err != nil {
		return fmt.Errorf("saving %s: %w", path, err)
	}
	return nil
}

// writeTranscript renders messages as readable text; limit > 0 shortens
// each message to that many bytes.
func writeTranscript(b *strings.Builder, msgs []llm.Message, limit int) {
	line := func(label, text string) {
		b.WriteString(label)
		if limit > 0 && len(text) > limit {
			b.WriteString(text[:clip.RuneOffset(text, limit)])
			b.WriteString(" [... ")
			b.WriteString(strconv.Itoa(len(text) - limit))
			b.WriteString(" more characters]")
		} else {
			b.WriteString(text)
		}
		b.WriteString("\n\n")
	}
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			line("User: ", m.Text())
		case llm.RoleAssistant:
			if t := m.Text(); t != "" {
				line("Assistant: ", t)
			}
			for _, c := range m.ToolCalls {
				line("Assistant called "+c.Name+": ", string(c.Args))
			}
		case llm.RoleTool:
			status := "Tool result ("
			if m.IsError {
				status = "Tool error ("
			}
			line(status+m.Name+"): ", m.Text())
		case llm.RoleSystem:
			line("System: ", m.Text())
		}
	}
}

// transcriptSize is about the bytes writeTranscript writes for msgs,
// unclipped.
func transcriptSize(msgs []llm.Message) int {
	n := 0
	for i := range msgs {
		m := &msgs[i]
		n += 32 + len(m.Name)
		for _, p := range m.Parts {
			n += len(p.Text)
		}
		for _, c := range m.ToolCalls {
			n += 24 + len(c.Name) + len(c.Args)
		}
	}
	return n
}

// sanitizeName makes a thread id safe as a file name.
func sanitizeName(s string) string {
	if s == "" {
		return "thread"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
