package providertest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/llm"
)

// LimitsCase describes a provider for RunLimits.
type LimitsCase struct {
	// New returns the provider's model on baseURL with the given limits
	// and retries (-1: none).
	New func(t *testing.T, baseURL string, l llm.Limits, maxRetries int) llm.Model
	// Start is the beginning of a valid event stream (the first events),
	// after which a server may stall; Delta is one text delta event, which
	// a flooding server repeats; Full is a whole successful stream.
	Start, Delta, Full string
}

// RunLimits checks that a provider enforces llm.Limits and reports its
// retries: a server that never sends headers, one that stalls mid-stream,
// one that floods, one that cannot be connected to, and one that asks for a
// retry.
func RunLimits(t *testing.T, c LimitsCase) {
	t.Run("ResponseHeaderTimeout", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		srv := NewRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			select { // never answers, until the test ends
			case <-release:
			case <-r.Context().Done():
			}
		})
		m := c.New(t, srv.URL, llm.Limits{ResponseHeaderTimeout: 200 * time.Millisecond}, -1)
		err := timed(t, m)
		if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") {
			t.Errorf("error = %v, want a response-header timeout", err)
		}
	})
	t.Run("IdleTimeout", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		srv := NewRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, c.Start)
			w.(http.Flusher).Flush()
			select { // then silence
			case <-release:
			case <-r.Context().Done():
			}
		})
		m := c.New(t, srv.URL, llm.Limits{IdleTimeout: 300 * time.Millisecond}, -1)
		err := timed(t, m)
		if err == nil || !strings.Contains(err.Error(), "sent nothing for too long") {
			t.Errorf("error = %v, want an idle timeout", err)
		}
		if !errors.Is(err, llm.ErrIncomplete) {
			t.Errorf("error = %v, want it to wrap llm.ErrIncomplete", err)
		}
	})
	t.Run("MaxResponseBytes", func(t *testing.T) {
		srv := NewRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, c.Start)
			for range 20000 { // a few MB, far past the cap
				if _, err := io.WriteString(w, c.Delta); err != nil {
					return
				}
			}
		})
		m := c.New(t, srv.URL, llm.Limits{MaxResponseBytes: 64 << 10}, -1)
		err := timed(t, m)
		if err == nil || !strings.Contains(err.Error(), "larger than allowed") {
			t.Errorf("error = %v, want the size cap", err)
		}
	})
	t.Run("ConnectTimeout", func(t *testing.T) {
		addr := fullListener(t)
		m := c.New(t, "http://"+addr, llm.Limits{ConnectTimeout: 300 * time.Millisecond}, -1)
		err := timed(t, m)
		if err == nil || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("error = %v, want a connect timeout", err)
		}
	})
	t.Run("RetryIsReported", func(t *testing.T) {
		srv := NewRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 0 {
				w.Header().Set("Retry-After", "0")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"error":{"type":"rate_limit_error","message":"slow down"}}`)
				return
			}
			ServeSSE(w, c.Full)
		})
		m := c.New(t, srv.URL, llm.Limits{}, 2)
		var mu sync.Mutex
		var got []llm.Retry
		ctx := llm.WithRetryNotify(context.Background(), func(r llm.Retry) {
			mu.Lock()
			got = append(got, r)
			mu.Unlock()
		})
		if _, err := Collect(ctx, m, UserReq("hi")); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Attempt != 1 || got[0].MaxAttempts != 3 || got[0].Err == nil || !strings.Contains(got[0].Err.Error(), "429") {
			t.Errorf("retries reported: %+v, want one after attempt 1 of 3 for the 429", got)
		}
	})
}

// timed runs one call of m and fails the test if the call takes more than
// ten seconds, where the limit under test is well under one: a call the
// limit did not stop ends there.
func timed(t *testing.T, m llm.Model) error {
	t.Helper()
	const limit = 10 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	_, err := Collect(ctx, m, UserReq("hi"))
	if took := time.Since(start); took >= limit || ctx.Err() != nil {
		t.Errorf("the call was not stopped by the limit (took %v)", took)
	}
	return err
}

// fullListener returns the address of a listening socket whose accept
// queue is already full and never drained, so that a new connection hangs
// in its handshake: a server that cannot be connected to, on loopback.
func fullListener(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skipf("socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Skipf("bind: %v", err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Skipf("listen: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Skipf("getsockname: %v", err)
	}
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	// Fill the queue: with a backlog of 0 the kernel completes one or two
	// handshakes; later ones wait for a place that never comes.
	for i := 0; i < 4; i++ {
		d := net.Dialer{Timeout: 200 * time.Millisecond}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return addr // the queue is full
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("could not fill the accept queue of a loopback listener")
	return ""
}
