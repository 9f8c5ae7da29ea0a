package server

import (
	"context"
	"sync"
	"time"
)

// SetCronClock gives the cron scheduler a clock of the test's, and stops
// it looking at the crons on its own: the test ticks it (CronTick).
func (s *Server) SetCronClock(now func() time.Time) {
	s.crons.manual.Store(true)
	s.crons.now.Store(&now)
}

// cronTicks serializes the CronTicks of each server: a server ticks from
// one goroutine (its scheduler), and a WaitGroup's Wait must not race an
// Add from zero (another tick's).
var cronTicks sync.Map // *Server -> *sync.Mutex

// CronTick fires the crons due now and waits until their runs started.
func (s *Server) CronTick(ctx context.Context) {
	mu, _ := cronTicks.LoadOrStore(s, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	s.cronTick(ctx)
	s.crons.fires.Wait()
}
