package backendtest

import (
	"context"
	"sync/atomic"
)

// lookCancel is a context that cancels itself the n-th time it is looked
// at (Err or Done): a call given it is cancelled while it runs, at a
// point of its own work rather than of the clock's.
type lookCancel struct {
	context.Context
	cancel context.CancelFunc
	n      int32
	looks  atomic.Int32
}

// cancelOnLook returns a context derived from ctx that is cancelled when
// it is looked at the n-th time.
func cancelOnLook(ctx context.Context, n int32) context.Context {
	c, cancel := context.WithCancel(ctx)
	return &lookCancel{Context: c, cancel: cancel, n: n}
}

func (c *lookCancel) look() {
	if c.looks.Add(1) == c.n {
		c.cancel()
	}
}

// Err implements context.Context.
func (c *lookCancel) Err() error {
	c.look()
	return c.Context.Err()
}

// Done implements context.Context.
func (c *lookCancel) Done() <-chan struct{} {
	c.look()
	return c.Context.Done()
}
