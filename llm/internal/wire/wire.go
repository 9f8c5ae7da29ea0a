package wire

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/llm"
)

var emptyObject = json.RawMessage(`{}`)

// Args turns the argument text a model streamed for a tool call into the
// JSON value kept in [llm.ToolCall].Args. Empty text becomes {}. Valid JSON
// is kept byte for byte. Text that is not valid JSON (a model's mistake, or
// a call cut off by the output limit) is kept as a JSON string, so that the
// message stays valid JSON and the tool layer reports a clear argument
// error instead of the run crashing.
func Args(text string) json.RawMessage {
	t := strings.TrimSpace(text)
	if t == "" {
		return append(json.RawMessage(nil), emptyObject...)
	}
	if json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(text) // a string always marshals
	return b
}

// ArgsText is the inverse of [Args] for providers that carry arguments as
// text (OpenAI): a JSON string produced by Args for invalid text is
// unquoted back to the original text; anything else is returned as is, and
// empty arguments become "{}".
func ArgsText(args json.RawMessage) string {
	a := bytes.TrimSpace(args)
	if len(a) == 0 {
		return "{}"
	}
	if a[0] == '"' {
		var s string
		if json.Unmarshal(a, &s) == nil {
			return s
		}
	}
	return string(a)
}

// ArgsObject returns args when it is a JSON object and {} otherwise, for
// providers that require tool input to be an object (Anthropic).
func ArgsObject(args json.RawMessage) json.RawMessage {
	a := bytes.TrimSpace(args)
	if len(a) > 0 && a[0] == '{' && json.Valid(a) {
		return a
	}
	return emptyObject
}

// NewCallID returns a fresh tool-call id for servers that omit one.
func NewCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "call_" + hex.EncodeToString(b[:])
}

// RetryAfter reads the delay a response asks for before a retry, from
// retry-after-ms (milliseconds) or retry-after (seconds or an HTTP date).
func RetryAfter(h http.Header) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(ms) && ms >= 0 {
			return durationOf(ms, float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(s) || s < 0 {
			return 0, false
		}
		return durationOf(s, float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t)), true
	}
	return 0, false
}

func durationOf(v, unit float64) time.Duration {
	d := v * unit
	if d >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// Incomplete returns an error for a stream that broke before its message
// was complete. It matches [llm.ErrIncomplete] and cause (when not nil)
// with errors.Is and errors.As, and reads "msg (message incomplete): cause".
func Incomplete(msg string, cause error) error {
	return &incompleteError{msg: msg, cause: cause}
}

type incompleteError struct {
	msg   string
	cause error
}

func (e *incompleteError) Error() string {
	if e.cause == nil {
		return e.msg + " (message incomplete)"
	}
	return e.msg + " (message incomplete): " + e.cause.Error()
}

func (e *incompleteError) Unwrap() []error {
	if e.cause == nil {
		return []error{llm.ErrIncomplete}
	}
	return []error{llm.ErrIncomplete, e.cause}
}

// Backoff returns the wait before retry number attempt (0 for the first
// retry): half a second doubling up to 8 seconds, less up to a quarter of
// jitter, as the SDKs do for the retries they make themselves.
func Backoff(attempt int) time.Duration {
	d := 8 * time.Second
	if attempt < 4 {
		d = 500 * time.Millisecond << attempt
	}
	return d - time.Duration(mrand.Int64N(int64(d/4)+1))
}

// Sleep waits for d or until ctx is done, and returns ctx's error in the
// latter case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// drainLimit and drainWait bound what DrainClose reads and waits for.
const (
	drainLimit = 4 << 10
	drainWait  = 250 * time.Millisecond
)

// DrainClose closes the body of a response whose message is complete,
// after reading what is left of it (normally just the end of the chunked
// encoding), so that an HTTP/1.1 connection can be reused rather than
// dropped. It reads at most a few KiB and waits at most a quarter of a
// second: a server that keeps the body open after the end of the message
// costs no more than that.
func DrainClose(body io.ReadCloser) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.CopyN(io.Discard, body, drainLimit)
	}()
	t := time.NewTimer(drainWait)
	select {
	case <-done:
	case <-t.C:
	}
	t.Stop()
	err := body.Close() // unblocks a read still waiting
	<-done
	return err
}

// ErrStopped is returned by an attempt whose consumer stopped the
// iteration; RetryStream then ends quietly.
var ErrStopped = errors.New("stopped")

// Attempt makes one streaming request, passing its chunks (ChunkDone
// included) to emit. It returns nil after ChunkDone, ErrStopped when emit
// returns false, or the error that ended the stream and whether a new
// request could succeed where this one failed.
type Attempt func(emit func(llm.Chunk) bool) (retryable bool, err error)

// RetryStream yields the chunks of attempt, and retries an attempt that
// failed retryably before yielding anything (an error event right after
// the headers, a dropped connection), up to maxRetries times with backoff.
// Once output has been yielded, a failure ends the stream: the partial
// message must not be repeated. name prefixes the error of a cancelled
// wait.
func RetryStream(ctx context.Context, name string, maxRetries int, log *slog.Logger, attempt Attempt, yield func(llm.Chunk, error) bool) {
	for n := 0; ; n++ {
		yielded := false
		retryable, err := attempt(func(c llm.Chunk) bool {
			yielded = true
			return yield(c, nil)
		})
		switch {
		case err == nil || errors.Is(err, ErrStopped):
			return
		case !retryable || yielded || n >= maxRetries:
			yield(llm.Chunk{}, err)
			return
		}
		wait := Backoff(n)
		if log != nil {
			log.Debug(name+": stream failed before any output; retrying", "err", err, "wait", wait)
		}
		llm.NotifyRetry(ctx, llm.Retry{Provider: name, Attempt: n + 1, MaxAttempts: maxRetries + 1, Wait: wait, Err: err})
		if err := Sleep(ctx, wait); err != nil {
			yield(llm.Chunk{}, fmt.Errorf("%s: %w", name, err))
			return
		}
	}
}
