package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic"
	"github.com/deepagents-go/deepagents/llm/anthropic/anthropictest"
)

// lsSchema is written with a deliberate, non-alphabetical key order: it
// must reach the wire in this order.
const lsSchema = `{"type": "object", "properties": {"path": {"type": "string", "description": "Directory"}}, "required": ["path"]}`

var testTools = []llm.ToolSpec{
	{Name: "ls", Description: "List a directory.", Parameters: json.RawMessage(lsSchema)},
	{Name: "write_todos", Description: "Replace the todo list.", Parameters: json.RawMessage(`{"type":"object","properties":{"todos":{"type":"array"}}}`)},
	{Name: "noargs", Description: "Takes nothing."},
}

// sent runs one request against a fake server and returns the body it
// received.
func sent(t *testing.T, opts anthropic.Options, req *llm.Request) []byte {
	t.Helper()
	srv := anthropictest.NewServer(anthropictest.Turn{Text: "ok"})
	defer srv.Close()
	m := newModel(t, srv.URL, opts)
	if _, err := llm.Generate(context.Background(), m, req); err != nil {
		t.Fatal(err)
	}
	bodies := srv.MessageRequests()
	if len(bodies) != 1 {
		t.Fatalf("%d requests", len(bodies))
	}
	return bodies[0]
}

type wireBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	Thinking     string          `json:"thinking"`
	Signature    string          `json:"signature"`
	Data         string          `json:"data"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	IsError      bool            `json:"is_error"`
	Content      []wireBlock     `json:"content"`
	CacheControl *struct {
		Type string `json:"type"`
		TTL  string `json:"ttl"`
	} `json:"cache_control"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *struct {
		Type string `json:"type"`
		TTL  string `json:"ttl"`
	} `json:"cache_control"`
}

func messagesOf(t *testing.T, body []byte) []wireMessage {
	t.Helper()
	var msgs []wireMessage
	decode(t, field(t, body, "messages"), &msgs)
	return msgs
}

// conversation is a conversation two agent steps in: a user question, an
// assistant turn with thinking and two tool calls, their results, and a
// final assistant answer.
func conversation() []llm.Message {
	return []llm.Message{
		llm.UserText("What is in /src?"),
		{Role: llm.RoleAssistant,
			Parts: []llm.Part{
				{Type: llm.PartReasoning, Text: "I should list it.", Signature: "sig-1"},
				{Type: llm.PartReasoning, Redacted: true, Data: []byte("opaque-redacted")},
				{Type: llm.PartReasoning, Text: "unsigned reasoning from another provider"},
				llm.Text("Listing."),
			},
			ToolCalls: []llm.ToolCall{
				{ID: "toolu_1", Name: "ls", Args: json.RawMessage(`{"path": "/src"}`)},
				{ID: "toolu_2", Name: "noargs", Args: nil},
			},
		},
		llm.ToolResult("toolu_1", "ls", "main.go\nutil.go", false),
		llm.ToolResult("toolu_2", "noargs", "Error: boom", true),
	}
}

func TestRequestMessages(t *testing.T) {
	body := sent(t, anthropic.Options{}, &llm.Request{System: "You are helpful.", Messages: conversation(), Tools: testTools})
	msgs := messagesOf(t, body)
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 3 (user, assistant, merged tool results):\n%s", len(msgs), body)
	}
	a := msgs[1]
	if a.Role != "assistant" || len(a.Content) != 5 {
		t.Fatalf("assistant message %+v", a)
	}
	if b := a.Content[0]; b.Type != "thinking" || b.Thinking != "I should list it." || b.Signature != "sig-1" {
		t.Errorf("thinking block %+v", b)
	}
	if b := a.Content[1]; b.Type != "redacted_thinking" || b.Data != "opaque-redacted" {
		t.Errorf("redacted block %+v", b)
	}
	if b := a.Content[2]; b.Type != "text" || b.Text != "Listing." {
		t.Errorf("text block %+v", b)
	}
	if b := a.Content[3]; b.Type != "tool_use" || b.ID != "toolu_1" || b.Name != "ls" || compact(t, string(b.Input)) != `{"path":"/src"}` {
		t.Errorf("tool_use block %+v (%s)", b, b.Input)
	}
	if b := a.Content[4]; b.Type != "tool_use" || string(b.Input) != `{}` {
		t.Errorf("empty tool_use block %+v (%s)", b, b.Input)
	}
	u := msgs[2]
	if u.Role != "user" || len(u.Content) != 2 {
		t.Fatalf("tool results message %+v", u)
	}
	if b := u.Content[0]; b.Type != "tool_result" || b.ToolUseID != "toolu_1" || b.IsError ||
		len(b.Content) != 1 || b.Content[0].Text != "main.go\nutil.go" {
		t.Errorf("tool result %+v", b)
	}
	if b := u.Content[1]; b.Type != "tool_result" || b.ToolUseID != "toolu_2" || !b.IsError || b.Content[0].Text != "Error: boom" {
		t.Errorf("error tool result %+v", b)
	}
	if strings.Contains(string(body), "unsigned reasoning") {
		t.Error("reasoning without a signature was sent")
	}
	var system []wireBlock
	decode(t, field(t, body, "system"), &system)
	if len(system) != 1 || system[0].Text != "You are helpful." {
		t.Errorf("system %+v", system)
	}
}

func TestRequestToolSchemaVerbatim(t *testing.T) {
	body := sent(t, anthropic.Options{}, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}, Tools: testTools})
	var tools []wireTool
	decode(t, field(t, body, "tools"), &tools)
	if len(tools) != 3 {
		t.Fatalf("tools %s", field(t, body, "tools"))
	}
	if got, want := string(tools[0].InputSchema), compact(t, lsSchema); got != want {
		t.Errorf("schema reordered or changed:\n got %s\nwant %s", got, want)
	}
	if tools[0].Description != "List a directory." {
		t.Errorf("description %q", tools[0].Description)
	}
	if got := string(tools[2].InputSchema); got != `{"type":"object","properties":{}}` {
		t.Errorf("schema of a tool without parameters: %s", got)
	}
}

func TestCacheControlPlacement(t *testing.T) {
	req := &llm.Request{
		System:   "You are helpful.",
		Messages: conversation(),
		Tools:    testTools,
		Cache:    llm.CacheHints{Prefix: true, Tail: true, TTL: "1h"},
	}
	body := sent(t, anthropic.Options{}, req)
	if n := strings.Count(string(body), `"cache_control"`); n != 3 {
		t.Errorf("%d cache_control markers, want 3 (last tool, system, tail):\n%s", n, body)
	}
	var tools []wireTool
	decode(t, field(t, body, "tools"), &tools)
	for i, tool := range tools {
		last := i == len(tools)-1
		if (tool.CacheControl != nil) != last {
			t.Errorf("tool %d cache_control %+v", i, tool.CacheControl)
		}
	}
	if cc := tools[len(tools)-1].CacheControl; cc == nil || cc.Type != "ephemeral" || cc.TTL != "1h" {
		t.Errorf("last tool cache_control %+v", cc)
	}
	var system []wireBlock
	decode(t, field(t, body, "system"), &system)
	if cc := system[len(system)-1].CacheControl; cc == nil || cc.Type != "ephemeral" || cc.TTL != "1h" {
		t.Errorf("system cache_control %+v", cc)
	}
	msgs := messagesOf(t, body)
	last := msgs[len(msgs)-1].Content
	for i, b := range last {
		if (b.CacheControl != nil) != (i == len(last)-1) {
			t.Errorf("tail block %d cache_control %+v", i, b.CacheControl)
		}
	}

	// Prefix only, default TTL.
	req.Cache = llm.CacheHints{Prefix: true}
	body = sent(t, anthropic.Options{}, req)
	if n := strings.Count(string(body), `"cache_control":{"type":"ephemeral"}`); n != 2 {
		t.Errorf("prefix only: %d markers, want 2:\n%s", n, body)
	}
	// No hints, no markers.
	req.Cache = llm.CacheHints{}
	body = sent(t, anthropic.Options{}, req)
	if strings.Contains(string(body), "cache_control") {
		t.Errorf("cache_control without hints:\n%s", body)
	}
	// A bad TTL is refused before anything is sent.
	m := newModel(t, "http://127.0.0.1:1", anthropic.Options{})
	req.Cache = llm.CacheHints{Tail: true, TTL: "1d"}
	if _, err := llm.Generate(context.Background(), m, req); err == nil || !strings.Contains(err.Error(), "1d") {
		t.Errorf("bad TTL: %v", err)
	}
}

func TestCacheTailSkipsThinking(t *testing.T) {
	// An assistant prefill ending in a thinking block: the breakpoint goes
	// on the last block that can carry one.
	req := &llm.Request{
		Messages: []llm.Message{
			llm.UserText("hi"),
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("Sure."), {Type: llm.PartReasoning, Text: "t", Signature: "s"}}},
		},
		Cache: llm.CacheHints{Tail: true},
	}
	msgs := messagesOf(t, sent(t, anthropic.Options{}, req))
	last := msgs[len(msgs)-1].Content
	if last[0].CacheControl == nil || last[1].CacheControl != nil {
		t.Errorf("tail markers %+v", last)
	}
}

// TestPrefixByteIdentical runs a growing conversation, as an agent does,
// and checks that the cached prefix (tools, system) goes out byte for byte
// the same each time, while the tail breakpoint moves.
func TestPrefixByteIdentical(t *testing.T) {
	srv := anthropictest.NewServer(
		anthropictest.Turn{Text: "Listing.", ToolCalls: []anthropictest.ToolCall{{Name: "ls", Input: `{"path":"/"}`}},
			Usage: anthropictest.Usage{InputTokens: 50, CacheCreationInputTokens: 1500, OutputTokens: 20}},
		anthropictest.Turn{Text: "Done.", Usage: anthropictest.Usage{InputTokens: 40, CacheReadInputTokens: 1500, OutputTokens: 5}},
	)
	defer srv.Close()
	m := newModel(t, srv.URL, anthropic.Options{})
	req := &llm.Request{
		System:   strings.Repeat("You are a careful agent. ", 20),
		Messages: []llm.Message{llm.UserText("list /")},
		Tools:    testTools,
		Cache:    llm.CacheHints{Prefix: true, Tail: true},
	}
	var usages []llm.Usage
	for step := 0; step < 2; step++ {
		res, err := llm.Generate(context.Background(), m, req)
		if err != nil {
			t.Fatal(err)
		}
		usages = append(usages, res.Usage)
		req.Messages = append(req.Messages, res.Message)
		for _, c := range res.Message.ToolCalls {
			req.Messages = append(req.Messages, llm.ToolResult(c.ID, c.Name, "a\nb", false))
		}
	}
	bodies := srv.MessageRequests()
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	for _, name := range []string{"system", "tools", "model", "max_tokens"} {
		a, b := field(t, bodies[0], name), field(t, bodies[1], name)
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between steps:\n%s\n%s", name, a, b)
		}
	}
	// The second request starts with the first one's messages.
	m0, m1 := messagesOf(t, bodies[0]), messagesOf(t, bodies[1])
	if len(m1) != 3 || m1[0].Content[0].Text != m0[0].Content[0].Text {
		t.Errorf("second request messages %+v", m1)
	}
	if m1[0].Content[0].CacheControl != nil || m1[2].Content[0].CacheControl == nil {
		t.Errorf("tail breakpoint did not move to the new last message")
	}
	want := []llm.Usage{
		{InputTokens: 1550, OutputTokens: 20, CacheWriteTokens: 1500},
		{InputTokens: 1540, OutputTokens: 5, CacheReadTokens: 1500},
	}
	for i := range want {
		if usages[i] != want[i] {
			t.Errorf("step %d usage %+v, want %+v", i, usages[i], want[i])
		}
	}
}

func TestRequestImages(t *testing.T) {
	req := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{
			llm.Text("What is this?"),
			{Type: llm.PartImage, MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
			{Type: llm.PartImage, URL: "https://example.com/cat.jpg"},
		}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "screenshot", Args: json.RawMessage(`{}`)}}},
		{Role: llm.RoleTool, ToolCallID: "t1", Name: "screenshot", Parts: []llm.Part{
			llm.Text("here"), {Type: llm.PartImage, MIMEType: "image/jpeg", Data: []byte("jpg")},
		}},
	}}
	msgs := messagesOf(t, sent(t, anthropic.Options{}, req))
	u := msgs[0].Content
	if len(u) != 3 || u[1].Type != "image" || u[1].Source.Type != "base64" || u[1].Source.MediaType != "image/png" || u[1].Source.Data != "iVBORw==" {
		t.Errorf("inline image %+v", u[1].Source)
	}
	if u[2].Source.Type != "url" || u[2].Source.URL != "https://example.com/cat.jpg" {
		t.Errorf("url image %+v", u[2].Source)
	}
	tr := msgs[2].Content[0]
	if len(tr.Content) != 2 || tr.Content[1].Type != "image" || tr.Content[1].Source.Data != "anBn" {
		t.Errorf("tool result image %+v", tr)
	}

	m := newModel(t, "http://127.0.0.1:1", anthropic.Options{})
	bad := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage, Data: []byte("x")}}}}}
	if _, err := llm.Generate(context.Background(), m, bad); err == nil || !strings.Contains(err.Error(), "MIME") {
		t.Errorf("image without MIME type: %v", err)
	}
}

func TestRequestOptions(t *testing.T) {
	temp := 0.25
	schema := `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`
	tests := []struct {
		name  string
		model string
		opts  anthropic.Options
		req   llm.Request
		check func(t *testing.T, body []byte)
	}{
		{"default max_tokens from the table", "claude-sonnet-4-5", anthropic.Options{}, llm.Request{}, func(t *testing.T, body []byte) {
			if got := string(field(t, body, "max_tokens")); got != "32000" {
				t.Errorf("max_tokens %s", got)
			}
		}},
		{"small model", "claude-3-5-haiku-20241022", anthropic.Options{}, llm.Request{}, func(t *testing.T, body []byte) {
			if got := string(field(t, body, "max_tokens")); got != "8192" {
				t.Errorf("max_tokens %s", got)
			}
		}},
		{"options max tokens", "claude-sonnet-4-5", anthropic.Options{MaxTokens: 1000}, llm.Request{}, func(t *testing.T, body []byte) {
			if got := string(field(t, body, "max_tokens")); got != "1000" {
				t.Errorf("max_tokens %s", got)
			}
		}},
		{"request max tokens wins", "claude-sonnet-4-5", anthropic.Options{MaxTokens: 1000}, llm.Request{MaxTokens: 77, Temperature: &temp}, func(t *testing.T, body []byte) {
			if got := string(field(t, body, "max_tokens")); got != "77" {
				t.Errorf("max_tokens %s", got)
			}
			if got := string(field(t, body, "temperature")); got != "0.25" {
				t.Errorf("temperature %s", got)
			}
		}},
		{"thinking budget", "claude-sonnet-4-5", anthropic.Options{ThinkingBudget: 4096}, llm.Request{}, func(t *testing.T, body []byte) {
			if got := string(field(t, body, "thinking")); got != `{"budget_tokens":4096,"type":"enabled"}` {
				t.Errorf("thinking %s", got)
			}
		}},
		{"adaptive thinking", "claude-opus-4-6", anthropic.Options{AdaptiveThinking: true}, llm.Request{}, func(t *testing.T, body []byte) {
			if got := string(field(t, body, "thinking")); got != `{"type":"adaptive"}` {
				t.Errorf("thinking %s", got)
			}
		}},
		{"response schema", "claude-sonnet-4-5", anthropic.Options{}, llm.Request{ResponseSchema: json.RawMessage(schema)}, func(t *testing.T, body []byte) {
			var oc struct {
				Format struct {
					Type   string          `json:"type"`
					Schema json.RawMessage `json:"schema"`
				} `json:"format"`
			}
			decode(t, field(t, body, "output_config"), &oc)
			if oc.Format.Type != "json_schema" || string(oc.Format.Schema) != schema {
				t.Errorf("output_config %s", field(t, body, "output_config"))
			}
		}},
		{"system messages join the system prompt", "claude-sonnet-4-5", anthropic.Options{}, llm.Request{
			System:   "base",
			Messages: []llm.Message{{Role: llm.RoleSystem, Parts: []llm.Part{llm.Text("extra")}}, llm.UserText("hi")},
		}, func(t *testing.T, body []byte) {
			var system []wireBlock
			decode(t, field(t, body, "system"), &system)
			if len(system) != 2 || system[0].Text != "base" || system[1].Text != "extra" {
				t.Errorf("system %+v", system)
			}
			if msgs := messagesOf(t, body); len(msgs) != 1 || msgs[0].Role != "user" {
				t.Errorf("messages %+v", msgs)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := anthropictest.NewServer(anthropictest.Turn{Text: "ok"})
			defer srv.Close()
			tt.opts.APIKey, tt.opts.BaseURL = "k", srv.URL
			m, err := anthropic.New(tt.model, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			req := tt.req
			if len(req.Messages) == 0 {
				req.Messages = []llm.Message{llm.UserText("hi")}
			}
			if _, err := llm.Generate(context.Background(), m, &req); err != nil {
				t.Fatal(err)
			}
			tt.check(t, srv.MessageRequests()[0])
		})
	}
}

func TestRequestErrors(t *testing.T) {
	m := newModel(t, "http://127.0.0.1:1", anthropic.Options{ThinkingBudget: 50_000})
	for name, req := range map[string]*llm.Request{
		"nil":               nil,
		"budget too big":    userReq("hi"),
		"bad tool schema":   {Messages: []llm.Message{llm.UserText("hi")}, Tools: []llm.ToolSpec{{Name: "x", Parameters: json.RawMessage(`{`)}}},
		"unnamed tool":      {Messages: []llm.Message{llm.UserText("hi")}, Tools: []llm.ToolSpec{{Parameters: json.RawMessage(`{}`)}}},
		"bad schema":        {Messages: []llm.Message{llm.UserText("hi")}, ResponseSchema: json.RawMessage(`{`)},
		"unknown role":      {Messages: []llm.Message{{Role: "robot", Parts: []llm.Part{llm.Text("x")}}}},
		"result without id": {Messages: []llm.Message{{Role: llm.RoleTool, Parts: []llm.Part{llm.Text("x")}}}},
		"unknown part":      {Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: "video"}}}}},
	} {
		_, err := llm.Generate(context.Background(), m, req)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "anthropic: ") {
			t.Errorf("%s: error %q lacks the provider prefix", name, err)
		}
		oneLine(t, err)
	}
}

// NoToolCalls keeps the tools and sends tool_choice none; without it no
// tool_choice is sent.
func TestRequestNoToolCalls(t *testing.T) {
	for _, no := range []bool{false, true} {
		body := sent(t, anthropic.Options{}, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}, Tools: testTools, NoToolCalls: no})
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		choice, ok := m["tool_choice"]
		if no && (!ok || string(choice) != `{"type":"none"}`) || !no && ok {
			t.Errorf("NoToolCalls %v: tool_choice %s", no, choice)
		}
		if _, ok := m["tools"]; !ok {
			t.Errorf("NoToolCalls %v: no tools", no)
		}
	}
}
