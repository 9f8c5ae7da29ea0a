package llm

import (
	"errors"
	"fmt"
)

// ErrMissingKey is matched (with errors.Is) by every error that reports a
// provider's missing API key; see [MissingKeyError].
var ErrMissingKey = errors.New("missing API key")

// MissingKeyError reports that a provider needs an API key and none was
// configured. Its message is one line naming the environment variable to set.
type MissingKeyError struct {
	// Provider is the provider name, such as "anthropic".
	Provider string
	// EnvVar is the environment variable that holds the key, such as
	// "ANTHROPIC_API_KEY".
	EnvVar string
}

// Error implements error.
func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("%s: %s is not set; export it or choose another model", e.Provider, e.EnvVar)
}

// Unwrap returns [ErrMissingKey].
func (e *MissingKeyError) Unwrap() error { return ErrMissingKey }
