package anthropic_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic"
	"github.com/deepagents-go/deepagents/llm/anthropic/anthropictest"
)

func TestRetryThenSuccess(t *testing.T) {
	tests := []struct {
		name  string
		first anthropictest.Turn
	}{
		{"429 with retry-after", anthropictest.Turn{Status: http.StatusTooManyRequests, RetryAfter: "0"}},
		{"529 overloaded", anthropictest.Turn{Status: 529, RetryAfter: "0"}},
		// No retry-after: the SDK's own backoff (about half a second).
		{"500 with backoff", anthropictest.Turn{Status: http.StatusInternalServerError}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := anthropictest.NewServer(tt.first, anthropictest.Turn{Text: "recovered"})
			defer srv.Close()
			m := newModel(t, srv.URL, anthropic.Options{})
			res, err := llm.Generate(context.Background(), m, userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Message.Text() != "recovered" {
				t.Errorf("text %q", res.Message.Text())
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			if got := reqs[1].Header.Get("X-Stainless-Retry-Count"); got != "1" {
				t.Errorf("retry count header %q", got)
			}
			if string(reqs[0].Body) != string(reqs[1].Body) {
				t.Error("the retry sent a different body")
			}
		})
	}
}

func TestRetryRetryAfterMs(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 {
			// retry-after-ms is preferred; the 3600 s retry-after would
			// exceed MaxRetryDelay and stop the retries.
			w.Header().Set("Retry-After-Ms", "5")
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		serveSSE(w, fixture(t, "text.sse"))
	})
	m := newModel(t, srv.URL, anthropic.Options{MaxRetryDelay: time.Second})
	if _, err := llm.Generate(context.Background(), m, userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 2 {
		t.Errorf("%d requests", srv.Count())
	}
}

func TestRetryExhausted(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "1")
		w.Header().Set("Request-Id", "req_011")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`))
	})
	m := newModel(t, srv.URL, anthropic.Options{MaxRetries: 2})
	_, err := llm.Generate(context.Background(), m, userReq("hi"))
	if err == nil {
		t.Fatal("no error")
	}
	if srv.Count() != 3 {
		t.Errorf("%d attempts, want 3 (1 + MaxRetries)", srv.Count())
	}
	want := "anthropic: 500 api_error: Internal server error (request-id req_011)"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
		t.Errorf("error does not unwrap to the SDK error: %v", err)
	}
	if errors.Is(err, llm.ErrIncomplete) {
		t.Error("a request that never streamed is not an incomplete message")
	}
}

func TestRetryDisabledAndNotRetried(t *testing.T) {
	tests := []struct {
		name    string
		opts    anthropic.Options
		status  int
		retry   string
		wantErr string
	}{
		{"retries disabled", anthropic.Options{MaxRetries: -1}, 529, "0", "529 overloaded_error"},
		{"retry-after beyond the limit", anthropic.Options{MaxRetryDelay: time.Second}, 429, "3600", "429 rate_limit_error"},
		{"client error", anthropic.Options{}, 400, "", "400 invalid_request_error"},
		{"auth error", anthropic.Options{}, 401, "", "401 authentication_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := anthropictest.NewServer(anthropictest.Turn{Status: tt.status, RetryAfter: tt.retry}, anthropictest.Turn{Text: "never"})
			defer srv.Close()
			m := newModel(t, srv.URL, tt.opts)
			start := time.Now()
			_, err := llm.Generate(context.Background(), m, userReq("hi"))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			oneLine(t, err)
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	m := newModel(t, "http://127.0.0.1:1", anthropic.Options{MaxRetries: -1})
	_, err := llm.Generate(context.Background(), m, userReq("hi"))
	if err == nil || !strings.HasPrefix(err.Error(), "anthropic: request failed: ") {
		t.Fatalf("error %v", err)
	}
}

func TestCancelDuringRetryWait(t *testing.T) {
	srv := anthropictest.NewServer(anthropictest.Turn{Status: 429, RetryAfter: "30"})
	defer srv.Close()
	m := newModel(t, srv.URL, anthropic.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := llm.Generate(ctx, m, userReq("hi"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("waited %v for a retry despite the deadline", d)
	}
}
