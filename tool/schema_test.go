package tool

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type parityItem struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

type parityInput struct {
	Path   string            `json:"path"`
	Count  int               `json:"count,omitempty"`
	Ratio  float64           `json:"ratio,omitempty"`
	Flag   bool              `json:"flag,omitempty"`
	Items  []parityItem      `json:"items,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

func parityValidators(t testing.TB) (fast, general *Validator) {
	s, err := jsonschema.For[parityInput](nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Properties["items"].Items.Properties["kind"].Enum = []any{"a", "b"}
	s.Properties["count"].Minimum = jsonschema.Ptr(0.0)
	s.Properties["count"].Maximum = jsonschema.Ptr(10.0)
	s.Properties["path"].MinLength = jsonschema.Ptr(1)
	s.Properties["items"].MaxItems = jsonschema.Ptr(3)
	fast, err = NewValidator("p", s)
	if err != nil {
		t.Fatal(err)
	}
	if fast.fast == nil {
		t.Fatal("schema did not compile to the fast validator")
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	general = &Validator{tool: "p", raw: fast.raw, resolved: resolved}
	return fast, general
}

// FuzzValidatorParity checks that the compiled validator accepts exactly
// what the general JSON Schema validator accepts.
func FuzzValidatorParity(f *testing.F) {
	for _, s := range []string{
		`{"path":"/x"}`, `{}`, `{"path":""}`, `{"path":1}`, `{"path":"/x","count":11}`,
		`{"path":"/x","count":2.5}`, `{"path":"/x","items":[{"name":"n","kind":"c"}]}`,
		`{"path":"/x","items":[{"name":"n","kind":"a"},{"name":"n","kind":"a"},{"name":"n","kind":"a"},{"name":"n","kind":"a"}]}`,
		`{"path":"/x","labels":{"k":"v"}}`, `{"path":"/x","labels":{"k":1}}`, `{"path":"/x","extra":null}`,
		`{"path":"/x","items":null}`, `{"path":"/x","flag":"yes"}`, `{"path":"/x","ratio":-1e300}`,
	} {
		f.Add(s)
	}
	fast, general := parityValidators(f)
	f.Fuzz(func(t *testing.T, args string) {
		errFast := fast.Validate(json.RawMessage(args))
		errGen := general.Validate(json.RawMessage(args))
		if (errFast == nil) != (errGen == nil) {
			t.Fatalf("args %q: fast says %v, general says %v", args, errFast, errGen)
		}
		// The scanner and the validator of decoded values must name the
		// same field for the same reason.
		var inst any
		if json.Unmarshal([]byte(args), &inst) != nil {
			return
		}
		if _, ok := inst.(map[string]any); !ok {
			return
		}
		fromValue := fast.fast.Validate(inst)
		fromBytes, err := fast.fast.ValidateRaw([]byte(args))
		if err != nil {
			t.Fatalf("args %q: the scanner refused what encoding/json accepts: %v", args, err)
		}
		if (fromValue == nil) != (fromBytes == nil) || fromValue != nil && (fromValue.Field() != fromBytes.Field() || fromValue.Reason != fromBytes.Reason) {
			t.Fatalf("args %q: decoded %+v, scanned %+v", args, fromValue, fromBytes)
		}
	})
}

func TestFastValidatorAllocatesNothingOnSuccess(t *testing.T) {
	fast, _ := parityValidators(t)
	args := []byte(`{"path":"/x","flag":true,"items":[{"name":"n","kind":"a"}],"labels":{"k":"v"}}`)
	allocs := testing.AllocsPerRun(100, func() {
		if fe, err := fast.fast.ValidateRaw(args); fe != nil || err != nil {
			t.Fatal(fe, err)
		}
	})
	if allocs != 0 {
		t.Errorf("validateRaw allocated %v times per run", allocs)
	}
}
