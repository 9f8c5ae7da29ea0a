package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// Durability says when a run's steps are checkpointed (with a
// Checkpointer). The modes are LangGraph's, and so are their names.
//
// Whatever the mode, a run commits everything before it ends, before it
// stops for human decisions (the interrupt is in the checkpoint, so an
// approval cannot be skipped by a crash), and when it is cancelled; and a
// `checkpoint` event is emitted only once its step is committed: a step
// whose checkpoint event was seen survives the process being killed.
type Durability string

const (
	// DurabilityAsync, the default, commits each step's checkpoint while
	// the next steps run. Commits keep the steps' order; when steps come
	// faster than commits and the Checkpointer is a
	// [checkpoint.BatchPutter], the waiting steps go in one transaction. At
	// most MaxPendingCheckpoints steps wait at a time (the run waits for
	// the database beyond that). A process killed mid-run loses the steps
	// whose checkpoint event it had not emitted yet; a failed commit fails
	// the run at its next step. With a real model a step takes seconds and
	// a commit a millisecond, so a commit is long done when the next one
	// comes.
	DurabilityAsync Durability = "async"
	// DurabilitySync commits each step's checkpoint before the next step
	// starts: a process killed mid-run loses at most the step it was in.
	DurabilitySync Durability = "sync"
	// DurabilityExit writes one checkpoint when the run ends (completed,
	// failed, cancelled or stopped for decisions): a process killed
	// mid-run loses the whole run.
	DurabilityExit Durability = "exit"
)

// MaxPendingCheckpoints bounds how many steps of a DurabilityAsync run
// wait for their commit at a time.
const MaxPendingCheckpoints = 32

// ErrDurability is returned for an unknown Durability.
var ErrDurability = errors.New(`agent: unknown durability (want "async", "sync" or "exit")`)

// check validates d; "" (the default) is valid.
func (d Durability) check() error {
	switch d {
	case "", DurabilityAsync, DurabilitySync, DurabilityExit:
		return nil
	}
	return fmt.Errorf("%w: %q", ErrDurability, string(d))
}

// ParseDurability returns the Durability named s; "" is DurabilityAsync.
func ParseDurability(s string) (Durability, error) {
	d := Durability(s)
	if err := d.check(); err != nil {
		return "", err
	}
	if d == "" {
		d = DurabilityAsync
	}
	return d, nil
}

// cpWriter commits a DurabilityAsync run's checkpoints in the background,
// in order, on one goroutine that lives as long as the run: it is started
// with the first checkpoint and stopped by close, which every run calls.
type cpWriter struct {
	saver  checkpoint.Saver
	thread string
	// committed is called on the writer's goroutine after each commit,
	// before anyone waiting in flush or put is released.
	committed func(*checkpoint.Checkpoint)

	mu      sync.Mutex
	cond    sync.Cond
	queue   []*checkpoint.Checkpoint
	pending int   // queued plus being committed
	err     error // the first failed commit; nothing is committed after it
	closed  bool
	done    chan struct{} // closed when the goroutine has returned
}

// commitTimeout bounds one commit of the writer, which no run's context
// cancels: a finished step is saved even when its run is cancelled.
const commitTimeout = time.Minute

func newCPWriter(s checkpoint.Saver, thread string, committed func(*checkpoint.Checkpoint)) *cpWriter {
	w := &cpWriter{saver: s, thread: thread, committed: committed, done: make(chan struct{})}
	w.cond.L = &w.mu
	go w.loop()
	return w
}

// put queues cp for its commit, first waiting while MaxPendingCheckpoints
// steps wait already. It returns the error of an earlier commit that
// failed, and then queues nothing.
func (w *cpWriter) put(cp *checkpoint.Checkpoint) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.pending >= MaxPendingCheckpoints && w.err == nil {
		w.cond.Wait()
	}
	if w.err != nil {
		return w.err
	}
	w.queue = append(w.queue, cp)
	w.pending++
	w.cond.Broadcast()
	return nil
}

// flush waits until every queued checkpoint is committed and returns the
// error of the first that failed, if one did.
func (w *cpWriter) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.pending > 0 && w.err == nil {
		w.cond.Wait()
	}
	return w.err
}

// close flushes and stops the goroutine.
func (w *cpWriter) close() error {
	err := w.flush()
	w.mu.Lock()
	w.closed = true
	w.cond.Broadcast()
	w.mu.Unlock()
	<-w.done
	return err
}

func (w *cpWriter) loop() {
	defer close(w.done)
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for len(w.queue) == 0 && !w.closed {
			w.cond.Wait()
		}
		if len(w.queue) == 0 {
			return
		}
		batch := w.queue
		w.queue = nil
		w.mu.Unlock()
		n, err := w.commit(batch)
		w.mu.Lock()
		w.pending -= n
		if err != nil {
			w.err = saveError(w.thread, err)
			w.pending, w.queue = 0, nil
		}
		w.cond.Broadcast()
	}
}

// commit writes batch, in one transaction when the saver can, and reports
// how many checkpoints it committed. A panic (of the saver, or of the
// consumer of the checkpoint events) is its error, as a run's would be.
func (w *cpWriter) commit(batch []*checkpoint.Checkpoint) (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrPanic, p)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	if b, ok := w.saver.(checkpoint.BatchPutter); ok && len(batch) > 1 {
		if err := b.PutBatch(ctx, batch); err != nil {
			return 0, err
		}
		for _, cp := range batch {
			n++
			w.committed(cp)
		}
		return n, nil
	}
	for _, cp := range batch {
		if err := w.saver.Put(ctx, cp); err != nil {
			return n, err
		}
		n++
		w.committed(cp)
	}
	return n, nil
}
