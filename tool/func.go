package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deepagents-go/deepagents/llm"
)

// Option configures a tool built by [New].
type Option func(*config)

type config struct {
	schema *jsonschema.Schema
	modify []func(*jsonschema.Schema)
	traits Traits
}

// WithSchema makes the tool use s instead of the schema inferred from its
// input type. Arguments are still decoded into the input type.
func WithSchema(s *jsonschema.Schema) Option {
	return func(c *config) { c.schema = s }
}

// WithSchemaFunc lets fn adjust the inferred schema, for example to add an
// enum or a default that struct tags cannot express.
func WithSchemaFunc(fn func(s *jsonschema.Schema)) Option {
	return func(c *config) { c.modify = append(c.modify, fn) }
}

// funcTool is a Tool backed by a typed Go function.
type funcTool[In, Out any] struct {
	spec      llm.ToolSpec
	validator *Validator
	fn        func(context.Context, In) (Out, error)
	traits    Traits
}

// New returns a tool that decodes its arguments into In and calls fn.
//
// The JSON Schema shown to the model is inferred from In (a struct: fields
// without omitempty are required; a `jsonschema:"..."` tag is the field's
// description) unless an option replaces or adjusts it. Arguments are
// validated against the schema before fn runs; invalid ones produce an
// [*ArgumentError] naming the tool and the field, and fn is not called.
//
// fn's result is shown to the model as is when Out is a string, and as JSON
// otherwise.
func New[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...Option) (Tool, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	s := c.schema
	if s == nil {
		var err error
		s, err = jsonschema.For[In](&jsonschema.ForOptions{})
		if err != nil {
			return nil, fmt.Errorf("tool %q: inferring schema: %w", name, err)
		}
	}
	for _, m := range c.modify {
		m(s)
	}
	v, err := NewValidator(name, s)
	if err != nil {
		return nil, err
	}
	return &funcTool[In, Out]{
		spec:      llm.ToolSpec{Name: name, Description: description, Parameters: v.Schema()},
		validator: v,
		fn:        fn,
		traits:    c.traits,
	}, nil
}

// Must is like the result of [New] but panics on error. Use it for tools
// declared at package level, where an error is a programming mistake.
func Must(t Tool, err error) Tool {
	if err != nil {
		panic(err)
	}
	return t
}

func (t *funcTool[In, Out]) Spec() llm.ToolSpec { return t.spec }

// Traits implements Traited.
func (t *funcTool[In, Out]) Traits() Traits { return t.traits }

func (t *funcTool[In, Out]) Call(ctx context.Context, args json.RawMessage) (string, error) {
	var in In
	if err := t.validator.Decode(args, &in); err != nil {
		return "", err
	}
	out, err := t.fn(ctx, in)
	if err != nil {
		return "", err
	}
	switch v := any(out).(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("tool %q: encoding result: %w", t.spec.Name, err)
	}
	return string(b), nil
}
