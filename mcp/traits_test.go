package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents/tool"
)

// A server's tools carry the traits their annotations hint at: readOnlyHint
// makes a tool read-only (plan mode offers it), openWorldHint (true when
// absent) marks it as reaching other hosts; the resource tools only read.
func TestToolTraitsFromAnnotations(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "hints", Version: "1"}, nil)
	no := false
	for _, c := range []struct {
		name string
		a    *sdk.ToolAnnotations
	}{
		{"plain", nil},
		{"lookup", &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}},
		{"search_web", &sdk.ToolAnnotations{ReadOnlyHint: true}},
		{"deploy", &sdk.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}},
	} {
		srv.AddTool(&sdk.Tool{Name: c.name, Description: c.name, InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: c.a},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
			})
	}
	srv.AddResource(&sdk.Resource{URI: "file:///notes.md", Name: "notes"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "file:///notes.md", Text: "hi"}}}, nil
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	configs, err := Parse([]byte(`{"mcpServers": {"hints": {"url": "`+hs.URL+`"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := connect(t, configs, Options{ConnectTimeout: 5 * time.Second})
	for name, want := range map[string]tool.Traits{
		"mcp__hints__plain":      {Network: true},
		"mcp__hints__lookup":     {ReadOnly: true},
		"mcp__hints__search_web": {ReadOnly: true, Network: true},
		"mcp__hints__deploy":     {},
		ListResourcesTool:        {ReadOnly: true},
		ReadResourceTool:         {ReadOnly: true},
	} {
		if got := tool.TraitsOf(toolNamed(t, s, name)); got != want {
			t.Errorf("%s: traits %+v, want %+v", name, got, want)
		}
	}
}
