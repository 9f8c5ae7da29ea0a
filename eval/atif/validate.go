package atif

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is the pinned JSON Schema (draft 2020-12) of ATIF-v1.4 that
// [Validate] checks trajectories against.
//
//go:embed schema.json
var Schema []byte

var resolved = sync.OnceValues(func() (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(Schema, &s); err != nil {
		return nil, fmt.Errorf("atif: the pinned schema: %w", err)
	}
	return s.Resolve(nil)
})

// Validate reports whether data is an ATIF trajectory: valid JSON, valid
// against [Schema], with steps numbered 1, 2, 3... in order and every
// observation result's source_call_id naming a tool call of its own step
// (the checks Harbor's models make that a schema cannot).
func Validate(data []byte) error {
	rs, err := resolved()
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("atif: not JSON: %w", err)
	}
	if err := rs.Validate(v); err != nil {
		return fmt.Errorf("atif: %w", err)
	}
	var t Trajectory
	if err := json.Unmarshal(data, &t); err != nil {
		return fmt.Errorf("atif: %w", err)
	}
	var errs []error
	for i, s := range t.Steps {
		if s.StepID != i+1 {
			errs = append(errs, fmt.Errorf("atif: steps[%d]: step_id is %d, want %d (step_ids count from 1, in order)", i, s.StepID, i+1))
		}
		if s.Observation == nil {
			continue
		}
		calls := map[string]bool{}
		for _, c := range s.ToolCalls {
			calls[c.ToolCallID] = true
		}
		for j, r := range s.Observation.Results {
			if r.SourceCallID != "" && !calls[r.SourceCallID] {
				errs = append(errs, fmt.Errorf("atif: steps[%d].observation.results[%d]: source_call_id %q is no tool_call_id of step %d", i, j, r.SourceCallID, s.StepID))
			}
		}
	}
	return errors.Join(errs...)
}
