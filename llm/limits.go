package llm

import "time"

// Limits bound a provider's HTTP exchanges, so that a server that stalls or
// floods cannot hang a run or exhaust its memory. The zero value means the
// defaults below; a negative duration or size turns that limit off.
type Limits struct {
	// ConnectTimeout bounds establishing a connection (TCP and TLS).
	// Default DefaultConnectTimeout. It applies to the provider's own
	// HTTP client, not to one the caller supplies.
	ConnectTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response's headers
	// once the request is sent. Default DefaultResponseHeaderTimeout.
	// Like ConnectTimeout, it applies to the provider's own client.
	ResponseHeaderTimeout time.Duration
	// IdleTimeout bounds the silence between two pieces of a streamed
	// response. Default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxResponseBytes caps the bytes of one response body. Default
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// Defaults of Limits.
const (
	DefaultConnectTimeout        = 30 * time.Second
	DefaultResponseHeaderTimeout = 2 * time.Minute
	// DefaultIdleTimeout leaves room for reasoning models, which may send
	// nothing for minutes while they think.
	DefaultIdleTimeout      = 5 * time.Minute
	DefaultMaxResponseBytes = 64 << 20
)

// WithDefaults returns l with every zero field set to its default and every
// negative one to zero (no limit).
func (l Limits) WithDefaults() Limits {
	pick := func(v, def time.Duration) time.Duration {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	l.ConnectTimeout = pick(l.ConnectTimeout, DefaultConnectTimeout)
	l.ResponseHeaderTimeout = pick(l.ResponseHeaderTimeout, DefaultResponseHeaderTimeout)
	l.IdleTimeout = pick(l.IdleTimeout, DefaultIdleTimeout)
	switch {
	case l.MaxResponseBytes == 0:
		l.MaxResponseBytes = DefaultMaxResponseBytes
	case l.MaxResponseBytes < 0:
		l.MaxResponseBytes = 0
	}
	return l
}
