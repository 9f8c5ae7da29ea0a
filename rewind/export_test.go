package rewind

import "context"

// RecordLazily records a step's point as the Middleware does: it may wait
// to be written with the next ones.
func (t *Tracker) RecordLazily(ctx context.Context, threadID string) (*Point, error) {
	return t.recordThread(ctx, threadID, KindStep, "", "", nil, true)
}
