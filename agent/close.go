package agent

import (
	"errors"
	"fmt"
	"io"
)

// Close releases what the agent's middleware keep beyond a run, such as
// background subagents still working: it calls Close on every middleware
// that is an io.Closer, innermost first, and returns their errors joined.
// An agent whose middleware keep nothing needs no Close, and closing one
// twice is up to its middleware (the built-in ones allow it). Runs must not
// be started once Close is called.
func (a *Agent) Close() error {
	var errs []error
	for i := len(a.middleware) - 1; i >= 0; i-- {
		if c, ok := a.middleware[i].(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("agent: closing %s: %w", middlewareName(a.middleware[i]), err))
			}
		}
	}
	return errors.Join(errs...)
}
