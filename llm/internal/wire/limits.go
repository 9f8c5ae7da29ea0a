package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/llm"
)

// NewHTTPClient returns an HTTP client for a provider, on a transport like
// http.DefaultTransport with the connect and response-header timeouts of l
// (already defaulted). When the environment variable DEEPAGENTS_RECORD_WIRE
// names a directory, the client also writes every exchange there (see
// RecordEnv).
func NewHTTPClient(l llm.Limits) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{Timeout: l.ConnectTimeout, KeepAlive: 30 * time.Second}
	t.DialContext = d.DialContext
	t.TLSHandshakeTimeout = l.ConnectTimeout
	t.ResponseHeaderTimeout = l.ResponseHeaderTimeout
	return &http.Client{Transport: recording(t)}
}

// Errors of a guarded response body.
var (
	// ErrIdle: the server sent nothing for longer than the idle timeout.
	ErrIdle = errors.New("the server sent nothing for too long")
	// ErrTooLarge: the response grew past the size cap.
	ErrTooLarge = errors.New("the response is larger than allowed")
)

// guardedBody enforces the idle timeout and the size cap on a response
// body: a timer closes the body when no byte arrives in time, which ends a
// Read blocked on a silent server.
type guardedBody struct {
	body  io.ReadCloser
	idle  time.Duration
	max   int64
	read  int64
	timer *time.Timer

	mu    sync.Mutex
	fired bool
}

// GuardBody wraps res.Body with the idle timeout and size cap of l (zero
// fields are off).
func GuardBody(res *http.Response, l llm.Limits) {
	if res == nil || res.Body == nil || (l.IdleTimeout <= 0 && l.MaxResponseBytes <= 0) {
		return
	}
	g := &guardedBody{body: res.Body, idle: l.IdleTimeout, max: l.MaxResponseBytes}
	if g.idle > 0 {
		g.timer = time.AfterFunc(g.idle, g.fire)
	}
	res.Body = g
}

func (g *guardedBody) fire() {
	g.mu.Lock()
	g.fired = true
	g.mu.Unlock()
	_ = g.body.Close()
}

func (g *guardedBody) Read(p []byte) (int, error) {
	if g.max > 0 && g.read >= g.max {
		return 0, fmt.Errorf("%w (%d bytes)", ErrTooLarge, g.max)
	}
	if g.max > 0 && int64(len(p)) > g.max-g.read+1 {
		p = p[:g.max-g.read+1] // one byte past the cap tells it was passed
	}
	n, err := g.body.Read(p)
	g.read += int64(n)
	if g.timer != nil && n > 0 {
		g.timer.Reset(g.idle)
	}
	if err != nil {
		g.mu.Lock()
		fired := g.fired
		g.mu.Unlock()
		if fired {
			return n, fmt.Errorf("%w (%s)", ErrIdle, g.idle)
		}
	}
	if g.max > 0 && g.read > g.max {
		return n - int(g.read-g.max), fmt.Errorf("%w (%d bytes)", ErrTooLarge, g.max)
	}
	return n, err
}

func (g *guardedBody) Close() error {
	if g.timer != nil {
		g.timer.Stop()
	}
	return g.body.Close()
}

// Attempts watches every HTTP attempt of a provider (as SDK middleware,
// [Attempts.Do], or in a provider's own retry loop, [Attempts.Round]): it
// guards response bodies with the limits, logs failed
// attempts, refuses retries the server wants delayed longer than
// MaxRetryDelay, and reports each retry the SDK is about to make with
// llm.NotifyRetry.
type Attempts struct {
	Provider      string
	MaxRetries    int
	MaxRetryDelay time.Duration
	Limits        llm.Limits
	Log           *slog.Logger
}

// retryable reports whether the SDKs retry a response with this status.
func retryable(status int, h http.Header) bool {
	switch h.Get("X-Should-Retry") {
	case "true":
		return true
	case "false":
		return false
	}
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// Do runs one attempt through next, as SDK middleware: the attempt's
// number is the SDK's X-Stainless-Retry-Count header, and the SDK decides
// on the retry itself (Do marks a response whose wait is too long
// X-Should-Retry: false).
func (a *Attempts) Do(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	attempt, _ := strconv.Atoi(req.Header.Get("X-Stainless-Retry-Count"))
	res, _, _, err := a.Round(req, attempt, next)
	return res, err
}

// Round runs attempt number n (0 for the first) through next, for a
// provider that makes its own retries. Beside the response or error it
// says whether the attempt should be retried and after how long: a
// connection error, 408, 409, 429 or 5xx is retried while n is below
// MaxRetries, after the server's retry-after-ms or retry-after, or the
// [Backoff] of n when it asks for nothing; a wait beyond MaxRetryDelay
// is not waited for. A response of status 400 or more is returned with
// its body unread, for the caller to read or close.
func (a *Attempts) Round(req *http.Request, n int, next func(*http.Request) (*http.Response, error)) (res *http.Response, retry bool, wait time.Duration, err error) {
	ctx := req.Context()
	res, err = next(req)
	if err != nil {
		if ctx.Err() != nil {
			return res, false, 0, err
		}
		a.Log.Debug(a.Provider+": attempt failed", "attempt", n, "err", err)
		if n >= a.MaxRetries {
			return res, false, 0, err
		}
		wait = Backoff(n)
		a.notify(ctx, n, wait, err)
		return res, true, wait, err
	}
	if res.StatusCode < 400 {
		GuardBody(res, a.Limits)
		return res, false, 0, nil
	}
	wait, asked := RetryAfter(res.Header)
	a.Log.Debug(a.Provider+": attempt failed", "attempt", n, "status", res.StatusCode, "retry_after", wait)
	if asked && wait > a.MaxRetryDelay {
		res.Header.Set("X-Should-Retry", "false")
	}
	if !retryable(res.StatusCode, res.Header) || n >= a.MaxRetries {
		return res, false, 0, nil
	}
	if !asked {
		wait = Backoff(n)
	}
	a.notify(ctx, n, wait, fmt.Errorf("status %d %s", res.StatusCode, http.StatusText(res.StatusCode)))
	return res, true, wait, nil
}

func (a *Attempts) notify(ctx context.Context, attempt int, wait time.Duration, err error) {
	llm.NotifyRetry(ctx, llm.Retry{Provider: a.Provider, Attempt: attempt + 1, MaxAttempts: a.MaxRetries + 1, Wait: wait, Err: err})
}
