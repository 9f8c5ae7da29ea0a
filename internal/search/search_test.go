package search

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"testing"
)

// naiveGrep is the reference: split into lines, match each.
func naiveGrep(pattern string, buf []byte) ([]string, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	var out []string
	lines := bytes.Split(buf, []byte{'\n'})
	if len(buf) > 0 && buf[len(buf)-1] == '\n' {
		lines = lines[:len(lines)-1]
	}
	if len(buf) == 0 {
		lines = nil
	}
	for i, l := range lines {
		l = bytes.TrimSuffix(l, []byte{'\r'})
		if re.Match(l) {
			out = append(out, fmt.Sprintf("%d:%s", i+1, l))
		}
	}
	return out, nil
}

func scanAll(t testing.TB, pattern string, buf []byte) []string {
	m, err := Compile(pattern)
	if err != nil {
		t.Fatalf("Compile(%q): %v", pattern, err)
	}
	var out []string
	m.scan(buf, func(line int, text []byte) bool {
		out = append(out, fmt.Sprintf("%d:%s", line, text))
		return true
	})
	return out
}

func TestMatcherAgainstNaive(t *testing.T) {
	text := []byte("package main\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\r\n// TODO: fix\nfoo bar baz\nfoofoo\n\nlast line without newline foo")
	for _, p := range []string{
		"(?i)FOO", "(?i)todo: FIX", "(?i)Hello|MAIN", "(?i)k", "foo", "main", `func \w+\(`, `^}`, `}$`, `^$`, `^`, `$`, ``, `(?i)TODO|hello`, `foo|bar`,
		`o+`, `\bfoo\b`, `a\nb`, `\s+`, `[^x]+`, `(foo){2}`, `\Afoo`, `foo\z`, `(?s).`, `(?m)^f`, `x*`,
		`"hello"`, `Print(ln)?`, `ba[rz]`, `line without`, "\t", `(?i)FOO`, `(foo|last) line`,
	} {
		want, err := naiveGrep(p, text)
		if err != nil {
			t.Fatal(err)
		}
		if got := scanAll(t, p, text); !slices.Equal(got, want) {
			t.Errorf("pattern %q:\n got %q\nwant %q", p, got, want)
		}
	}
}

func TestRequiredLiterals(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    []string
		exact   bool
	}{
		{"func main", []string{"func main"}, true},
		{"(?i)Deprecated", []string{"deprecated"}, false},
		{"(?i)todo|FIXME", []string{"todo", "fixme"}, false},
		{`func \w+\(ctx`, []string{"func "}, false},
		{`\w+Error\b`, []string{"Error"}, false},
		{`TODO|FIXME`, []string{"TODO", "FIXME"}, false},
		{`(?i)todo`, []string{"todo"}, false},
		{`(?i)é`, nil, false},
		{`a*b`, []string{"b"}, false},
		{`(abc)+d`, []string{"abc"}, false},
		{`x?`, nil, false},
		{`[A-Z]\d`, nil, false},
	} {
		m, err := Compile(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range m.lits {
			if m.fold && tc.pattern[0] != '(' {
				t.Errorf("%q: fold mode", tc.pattern)
			}
			got = append(got, string(l))
		}
		if !slices.Equal(got, tc.want) || m.exact != tc.exact {
			t.Errorf("%q: literals %q exact %v, want %q %v", tc.pattern, got, m.exact, tc.want, tc.exact)
		}
	}
}

func FuzzMatcher(f *testing.F) {
	for _, s := range []string{"foo", `^a`, `b$`, `a|b`, `\s+x`, `(?i)ab`, `[^\n]+`, `a\nb`, ``, `\Ax`} {
		f.Add(s, "a\nb\r\nfoo x\n\nab AB\nxa")
	}
	// Patterns without a literal, found through runs of byte classes.
	for _, s := range []string{`[0-9]{3}`, `[A-Z][a-z]+[0-9]{3}\b`, `[a-z][0-9]{2,}[xy]`, `(?i)[q-z][0-9]{3}`, `\d\d\d-\d\d`, `(\d{2})[a-c]{2}\d`} {
		f.Add(s, "Abc123 x\nsha256 Q999\r\nz12345y\n12-34 123-45\n07ab9\nAb1234\n")
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if _, err := regexp.Compile(pattern); err != nil {
			if _, err := Compile(pattern); err == nil {
				t.Fatalf("compileMatcher accepted %q", pattern)
			}
			return
		}
		want, _ := naiveGrep(pattern, []byte(text))
		if got := scanAll(t, pattern, []byte(text)); !slices.Equal(got, want) {
			t.Fatalf("pattern %q on %q:\n got %q\nwant %q", pattern, text, got, want)
		}
	})
}

func TestLowerASCII(t *testing.T) {
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	for n := range len(all) {
		src := all[n:]
		dst := make([]byte, len(src))
		lowerASCII(dst, src)
		for i, c := range src {
			want := c
			if 'A' <= c && c <= 'Z' {
				want = c + 32
			}
			if dst[i] != want {
				t.Fatalf("lowerASCII(%#x) = %#x at offset %d", c, dst[i], n)
			}
		}
	}
}

func TestFoldCaseSpecialLetters(t *testing.T) {
	text := []byte("a \u212aind line\nthe \u017ftory\nKIND\n")
	for _, p := range []string{`(?i)kind`, `(?i)story`, `(?i)KIND|story`} {
		want, _ := naiveGrep(p, text)
		if got := scanAll(t, p, text); !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("%q: got %q, want %q", p, got, want)
		}
	}
}
