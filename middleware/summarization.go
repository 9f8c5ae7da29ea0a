package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/llm"
)

// Summarization defaults, from the contract.
const (
	// DefaultTriggerTokens is the trigger when the context window is
	// unknown.
	DefaultTriggerTokens = 170000
	// DefaultKeepMessages is how many recent messages are kept when the
	// context window is unknown.
	DefaultKeepMessages = 6
	// TriggerFraction and KeepFraction apply to a known context window.
	TriggerFraction = 0.85
	KeepFraction    = 0.10
	// HistoryDir is where summarized conversation text is saved.
	HistoryDir = "/conversation_history/"
	// SummarizationValue is the state key of the summary.
	SummarizationValue = "summarization"
	// SummarizerAgent names the summary calls (the scripted model serves
	// them from turns with "agent": "summarizer").
	SummarizerAgent = "summarizer"
)

// TokenCounter estimates the tokens of messages.
type TokenCounter func(msgs []llm.Message) int

// Summarization keeps a long conversation inside the model's context
// window. When a request grows past the trigger (85% of the window), the
// older messages are summarized by a model call and replaced, in what the
// model sees, by the summary; the most recent messages (10% of the window)
// stay as they are. A tool call and its results are never separated. The
// full text of what was summarized is first saved to
// /conversation_history/{thread}.md, and the summary points to it.
//
// The thread's state keeps every message: checkpoints stay append-only,
// and only the request is rewritten.
type Summarization struct {
	model   llm.Model
	backend backend.Backend

	// TriggerTokens and KeepTokens override the fractions of the window.
	TriggerTokens int
	KeepTokens    int
	// KeepMessages is how many messages are kept when neither KeepTokens
	// nor the context window is known; zero means DefaultKeepMessages.
	KeepMessages int
	// ContextWindow overrides the model's reported window.
	ContextWindow int
	// Counter estimates tokens of messages added since the model last
	// reported its input size; nil means about four characters a token.
	Counter TokenCounter
	// Prompt replaces the summarizer's instructions.
	Prompt string
	Logger *slog.Logger
}

// NewSummarization returns the middleware. model writes the summaries (nil
// means the agent's own model); b is where history is saved.
func NewSummarization(model llm.Model, b backend.Backend) *Summarization {
	return &Summarization{model: model, backend: b}
}

// Name implements agent.Middleware.
func (*Summarization) Name() string { return "summarization" }

// summaryState is what the thread keeps of its summary.
type summaryState struct {
	// Cutoff is the index of the first message not summarized.
	Cutoff  int          `json:"cutoff"`
	Summary string       `json:"summary"`
	History string       `json:"history"`
	Todos   []agent.Todo `json:"todos,omitempty"`
}

// sumRun is the run-local bookkeeping: the summary in force, the request
// messages built from it (extended as the conversation grows) and the
// token estimate anchored on the provider's last report.
type sumRun struct {
	loaded   bool
	st       summaryState
	eff      []llm.Message // summary message + kept messages
	effUpto  int           // state messages copied into eff so far
	anchor   int           // input+output tokens the provider reported last
	anchorAt int           // state messages covered by anchor
	// prefix[i] estimates the tokens of the first i state messages; it
	// grows with the conversation, so an estimate costs O(new messages).
	prefix []int
}

type sumKey struct{}

// SummarizerPrompt instructs the summary call.
const SummarizerPrompt = `You condense the earlier part of a conversation between a user and an AI agent that works with tools, so the agent can continue the task with a much shorter context.

Write a summary that lets the agent carry on without the original messages:
- the user's goal and every requirement, preference and constraint they stated;
- what has been done so far, with the concrete results: file paths, names, numbers, commands and decisions;
- what was tried and failed, and why;
- open questions and what remains to be done.
Be specific and complete, but leave out chatter and anything already superseded. Write only the summary.`

// WrapModel implements agent.ModelWrapper.
func (s *Summarization) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	rt := req.Runtime
	r := s.run(rt)
	msgs := req.Messages
	if r.effUpto > len(msgs) { // history was rewritten; start over
		r.eff, r.effUpto = nil, 0
	}
	window := s.ContextWindow
	if window == 0 {
		window = llm.Describe(req.Model).ContextWindow
	}
	trigger := s.TriggerTokens
	if trigger == 0 {
		trigger = DefaultTriggerTokens
		if window > 0 {
			trigger = int(float64(window) * TriggerFraction)
		}
	}
	if s.estimate(req, r, msgs) > trigger {
		if err := s.summarize(ctx, req, r, msgs, window); err != nil {
			// Better an oversized request than a failed run: the
			// provider may still accept it.
			logger(s.Logger).Warn("summarization failed; sending the full conversation", "thread", rt.ThreadID(), "err", err)
		}
	}
	if r.st.Summary != "" {
		req.Messages = s.compose(r, msgs)
	}
	resp, err := next(ctx, req)
	if err == nil && resp.Usage.InputTokens > 0 {
		r.anchor = resp.Usage.InputTokens + resp.Usage.OutputTokens
		// The provider counted this request (composed or not), which
		// stands for every state message so far; the answer comes next.
		r.anchorAt = len(msgs) + 1
	}
	return resp, err
}

// run returns the run-local state, loading the thread's summary once.
func (s *Summarization) run(rt *agent.Runtime) *sumRun {
	v, _ := rt.Local(sumKey{})
	r, _ := v.(*sumRun)
	if r == nil {
		r = &sumRun{}
		rt.SetLocal(sumKey{}, r)
	}
	if !r.loaded {
		r.loaded = true
		if raw, ok := rt.Value(SummarizationValue); ok {
			if err := json.Unmarshal(raw, &r.st); err != nil {
				logger(s.Logger).Warn("ignoring unreadable summary state", "thread", rt.ThreadID(), "err", err)
				r.st = summaryState{}
			}
		}
	}
	return r
}

// estimate returns the request's size in tokens: the provider's last count
// plus an estimate of what was added since, or an estimate of everything.
func (s *Summarization) estimate(req *agent.ModelRequest, r *sumRun, msgs []llm.Message) int {
	count := s.Counter
	if count == nil {
		count = EstimateTokens
	}
	if r.anchor > 0 && r.anchorAt <= len(msgs) {
		return r.anchor + count(msgs[r.anchorAt:])
	}
	n := (len(req.System) + 3) / 4
	for _, t := range req.Tools {
		n += (len(t.Name) + len(t.Description) + len(t.Parameters) + 3) / 4
	}
	if len(r.prefix) == 0 || len(r.prefix) > len(msgs)+1 {
		r.prefix = append(r.prefix[:0], 0)
	}
	for i := len(r.prefix) - 1; i < len(msgs); i++ {
		r.prefix = append(r.prefix, r.prefix[i]+count(msgs[i:i+1]))
	}
	total := r.prefix[len(msgs)]
	if r.st.Summary != "" {
		cut := min(r.st.Cutoff, len(msgs))
		return n + count([]llm.Message{summaryMessage(r.st)}) + total - r.prefix[cut]
	}
	return n + total
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

// compose returns the request messages: the summary, then every message
// from the cutoff on. The slice grows with the conversation instead of
// being rebuilt for every call.
func (s *Summarization) compose(r *sumRun, msgs []llm.Message) []llm.Message {
	cut := r.st.Cutoff
	// A kept part must not start with results whose call was summarized.
	for cut < len(msgs) && msgs[cut].Role == llm.RoleTool {
		cut++
	}
	if r.eff == nil || r.effUpto < cut {
		r.eff = append(make([]llm.Message, 0, len(msgs)-cut+16), summaryMessage(r.st))
		r.effUpto = cut
	}
	r.eff = append(r.eff, msgs[r.effUpto:]...)
	r.effUpto = len(msgs)
	return r.eff[:len(r.eff):len(r.eff)]
}

func summaryMessage(st summaryState) llm.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "The earlier part of this conversation was summarized to save context. Its full text is saved in %s; read it with read_file if you need details the summary lacks.\n\n<summary>\n%s\n</summary>", st.History, strings.TrimSpace(st.Summary))
	if len(st.Todos) > 0 {
		b.WriteString("\n\nThe todo list at that point:\n")
		for _, t := range st.Todos {
			fmt.Fprintf(&b, "- [%s] %s\n", t.Status, t.Content)
		}
	}
	return llm.UserText(strings.TrimRight(b.String(), "\n"))
}

// summarize moves the cutoff forward: it saves the messages it passes over
// to the history file and asks the model for a new summary.
func (s *Summarization) summarize(ctx context.Context, req *agent.ModelRequest, r *sumRun, msgs []llm.Message, window int) error {
	rt := req.Runtime
	cut := s.newCutoff(msgs, window)
	if cut <= r.st.Cutoff {
		return nil // everything is recent; nothing to summarize
	}
	old := msgs[r.st.Cutoff:cut]
	history := HistoryDir + sanitizeName(rt.ThreadID()) + ".md"
	if err := s.saveHistory(ctx, history, r.st.Cutoff, old); err != nil {
		return fmt.Errorf("saving %s: %w", history, err)
	}
	model := s.model
	if model == nil {
		model = req.Model
	}
	var prompt strings.Builder
	if r.st.Summary != "" {
		prompt.WriteString("Summary of the conversation before these messages:\n<previous_summary>\n")
		prompt.WriteString(r.st.Summary)
		prompt.WriteString("\n</previous_summary>\n\n")
	}
	prompt.WriteString("Messages to summarize:\n<conversation>\n")
	writeTranscript(&prompt, old, 4000)
	prompt.WriteString("</conversation>\n\nWrite the new summary, covering the previous summary too.")
	sys := s.Prompt
	if sys == "" {
		sys = SummarizerPrompt
	}
	resp, err := llm.Generate(llm.WithAgent(ctx, SummarizerAgent), model, &llm.Request{
		System:   sys,
		Messages: []llm.Message{llm.UserText(prompt.String())},
	})
	if err != nil {
		return fmt.Errorf("summary call: %w", err)
	}
	rt.AddUsage(resp.Usage)
	summary := strings.TrimSpace(resp.Message.Text())
	if summary == "" {
		return errors.New("the summary call returned no text")
	}
	r.st = summaryState{Cutoff: cut, Summary: summary, History: history, Todos: rt.Todos()}
	r.eff, r.effUpto, r.anchor = nil, 0, 0
	raw, err := json.Marshal(r.st)
	if err != nil {
		return err
	}
	rt.SetValue(SummarizationValue, raw)
	return nil
}

// newCutoff picks the first message to keep: the most recent messages
// within the keep budget, moved back so that a tool call keeps its results.
func (s *Summarization) newCutoff(msgs []llm.Message, window int) int {
	count := s.Counter
	if count == nil {
		count = EstimateTokens
	}
	keepTokens := s.KeepTokens
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
		keep := s.KeepMessages
		if keep == 0 {
			keep = DefaultKeepMessages
		}
		cut = max(len(msgs)-keep, 0)
	}
	cut = min(cut, len(msgs)-1) // always keep the newest message
	for cut > 0 && msgs[cut].Role == llm.RoleTool {
		cut--
	}
	return max(cut, 0)
}

// saveHistory appends the summarized messages to the history file.
func (s *Summarization) saveHistory(ctx context.Context, path string, from int, msgs []llm.Message) error {
	var prev []byte
	if got := s.backend.Download(ctx, []string{path}); got[0].Err == nil {
		prev = got[0].Content
	} else if !errors.Is(got[0].Err, backend.ErrNotFound) {
		return got[0].Err
	}
	var b strings.Builder
	b.Write(prev)
	if len(prev) == 0 {
		b.WriteString("# Conversation history\n\nMessages replaced by summaries, oldest first.\n")
	}
	fmt.Fprintf(&b, "\n## Messages %d to %d\n\n", from+1, from+len(msgs))
	writeTranscript(&b, msgs, 0)
	res := s.backend.Upload(ctx, []backend.File{{Path: path, Content: []byte(b.String())}})
	return res[0].Err
}

// writeTranscript renders messages as readable text; clip > 0 shortens
// each message to that many bytes.
func writeTranscript(b *strings.Builder, msgs []llm.Message, clip int) {
	cl := func(s string) string {
		if clip > 0 && len(s) > clip {
			return s[:runeOffset(s, clip)] + fmt.Sprintf(" [... %d more characters]", len(s)-clip)
		}
		return s
	}
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			fmt.Fprintf(b, "User: %s\n\n", cl(m.Text()))
		case llm.RoleAssistant:
			if t := m.Text(); t != "" {
				fmt.Fprintf(b, "Assistant: %s\n\n", cl(t))
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(b, "Assistant called %s: %s\n\n", c.Name, cl(string(c.Args)))
			}
		case llm.RoleTool:
			status := "result"
			if m.IsError {
				status = "error"
			}
			fmt.Fprintf(b, "Tool %s (%s): %s\n\n", status, m.Name, cl(m.Text()))
		case llm.RoleSystem:
			fmt.Fprintf(b, "System: %s\n\n", cl(m.Text()))
		}
	}
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
