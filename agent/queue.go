package agent

import "sync"

// maxQueued bounds the events waiting for a slow consumer of Stream; a run
// producing faster waits for room.
const maxQueued = 256

// eventQueue carries a run's events from its goroutines to the goroutine
// consuming Stream. The consumer takes everything queued at once, so a
// burst of events (a step makes several within microseconds) costs one
// wake-up instead of one hand-off per event through a channel.
type eventQueue struct {
	mu      sync.Mutex
	room    sync.Cond // signalled when the consumer takes events
	buf     []Event
	closed  bool // the run ended: no more events
	stopped bool // the consumer left: drop events, never wait
	ready   chan struct{}
}

func newEventQueue() *eventQueue {
	q := &eventQueue{ready: make(chan struct{}, 1)}
	q.room.L = &q.mu
	return q
}

// push queues an event; it is safe for concurrent use.
func (q *eventQueue) push(e Event) {
	q.mu.Lock()
	for len(q.buf) >= maxQueued && !q.stopped {
		q.room.Wait()
	}
	if q.stopped {
		q.mu.Unlock()
		return
	}
	wake := len(q.buf) == 0
	q.buf = append(q.buf, e)
	q.mu.Unlock()
	if wake {
		q.signal()
	}
}

func (q *eventQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// close marks the end of the run's events.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// stop tells producers that nobody reads any more.
func (q *eventQueue) stop() {
	q.mu.Lock()
	q.stopped, q.buf = true, nil
	q.mu.Unlock()
	q.room.Broadcast()
}

// take waits for events and returns them, swapping in spare for the
// producers to fill next. done is true once the run ended and everything
// was taken.
func (q *eventQueue) take(spare []Event) (batch []Event, done bool) {
	for {
		q.mu.Lock()
		batch, q.buf = q.buf, spare[:0]
		closed := q.closed
		q.mu.Unlock()
		if len(batch) > 0 {
			q.room.Broadcast()
			return batch, false
		}
		if closed {
			return nil, true
		}
		// The empty buffer taken is the spare now: the one handed in
		// belongs to the producers.
		spare = batch
		<-q.ready
	}
}
