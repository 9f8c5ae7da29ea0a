package agent

import (
	"strconv"
	"sync"
	"testing"
)

// TestEventQueueKeepsOrderAndLosesNothing pushes from several goroutines,
// each in order, while the consumer takes in batches.
func TestEventQueueKeepsOrderAndLosesNothing(t *testing.T) {
	q := newEventQueue()
	const producers, each = 4, 5000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				q.push(Event{Name: strconv.Itoa(p), Step: i})
			}
		}()
	}
	go func() { wg.Wait(); q.close() }()
	next := make([]int, producers)
	var spare []Event
	for {
		batch, done := q.take(spare)
		if done {
			break
		}
		if len(batch) > maxQueued {
			t.Fatalf("batch of %d events, bound %d", len(batch), maxQueued)
		}
		for _, e := range batch {
			p, _ := strconv.Atoi(e.Name)
			if e.Step != next[p] {
				t.Fatalf("producer %d: got event %d, want %d", p, e.Step, next[p])
			}
			next[p]++
		}
		spare = batch
	}
	for p, n := range next {
		if n != each {
			t.Errorf("producer %d: %d of %d events arrived", p, n, each)
		}
	}
}

// TestEventQueueStopReleasesProducers checks that a producer waiting for
// room is released when the consumer leaves.
func TestEventQueueStopReleasesProducers(t *testing.T) {
	q := newEventQueue()
	done := make(chan struct{})
	go func() {
		for range maxQueued * 3 {
			q.push(Event{})
		}
		close(done)
	}()
	batch, _ := q.take(nil)
	if len(batch) == 0 {
		t.Fatal("no events")
	}
	q.stop()
	<-done
}
