package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/openai"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
)

const lsSchema = `{"type": "object", "properties": {"path": {"type": "string", "description": "Directory"}}, "required": ["path"]}`

var testTools = []llm.ToolSpec{
	{Name: "ls", Description: "List a directory.", Parameters: json.RawMessage(lsSchema)},
	{Name: "noargs", Description: "Takes nothing."},
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

func messagesOf(t *testing.T, body []byte) []wireMessage {
	t.Helper()
	var msgs []wireMessage
	decode(t, field(t, body, "messages"), &msgs)
	return msgs
}

func str(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	decode(t, raw, &s)
	return s
}

// sent runs one request against a fake server at baseURL+path and returns
// the body it received.
func sent(t *testing.T, model string, opts openai.Options, req *llm.Request) []byte {
	t.Helper()
	srv := openaitest.NewServer(openaitest.Turn{Text: "ok"})
	defer srv.Close()
	opts.BaseURL = srv.URL
	if opts.APIKey == "" {
		opts.APIKey = "k"
	}
	m, err := openai.New(model, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Generate(context.Background(), m, req); err != nil {
		t.Fatal(err)
	}
	return srv.Bodies()[0]
}

func conversation() []llm.Message {
	return []llm.Message{
		llm.UserText("What is in /src?"),
		{Role: llm.RoleAssistant,
			Parts: []llm.Part{
				{Type: llm.PartReasoning, Text: "private reasoning"},
				llm.Text("Listing."),
			},
			ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "ls", Args: json.RawMessage(`{"path": "/src"}`)},
				{ID: "call_2", Name: "noargs"},
				{ID: "call_3", Name: "ls", Args: json.RawMessage(`"{\"path\": "`)}, // kept from a broken stream
			},
		},
		llm.ToolResult("call_1", "ls", "main.go\nutil.go", false),
		llm.ToolResult("call_2", "noargs", "Error: boom", true),
		{Role: llm.RoleTool, ToolCallID: "call_3", Name: "ls", Parts: []llm.Part{
			llm.Text("see image"), {Type: llm.PartImage, MIMEType: "image/png", Data: []byte("png")},
		}},
		llm.UserText("Thanks."),
	}
}

func TestRequestMessages(t *testing.T) {
	body := sent(t, "gpt-4.1", openai.Options{}, &llm.Request{System: "You are helpful.", Messages: conversation(), Tools: testTools})
	msgs := messagesOf(t, body)
	roles := make([]string, len(msgs))
	for i, m := range msgs {
		roles[i] = m.Role
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,tool,tool,user,user" {
		t.Fatalf("roles %s\n%s", got, body)
	}
	if str(t, msgs[0].Content) != "You are helpful." || str(t, msgs[1].Content) != "What is in /src?" {
		t.Errorf("system/user %s %s", msgs[0].Content, msgs[1].Content)
	}
	a := msgs[2]
	if str(t, a.Content) != "Listing." || len(a.ToolCalls) != 3 {
		t.Fatalf("assistant %+v", a)
	}
	if c := a.ToolCalls[0]; c.ID != "call_1" || c.Type != "function" || c.Function.Name != "ls" || c.Function.Arguments != `{"path": "/src"}` {
		t.Errorf("tool call 0 %+v", c)
	}
	if c := a.ToolCalls[1]; c.Function.Arguments != "{}" {
		t.Errorf("empty arguments %q", c.Function.Arguments)
	}
	if c := a.ToolCalls[2]; c.Function.Arguments != `{"path": ` {
		t.Errorf("broken arguments not restored: %q", c.Function.Arguments)
	}
	if strings.Contains(string(body), "private reasoning") {
		t.Error("reasoning was sent back")
	}
	if msgs[3].ToolCallID != "call_1" || str(t, msgs[3].Content) != "main.go\nutil.go" {
		t.Errorf("tool message %+v", msgs[3])
	}
	if msgs[4].ToolCallID != "call_2" || str(t, msgs[4].Content) != "Error: boom" {
		t.Errorf("error tool message %+v", msgs[4])
	}
	// The image of a tool result follows the run of tool messages.
	var parts []wirePart
	decode(t, msgs[6].Content, &parts)
	if len(parts) != 2 || parts[1].Type != "image_url" || parts[1].ImageURL.URL != "data:image/png;base64,cG5n" {
		t.Errorf("tool image message %s", msgs[6].Content)
	}
	if str(t, msgs[7].Content) != "Thanks." {
		t.Errorf("last user message %s", msgs[7].Content)
	}
}

func TestRequestTools(t *testing.T) {
	body := sent(t, "gpt-4.1", openai.Options{}, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}, Tools: testTools})
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	decode(t, field(t, body, "tools"), &tools)
	if len(tools) != 2 || tools[0].Type != "function" || tools[0].Function.Name != "ls" || tools[0].Function.Description != "List a directory." {
		t.Fatalf("tools %s", field(t, body, "tools"))
	}
	if got := string(tools[0].Function.Parameters); got != compact(t, lsSchema) {
		t.Errorf("schema changed: %s", got)
	}
	if got := string(tools[1].Function.Parameters); got != `{"type":"object","properties":{}}` {
		t.Errorf("empty schema %s", got)
	}
	var so struct {
		IncludeUsage bool `json:"include_usage"`
	}
	decode(t, field(t, body, "stream_options"), &so)
	if !so.IncludeUsage || string(field(t, body, "stream")) != "true" {
		t.Errorf("stream options %s", body)
	}
}

func TestPrefixByteIdentical(t *testing.T) {
	srv := openaitest.NewServer(
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{{Name: "ls", Arguments: `{"path":"/"}`}, {Name: "ls", Arguments: `{"path":"/tmp"}`}},
			Usage: openaitest.Usage{PromptTokens: 1200, CompletionTokens: 30}},
		openaitest.Turn{Text: "Done.", Usage: openaitest.Usage{PromptTokens: 1300, CachedTokens: 1152, CompletionTokens: 3}},
	)
	defer srv.Close()
	m := newModel(t, srv.URL, openai.Options{})
	req := &llm.Request{
		System:   strings.Repeat("You are a careful agent. ", 20),
		Messages: []llm.Message{llm.UserText("list")},
		Tools:    testTools,
	}
	var usages []llm.Usage
	for range 2 {
		res, err := llm.Generate(context.Background(), m, req)
		if err != nil {
			t.Fatal(err)
		}
		usages = append(usages, res.Usage)
		req.Messages = append(req.Messages, res.Message)
		for _, c := range res.Message.ToolCalls {
			req.Messages = append(req.Messages, llm.ToolResult(c.ID, c.Name, "x", false))
		}
	}
	bodies := srv.Bodies()
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	if a, b := field(t, bodies[0], "tools"), field(t, bodies[1], "tools"); !bytes.Equal(a, b) {
		t.Errorf("tools differ:\n%s\n%s", a, b)
	}
	// The whole first conversation is a byte-identical prefix of the
	// second: OpenAI's automatic prompt caching matches on that.
	m0, m1 := field(t, bodies[0], "messages"), field(t, bodies[1], "messages")
	if !bytes.HasPrefix(m1, m0[:len(m0)-1]) {
		t.Errorf("messages are not a prefix:\n%s\n%s", m0, m1)
	}
	if usages[1] != (llm.Usage{InputTokens: 1300, OutputTokens: 3, CacheReadTokens: 1152}) {
		t.Errorf("usage %+v", usages[1])
	}
}

func TestRequestOptions(t *testing.T) {
	temp := 0.5
	schema := `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`
	// The fake server is on loopback, not api.openai.com: max_tokens is
	// sent (what compatible servers read) rather than max_completion_tokens.
	body := sent(t, "o4-mini", openai.Options{MaxTokens: 500, ReasoningEffort: "low"}, &llm.Request{
		Messages: []llm.Message{llm.UserText("hi")}, Temperature: &temp, ResponseSchema: json.RawMessage(schema),
	})
	if string(field(t, body, "max_tokens")) != "500" || len(field(t, body, "max_completion_tokens")) != 0 {
		t.Errorf("max tokens: %s", body)
	}
	if string(field(t, body, "temperature")) != "0.5" || str(t, field(t, body, "reasoning_effort")) != "low" {
		t.Errorf("temperature/effort: %s", body)
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	decode(t, field(t, body, "response_format"), &rf)
	if rf.Type != "json_schema" || rf.JSONSchema.Name != "response" || string(rf.JSONSchema.Schema) != schema {
		t.Errorf("response_format %s", field(t, body, "response_format"))
	}

	body = sent(t, "gpt-4.1", openai.Options{}, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}, MaxTokens: 42})
	if string(field(t, body, "max_tokens")) != "42" {
		t.Errorf("request max tokens: %s", body)
	}
	body = sent(t, "gpt-4.1", openai.Options{}, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	if len(field(t, body, "max_tokens")) != 0 || len(field(t, body, "temperature")) != 0 {
		t.Errorf("unset options were sent: %s", body)
	}
}

func TestRequestUserImages(t *testing.T) {
	body := sent(t, "gpt-4o", openai.Options{}, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
		llm.Text("What is this?"),
		{Type: llm.PartImage, MIMEType: "image/jpeg", Data: []byte("jpg")},
		{Type: llm.PartImage, URL: "https://example.com/cat.png"},
	}}}})
	var parts []wirePart
	decode(t, messagesOf(t, body)[0].Content, &parts)
	if len(parts) != 3 || parts[0].Text != "What is this?" || parts[1].ImageURL.URL != "data:image/jpeg;base64,anBn" ||
		parts[2].ImageURL.URL != "https://example.com/cat.png" {
		t.Errorf("parts %+v", parts)
	}
}

func TestRequestErrors(t *testing.T) {
	m := newModel(t, "http://127.0.0.1:1/v1", openai.Options{})
	for name, req := range map[string]*llm.Request{
		"nil":               nil,
		"bad tool schema":   {Messages: []llm.Message{llm.UserText("hi")}, Tools: []llm.ToolSpec{{Name: "x", Parameters: json.RawMessage(`{`)}}},
		"unnamed tool":      {Messages: []llm.Message{llm.UserText("hi")}, Tools: []llm.ToolSpec{{}}},
		"bad schema":        {Messages: []llm.Message{llm.UserText("hi")}, ResponseSchema: json.RawMessage(`[`)},
		"unknown role":      {Messages: []llm.Message{{Role: "robot"}}},
		"result without id": {Messages: []llm.Message{{Role: llm.RoleTool}}},
		"image without mime": {Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			{Type: llm.PartImage, Data: []byte("x")}}}}},
	} {
		_, err := llm.Generate(context.Background(), m, req)
		if err == nil || !strings.HasPrefix(err.Error(), "openai: ") {
			t.Errorf("%s: error %v", name, err)
			continue
		}
		oneLine(t, err)
	}
}

// TestPromptCacheFields: a cache key is sent as prompt_cache_key and a TTL
// of 24h as prompt_cache_retention; breakpoints, which OpenAI has no field
// for, and the other TTLs send nothing.
func TestPromptCacheFields(t *testing.T) {
	tests := []struct {
		hints          llm.CacheHints
		key, retention string // raw JSON, "" for absent
	}{
		{hints: llm.CacheHints{}},
		{hints: llm.CacheHints{Prefix: true, Tail: true, TTL: "1h"}},
		{hints: llm.CacheHints{Key: "deepagents-abc"}, key: `"deepagents-abc"`},
		{hints: llm.CacheHints{Key: "k", TTL: "24h"}, key: `"k"`, retention: `"24h"`},
	}
	for _, tt := range tests {
		body := sent(t, "gpt-4.1", openai.Options{}, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}, Cache: tt.hints})
		if got := string(field(t, body, "prompt_cache_key")); got != tt.key {
			t.Errorf("%+v: prompt_cache_key %s, want %s", tt.hints, got, tt.key)
		}
		if got := string(field(t, body, "prompt_cache_retention")); got != tt.retention {
			t.Errorf("%+v: prompt_cache_retention %s, want %s", tt.hints, got, tt.retention)
		}
		// A compatible server serving another model gets neither.
		body = sent(t, "qwen3", openai.Options{Compatible: true}, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}, Cache: tt.hints})
		if k, r := field(t, body, "prompt_cache_key"), field(t, body, "prompt_cache_retention"); k != nil || r != nil {
			t.Errorf("%+v: a compatible server got prompt_cache_key %s, prompt_cache_retention %s", tt.hints, k, r)
		}
	}
}

// NoToolCalls keeps the tools and sends tool_choice "none"; without it no
// tool_choice is sent.
func TestRequestNoToolCalls(t *testing.T) {
	for _, no := range []bool{false, true} {
		body := sent(t, "gpt-4.1", openai.Options{}, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}, Tools: testTools, NoToolCalls: no})
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		choice, ok := m["tool_choice"]
		if no && (!ok || string(choice) != `"none"`) || !no && ok {
			t.Errorf("NoToolCalls %v: tool_choice %s", no, choice)
		}
		if _, ok := m["tools"]; !ok {
			t.Errorf("NoToolCalls %v: no tools", no)
		}
	}
}
