package nskey

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func TestRoundTripAndOrder(t *testing.T) {
	cases := [][]string{
		{}, {""}, {"", ""}, {"a"}, {"a", ""}, {"a", "b"}, {"a\x00b"}, {"a\x01"}, {"a\x00"}, {"ab"},
		{"a", "b", "c"}, {"b"}, {"\x01\x01\x00"}, {"日本", "語"}, {"a.b"}, {"a/b"},
	}
	for _, ns := range cases {
		got, err := Decode(Encode(ns))
		if err != nil || !slices.Equal(got, ns) {
			t.Errorf("Decode(Encode(%q)) = %q, %v", ns, got, err)
		}
	}
	for _, a := range cases {
		for _, b := range cases {
			want := slices.Compare(a, b)
			if got := bytes.Compare(Encode(a), Encode(b)); got != want {
				t.Errorf("order of %q vs %q: %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestRange(t *testing.T) {
	all := [][]string{{"a"}, {"a", "b"}, {"a", "b", "c"}, {"ab"}, {"a\x00"}, {"b"}, {}, {"a", ""}}
	for _, prefix := range all {
		lo, hi := Range(prefix)
		for _, ns := range all {
			e := Encode(ns)
			in := bytes.Compare(e, lo) >= 0 && (hi == nil || bytes.Compare(e, hi) < 0)
			want := len(ns) >= len(prefix) && slices.Equal(ns[:len(prefix)], prefix)
			if in != want {
				t.Errorf("prefix %q, ns %q: in range %v, want %v", prefix, ns, in, want)
			}
		}
	}
}

func TestTruncate(t *testing.T) {
	e := Encode([]string{"a", "b\x00", "c"})
	for depth, want := range map[int][]string{0: {"a", "b\x00", "c"}, 1: {"a"}, 2: {"a", "b\x00"}, 3: {"a", "b\x00", "c"}, 9: {"a", "b\x00", "c"}} {
		got, err := Decode(Truncate(e, depth))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Truncate(%d) = %q, %v; want %q", depth, got, err, want)
		}
	}
}

func TestDecodeMalformed(t *testing.T) {
	for _, b := range [][]byte{{'a'}, {1}, {1, 3, 0}, {'a', 0, 'b'}} {
		if _, err := Decode(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("Decode(%q) = %v, want ErrMalformed", b, err)
		}
	}
}

func FuzzNamespace(f *testing.F) {
	f.Add("a", "b", []byte{0})
	f.Add("\x00", "\x01", []byte{1, 2, 0})
	f.Fuzz(func(t *testing.T, x, y string, raw []byte) {
		ns := []string{x, y}
		got, err := Decode(Encode(ns))
		if err != nil || !slices.Equal(got, ns) {
			t.Fatalf("round trip of %q: %q, %v", ns, got, err)
		}
		if c := bytes.Compare(Encode([]string{x}), Encode([]string{y})); c != slices.Compare([]string{x}, []string{y}) {
			t.Fatalf("order of %q and %q", x, y)
		}
		// Arbitrary bytes never panic, and what decodes re-encodes the same.
		if d, err := Decode(raw); err == nil && !bytes.Equal(Encode(d), raw) {
			t.Fatalf("Decode(%q) = %q re-encodes as %q", raw, d, Encode(d))
		}
	})
}
