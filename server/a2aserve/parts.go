package a2aserve

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

// What the A2A endpoint reads from a client's message and writes in its
// status messages and artifacts.

// a2aUserMessage is the agent's input of a client's message: text parts
// as they are, a data part as its JSON, a text file (text/*, JSON, XML,
// YAML) in a <context> block naming it, an image as an image part, any
// other file as a line saying it was left out. A file given by URI is a
// link the agent sees: the server never fetches what a client points it
// at.
func a2aUserMessage(m *a2a.Message) (llm.Message, error) {
	out := llm.Message{Role: llm.RoleUser}
	var text []string
	flush := func() {
		if len(text) > 0 {
			out.Parts = append(out.Parts, llm.Text(strings.Join(text, "\n\n")))
			text = nil
		}
	}
	for _, p := range m.Parts {
		switch p := p.(type) {
		case a2a.TextPart:
			text = append(text, p.Text)
		case a2a.DataPart:
			b, err := json.Marshal(p.Data)
			if err != nil {
				return out, fmt.Errorf("%w: a data part: %v", a2a.ErrInvalidParams, err)
			}
			text = append(text, string(b))
		case a2a.FilePart:
			switch f := p.File.(type) {
			case a2a.FileURI:
				text = append(text, fmt.Sprintf("[%s](%s)", cmp.Or(f.Name, f.URI), f.URI))
			case a2a.FileBytes:
				data, err := base64.StdEncoding.DecodeString(f.Bytes)
				if err != nil {
					return out, fmt.Errorf("%w: file %q: its bytes are not base64: %v", a2a.ErrInvalidParams, f.Name, err)
				}
				switch mt := f.MimeType; {
				case imageTypes[mt]:
					flush()
					out.Parts = append(out.Parts, llm.Part{Type: llm.PartImage, MIMEType: mt, Data: data})
				case textual(mt):
					text = append(text, fmt.Sprintf("<context name=%q>\n%s\n</context>", cmp.Or(f.Name, "file"), data))
				default:
					text = append(text, fmt.Sprintf("(a file, %s, %s, %d bytes, not included)", cmp.Or(f.Name, "unnamed"), cmp.Or(mt, "of no type"), len(data)))
				}
			}
		}
	}
	flush()
	if len(out.Parts) == 0 {
		return out, fmt.Errorf("%w: the message has no text, data or file part", a2a.ErrInvalidParams)
	}
	return out, nil
}

// imageTypes are the images the providers take.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// textual reports whether a file of MIME type mt is text the agent reads.
func textual(mt string) bool {
	mt, _, _ = strings.Cut(mt, ";")
	switch {
	case strings.HasPrefix(mt, "text/"), mt == "application/json", mt == "application/xml", mt == "application/yaml", mt == "application/x-yaml":
		return true
	case strings.HasPrefix(mt, "application/") && (strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")):
		return true
	}
	return false
}

// errNoDecision says how to answer a task that waits for approval.
var errNoDecision = errors.New(`the task waits for a decision on the tool calls in its status: reply "approve", or "reject: REASON", or send a data part {"decisions": [{"type": "approve"}, ...]} (one decision per call, or one for all)`)

// a2aDecisions reads the answer to a task that waits for approval: a data
// part {"decisions": [...]} (LangChain's, as command.resume takes it), or
// the text "approve" or "reject", optionally followed by the reason
// ("reject: not that file"). It returns command.resume's JSON.
func a2aDecisions(m *a2a.Message) (json.RawMessage, error) {
	var text []string
	for _, p := range m.Parts {
		switch p := p.(type) {
		case a2a.DataPart:
			if d, ok := p.Data["decisions"]; ok {
				return json.Marshal(map[string]any{"decisions": d})
			}
			if bgKeyed(p.Data) {
				// Several background tasks' answers, keyed by their
				// interrupt ids, as command.resume takes them.
				return json.Marshal(p.Data)
			}
		case a2a.TextPart:
			text = append(text, p.Text)
		}
	}
	answer := strings.TrimSpace(strings.Join(text, " "))
	word, reason, _ := strings.Cut(answer, ":")
	if w, rest, ok := strings.Cut(answer, " "); ok && !strings.Contains(w, ":") {
		word, reason = w, rest
	}
	reason = strings.TrimSpace(reason)
	var d map[string]any
	switch strings.ToLower(strings.TrimSpace(word)) {
	case "approve", "approved", "yes":
		d = map[string]any{"type": agent.DecisionApprove}
	case "reject", "rejected", "no":
		d = map[string]any{"type": agent.DecisionReject}
		if reason != "" {
			d["message"] = reason
		}
	default:
		return nil, fmt.Errorf("%w: %w", a2a.ErrInvalidParams, errNoDecision)
	}
	return json.Marshal(map[string]any{"decisions": []any{d}})
}

// Bounds of what a status message carries: it is progress, read whole by
// clients whose stream readers take lines of 64 KiB (the Go SDK's), so
// its text and the tool calls' arguments (a file written) are cut, as
// they will be written on the wire (JSON escapes "<" as six bytes).
const (
	a2aArgsBudget = 24 << 10 // the arguments of a message's calls, together
	a2aTextBudget = 8 << 10
	a2aArgsMin    = 256 // a call's arguments, however many calls
	// an answer artifact's chunk, in a stream, in runes: even escaped
	// whole (six bytes a rune), well within a line.
	a2aChunkRunes = 8 << 10
)

// escapedLen is the length of s as a JSON string.
func escapedLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}

// clipEscaped cuts s so that it takes at most about n bytes as a JSON
// string. Escaping never shortens a string, so one longer than n is cut
// without encoding it whole (the arguments of a file written).
func clipEscaped(s string, n int) string {
	if len(s)+2 <= n && escapedLen(s) <= n {
		return s
	}
	for cut := n; ; cut = cut * 2 / 3 {
		if c := clip.Text(s, cut); escapedLen(c) <= n || cut < 32 {
			return c
		}
	}
}

// clipArgs is a call's arguments as an object when they take at most n
// bytes on the wire, else as a string cut to n.
func clipArgs(args json.RawMessage, n int) any {
	if json.Valid(args) {
		if b, _ := json.Marshal(args); len(b) <= n {
			return args
		}
	}
	return clipEscaped(string(args), n)
}

// a2aToolCalls is the status message of an assistant message that calls
// tools: its text, and the calls as data ({"tool_calls": [{id, name,
// args}]}).
func a2aToolCalls(info a2a.TaskInfoProvider, m *llm.Message) *a2a.Message {
	per := max(a2aArgsMin, a2aArgsBudget/max(len(m.ToolCalls), 1))
	calls := make([]any, 0, len(m.ToolCalls))
	for _, tc := range m.ToolCalls {
		calls = append(calls, map[string]any{"id": tc.ID, "name": tc.Name, "args": clipArgs(tc.Args, per)})
	}
	var parts []a2a.Part
	if t := m.Text(); t != "" {
		parts = append(parts, a2a.TextPart{Text: clipEscaped(t, a2aTextBudget)})
	}
	parts = append(parts, dataPart(map[string]any{"tool_calls": calls}))
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, info, parts...)
}

// a2aPlan is the status message of a new todo list; a list too long to
// show whole is told in words only (the thread's state has it).
func a2aPlan(info a2a.TaskInfoProvider, plan []todos.Todo) *a2a.Message {
	parts := []a2a.Part{a2a.TextPart{Text: fmt.Sprintf("Plan: %d of %d done", todos.Done(plan), len(plan))}}
	if b, _ := json.Marshal(plan); len(b) <= a2aArgsBudget {
		parts = append(parts, dataPart(map[string]any{todos.Value: plan}))
	}
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, info, parts...)
}

// a2aQuestion is the status message of a task that waits for approval:
// the calls in words and how to answer, and LangChain's action requests
// and review configs as data ({"action_requests": [{name, args,
// description}], "review_configs": [{action_name, allowed_decisions}]}),
// their arguments cut as a status message's.
func a2aQuestion(info a2a.TaskInfoProvider, reqs []agent.ActionRequest) *a2a.Message {
	per := max(a2aArgsMin, a2aArgsBudget/max(2*len(reqs), 1))
	var b strings.Builder
	b.WriteString("These tool calls need a decision:\n")
	actions := make([]any, 0, len(reqs))
	var reviews []any
	seen := map[string]bool{}
	for _, r := range reqs {
		fmt.Fprintf(&b, "- %s %s\n", r.Tool, clipEscaped(string(r.Args), min(per, a2aTextBudget/max(len(reqs), 1))))
		actions = append(actions, map[string]any{"name": r.Tool, "args": clipArgs(r.Args, per), "description": clipEscaped(r.Description, per)})
		if !seen[r.Tool] {
			seen[r.Tool] = true
			reviews = append(reviews, map[string]any{"action_name": r.Tool, "allowed_decisions": r.Allowed})
		}
	}
	b.WriteString(`Reply "approve", or "reject: REASON", or a data part {"decisions": [...]}.`)
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, info, a2a.TextPart{Text: clipEscaped(b.String(), a2aTextBudget)},
		dataPart(map[string]any{"action_requests": actions, "review_configs": reviews}))
}

// dataPart is v, as JSON, in a data part.
func dataPart(v any) a2a.DataPart { return a2a.DataPart{Data: asValue(v)} }

// answerArtifact is the artifact holding a task's answer.
func answerArtifact(text string) *a2a.Artifact {
	return &a2a.Artifact{ID: a2aAnswerID, Name: "answer", Parts: a2a.ContentParts{a2a.TextPart{Text: text}}}
}

// a2aAnswerID names the answer's artifact: a task has one answer, its
// last run's.
const a2aAnswerID a2a.ArtifactID = "answer"

// answerChunks streams an answer as artifact updates of at most
// a2aChunkRunes characters each, the last marked so.
func answerChunks(info a2a.TaskInfoProvider, text string) []a2a.Event {
	var out []a2a.Event
	for first := true; first || text != ""; first = false {
		n := clip.RuneOffset(text, a2aChunkRunes)
		chunk := text[:n]
		text = text[n:]
		ev := a2a.NewArtifactUpdateEvent(info, a2aAnswerID, a2a.TextPart{Text: chunk})
		ev.Artifact.Name = "answer"
		ev.Append = !first
		ev.LastChunk = text == ""
		out = append(out, ev)
	}
	return out
}

// bgKeyed reports whether data holds answers keyed by background tasks'
// interrupt ids ({"bg:TASK_ID": {"decisions": [...]}, ...}).
func bgKeyed(data map[string]any) bool {
	for k := range data {
		if !strings.HasPrefix(k, "bg:") {
			return false
		}
	}
	return len(data) > 0
}

// a2aBackgroundQuestion is the status message of a task whose thread's
// background tasks wait for approval: the main agent's answer, then each
// task's calls in words and how to answer, and the requests as data
// ({"background_tasks": [{task_id, interrupt_id, subagent, task,
// action_requests, review_configs}]}).
func a2aBackgroundQuestion(info a2a.TaskInfoProvider, answer string, waiting []background.Approval) *a2a.Message {
	n := 0
	for _, a := range waiting {
		n += len(a.Requests)
	}
	per := max(a2aArgsMin, a2aArgsBudget/max(2*n, 1))
	var b strings.Builder
	if answer != "" {
		b.WriteString(clip.Text(answer, a2aTextBudget/2))
		b.WriteString("\n\n")
	}
	tasks := make([]any, 0, len(waiting))
	for _, a := range waiting {
		fmt.Fprintf(&b, "Background task %s (subagent %s: %s) waits for a decision on:\n", a.TaskID, a.Subagent, clip.Text(a.Task, 200))
		actions := make([]any, 0, len(a.Requests))
		var reviews []any
		seen := map[string]bool{}
		for _, r := range a.Requests {
			fmt.Fprintf(&b, "- %s %s\n", r.Tool, clipEscaped(string(r.Args), min(per, a2aTextBudget/max(n, 1))))
			actions = append(actions, map[string]any{"name": r.Tool, "args": clipArgs(r.Args, per), "description": clipEscaped(r.Description, per)})
			if !seen[r.Tool] {
				seen[r.Tool] = true
				reviews = append(reviews, map[string]any{"action_name": r.Tool, "allowed_decisions": r.Allowed})
			}
		}
		tasks = append(tasks, map[string]any{"task_id": a.TaskID, "interrupt_id": "bg:" + a.TaskID, "subagent": a.Subagent, "task": clip.Text(a.Task, 200),
			"action_requests": actions, "review_configs": reviews})
	}
	if len(waiting) == 1 {
		b.WriteString(`Reply "approve", or "reject: REASON", or a data part {"decisions": [...]}.`)
	} else {
		fmt.Fprintf(&b, `Reply with a data part keyed by interrupt id, {"bg:%s": {"decisions": [...]}, ...}.`, waiting[0].TaskID)
	}
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, info, a2a.TextPart{Text: clipEscaped(b.String(), a2aTextBudget)},
		dataPart(map[string]any{"background_tasks": tasks}))
}

// bgAnswered is the answer of a task whose run answered background
// tasks' requests.
func bgAnswered(taskIDs []string) string {
	return fmt.Sprintf("Answered the request for approval of background task %s: its subagent goes on, and the agent collects its result in a later task of this context.", strings.Join(taskIDs, ", "))
}
