package postgres

import (
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// freezer is a loopback TCP proxy to a PostgreSQL server that can stop
// forwarding without closing anything, as a stalled network or a frozen
// server does.
type freezer struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	frozen bool
	closed bool
	conns  []net.Conn
}

func newFreezer(t *testing.T, target string) *freezer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln, target: target}
	go f.serve()
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		f.closed = true
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
	})
	return f
}

func (f *freezer) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", f.target)
		if err != nil {
			c.Close()
			continue
		}
		f.mu.Lock()
		f.conns = append(f.conns, c, s)
		f.mu.Unlock()
		go f.pipe(c, s)
		go f.pipe(s, c)
	}
}

// pipe copies src to dst, holding every chunk while frozen.
func (f *freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for f.isFrozen() {
			time.Sleep(10 * time.Millisecond)
		}
		if f.isClosed() {
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				dst.Close()
			}
			return
		}
	}
}

func (f *freezer) isFrozen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen && !f.closed
}

func (f *freezer) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

func (f *freezer) freeze() {
	f.mu.Lock()
	f.frozen = true
	f.mu.Unlock()
}

// A connection that freezes fails the operation within the statement
// timeout plus grace, with ErrTimeout, instead of hanging.
func TestFrozenConnectionTimesOut(t *testing.T) {
	u, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	f := newFreezer(t, u.Host)
	u.Host = f.ln.Addr().String()
	db := openTempAt(t, u.String(), &Options{StatementTimeout: time.Second})
	s := db.Saver()
	cp := &checkpoint.Checkpoint{ThreadID: "t", ID: "c1"}
	if err := s.Put(ctxb(), cp); err != nil {
		t.Fatal(err)
	}
	f.freeze()
	start := time.Now()
	err = s.Put(ctxb(), &checkpoint.Checkpoint{ThreadID: "t", ID: "c2", ParentID: "c1"})
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Put over a frozen connection = %v, want ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "no answer within") {
		t.Errorf("error does not say what happened: %v", err)
	}
	// The bound is the statement timeout plus grace; leave room for a slow
	// machine, but not for minutes.
	if limit := time.Second + timeoutGrace + 10*time.Second; took > limit {
		t.Errorf("Put took %v over a frozen connection, want under %v", took, limit)
	}
	start = time.Now()
	if _, err := s.Load(ctxb(), "t", ""); !errors.Is(err, ErrTimeout) {
		t.Errorf("Load over a frozen connection = %v, want ErrTimeout", err)
	}
	t.Logf("Put gave up after %v, Load after %v", took, time.Since(start))
}

// A server that cannot be reached fails Open within the connect timeout.
func TestConnectTimeout(t *testing.T) {
	// A listener that accepts and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	_, err = Open(ctxb(), "postgres://postgres@"+ln.Addr().String()+"/test?sslmode=disable", &Options{ConnectTimeout: 500 * time.Millisecond})
	if err == nil {
		t.Fatal("Open of a silent server succeeded")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Open took %v against a silent server with a 500ms connect timeout", took)
	}
}

func TestSizeAndVacuum(t *testing.T) {
	db := openTemp(t, nil)
	empty, err := db.Size(ctxb())
	if err != nil || empty <= 0 {
		t.Fatalf("Size of an empty schema = %d, %v", empty, err)
	}
	putChain(t, db.Saver(), "t", 20)
	full, err := db.Size(ctxb())
	if err != nil || full < empty {
		t.Fatalf("Size after 20 checkpoints = %d (empty %d), %v", full, empty, err)
	}
	if err := db.Saver().DeleteThread(ctxb(), "t"); err != nil {
		t.Fatal(err)
	}
	if err := db.Vacuum(ctxb()); err != nil {
		t.Fatal(err)
	}
}
