package openai_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/openai"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
)

func TestRetryThenSuccess(t *testing.T) {
	tests := []struct {
		name  string
		first openaitest.Turn
	}{
		{"429 with retry-after", openaitest.Turn{Status: 429, RetryAfter: "0"}},
		{"503 with retry-after", openaitest.Turn{Status: 503, RetryAfter: "0"}},
		{"500 with backoff", openaitest.Turn{Status: 500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(tt.first, openaitest.Turn{Text: "recovered"})
			defer srv.Close()
			m := newModel(t, srv.URL, openai.Options{})
			res, err := llm.Generate(context.Background(), m, userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Message.Text() != "recovered" {
				t.Errorf("text %q", res.Message.Text())
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || string(reqs[1].Body) != string(reqs[0].Body) {
				t.Fatalf("%d requests", len(reqs))
			}
		})
	}
}

func TestRetryExhausted(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "1")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`))
	})
	m := newModel(t, srv.URL, openai.Options{MaxRetries: 2})
	_, err := llm.Generate(context.Background(), m, userReq("hi"))
	if srv.Count() != 3 {
		t.Errorf("%d attempts, want 3", srv.Count())
	}
	if err == nil || err.Error() != "openai: 500 server_error: The server had an error" {
		t.Fatalf("error %v", err)
	}
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Type != "server_error" || apiErr.Message != "The server had an error" {
		t.Errorf("error does not unwrap to the API error: %#v", apiErr)
	}
}

func TestNotRetried(t *testing.T) {
	tests := []struct {
		name   string
		opts   openai.Options
		status int
		retry  string
		want   string
	}{
		{"retries disabled", openai.Options{MaxRetries: -1}, 429, "0", "429 rate_limit_error"},
		{"retry-after beyond the limit", openai.Options{MaxRetryDelay: time.Second}, 429, "3600", "429 rate_limit_error"},
		{"bad request", openai.Options{}, 400, "", "400 invalid_request_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(openaitest.Turn{Status: tt.status, RetryAfter: tt.retry}, openaitest.Turn{Text: "never"})
			defer srv.Close()
			m := newModel(t, srv.URL, tt.opts)
			_, err := llm.Generate(context.Background(), m, userReq("hi"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests", n)
			}
		})
	}
}

func TestUnscriptedRequest(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	m := newModel(t, srv.URL, openai.Options{})
	_, err := llm.Generate(context.Background(), m, userReq("hi"))
	if err == nil || !strings.Contains(err.Error(), "no scripted turn left") || len(srv.Requests()) != 1 {
		t.Fatalf("error %v after %d requests", err, len(srv.Requests()))
	}
}

// redirect sends every request to the test server, whatever its host, so
// that the model can believe it talks to api.openai.com.
type redirect struct{ to *url.URL }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.to.Scheme, r.to.Host
	return http.DefaultTransport.RoundTrip(req)
}

func TestOfficialEndpoint(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Turn{Text: "ok"})
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	hc := &http.Client{Transport: redirect{u}}

	if _, err := openai.New("gpt-4.1", openai.Options{HTTPClient: hc}); !errors.Is(err, llm.ErrMissingKey) {
		t.Fatalf("no key for api.openai.com: %v", err)
	}
	m, err := openai.New("gpt-4.1", openai.Options{APIKey: "sk-x", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Generate(context.Background(), m, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}, MaxTokens: 64}); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	if req.Path != "/v1/chat/completions" || req.Header.Get("Authorization") != "Bearer sk-x" {
		t.Errorf("request %s %v", req.Path, req.Header)
	}
	if string(field(t, req.Body, "max_completion_tokens")) != "64" || len(field(t, req.Body, "max_tokens")) != 0 {
		t.Errorf("OpenAI itself gets max_completion_tokens: %s", req.Body)
	}
}

// TestErrorBodies: an error response becomes an *openai.APIError whatever
// its body holds, in one line, its code and param kept.
func TestErrorBodies(t *testing.T) {
	tests := []struct {
		name, body, want string
		code, param      string
	}{
		{"api error", `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			"openai: 400 invalid_request_error: This model's maximum context length is 128000 tokens.", "context_length_exceeded", "messages"},
		{"numeric code", `{"error":{"message":"bad","type":"x","code":42}}`, "openai: 400 x: bad", "42", ""},
		{"a proxy's page", "<html>\n<body>Bad   gateway</body></html>", "openai: 400 <html> <body>Bad gateway</body></html>", "", ""},
		{"empty", "", "openai: 400 Bad Request", "", ""},
		{"huge", strings.Repeat("z", 1<<20), "openai: 400 " + strings.Repeat("z", 200) + "…", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("X-Request-Id", "req_1")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(tt.body))
			})
			m := newModel(t, srv.URL, openai.Options{})
			_, err := llm.Generate(context.Background(), m, userReq("hi"))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error %q, want %q", err, tt.want)
			}
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != tt.code || apiErr.Param != tt.param || apiErr.RequestID != "req_1" || len(apiErr.Body) > 64<<10 {
				t.Errorf("API error %+v", apiErr)
			}
		})
	}
}

// TestRequestHeadersAndURL: the request goes to the base URL's path and
// /chat/completions with its query kept, as JSON asking for a stream, and
// carries no header of an SDK.
func TestRequestHeadersAndURL(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Turn{Text: "ok"})
	defer srv.Close()
	m := newModel(t, srv.URL+"/?api-version=2025-01-01", openai.Options{})
	if _, err := llm.Generate(context.Background(), m, userReq("hi")); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	if req.Path != "/v1/chat/completions" || req.Query != "api-version=2025-01-01" {
		t.Errorf("request to %s?%s", req.Path, req.Query)
	}
	h := req.Header
	if h.Get("Content-Type") != "application/json" || h.Get("Accept") != "text/event-stream" || !strings.HasPrefix(h.Get("User-Agent"), "deepagents-go") {
		t.Errorf("headers %v", h)
	}
	for k := range h {
		if strings.HasPrefix(k, "X-Stainless") {
			t.Errorf("header %s", k)
		}
	}
}
