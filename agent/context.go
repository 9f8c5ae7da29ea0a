package agent

import (
	"maps"
	"slices"
	"strconv"

	"github.com/deepagents-go/deepagents/internal/jsonenc"
	"github.com/deepagents-go/deepagents/llm"
)

// ContextWindow is what filled one model call's context window, by part,
// in tokens estimated at about four bytes each (a provider's tokenizer
// counts differently; the parts compare, and their sum tracks the window
// as it fills). A usage event carries the one of its call.
type ContextWindow struct {
	System    int `json:"system"`
	Tools     int `json:"tools"`
	User      int `json:"user"`
	Assistant int `json:"assistant"`
	// ToolResults holds the tool results' share by tool name: read_file's
	// are the files read, task's what subagents answered.
	ToolResults map[string]int `json:"tool_results,omitempty"`
	Total       int            `json:"total"`
	// Window is the model's context window, when the model says
	// (llm.Info.ContextWindow).
	Window int `json:"window,omitempty"`
}

// imageBytes is what an image part counts as: on the order of a thousand
// tokens, as providers bill a typical image.
const imageBytes = 4000

// MeasureContext estimates what req sends, part by part, for a model whose
// context window is window tokens (0 when unknown). A thread's messages
// alone, in a Request without System and Tools, measure the conversation's
// share (deepagents state shows that).
func MeasureContext(req *llm.Request, window int) *ContextWindow {
	var m contextMeter
	return m.measure(req, window)
}

// contextMeter measures the requests of one run, counting again only the
// messages a request adds to the previous one's: a run's requests share
// their conversation, which would otherwise be counted whole at every
// step. A request whose earlier messages differ (a summary replaced them)
// is counted whole.
type contextMeter struct {
	n      int    // messages counted
	lastID string // the ID of the last of them
	sums   ContextWindow
}

func (m *contextMeter) measure(req *llm.Request, window int) *ContextWindow {
	msgs := req.Messages
	if m.n == 0 || len(msgs) < m.n || msgs[m.n-1].ID != m.lastID || m.lastID == "" {
		*m = contextMeter{}
	}
	for i := m.n; i < len(msgs); i++ {
		m.sums.add(&msgs[i])
	}
	m.n = len(msgs)
	if m.n > 0 {
		m.lastID = msgs[m.n-1].ID
	}
	c := m.sums
	c.ToolResults = maps.Clone(m.sums.ToolResults)
	c.System, c.Tools, c.Window = tokens(len(req.System)), 0, window
	for _, t := range req.Tools {
		c.Tools += tokens(len(t.Name) + len(t.Description) + len(t.Parameters))
	}
	c.Total = c.System + c.Tools + c.User + c.Assistant
	for _, n := range c.ToolResults {
		c.Total += n
	}
	return &c
}

// add counts one message into c's parts.
func (c *ContextWindow) add(m *llm.Message) {
	n := 0
	for _, p := range m.Parts {
		n += len(p.Text)
		if p.Type == llm.PartImage {
			n += imageBytes
		}
	}
	for _, tc := range m.ToolCalls {
		n += len(tc.Name) + len(tc.Args)
	}
	switch m.Role {
	case llm.RoleAssistant:
		c.Assistant += tokens(n)
	case llm.RoleTool:
		if c.ToolResults == nil {
			c.ToolResults = make(map[string]int)
		}
		c.ToolResults[m.Name] += tokens(n)
	default:
		c.User += tokens(n)
	}
}

// tokens estimates the tokens of n bytes of text.
func tokens(n int) int { return (n + 3) / 4 }

// appendJSON appends c as encoding/json writes it.
func (c *ContextWindow) appendJSON(b []byte) []byte {
	b = append(b, `{"system":`...)
	b = strconv.AppendInt(b, int64(c.System), 10)
	b = append(b, `,"tools":`...)
	b = strconv.AppendInt(b, int64(c.Tools), 10)
	b = append(b, `,"user":`...)
	b = strconv.AppendInt(b, int64(c.User), 10)
	b = append(b, `,"assistant":`...)
	b = strconv.AppendInt(b, int64(c.Assistant), 10)
	if len(c.ToolResults) > 0 {
		b = append(b, `,"tool_results":{`...)
		for i, k := range slices.Sorted(maps.Keys(c.ToolResults)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, k)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(c.ToolResults[k]), 10)
		}
		b = append(b, '}')
	}
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(c.Total), 10)
	if c.Window != 0 {
		b = append(b, `,"window":`...)
		b = strconv.AppendInt(b, int64(c.Window), 10)
	}
	return append(b, '}')
}
