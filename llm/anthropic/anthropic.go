package anthropic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/internal/wire"
)

// Provider is the name this package registers under in an [llm.Registry].
const Provider = "anthropic"

// DefaultModel is the model used when a spec names none.
const DefaultModel = "claude-sonnet-4-5"

// Environment variables read by [Factory].
const (
	EnvAPIKey    = "ANTHROPIC_API_KEY"
	EnvAuthToken = "ANTHROPIC_AUTH_TOKEN"
	EnvBaseURL   = "ANTHROPIC_BASE_URL"
)

// DefaultBaseURL is the Anthropic API endpoint. The SDK appends
// "v1/messages" to the base URL, so a base URL has no /v1 suffix.
const DefaultBaseURL = "https://api.anthropic.com"

// Retry defaults; see [Options].
const (
	DefaultMaxRetries    = 4
	DefaultMaxRetryDelay = 60 * time.Second
)

// Options configures a [Model]. What it leaves empty of the key, token and
// base URL, [New] reads from ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN and
// ANTHROPIC_BASE_URL, as the official SDK does; [Factory] reads them
// through its own Getenv.
type Options struct {
	// APIKey authenticates requests (the x-api-key header).
	APIKey string
	// AuthToken, used when APIKey is empty, is sent as a bearer token
	// instead (for gateways that take one). With neither, [New] fails
	// with an [*llm.MissingKeyError].
	AuthToken string
	// BaseURL replaces the API endpoint, for a proxy or a test server.
	// Empty means [DefaultBaseURL].
	BaseURL string
	// HTTPClient sends the requests; nil means a client on
	// http.DefaultTransport.
	HTTPClient *http.Client
	// MaxRetries bounds the retries after a first failed attempt on a
	// connection error, 408, 409, 429 or 5xx (529 "overloaded" included).
	// Zero means DefaultMaxRetries; a negative value disables retries.
	MaxRetries int
	// MaxRetryDelay is the longest retry-after (or retry-after-ms) the
	// model waits for; a server asking for a longer wait gets no retry and
	// its error is returned at once. Zero means DefaultMaxRetryDelay.
	MaxRetryDelay time.Duration
	// MaxTokens is the max_tokens of a request that sets none. Zero means
	// the model's default from a built-in table (its output ceiling, capped
	// at 32,000).
	MaxTokens int
	// ContextWindow overrides the context window reported by Info. Zero
	// means the built-in table.
	ContextWindow int
	// ThinkingBudget, when positive, enables extended thinking with this
	// many budget tokens. It must be below the request's max_tokens.
	ThinkingBudget int
	// AdaptiveThinking enables adaptive thinking (models from Claude 4.6
	// on), where the model decides how long to think. It wins over
	// ThinkingBudget.
	AdaptiveThinking bool
	// Limits bound each HTTP exchange: connect, response-header and idle
	// timeouts, and the size of a streamed response. Zero fields mean
	// llm's defaults.
	Limits llm.Limits
	// Logger receives debug records of failed attempts; nil discards them.
	Logger *slog.Logger
}

// Model is a Claude model reached through the Messages API. It implements
// [llm.Model], [llm.Describer] and [llm.TokenCounter] and is safe for
// concurrent use.
type Model struct {
	name   string
	client sdk.Client
	opts   Options
	info   llm.Info
	maxTok int
}

var (
	_ llm.Model        = (*Model)(nil)
	_ llm.Describer    = (*Model)(nil)
	_ llm.TokenCounter = (*Model)(nil)
)

// New returns the Claude model with the given id, such as
// "claude-sonnet-4-5". An empty name means [DefaultModel]. The key and
// base URL come from the environment when opts leaves them empty.
func New(name string, opts Options) (*Model, error) {
	return newModel(name, withEnvironment(opts, os.Getenv))
}

// withEnvironment fills the key (or token) and base URL opts leaves empty
// from the standard variables.
func withEnvironment(opts Options, getenv func(string) string) Options {
	if opts.APIKey == "" && opts.AuthToken == "" {
		opts.APIKey = getenv(EnvAPIKey)
		if opts.APIKey == "" {
			opts.AuthToken = getenv(EnvAuthToken)
		}
	}
	if opts.BaseURL == "" {
		opts.BaseURL = getenv(EnvBaseURL)
	}
	return opts
}

func newModel(name string, opts Options) (*Model, error) {
	if name == "" {
		name = DefaultModel
	}
	// The SDK's environment defaults (ANTHROPIC_* variables, profile
	// files) are off: the caller's options are the whole configuration.
	reqOpts := []option.RequestOption{option.WithoutEnvironmentDefaults()}
	switch {
	case opts.APIKey != "":
		reqOpts = append(reqOpts, option.WithAPIKey(opts.APIKey))
	case opts.AuthToken != "":
		reqOpts = append(reqOpts, option.WithAuthToken(opts.AuthToken))
	default:
		return nil, &llm.MissingKeyError{Provider: Provider, EnvVar: EnvAPIKey}
	}

	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	if err := checkBaseURL(opts.BaseURL); err != nil {
		return nil, err
	}
	reqOpts = append(reqOpts, option.WithBaseURL(opts.BaseURL))

	opts.Limits = opts.Limits.WithDefaults()
	hc := opts.HTTPClient
	if hc == nil {
		hc = wire.NewHTTPClient(opts.Limits)
	}
	reqOpts = append(reqOpts, option.WithHTTPClient(hc))

	switch {
	case opts.MaxRetries == 0:
		opts.MaxRetries = DefaultMaxRetries
	case opts.MaxRetries < 0:
		opts.MaxRetries = 0
	}
	reqOpts = append(reqOpts, option.WithMaxRetries(opts.MaxRetries))
	if opts.MaxRetryDelay <= 0 {
		opts.MaxRetryDelay = DefaultMaxRetryDelay
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	attempts := &wire.Attempts{Provider: Provider, MaxRetries: opts.MaxRetries, MaxRetryDelay: opts.MaxRetryDelay, Limits: opts.Limits, Log: opts.Logger}
	reqOpts = append(reqOpts, option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return attempts.Do(req, next)
	}))

	if opts.ThinkingBudget < 0 {
		return nil, fmt.Errorf("anthropic: negative thinking budget %d", opts.ThinkingBudget)
	}
	if opts.MaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: negative max tokens %d", opts.MaxTokens)
	}

	window, maxTok := limitsFor(name)
	if opts.ContextWindow > 0 {
		window = opts.ContextWindow
	}
	if opts.MaxTokens > 0 {
		maxTok = opts.MaxTokens
	}
	return &Model{
		name:   name,
		client: sdk.NewClient(reqOpts...),
		opts:   opts,
		maxTok: maxTok,
		info: llm.Info{
			Provider:      Provider,
			Name:          name,
			ContextWindow: window,
			PromptCaching: true,
		},
	}, nil
}

// Info describes the model.
func (m *Model) Info() llm.Info { return m.info }

// Name returns the model id sent to the API.
func (m *Model) Name() string { return m.name }

func checkBaseURL(u string) error {
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return fmt.Errorf("anthropic: base URL %q must start with http:// or https://", u)
	}
	return nil
}

// CountTokens counts the input tokens of req with the count_tokens
// endpoint.
func (m *Model) CountTokens(ctx context.Context, req *llm.Request) (int, error) {
	p, err := m.params(req)
	if err != nil {
		return 0, err
	}
	cp := sdk.MessageCountTokensParams{
		Messages:     p.Messages,
		Model:        p.Model,
		Thinking:     p.Thinking,
		OutputConfig: p.OutputConfig,
	}
	if len(p.System) > 0 {
		cp.System.OfTextBlockArray = p.System
	}
	for _, t := range p.Tools {
		cp.Tools = append(cp.Tools, sdk.MessageCountTokensToolUnionParam{OfTool: t.OfTool})
	}
	res, err := m.client.Messages.CountTokens(ctx, cp)
	if err != nil {
		return 0, wrapErr(ctx, err)
	}
	return int(res.InputTokens), nil
}

// wrapErr gives an error of a request that got no stream a short, one-line
// message while keeping the SDK error reachable with errors.As.
func wrapErr(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("anthropic: %w", context.Cause(ctx))
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return fmt.Errorf("anthropic: %w", &apiError{err: apiErr})
	}
	return fmt.Errorf("anthropic: request failed: %w", err)
}

// apiError is an error response of the API, in a line: status, error type,
// message and request id.
type apiError struct {
	err *sdk.Error
}

func (e *apiError) Error() string {
	var b strings.Builder
	if e.err.StatusCode != 0 && e.err.StatusCode != http.StatusOK {
		fmt.Fprintf(&b, "%d ", e.err.StatusCode)
	}
	typ, msg := errorDetail(e.err.RawJSON())
	switch {
	case typ != "" && msg != "":
		fmt.Fprintf(&b, "%s: %s", typ, msg)
	case msg != "":
		b.WriteString(msg)
	case typ != "":
		b.WriteString(typ)
	default:
		b.WriteString(http.StatusText(e.err.StatusCode))
	}
	if e.err.RequestID != "" {
		fmt.Fprintf(&b, " (request-id %s)", e.err.RequestID)
	}
	return b.String()
}

func (e *apiError) Unwrap() error { return e.err }
