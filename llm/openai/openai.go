package openai

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/internal/wire"
)

// Provider is the name this package registers the OpenAI API under.
const Provider = "openai"

// DefaultModel is the model used when a spec names none.
const DefaultModel = "gpt-4.1"

// DefaultBaseURL is the OpenAI API endpoint. Requests go to the base URL
// and "/chat/completions", so the base URL of an
// OpenAI-compatible server ends in /v1 (http://localhost:11434/v1).
const DefaultBaseURL = "https://api.openai.com/v1"

// Retry defaults; see [Options].
const (
	DefaultMaxRetries    = 4
	DefaultMaxRetryDelay = 60 * time.Second
)

// Options configures a [Model]. [New] fills an empty key and base URL of
// the OpenAI API from the environment; the registry factories read the
// environment through their own Getenv.
type Options struct {
	// Provider names the provider in Info and in errors; empty means
	// "openai".
	Provider string
	// APIKey is sent as a bearer token. It is required by the OpenAI API
	// itself (a BaseURL on api.openai.com) and optional elsewhere.
	APIKey string
	// KeyEnv names the environment variable the key came from, for the
	// missing-key error; empty means OPENAI_API_KEY.
	KeyEnv string
	// BaseURL is the server; empty means [DefaultBaseURL]. Any
	// OpenAI-compatible server works (Ollama, vLLM, LM Studio, llama.cpp).
	BaseURL string
	// Compatible says the server is an OpenAI-compatible one serving
	// another model, not OpenAI's API or a proxy of it: requests leave out
	// the fields only OpenAI takes (prompt_cache_key,
	// prompt_cache_retention), which some such servers refuse. The
	// factories set it for "MODEL@URL" and the local shortcuts.
	Compatible bool
	// HTTPClient sends the requests; nil means a client on
	// http.DefaultTransport.
	HTTPClient *http.Client
	// MaxRetries bounds the retries after a first failed attempt on a
	// connection error, 408, 409, 429 or 5xx. Zero means DefaultMaxRetries;
	// a negative value disables retries.
	MaxRetries int
	// MaxRetryDelay is the longest retry-after (or retry-after-ms) the
	// model waits for; a server asking for a longer wait gets no retry and
	// its error is returned at once. Zero means DefaultMaxRetryDelay.
	MaxRetryDelay time.Duration
	// MaxTokens caps the output of a request that sets no MaxTokens. Zero
	// sends no cap (the server's default).
	MaxTokens int
	// ContextWindow overrides the context window reported by Info. Zero
	// means the built-in table (OpenAI's models, gpt-oss); other models
	// report zero (unknown) unless this is set.
	ContextWindow int
	// ReasoningEffort is sent as reasoning_effort ("low", "medium",
	// "high", ...) for reasoning models; empty sends nothing.
	ReasoningEffort string
	// Limits bound each HTTP exchange: connect, response-header and idle
	// timeouts, and the size of a streamed response. Zero fields mean
	// llm's defaults.
	Limits llm.Limits
	// Logger receives debug records of failed attempts; nil discards them.
	Logger *slog.Logger
}

// Model is a chat model reached through the Chat Completions API. It
// implements [llm.Model] and [llm.Describer] and is safe for concurrent
// use.
type Model struct {
	name     string
	endpoint string // the base URL and /chat/completions
	hc       *http.Client
	attempts *wire.Attempts
	opts     Options
	info     llm.Info
	legacy   bool // send max_tokens rather than max_completion_tokens
}

var (
	_ llm.Model     = (*Model)(nil)
	_ llm.Describer = (*Model)(nil)
)

// New returns the model with the given name on the server opts names. For
// the OpenAI API itself (opts.Provider empty or "openai"), what opts leaves
// empty of the key and base URL comes from OPENAI_API_KEY and
// OPENAI_BASE_URL, as OpenAI's SDKs do. No other OPENAI_* variable is
// read: an organisation or custom headers would go to whatever server
// the base URL names.
func New(name string, opts Options) (*Model, error) {
	if opts.Provider == "" || opts.Provider == Provider {
		if opts.BaseURL == "" {
			opts.BaseURL = os.Getenv(EnvBaseURL)
		}
		if opts.APIKey == "" {
			opts.APIKey = os.Getenv(EnvAPIKey)
		}
	}
	return newModel(name, opts)
}

func newModel(name string, opts Options) (*Model, error) {
	if name == "" {
		return nil, fmt.Errorf("%s: empty model name", providerName(opts))
	}
	if opts.Provider == "" {
		opts.Provider = Provider
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: base URL %q must be an http:// or https:// URL", opts.Provider, opts.BaseURL)
	}
	official := isOpenAIHost(u.Host)
	if opts.APIKey == "" && official {
		env := opts.KeyEnv
		if env == "" {
			env = EnvAPIKey
		}
		return nil, &llm.MissingKeyError{Provider: opts.Provider, EnvVar: env}
	}
	if opts.MaxTokens < 0 {
		return nil, fmt.Errorf("%s: negative max tokens %d", opts.Provider, opts.MaxTokens)
	}
	switch {
	case opts.MaxRetries == 0:
		opts.MaxRetries = DefaultMaxRetries
	case opts.MaxRetries < 0:
		opts.MaxRetries = 0
	}
	if opts.MaxRetryDelay <= 0 {
		opts.MaxRetryDelay = DefaultMaxRetryDelay
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Limits = opts.Limits.WithDefaults()
	hc := opts.HTTPClient
	if hc == nil {
		hc = wire.NewHTTPClient(opts.Limits)
	}
	attempts := &wire.Attempts{Provider: opts.Provider, MaxRetries: opts.MaxRetries, MaxRetryDelay: opts.MaxRetryDelay, Limits: opts.Limits, Log: opts.Logger}
	window := contextWindow(name)
	if opts.ContextWindow > 0 {
		window = opts.ContextWindow
	}
	return &Model{
		name:     name,
		endpoint: endpoint(u),
		hc:       hc,
		attempts: attempts,
		opts:     opts,
		legacy:   !official,
		info: llm.Info{
			Provider:      opts.Provider,
			Name:          name,
			ContextWindow: window,
		},
	}, nil
}

func providerName(o Options) string {
	if o.Provider != "" {
		return o.Provider
	}
	return Provider
}

func isOpenAIHost(host string) bool {
	h := strings.ToLower(host)
	return h == "api.openai.com" || strings.HasSuffix(h, ".openai.com")
}

// Info describes the model. Prompt caching on OpenAI is automatic, so
// PromptCaching (honouring Request.Cache) is false.
func (m *Model) Info() llm.Info { return m.info }

// Name returns the model name sent to the server.
func (m *Model) Name() string { return m.name }

// endpoint is the chat completions URL under base: its path and
// "/chat/completions", its query kept (an Azure api-version, say).
func endpoint(base *url.URL) string {
	u := *base
	u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions"
	u.RawPath = ""
	return u.String()
}
