package sqlcore

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// Lease is a hold on a thread that a database releases when it closes.
type Lease interface {
	checkpoint.Lease
	ThreadID() string
}

// Leases are the leases held through a database; its Close releases them.
// The zero value is ready to use.
type Leases struct {
	mu     sync.Mutex
	held   map[Lease]struct{}
	closed bool
}

// Closed reports whether Close was called.
func (ls *Leases) Closed() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.closed
}

// Add records a lease taken.
func (ls *Leases) Add(l Lease) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.held == nil {
		ls.held = map[Lease]struct{}{}
	}
	ls.held[l] = struct{}{}
}

// Remove forgets a lease released.
func (ls *Leases) Remove(l Lease) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.held, l)
}

// Close marks the database closed and releases the leases still held as
// if with checkpoint.StatusError, waiting at most timeout in all; a lease
// that fails to release is logged (messages prefixed with name). It
// reports false when the database was closed already, and did nothing.
func (ls *Leases) Close(timeout time.Duration, log *slog.Logger, name string) bool {
	ls.mu.Lock()
	if ls.closed {
		ls.mu.Unlock()
		return false
	}
	ls.closed = true
	held := make([]Lease, 0, len(ls.held))
	for l := range ls.held {
		held = append(held, l)
	}
	ls.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, l := range held {
		if err := l.Release(ctx, checkpoint.StatusError); err != nil {
			log.Warn(name+": releasing a lease at close", "thread", l.ThreadID(), "err", err)
		}
	}
	return true
}
