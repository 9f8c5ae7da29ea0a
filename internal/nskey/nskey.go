// Package nskey encodes store namespaces (lists of strings) as byte strings
// whose bytewise order is the namespaces' element-wise order, so that a
// database can sort them and find them by prefix with a range scan.
//
// Each element is written with 0x00 escaped as 0x01 0x01 and 0x01 escaped as
// 0x01 0x02, then terminated by 0x00. The terminator sorts below every
// escaped byte, so a namespace sorts before the namespaces it is a prefix
// of, and ["a", "b"] can never collide with ["a\x00b"].
package nskey

import (
	"errors"
	"fmt"
	"strings"
)

// ErrMalformed is returned by Decode for bytes Encode cannot produce.
var ErrMalformed = errors.New("nskey: malformed namespace encoding")

// Encode returns the encoding of ns. It never returns nil.
func Encode(ns []string) []byte {
	n := 0
	for _, e := range ns {
		n += len(e) + 1
	}
	b := make([]byte, 0, n)
	for _, e := range ns {
		for i := 0; i < len(e); i++ {
			switch c := e[i]; c {
			case 0:
				b = append(b, 1, 1)
			case 1:
				b = append(b, 1, 2)
			default:
				b = append(b, c)
			}
		}
		b = append(b, 0)
	}
	return b
}

// Decode reverses Encode.
func Decode(b []byte) ([]string, error) {
	ns := []string{}
	var cur strings.Builder
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case 0:
			ns = append(ns, cur.String())
			cur.Reset()
		case 1:
			if i+1 >= len(b) || (b[i+1] != 1 && b[i+1] != 2) {
				return nil, ErrMalformed
			}
			cur.WriteByte(b[i+1] - 1)
			i++
		default:
			cur.WriteByte(c)
		}
	}
	if cur.Len() > 0 {
		return nil, ErrMalformed
	}
	return ns, nil
}

// Range returns the half-open range [lo, hi) of encodings of the namespaces
// that start with prefix. For the empty prefix hi is nil: no upper bound.
func Range(prefix []string) (lo, hi []byte) {
	lo = Encode(prefix)
	if len(lo) == 0 {
		return lo, nil
	}
	// Every encoding with prefix lo is ≥ lo and < lo with its final 0x00
	// terminator raised to 0x01; no other encoding lies in between.
	hi = append([]byte(nil), lo...)
	hi[len(hi)-1] = 1
	return lo, hi
}

// Truncate returns the encoding of the first depth elements of the namespace
// encoded in b (all of it when depth ≤ 0 or the namespace is shorter).
func Truncate(b []byte, depth int) []byte {
	if depth <= 0 {
		return b
	}
	for i, c := range b {
		if c == 0 {
			depth--
			if depth == 0 {
				return b[:i+1]
			}
		}
	}
	return b
}

// Rows is what both database drivers' result sets offer.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Page reads encoded namespaces in sorted order from rows and returns the
// distinct ones after truncating to maxDepth (when positive), skipping
// offset and stopping at limit. Truncating sorted encodings keeps them
// sorted, so duplicates are neighbours.
func Page(rows Rows, maxDepth, offset, limit int) ([][]string, error) {
	var out [][]string
	var last []byte
	for rows.Next() && len(out) < limit {
		var ns []byte
		if err := rows.Scan(&ns); err != nil {
			return nil, err
		}
		ns = Truncate(ns, maxDepth)
		if last != nil && string(ns) == string(last) {
			continue
		}
		last = ns
		if offset > 0 {
			offset--
			continue
		}
		d, err := Decode(ns)
		if err != nil {
			return nil, fmt.Errorf("corrupt namespace: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
