package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
)

func putStep(t *testing.T, s *Saver, i int) {
	t.Helper()
	parent := ""
	if i > 0 {
		parent = fmt.Sprintf("cp%03d", i-1)
	}
	cp := &checkpoint.Checkpoint{ThreadID: "t", ID: fmt.Sprintf("cp%03d", i), ParentID: parent, Step: i,
		Delta: checkpoint.Delta{Keep: i, Messages: []llm.Message{llm.UserText(fmt.Sprint("message ", i))}}}
	if err := s.Put(context.Background(), cp); err != nil {
		t.Fatalf("Put %d: %v", i, err)
	}
}

// TestPutAfterConnectionReplaced drops the writer connection between Puts:
// the statements Put prepared went with it, and are prepared again.
func TestPutAfterConnectionReplaced(t *testing.T) {
	db := openTemp(t, nil)
	s := db.Saver()
	putStep(t, s, 0)
	conn, err := db.w.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	old := db.put.conn
	if err := conn.Raw(func(any) error { return driver.ErrBadConn }); !errors.Is(err, driver.ErrBadConn) {
		t.Fatalf("Raw: %v", err)
	}
	conn.Close()
	putStep(t, s, 1)
	if db.put.conn == old {
		t.Error("Put used the statements of the dropped connection")
	}
	snap, err := s.Load(context.Background(), "t", "")
	if err != nil || len(snap.Messages) != 2 || snap.ID != "cp001" {
		t.Fatalf("Load: %v, %+v", err, snap)
	}
}

// TestPutTransactionRollsBack fails a transaction after it wrote a row: the
// row is gone, and the next Put works.
func TestPutTransactionRollsBack(t *testing.T) {
	db := openTemp(t, nil)
	s := db.Saver()
	putStep(t, s, 0)
	conn, err := db.w.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err = conn.Raw(func(dc any) error {
		p := &db.put
		if err := p.prepare(dc); err != nil {
			return err
		}
		return p.inTx(func() error {
			if _, err := p.exec(p.message, int64(1), int64(99), []byte(`{"role":"user"}`)); err != nil {
				return err
			}
			return boom
		})
	})
	conn.Close()
	if !errors.Is(err, boom) {
		t.Fatalf("inTx: %v", err)
	}
	var n int
	if err := db.r.QueryRow(`SELECT count(*) FROM messages WHERE pos = 99`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows of the failed transaction (%v)", n, err)
	}
	putStep(t, s, 1)
}

// TestWALCheckpointedInBackground writes many times the log size at which
// a Put restarts the log: the goroutine copies pages back, and the log
// stays within about that size (without the restart it grows for good:
// 14,000 pages here).
func TestWALCheckpointedInBackground(t *testing.T) {
	kick, safety := walKickPages, walSafetyPages
	walKickPages, walSafetyPages = 50, 300
	t.Cleanup(func() { walKickPages, walSafetyPages = kick, safety })
	db := openTemp(t, nil)
	s := db.Saver()
	ctx := context.Background()
	big := strings.Repeat("/d0/f1234.txt\n", 24000/14) // about seven pages
	parent, maxWAL := "", int64(0)
	const n = 1000
	for i := range n {
		id := fmt.Sprintf("cp%05d", i)
		cp := &checkpoint.Checkpoint{ThreadID: "t", ID: id, ParentID: parent, Step: i,
			Delta: checkpoint.Delta{Keep: i, Messages: []llm.Message{llm.UserText(big)}}}
		if err := s.Put(ctx, cp); err != nil {
			t.Fatal(err)
		}
		parent = id
		if fi, err := os.Stat(db.Path() + "-wal"); err == nil {
			maxWAL = max(maxWAL, fi.Size())
		}
	}
	if db.ckpt.runs.Load() == 0 {
		t.Error("no background checkpoint ran")
	}
	// walSafetyPages, and what is written while the goroutine notices (a
	// few milliseconds of this writer, which never pauses).
	if limit := 4 * walSafetyPages * (4096 + 24); maxWAL > limit {
		t.Errorf("the log grew to %d bytes, over %d", maxWAL, limit)
	}
	snap, err := s.Load(ctx, "t", "")
	if err != nil || len(snap.Messages) != n {
		t.Fatalf("Load: %v", err)
	}
}
