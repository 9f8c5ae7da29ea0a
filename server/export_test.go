package server

import (
	"context"
	"time"
)

// SetCronClock gives the cron scheduler a clock of the test's, and stops
// it looking at the crons on its own: the test ticks it (CronTick).
func (s *Server) SetCronClock(now func() time.Time) {
	s.crons.manual.Store(true)
	s.crons.now.Store(&now)
}

// CronTick fires the crons due now and waits until their runs started.
func (s *Server) CronTick(ctx context.Context) {
	s.cronTick(ctx)
	s.crons.fires.Wait()
}
