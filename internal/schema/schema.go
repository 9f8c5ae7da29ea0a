// Package schema compiles the JSON Schemas of tool arguments into a
// validator that checks the argument bytes in one pass, allocating nothing
// when they are valid. Package tool falls back to the general validator of
// github.com/google/jsonschema-go for schemas with keywords it does not
// cover.
package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Node is a compiled JSON Schema for the keywords tool schemas use in
// practice. Validating against it allocates nothing unless validation
// fails, which matters because every tool call of every step is validated.
// Schemas with other keywords fall back to the general validator.
type Node struct {
	types        uint8 // bit set of json types; 0 means any
	props        map[string]*Node
	propNames    []string // sorted, for a deterministic first error
	required     []string
	noAdditional bool
	additional   *Node
	items        *Node
	enum         []any
	minimum      *float64
	maximum      *float64
	exclMinimum  *float64
	exclMaximum  *float64
	minLength    int
	maxLength    int // -1: no limit
	minItems     int
	maxItems     int // -1: no limit
	pattern      *regexp.Regexp
}

const (
	tNull uint8 = 1 << iota
	tBoolean
	tInteger
	tNumber
	tString
	tArray
	tObject
)

var typeBits = map[string]uint8{
	"null": tNull, "boolean": tBoolean, "integer": tInteger, "number": tNumber,
	"string": tString, "array": tArray, "object": tObject,
}

// annotations are keywords that do not constrain values.
var annotations = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true, "$schema": true,
	"$id": true, "$comment": true, "format": true, "readOnly": true, "writeOnly": true,
	"deprecated": true, "propertyOrder": true,
}

// Compile compiles a schema (as decoded JSON). ok is false when the
// schema uses a keyword this validator does not implement.
func Compile(v any) (n *Node, ok bool) {
	switch s := v.(type) {
	case bool:
		if s {
			return &Node{maxLength: -1, maxItems: -1}, true
		}
		return nil, false // "false" schemas are rare enough to leave to the general validator
	case map[string]any:
		n = &Node{maxLength: -1, maxItems: -1}
		for k, val := range s {
			if annotations[k] || strings.HasPrefix(k, "x-") {
				continue
			}
			if !n.set(k, val) {
				return nil, false
			}
		}
		return n, true
	}
	return nil, false
}

func (n *Node) set(k string, v any) bool {
	num := func() (*float64, bool) {
		f, ok := v.(float64)
		return &f, ok
	}
	count := func() (int, bool) {
		f, ok := v.(float64)
		return int(f), ok && f >= 0 && f == math.Trunc(f)
	}
	var ok bool
	switch k {
	case "type":
		switch t := v.(type) {
		case string:
			n.types, ok = typeBits[t]
		case []any:
			ok = true
			for _, e := range t {
				s, _ := e.(string)
				b, known := typeBits[s]
				ok = ok && known
				n.types |= b
			}
		}
	case "properties":
		m, isMap := v.(map[string]any)
		if !isMap {
			return false
		}
		n.props = make(map[string]*Node, len(m))
		for name, sub := range m {
			c, cok := Compile(sub)
			if !cok {
				return false
			}
			n.props[name] = c
			n.propNames = append(n.propNames, name)
		}
		slices.Sort(n.propNames)
		ok = true
	case "required":
		list, isList := v.([]any)
		ok = isList
		for _, e := range list {
			s, isStr := e.(string)
			ok = ok && isStr
			n.required = append(n.required, s)
		}
	case "additionalProperties":
		if b, isBool := v.(bool); isBool {
			n.noAdditional, ok = !b, true
		} else {
			n.additional, ok = Compile(v)
		}
	case "items":
		n.items, ok = Compile(v)
	case "enum":
		n.enum, ok = v.([]any)
		ok = ok && scalarValues(n.enum)
	case "const":
		n.enum, ok = []any{v}, scalarValues([]any{v})
	case "minimum":
		n.minimum, ok = num()
	case "maximum":
		n.maximum, ok = num()
	case "exclusiveMinimum":
		n.exclMinimum, ok = num()
	case "exclusiveMaximum":
		n.exclMaximum, ok = num()
	case "minLength":
		n.minLength, ok = count()
	case "maxLength":
		n.maxLength, ok = count()
	case "minItems":
		n.minItems, ok = count()
	case "maxItems":
		n.maxItems, ok = count()
	case "pattern":
		s, isStr := v.(string)
		if isStr {
			re, err := regexp.Compile(s)
			n.pattern, ok = re, err == nil
		}
	}
	return ok
}

// scalarValues reports whether vals holds only strings, numbers, booleans
// and null: enums of objects or arrays are left to the general validator.
func scalarValues(vals []any) bool {
	for _, v := range vals {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// FieldError is a validation failure at a path inside the arguments.
type FieldError struct {
	path   []string // innermost last once complete
	Reason string
}

func (e *FieldError) at(seg string) *FieldError {
	e.path = append(e.path, seg)
	return e
}

// Field renders the path as the model wrote it: todos[1].status.
func (e *FieldError) Field() string {
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		seg := e.path[i]
		if strings.HasPrefix(seg, "[") {
			b.WriteString(seg)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func jsonType(v any) (uint8, string) {
	switch x := v.(type) {
	case nil:
		return tNull, "null"
	case bool:
		return tBoolean, "boolean"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return tInteger | tNumber, "integer"
		}
		return tNumber, "number"
	case string:
		return tString, "string"
	case []any:
		return tArray, "array"
	case map[string]any:
		return tObject, "object"
	}
	return 0, fmt.Sprintf("%T", v)
}

func (n *Node) Validate(v any) *FieldError {
	bits, name := jsonType(v)
	if n.types != 0 && n.types&bits == 0 {
		return &FieldError{Reason: fmt.Sprintf("got %s, want %s", name, n.typeNames())}
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return reflect.DeepEqual(e, v) }) {
		return &FieldError{Reason: fmt.Sprintf("got %s, want one of %s", short(v), enumList(n.enum))}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range n.required {
			if _, ok := x[r]; !ok {
				return (&FieldError{Reason: "missing required field"}).at(r)
			}
		}
		for _, k := range n.propNames {
			if val, ok := x[k]; ok {
				if err := n.props[k].Validate(val); err != nil {
					return err.at(k)
				}
			}
		}
		if n.noAdditional || n.additional != nil {
			var bad string
			var badErr *FieldError
			for k, val := range x {
				if _, known := n.props[k]; known || (bad != "" && k > bad) {
					continue
				}
				if n.noAdditional {
					bad, badErr = k, &FieldError{Reason: "unknown field"}
				} else if err := n.additional.Validate(val); err != nil {
					bad, badErr = k, err
				}
			}
			if badErr != nil {
				return badErr.at(bad)
			}
		}
	case []any:
		if len(x) < n.minItems {
			return &FieldError{Reason: fmt.Sprintf("has %d items, want at least %d", len(x), n.minItems)}
		}
		if n.maxItems >= 0 && len(x) > n.maxItems {
			return &FieldError{Reason: fmt.Sprintf("has %d items, want at most %d", len(x), n.maxItems)}
		}
		if n.items != nil {
			for i, e := range x {
				if err := n.items.Validate(e); err != nil {
					return err.at("[" + strconv.Itoa(i) + "]")
				}
			}
		}
	case string:
		return n.stringConstraints(x)
	case float64:
		switch {
		case n.minimum != nil && x < *n.minimum:
			return &FieldError{Reason: fmt.Sprintf("got %v, want at least %v", x, *n.minimum)}
		case n.maximum != nil && x > *n.maximum:
			return &FieldError{Reason: fmt.Sprintf("got %v, want at most %v", x, *n.maximum)}
		case n.exclMinimum != nil && x <= *n.exclMinimum:
			return &FieldError{Reason: fmt.Sprintf("got %v, want more than %v", x, *n.exclMinimum)}
		case n.exclMaximum != nil && x >= *n.exclMaximum:
			return &FieldError{Reason: fmt.Sprintf("got %v, want less than %v", x, *n.exclMaximum)}
		}
	}
	return nil
}

// stringConstraints checks a string's length and pattern.
func (n *Node) stringConstraints(x string) *FieldError {
	if n.minLength > 0 || n.maxLength >= 0 {
		l := utf8.RuneCountInString(x)
		if l < n.minLength {
			return &FieldError{Reason: fmt.Sprintf("is %d characters long, want at least %d", l, n.minLength)}
		}
		if n.maxLength >= 0 && l > n.maxLength {
			return &FieldError{Reason: fmt.Sprintf("is %d characters long, want at most %d", l, n.maxLength)}
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(x) {
		return &FieldError{Reason: fmt.Sprintf("does not match pattern %q", n.pattern.String())}
	}
	return nil
}

func (n *Node) typeNames() string {
	var names []string
	for _, t := range []string{"null", "boolean", "integer", "number", "string", "array", "object"} {
		if n.types&typeBits[t] != 0 {
			names = append(names, t)
		}
	}
	if len(names) > 1 && names[0] == "null" {
		names = names[1:] // "or null" is noise for a model
	}
	return strings.Join(names, " or ")
}

func enumList(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = short(v)
	}
	return strings.Join(parts, ", ")
}

// short renders a JSON value for an error message, clipped.
func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}
