package server

import (
	"context"
	"errors"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// A lock is the lease of a thread of its own in the Saver: a cron's (its
// changes and firings), an A2A context's (its tasks' changes). The lease
// holds across every replica on the database, and a dead holder's is
// handed over. A lock thread's ID has a slash, so lists of threads leave
// it out (as a child thread) and no path reaches it.

// hold takes a lock, waiting while another holds it.
func (s *Server) hold(ctx context.Context, lock string) (checkpoint.Lease, error) {
	for {
		l, err := s.cfg.Saver.Acquire(ctx, lock, nil)
		if !errors.Is(err, checkpoint.ErrBusy) {
			return l, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// letGo ends a lock's lease, even when ctx has ended.
func (s *Server) letGo(ctx context.Context, lock string, l checkpoint.Lease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := l.Release(ctx, checkpoint.StatusIdle); err != nil {
		s.log.Warn("server: releasing a lock", "lock", lock, "err", err)
	}
}
