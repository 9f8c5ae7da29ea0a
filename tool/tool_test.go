package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deepagents-go/deepagents/tool"
)

type item struct {
	Name  string  `json:"name"`
	Kind  string  `json:"kind"`
	Score float64 `json:"score,omitempty"`
}

type input struct {
	Path    string         `json:"path" jsonschema:"where"`
	Count   int            `json:"count,omitempty"`
	Exact   bool           `json:"exact,omitempty"`
	Items   []item         `json:"items,omitempty"`
	Labels  map[string]int `json:"labels,omitempty"`
	Comment *string        `json:"comment,omitempty"`
}

func newTool(t *testing.T, opts ...tool.Option) tool.Tool {
	t.Helper()
	tl, err := tool.New("probe", "Probe the validator.", func(_ context.Context, in input) (input, error) {
		return in, nil
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func enumKind(s *jsonschema.Schema) {
	s.Properties["items"].Items.Properties["kind"].Enum = []any{"a", "b"}
	s.Properties["count"].Minimum = jsonschema.Ptr(0.0)
}

func TestArgumentValidation(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		wantField string // "" with wantOK false: whole-argument error
		wantIn    string // substring of the reason
		wantOK    bool
	}{
		{name: "minimal", args: `{"path":"/x"}`, wantOK: true},
		{name: "everything", args: `{"path":"/x","count":2,"exact":true,"items":[{"name":"n","kind":"a","score":1.5}],"labels":{"a":1},"comment":null}`, wantOK: true},
		{name: "empty args mean {}", args: ``, wantField: "path", wantIn: "missing required field"},
		{name: "null args mean {}", args: `null`, wantField: "path", wantIn: "missing required field"},
		{name: "missing required", args: `{"count":1}`, wantField: "path", wantIn: "missing required field"},
		{name: "wrong type", args: `{"path":7}`, wantField: "path", wantIn: "got integer, want string"},
		{name: "fraction for integer", args: `{"path":"/x","count":1.5}`, wantField: "count", wantIn: "got number, want integer"},
		{name: "below minimum", args: `{"path":"/x","count":-1}`, wantField: "count", wantIn: "want at least 0"},
		{name: "nested missing", args: `{"path":"/x","items":[{"name":"n","kind":"a"},{"kind":"b"}]}`, wantField: "items[1].name", wantIn: "missing required field"},
		{name: "nested enum", args: `{"path":"/x","items":[{"name":"n","kind":"c"}]}`, wantField: "items[0].kind", wantIn: `got "c", want one of "a", "b"`},
		{name: "map value type", args: `{"path":"/x","labels":{"a":"one"}}`, wantField: "labels.a", wantIn: "got string, want integer"},
		{name: "unknown field", args: `{"path":"/x","colour":1}`, wantField: "colour", wantIn: "unknown field"},
		{name: "not an object", args: `[1,2]`, wantIn: "must be a JSON object"},
		{name: "malformed", args: `{"path":`, wantIn: "not valid JSON"},
		{name: "string instead of list", args: `{"path":"/x","items":"many"}`, wantField: "items", wantIn: "got string, want array"},
	}
	for _, fast := range []bool{true, false} {
		opts := []tool.Option{tool.WithSchemaFunc(enumKind)}
		if !fast {
			// An anyOf forces the general validator; it admits anything.
			opts = append(opts, tool.WithSchemaFunc(func(s *jsonschema.Schema) {
				s.AnyOf = []*jsonschema.Schema{{}}
			}))
		}
		tl := newTool(t, opts...)
		for _, tt := range tests {
			name := tt.name + map[bool]string{true: "/fast", false: "/general"}[fast]
			t.Run(name, func(t *testing.T) {
				out, err := tl.Call(context.Background(), json.RawMessage(tt.args))
				if tt.wantOK {
					if err != nil {
						t.Fatalf("unexpected error: %v", err)
					}
					var echoed input
					if err := json.Unmarshal([]byte(out), &echoed); err != nil || echoed.Path != "/x" {
						t.Fatalf("result %q did not decode the arguments", out)
					}
					return
				}
				var ae *tool.ArgumentError
				if !errors.As(err, &ae) {
					t.Fatalf("err = %v, want an *ArgumentError", err)
				}
				if ae.Tool != "probe" {
					t.Errorf("tool = %q", ae.Tool)
				}
				if fast && ae.Field != tt.wantField {
					t.Errorf("field = %q, want %q", ae.Field, tt.wantField)
				}
				if !fast && tt.wantField != "" && !strings.Contains(ae.Field, strings.Split(strings.Split(tt.wantField, "[")[0], ".")[0]) {
					t.Errorf("field = %q, want it to name %q", ae.Field, tt.wantField)
				}
				if fast && !strings.Contains(ae.Reason, tt.wantIn) {
					t.Errorf("reason = %q, want it to contain %q", ae.Reason, tt.wantIn)
				}
				if !strings.HasPrefix(err.Error(), `Error: invalid arguments for tool "probe"`) {
					t.Errorf("message = %q", err)
				}
			})
		}
	}
}

func TestResultEncoding(t *testing.T) {
	str := tool.Must(tool.New("s", "d", func(context.Context, struct{}) (string, error) { return "plain", nil }))
	obj := tool.Must(tool.New("o", "d", func(context.Context, struct{}) (map[string]int, error) { return map[string]int{"n": 1}, nil }))
	fail := tool.Must(tool.New("f", "d", func(context.Context, struct{}) (string, error) { return "", errors.New("it broke") }))
	ctx := context.Background()
	if out, err := str.Call(ctx, nil); out != "plain" || err != nil {
		t.Errorf("string result = %q, %v", out, err)
	}
	if out, err := obj.Call(ctx, json.RawMessage(`{}`)); out != `{"n":1}` || err != nil {
		t.Errorf("object result = %q, %v", out, err)
	}
	if _, err := fail.Call(ctx, nil); err == nil || err.Error() != "it broke" {
		t.Errorf("error result = %v", err)
	}
}

func TestSpec(t *testing.T) {
	tl := newTool(t)
	spec := tl.Spec()
	if spec.Name != "probe" || spec.Description != "Probe the validator." {
		t.Errorf("spec = %+v", spec)
	}
	var s map[string]any
	if err := json.Unmarshal(spec.Parameters, &s); err != nil {
		t.Fatal(err)
	}
	if s["type"] != "object" || s["properties"].(map[string]any)["path"].(map[string]any)["description"] != "where" {
		t.Errorf("schema = %s", spec.Parameters)
	}
	if string(tl.Spec().Parameters) != string(spec.Parameters) {
		t.Error("schema bytes differ between calls")
	}
	if _, err := tool.New("bad", "d", func(context.Context, chan int) (string, error) { return "", nil }); err == nil {
		t.Error("a channel input type should not infer a schema")
	}
}
