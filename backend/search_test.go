package backend

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
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
	m, err := compileMatcher(pattern)
	if err != nil {
		t.Fatalf("compileMatcher(%q): %v", pattern, err)
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
		m, err := compileMatcher(tc.pattern)
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
			if _, err := compileMatcher(pattern); err == nil {
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

func TestGlobSpecPruning(t *testing.T) {
	for _, tc := range []struct {
		pattern, dir string
		root         string
		holds        map[string]bool
	}{
		{"*.go", "/", "/", map[string]bool{"/a": true, "/.git": true}}, // names at any depth
		{"**/*.go", "/", "/", map[string]bool{"/a/b": true, "/.git": false, "/a/.cache": false}},
		{".github/**/*.yml", "/", "/.github", map[string]bool{"/.github/workflows": true}},
		{"src/*.go", "/", "/src", map[string]bool{"/src": true, "/src/x": false}},
		{"*/x/*.go", "/", "/", map[string]bool{"/a": true, "/a/x": true, "/a/y": false, "/a/x/z": false}},
		{"a/**/b/*.go", "/p", "/p/a", map[string]bool{"/p/a/q/r": true}},
		{"src/**", "/", "/src", map[string]bool{"/src/a/b": true}},
		{"/abs/*.go", "/abs/deeper", "/abs/deeper", nil},
		{"{a,b}/*.go", "/", "/", map[string]bool{"/a": true, "/c": false, "/a/d": false}},
	} {
		g, err := newGlobSpec(tc.pattern, tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		if g.root != tc.root {
			t.Errorf("%q in %q: root %q, want %q", tc.pattern, tc.dir, g.root, tc.root)
		}
		for d, want := range tc.holds {
			if got := g.mayHold(d); got != want {
				t.Errorf("%q: mayHold(%q) = %v, want %v", tc.pattern, d, got, want)
			}
		}
	}
	if g, _ := newGlobSpec("/other/*.go", "/src"); !g.empty {
		t.Error("an absolute pattern outside the directory should match nothing")
	}
}

func TestScanLinesLongAndCRLF(t *testing.T) {
	long := strings.Repeat("x", 200_000)
	r, err := scanLines(strings.NewReader("a\r\n"+long+"\r\nb"), 1, 1)
	if err != nil || len(r.Lines) != 1 || r.Lines[0] != long {
		t.Fatalf("long line: %d lines, %v", len(r.Lines), err)
	}
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

func TestScanLinesLineBreaks(t *testing.T) {
	for _, in := range []string{"a\rb\r\nc\n\rd\r", "\r\r\n\r", "x", "x\r\n", "\r", "a\r\r\r\nb"} {
		want, err := stringLines(in, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		// One byte a read splits every \r\n across reads.
		got, err := scanLines(iotest.OneByteReader(strings.NewReader(in)), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Lines, want.Lines) {
			t.Errorf("%q: scanLines %q, stringLines %q", in, got.Lines, want.Lines)
		}
	}
}
