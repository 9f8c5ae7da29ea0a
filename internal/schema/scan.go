package schema

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// errSyntax reports arguments that are not valid JSON.
type errSyntax struct {
	off int
	msg string
}

func (e *errSyntax) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

// scanner validates JSON text against a compiled schema in one pass over the
// bytes, without building the value: it allocates nothing for valid
// arguments (but for string values holding escapes that must be compared).
type scanner struct {
	b []byte
	i int
}

// ValidateRaw checks that b is one JSON object matching n.
func (n *Node) ValidateRaw(b []byte) (*FieldError, error) {
	s := scanner{b: b}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		if s.i < len(b) {
			// Any other JSON value: not an object.
			if _, err := s.value(nil); err == nil {
				if s.ws(); s.i == len(b) {
					return nil, ErrNotObject
				}
			}
		}
		return nil, &errSyntax{s.i, "invalid JSON"}
	}
	fe, err := s.value(n)
	if err != nil {
		return nil, err
	}
	if s.ws(); s.i != len(b) {
		return nil, &errSyntax{s.i, "unexpected data after the JSON object"}
	}
	return fe, nil
}

var ErrNotObject = errors.New("arguments must be a JSON object")

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value and checks it against n (nil: any value). Syntax
// errors come back as errors, schema violations as a *fieldError; the
// whole value is scanned either way, so that a syntax error anywhere in the
// arguments is reported as such.
func (s *scanner) value(n *Node) (*FieldError, error) {
	s.ws()
	if s.i >= len(s.b) {
		return nil, &errSyntax{s.i, "unexpected end of JSON"}
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(n)
	case c == '[':
		return s.array(n)
	case c == '"':
		str, err := s.str()
		if err != nil {
			return nil, err
		}
		if n == nil {
			return nil, nil
		}
		return n.checkString(str), nil
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
				s.i += len(lit)
				if n == nil {
					return nil, nil
				}
				switch lit {
				case "null":
					return n.checkScalar(nil), nil
				case "true":
					return n.checkScalar(true), nil
				}
				return n.checkScalar(false), nil
			}
		}
		return nil, &errSyntax{s.i, "invalid literal"}
	case c == '-' || (c >= '0' && c <= '9'):
		f, err := s.number()
		if err != nil {
			return nil, err
		}
		if n == nil {
			return nil, nil
		}
		return n.checkScalar(f), nil
	}
	return nil, &errSyntax{s.i, "invalid character"}
}

func (s *scanner) object(n *Node) (*FieldError, error) {
	s.i++ // {
	if n != nil && n.types != 0 && n.types&tObject == 0 {
		if err := s.skipRest('}'); err != nil {
			return nil, err
		}
		return &FieldError{Reason: "got object, want " + n.typeNames()}, nil
	}
	var seen uint64 // required fields seen, by index, for the first 64
	// The first problem in key order among the known properties, then
	// among the other keys: the order the validator over decoded values
	// reports them in.
	var propErr, extraErr *FieldError
	var propKey, extraKey string
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
	} else {
		for {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return nil, &errSyntax{s.i, "expected a string key"}
			}
			key, err := s.str()
			if err != nil {
				return nil, err
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return nil, &errSyntax{s.i, "expected ':'"}
			}
			s.i++
			var sub *Node
			known := false
			if n != nil {
				if sub, known = n.props[key]; !known {
					sub = n.additional
				}
				if j := slices.Index(n.required, key); j >= 0 && j < 64 {
					seen |= 1 << j
				}
			}
			fe, err := s.value(sub)
			if err != nil {
				return nil, err
			}
			if n != nil {
				switch {
				case known && fe != nil && (propErr == nil || key < propKey):
					propErr, propKey = fe, string([]byte(key))
				case !known && n.noAdditional && (extraErr == nil || key < extraKey):
					extraErr, extraKey = &FieldError{Reason: "unknown field"}, string([]byte(key))
				case !known && fe != nil && (extraErr == nil || key < extraKey):
					extraErr, extraKey = fe, string([]byte(key))
				}
			}
			s.ws()
			if s.i >= len(s.b) {
				return nil, &errSyntax{s.i, "unexpected end of JSON"}
			}
			if s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.b[s.i] == '}' {
				s.i++
				break
			}
			return nil, &errSyntax{s.i, "expected ',' or '}'"}
		}
	}
	if n == nil {
		return nil, nil
	}
	for j, r := range n.required {
		if j >= 64 || seen&(1<<j) == 0 {
			if j >= 64 { // more than 64 required fields: not tracked
				continue
			}
			return (&FieldError{Reason: "missing required field"}).at(r), nil
		}
	}
	if propErr != nil {
		return propErr.at(propKey), nil
	}
	if extraErr != nil {
		return extraErr.at(extraKey), nil
	}
	if n.enum != nil {
		return &FieldError{Reason: "got object, want one of " + enumList(n.enum)}, nil
	}
	return nil, nil
}

func (s *scanner) array(n *Node) (*FieldError, error) {
	s.i++ // [
	if n != nil && n.types != 0 && n.types&tArray == 0 {
		if err := s.skipRest(']'); err != nil {
			return nil, err
		}
		return &FieldError{Reason: "got array, want " + n.typeNames()}, nil
	}
	var items *Node
	if n != nil {
		items = n.items
	}
	count := 0
	var firstErr *FieldError
	firstAt := 0
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
	} else {
		for {
			fe, err := s.value(items)
			if err != nil {
				return nil, err
			}
			if fe != nil && firstErr == nil {
				firstErr, firstAt = fe, count
			}
			count++
			s.ws()
			if s.i >= len(s.b) {
				return nil, &errSyntax{s.i, "unexpected end of JSON"}
			}
			if s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.b[s.i] == ']' {
				s.i++
				break
			}
			return nil, &errSyntax{s.i, "expected ',' or ']'"}
		}
	}
	if n == nil {
		return nil, nil
	}
	if count < n.minItems {
		return &FieldError{Reason: fmt.Sprintf("has %d items, want at least %d", count, n.minItems)}, nil
	}
	if n.maxItems >= 0 && count > n.maxItems {
		return &FieldError{Reason: fmt.Sprintf("has %d items, want at most %d", count, n.maxItems)}, nil
	}
	if n.enum != nil {
		return &FieldError{Reason: "got array, want one of " + enumList(n.enum)}, nil
	}
	if firstErr != nil {
		return firstErr.at("[" + strconv.Itoa(firstAt) + "]"), nil
	}
	return nil, nil
}

// skipRest scans the rest of a container opened just before s.i.
func (s *scanner) skipRest(closer byte) error {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == closer {
		s.i++
		return nil
	}
	for {
		if closer == '}' {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return &errSyntax{s.i, "expected a string key"}
			}
			if _, err := s.str(); err != nil {
				return err
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return &errSyntax{s.i, "expected ':'"}
			}
			s.i++
		}
		if _, err := s.value(nil); err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) {
			return &errSyntax{s.i, "unexpected end of JSON"}
		}
		if s.b[s.i] == ',' {
			s.i++
			continue
		}
		if s.b[s.i] == closer {
			s.i++
			return nil
		}
		return &errSyntax{s.i, "expected ',' or a closing bracket"}
	}
}

// str scans a string and returns its value. Without escapes the value
// shares the input's memory (valid while the input is).
func (s *scanner) str() (string, error) {
	start := s.i + 1
	i := start
	escaped := false
	for i < len(s.b) {
		c := s.b[i]
		switch {
		case c == '"':
			raw := s.b[start:i]
			s.i = i + 1
			if !utf8.Valid(raw) {
				// encoding/json replaces invalid bytes; so does
				// the general path. Mirror it.
				return string([]rune(string(raw))), nil
			}
			if !escaped {
				return unsafe.String(unsafe.SliceData(raw), len(raw)), nil
			}
			return unescape(raw)
		case c == '\\':
			escaped = true
			i += 2
			continue
		case c < 0x20:
			return "", &errSyntax{i, "control character in string"}
		}
		i++
	}
	return "", &errSyntax{len(s.b), "unterminated string"}
}

// unescape decodes a string's escapes.
func unescape(raw []byte) (string, error) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(raw) {
			return "", &errSyntax{i, "invalid escape"}
		}
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw[i+1:])
			if !ok {
				return "", &errSyntax{i, "invalid \\u escape"}
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(raw[min(i+3, len(raw)):]); ok && i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						i += 6
						out = utf8.AppendRune(out, d)
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", &errSyntax{i, "invalid escape"}
		}
	}
	return string(out), nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number scans a JSON number.
func (s *scanner) number() (float64, error) {
	start := s.i
	i := s.i
	if s.b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s.b) && s.b[i] >= '0' && s.b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s.b) && s.b[i] == '0' {
		i++
	} else if digits() == 0 {
		return 0, &errSyntax{i, "invalid number"}
	}
	if i < len(s.b) && s.b[i] == '.' {
		i++
		if digits() == 0 {
			return 0, &errSyntax{i, "invalid number"}
		}
	}
	if i < len(s.b) && (s.b[i] == 'e' || s.b[i] == 'E') {
		i++
		if i < len(s.b) && (s.b[i] == '+' || s.b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, &errSyntax{i, "invalid number"}
		}
	}
	s.i = i
	txt := s.b[start:i]
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(txt), len(txt)), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, &errSyntax{start, "number out of range"}
	}
	return f, nil
}

// checkString checks a string value against n.
func (n *Node) checkString(v string) *FieldError {
	if n.types != 0 && n.types&tString == 0 {
		return &FieldError{Reason: "got string, want " + n.typeNames()}
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { s, ok := e.(string); return ok && s == v }) {
		return &FieldError{Reason: fmt.Sprintf("got %s, want one of %s", short(string([]byte(v))), enumList(n.enum))}
	}
	return n.stringConstraints(v)
}

// checkScalar checks a number, boolean or null against n.
func (n *Node) checkScalar(v any) *FieldError {
	return n.Validate(v)
}
