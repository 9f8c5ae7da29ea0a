package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Factory builds a model of one provider from the part of a spec string
// after the colon ("claude-sonnet-4-5" in "anthropic:claude-sonnet-4-5").
type Factory func(ctx context.Context, name string) (Model, error)

// ErrUnknownProvider is returned for a spec string whose provider is not
// registered.
var ErrUnknownProvider = errors.New("unknown model provider")

// ErrBadSpec is returned for a spec string that is not of the form
// "provider:model".
var ErrBadSpec = errors.New("model spec must look like provider:model")

// Registry maps provider names to factories. The zero value is empty and
// ready to use; a Registry is safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	factories map[string]Factory
}

// Register makes a provider available under name, replacing any earlier
// registration of that name.
func (r *Registry) Register(name string, f Factory) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.factories == nil {
		r.factories = make(map[string]Factory)
	}
	r.factories[name] = f
}

// Providers returns the registered provider names, sorted.
func (r *Registry) Providers() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.factories))
	for n := range r.factories {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// New returns the model a spec string names, such as
// "anthropic:claude-sonnet-4-5" or "replay:testdata/run.json".
func (r *Registry) New(ctx context.Context, spec string) (Model, error) {
	provider, name, ok := ParseSpec(spec)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrBadSpec, spec)
	}
	r.mu.RLock()
	f := r.factories[provider]
	r.mu.RUnlock()
	if f == nil {
		known := r.Providers()
		return nil, fmt.Errorf("%w %q in %q (known: %s)", ErrUnknownProvider, provider, spec, strings.Join(known, ", "))
	}
	m, err := f(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", spec, err)
	}
	return m, nil
}

// ParseSpec splits "provider:model" at its first colon. Both parts must be
// non-empty.
func ParseSpec(spec string) (provider, name string, ok bool) {
	provider, name, ok = strings.Cut(spec, ":")
	if !ok || provider == "" || name == "" {
		return "", "", false
	}
	return provider, name, true
}
