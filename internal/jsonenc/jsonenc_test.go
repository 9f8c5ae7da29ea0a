package jsonenc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// encodingJSON is what an encoding/json Encoder writes for v.
func encodingJSON(t testing.TB, v any, html bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func FuzzAppendStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\r\t\b\f\x00\x1f", "<b>&amp;</b>", "é😀\u2028\u2029", "\xff\xfe bad", "tail\x80", strings.Repeat("/d/f.txt\n", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range []Escaping{EscapeHTML, NoHTML} {
			want := encodingJSON(t, s, bool(e))
			if got := e.AppendString([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
				t.Fatalf("html %v: %q:\n got %s\nwant x%s", e, s, got, want)
			}
		}
		if got := AppendString(nil, s); !bytes.Equal(got, encodingJSON(t, s, true)) {
			t.Fatalf("AppendString(%q) = %s", s, got)
		}
	})
}

func TestAppendRawAndField(t *testing.T) {
	raw := json.RawMessage(`{ "a" : "<x>" ,"b":[1, 2] }`)
	for _, e := range []Escaping{EscapeHTML, NoHTML} {
		want := encodingJSON(t, struct {
			R json.RawMessage `json:"r"`
		}{raw}, bool(e))
		got, err := e.AppendRaw([]byte(`{"r":`), raw)
		if err != nil || !bytes.Equal(append(got, '}'), want) {
			t.Errorf("html %v: AppendRaw = %s, %v; want %s", e, got, err, want)
		}
	}
	if _, err := AppendRaw(nil, json.RawMessage(`{`)); err == nil {
		t.Error("AppendRaw accepted invalid JSON")
	}
	if got := string(NoHTML.AppendField(nil, "k", "<v>")); got != `,"k":"<v>"` {
		t.Errorf("AppendField = %s", got)
	}
	if got := AppendField([]byte("x"), "k", ""); string(got) != "x" {
		t.Errorf("AppendField of an empty value = %s", got)
	}
}

// BenchmarkAppendString encodes what long runs encode most: a 24 KB
// directory listing (a newline every 14 bytes) and source code.
func BenchmarkAppendString(b *testing.B) {
	for name, s := range map[string]string{
		"listing": strings.Repeat("/d0/f1234.txt\n", 24000/14),
		"code":    strings.Repeat("\tif a < b && c > d {\n\t\treturn fmt.Sprintf(\"%d\", x)\n\t}\n", 400),
	} {
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, 0, 2*len(s))
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				buf = NoHTML.AppendString(buf[:0], s)
			}
		})
	}
}
