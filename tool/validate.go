package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deepagents-go/deepagents/internal/schema"
)

// ArgumentError reports arguments that do not fit a tool's schema.
type ArgumentError struct {
	Tool string
	// Field is the offending argument as a path ("todos[].status"); empty
	// when the problem is the arguments as a whole (not a JSON object).
	Field  string
	Reason string
}

// Error is the text the model sees: the tool, the field and the reason.
func (e *ArgumentError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("Error: invalid arguments for tool %q: %s", e.Tool, e.Reason)
	}
	return fmt.Sprintf("Error: invalid arguments for tool %q: field %q: %s", e.Tool, e.Field, e.Reason)
}

// Validator checks arguments against a tool's JSON Schema and decodes them.
type Validator struct {
	tool     string
	raw      json.RawMessage
	fast     *schema.Node         // nil when the schema needs the general validator
	resolved *jsonschema.Resolved // the general validator
}

// NewValidator prepares s for validating the arguments of the named tool.
func NewValidator(toolName string, s *jsonschema.Schema) (*Validator, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("tool %q: encoding schema: %w", toolName, err)
	}
	v := &Validator{tool: toolName, raw: raw}
	var decoded any
	if err := json.Unmarshal(raw, &decoded); err == nil {
		if n, ok := schema.Compile(decoded); ok {
			// The compiled validator covers the schema: resolving it
			// for the general validator would only cost start-up time.
			v.fast = n
			return v, nil
		}
	}
	if v.resolved, err = s.Resolve(nil); err != nil {
		return nil, fmt.Errorf("tool %q: resolving schema: %w", toolName, err)
	}
	return v, nil
}

// Schema returns the schema as JSON. Callers must not modify it.
func (v *Validator) Schema() json.RawMessage { return v.raw }

// Validate checks args against the schema. Empty args count as {}.
func (v *Validator) Validate(args json.RawMessage) error {
	_, err := v.check(args)
	return err
}

// Decode validates args and decodes them into dst.
func (v *Validator) Decode(args json.RawMessage, dst any) error {
	args, err := v.check(args)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(args, dst); err != nil {
		return v.typeError(err)
	}
	return nil
}

func (v *Validator) check(args json.RawMessage) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if v.fast != nil {
		// One pass over the bytes, building nothing.
		fe, err := v.fast.ValidateRaw(args)
		switch {
		case errors.Is(err, schema.ErrNotObject):
			return nil, &ArgumentError{Tool: v.tool, Reason: "arguments must be a JSON object"}
		case err != nil:
			return nil, &ArgumentError{Tool: v.tool, Reason: "arguments are not valid JSON: " + err.Error()}
		case fe != nil:
			return nil, &ArgumentError{Tool: v.tool, Field: fe.Field(), Reason: fe.Reason}
		}
		return args, nil
	}
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return nil, &ArgumentError{Tool: v.tool, Reason: "arguments are not valid JSON: " + err.Error()}
	}
	if _, ok := inst.(map[string]any); !ok {
		return nil, &ArgumentError{Tool: v.tool, Reason: "arguments must be a JSON object"}
	}
	if err := v.resolved.Validate(inst); err != nil {
		return nil, v.schemaError(err)
	}
	return args, nil
}

// typeError turns a decoding error into an ArgumentError. Validation
// normally catches type mismatches first; this covers schemas that were
// replaced with WithSchema and no longer match the input type.
func (v *Validator) typeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &ArgumentError{Tool: v.tool, Field: te.Field, Reason: fmt.Sprintf("got %s, want %s", te.Value, te.Type)}
	}
	return &ArgumentError{Tool: v.tool, Reason: err.Error()}
}

var (
	// "validating /properties/todos/items/properties/status: "
	validatingRe = regexp.MustCompile(`validating (/[^:]*|root): `)
	// required: missing properties: ["a" "b"]  or  ["a","b"]
	missingRe = regexp.MustCompile(`missing properties: \[(.*)\]`)
	// unexpected additional properties ["x"]
	additionalRe = regexp.MustCompile(`unexpected additional properties \[(.*)\]`)
)

// schemaError turns a jsonschema validation error into an ArgumentError
// that names the field in the model's terms.
func (v *Validator) schemaError(err error) error {
	msg := err.Error()
	var pointer string
	reason := msg
	if locs := validatingRe.FindAllStringSubmatchIndex(msg, -1); len(locs) > 0 {
		last := locs[len(locs)-1]
		pointer = msg[last[2]:last[3]]
		reason = msg[last[1]:]
	}
	field := fieldPath(pointer)
	switch {
	case missingRe.MatchString(reason):
		names := quotedNames(missingRe.FindStringSubmatch(reason)[1])
		return &ArgumentError{Tool: v.tool, Field: joinField(field, names), Reason: "missing required field"}
	case additionalRe.MatchString(reason):
		names := quotedNames(additionalRe.FindStringSubmatch(reason)[1])
		return &ArgumentError{Tool: v.tool, Field: joinField(field, names), Reason: "unknown field"}
	}
	reason = strings.TrimPrefix(reason, "type: ")
	reason = strings.TrimPrefix(reason, "enum: ")
	return &ArgumentError{Tool: v.tool, Field: field, Reason: reason}
}

// fieldPath turns a schema pointer such as
// /properties/todos/items/properties/status into todos[].status.
func fieldPath(pointer string) string {
	if pointer == "" || pointer == "root" {
		return ""
	}
	var b strings.Builder
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties":
			if i+1 < len(parts) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(parts[i+1])
				i++
			}
		case "items":
			b.WriteString("[]")
		case "additionalProperties":
			b.WriteString(".*")
		}
	}
	return b.String()
}

func quotedNames(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }) {
		out = append(out, strings.Trim(f, `"`))
	}
	return out
}

func joinField(parent string, names []string) string {
	for i, n := range names {
		if parent != "" {
			names[i] = parent + "." + n
		}
	}
	return strings.Join(names, ", ")
}
