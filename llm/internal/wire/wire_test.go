package wire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/llm"
)

func TestArgs(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", `{}`},
		{"   ", `{}`},
		{`{"a":1}`, `{"a":1}`},
		{`{"a": 1, "b": [true]}`, `{"a": 1, "b": [true]}`},
		{`{"a":`, `"{\"a\":"`},
		{`not json`, `"not json"`},
	}
	for _, tt := range tests {
		got := Args(tt.in)
		if string(got) != tt.want {
			t.Errorf("Args(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if !json.Valid(got) {
			t.Errorf("Args(%q) = %s is not valid JSON", tt.in, got)
		}
	}
}

func TestArgsTextRoundTrip(t *testing.T) {
	for _, in := range []string{`{"a":1}`, `{"a":`, `x"y`, `{}`} {
		if got := ArgsText(Args(in)); got != in {
			t.Errorf("ArgsText(Args(%q)) = %q", in, got)
		}
	}
	if got := ArgsText(nil); got != "{}" {
		t.Errorf("ArgsText(nil) = %q", got)
	}
}

func TestArgsObject(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:   `{"a":1}`,
		`"{\"a\":"`: `{}`,
		`[1]`:       `{}`,
		``:          `{}`,
		`{broken`:   `{}`,
	} {
		if got := ArgsObject(json.RawMessage(in)); string(got) != want {
			t.Errorf("ArgsObject(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestNewCallID(t *testing.T) {
	a, b := NewCallID(), NewCallID()
	if a == b || !strings.HasPrefix(a, "call_") {
		t.Fatalf("ids %q %q", a, b)
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{"none", http.Header{}, 0, false},
		{"seconds", http.Header{"Retry-After": {"2"}}, 2 * time.Second, true},
		{"fraction", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{"ms wins", http.Header{"Retry-After-Ms": {"150"}, "Retry-After": {"9"}}, 150 * time.Millisecond, true},
		{"bad ms falls back", http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"1"}}, time.Second, true},
		{"negative", http.Header{"Retry-After": {"-1"}}, 0, false},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
		{"huge", http.Header{"Retry-After": {"1e300"}}, time.Duration(1<<63 - 1), true},
	}
	for _, tt := range tests {
		got, ok := RetryAfter(tt.h)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: RetryAfter = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
	past := http.Header{"Retry-After": {time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)}}
	if d, ok := RetryAfter(past); !ok || d != 0 {
		t.Errorf("past date: %v %v", d, ok)
	}
	future := http.Header{"Retry-After": {time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}}
	if d, ok := RetryAfter(future); !ok || d < 59*time.Minute {
		t.Errorf("future date: %v %v", d, ok)
	}
}

func FuzzArgs(f *testing.F) {
	for _, s := range []string{"", "{}", `{"a":[1,2]}`, `{"a":`, "\x00", `"x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := Args(s)
		if !json.Valid(a) {
			t.Fatalf("Args(%q) = %q is not valid JSON", s, a)
		}
		if !json.Valid(ArgsObject(a)) {
			t.Fatalf("ArgsObject not valid")
		}
		_ = ArgsText(a)
	})
}

func TestBackoff(t *testing.T) {
	for attempt, base := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second} {
		for range 20 {
			d := Backoff(attempt)
			if d > base || d < base*3/4 {
				t.Fatalf("Backoff(%d) = %v, want within [%v, %v]", attempt, d, base*3/4, base)
			}
		}
	}
	if d := Backoff(1000); d > 8*time.Second {
		t.Fatalf("Backoff(1000) = %v", d)
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep after cancel: %v", err)
	}
}

func TestIncomplete(t *testing.T) {
	cause := errors.New("unexpected EOF")
	err := Incomplete("x: connection lost", cause)
	if !errors.Is(err, llm.ErrIncomplete) || !errors.Is(err, cause) {
		t.Fatal("does not match")
	}
	if err.Error() != "x: connection lost (message incomplete): unexpected EOF" {
		t.Fatalf("%q", err)
	}
	if err := Incomplete("x: ended", nil); !errors.Is(err, llm.ErrIncomplete) || err.Error() != "x: ended (message incomplete)" {
		t.Fatalf("%q", err)
	}
}

// blockingBody never ends until it is closed.
type blockingBody struct {
	first  []byte
	closed chan struct{}
	once   sync.Once
}

func (b *blockingBody) Read(p []byte) (int, error) {
	if len(b.first) > 0 {
		n := copy(p, b.first)
		b.first = b.first[n:]
		return n, nil
	}
	<-b.closed
	return 0, errors.New("closed")
}

func (b *blockingBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

func TestDrainClose(t *testing.T) {
	// A body that ends: read to the end, then closed.
	r := &countingBody{Reader: strings.NewReader("0\r\n\r\n")}
	if err := DrainClose(r); err != nil || !r.closed || r.n != 5 {
		t.Fatalf("err %v closed %v read %d", err, r.closed, r.n)
	}
	// A body that never ends: given up on after the wait, and closed.
	b := &blockingBody{first: []byte("tail"), closed: make(chan struct{})}
	start := time.Now()
	if err := DrainClose(b); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < drainWait/2 || d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	select {
	case <-b.closed:
	default:
		t.Error("not closed")
	}
}

type countingBody struct {
	io.Reader
	n      int
	closed bool
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	c.n += n
	return n, err
}

func (c *countingBody) Close() error { c.closed = true; return nil }
