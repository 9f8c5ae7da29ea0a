package deepagents_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm/replay"
)

func TestSchemaFor(t *testing.T) {
	type answer struct {
		Title string   `json:"title"`
		Tags  []string `json:"tags,omitempty"`
	}
	schema, err := deepagents.SchemaFor[answer]()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil || s.Type != "object" || len(s.Properties) != 2 || strings.Join(s.Required, ",") != "title" {
		t.Fatalf("schema %s (%v)", schema, err)
	}
	// The agent holds the answer to it: one without the required field
	// is sent back, and the run fails after the retries.
	model := replay.New(replay.Turn{Content: `{"tags":["x"]}`}, replay.Turn{Content: `{"title":"ok"}`})
	a, err := deepagents.New(deepagents.Config{Model: model, ResponseSchema: schema})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), deepagents.Prompt("answer"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := deepagents.Structured[answer](res)
	if err != nil || got.Title != "ok" {
		t.Errorf("%+v %v", got, err)
	}
	if _, err := deepagents.Structured[answer](&deepagents.Result{}); err == nil {
		t.Error("a result without a structured answer decoded")
	}
	if _, err := deepagents.SchemaFor[chan int](); err == nil || errors.Unwrap(err) == nil {
		t.Errorf("a channel's schema: %v", err)
	}
}
