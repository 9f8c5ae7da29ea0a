package netproxy

import (
	"bufio"
	"bytes"
	"errors"
	"testing"
)

func TestRules(t *testing.T) {
	r, err := ParseRules([]string{"github.com", "*.example.com", "mirror.test:8443", "@go"}, []string{"evil.example.com", "github.com:443"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		port int
		want Verdict
	}{
		{"github.com", 80, Allowed},
		{"GitHub.com", 80, Allowed},
		{"github.com", 443, Denied}, // deny wins, on the port it names
		{"github.com", 22, Unlisted},
		{"api.github.com", 443, Unlisted},
		{"a.example.com", 443, Allowed},
		{"a.b.example.com", 443, Allowed},
		{"example.com", 443, Unlisted}, // a wildcard is what is under it
		{"evil.example.com", 443, Denied},
		{"evil.example.com", 8080, Denied}, // a deny without a port denies every port
		{"mirror.test", 8443, Allowed},
		{"mirror.test", 443, Unlisted},
		{"proxy.golang.org", 443, Allowed},
		{"sum.golang.org", 443, Allowed},
		{"notexample.com", 443, Unlisted},
	} {
		if got, rule := r.Decide(c.host, c.port); got != c.want {
			t.Errorf("Decide(%s, %d) = %v (%q), want %v", c.host, c.port, got, rule, c.want)
		}
	}
}

func TestBadPatterns(t *testing.T) {
	for _, s := range []string{"", "127.0.0.1", "[::1]", "::1", "a..b", "-a.com", "a.com:0", "a.com:99999", "a.com:x", "*.", "http://a.com", "a com", "@nope"} {
		if _, err := ParseRules([]string{s}, nil); !errors.Is(err, ErrPattern) {
			t.Errorf("ParseRules(%q): err = %v, want ErrPattern", s, err)
		}
	}
	if _, err := ParseRules(nil, []string{"@go"}); !errors.Is(err, ErrPattern) {
		t.Errorf("a preset in the deny list: err = %v", err)
	}
}

func TestPresetsParse(t *testing.T) {
	for _, name := range PresetNames() {
		if _, err := ParseRules([]string{"@" + name}, nil); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
}

func FuzzPattern(f *testing.F) {
	for _, s := range []string{"github.com", "*.a.b:8080", "1.2.3.4", "[::1]:80", "@go"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRules([]string{s}, []string{s})
		if err != nil {
			return
		}
		// Whatever parses, deny wins over the same allow.
		for _, p := range r.allow {
			if v, _ := r.Decide(p.name, 443); v == Allowed {
				t.Fatalf("%q: allowed though denied", s)
			}
		}
	})
}

func FuzzClientHello(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0})
	f.Add(clientHello("example.com"))
	f.Add(records(clientHello("example.com"), 50))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseClientHello(b) // must not panic
		readClientHello(bufio.NewReader(bytes.NewReader(b)))
	})
}
