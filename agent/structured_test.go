package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm/replay"
)

const weatherSchema = `{"type":"object","properties":{"city":{"type":"string"},"celsius":{"type":"number"}},"required":["city","celsius"],"additionalProperties":false}`

func TestStructuredResponse(t *testing.T) {
	tests := []struct {
		name      string
		turns     []replay.Turn
		want      string
		wantErr   error
		wantSteps int
	}{
		{"valid at once", []replay.Turn{{Content: `{"city":"Oslo","celsius":-3}`}}, `{"city":"Oslo","celsius":-3}`, nil, 1},
		{"in a code fence", []replay.Turn{{Content: "```json\n{\"city\":\"Oslo\",\"celsius\":1.5}\n```"}}, `{"city":"Oslo","celsius":1.5}`, nil, 1},
		{"fixed after feedback", []replay.Turn{
			{Content: `It is cold in Oslo.`},
			{Content: `{"city":"Oslo"}`, Expect: &replay.Expect{LastMessageContains: []string{"must be only a JSON object"}}},
			{Content: `{"city":"Oslo","celsius":-3}`, Expect: &replay.Expect{LastMessageContains: []string{`field "celsius": missing required field`}}},
		}, `{"city":"Oslo","celsius":-3}`, nil, 3},
		{"never valid", []replay.Turn{{Content: "a"}, {Content: "b"}, {Content: "c"}, {Content: "d"}}, "", agent.ErrResponseSchema, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := replay.New(tt.turns...).Record()
			a := newAgent(t, agent.Config{Model: m, ResponseSchema: json.RawMessage(weatherSchema)})
			res, err := a.Invoke(context.Background(), agent.Prompt("weather in Oslo?"))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if string(res.Structured) != tt.want {
				t.Errorf("structured = %s, want %s", res.Structured, tt.want)
			}
			if res.Steps != tt.wantSteps {
				t.Errorf("steps = %d, want %d", res.Steps, tt.wantSteps)
			}
			if got := string(m.Requests()[0].Request.ResponseSchema); got != weatherSchema {
				t.Errorf("request schema = %s", got)
			}
		})
	}
	if _, err := agent.New(agent.Config{Model: replay.New(), ResponseSchema: json.RawMessage(`[1`)}); err == nil {
		t.Error("a malformed schema was accepted")
	}
}
