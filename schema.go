package deepagents

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaFor returns the JSON Schema of T, for Config.ResponseSchema: a
// struct's fields are its properties (json tags name them; fields without
// omitempty are required; a `jsonschema:"..."` tag describes one).
func SchemaFor[T any]() (json.RawMessage, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{})
	if err != nil {
		return nil, fmt.Errorf("deepagents: schema of %T: %w", *new(T), err)
	}
	return json.Marshal(s)
}

// Structured decodes a result's structured answer (Result.Structured, set
// when the agent has a ResponseSchema) into a T.
func Structured[T any](res *Result) (T, error) {
	var out T
	if res == nil || len(res.Structured) == 0 {
		return out, fmt.Errorf("deepagents: the result has no structured answer (is Config.ResponseSchema set?)")
	}
	if err := json.Unmarshal(res.Structured, &out); err != nil {
		return out, fmt.Errorf("deepagents: decoding the structured answer: %w", err)
	}
	return out, nil
}
