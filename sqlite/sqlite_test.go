package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/checkpoint/checkpointtest"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/store/storetest"
	"github.com/deepagents-go/deepagents/thread"
)

func openTemp(t testing.TB, opts *Options) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "test.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestSaverConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return openTemp(t, nil).Saver() },
		checkpointtest.WithCorrupter(corruptMessages))
}

func TestSyncFull(t *testing.T) {
	for full, want := range map[bool]int{false: 1, true: 2} {
		db := openTemp(t, &Options{SyncFull: full})
		var got int
		if err := db.w.QueryRow(`PRAGMA synchronous`).Scan(&got); err != nil || got != want {
			t.Errorf("SyncFull %v: synchronous = %d, %v; want %d", full, got, err, want)
		}
		putChain(t, db.Saver(), "t", 3)
	}
}

func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t, nil).Store() })
}

// corruptMessages overwrites a checkpoint's message rows with bad JSON.
func corruptMessages(t *testing.T, s checkpoint.Saver, threadID, checkpointID string) {
	t.Helper()
	db := s.(*Saver).db
	res, err := db.w.Exec(`UPDATE messages SET data = '{"role":' WHERE cp_seq =
		(SELECT seq FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?)`, threadID, checkpointID)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatal("nothing to corrupt")
	}
}

func ctxb() context.Context { return context.Background() }

func putChain(t testing.TB, s checkpoint.Saver, thread string, n int) {
	t.Helper()
	parent := ""
	for i := range n {
		id := string(rune('a' + i))
		cp := &checkpoint.Checkpoint{ThreadID: thread, ID: id, ParentID: parent, Step: i,
			Delta: checkpoint.Delta{Keep: 2 * i, Messages: []llm.Message{llm.UserText("q"), llm.AssistantText("a")}}}
		if err := s.Put(ctxb(), cp); err != nil {
			t.Fatal(err)
		}
		parent = id
	}
}

func TestCorruptRows(t *testing.T) {
	cases := map[string]string{
		"todos":         `UPDATE checkpoints SET todos = '[{' WHERE checkpoint_id = 'b'`,
		"value":         `INSERT INTO state_values (cp_seq, key, data) SELECT seq, 'k', 'nope' FROM checkpoints WHERE checkpoint_id = 'b'`,
		"meta":          `UPDATE checkpoints SET meta = '{' WHERE checkpoint_id = 'c'`,
		"missing msg":   `DELETE FROM messages WHERE pos = 1`,
		"message role":  `UPDATE messages SET data = '{"role":7}' WHERE pos = 0`,
		"broken parent": `DELETE FROM checkpoints WHERE checkpoint_id = 'a'`,
		"parent loop":   `UPDATE checkpoints SET parent_seq = (SELECT seq FROM checkpoints WHERE checkpoint_id = 'c') WHERE checkpoint_id = 'a'`,
		"msg count":     `UPDATE checkpoints SET msg_count = 100 WHERE checkpoint_id = 'c'`,
		"huge count":    `UPDATE checkpoints SET msg_count = 1e12 WHERE checkpoint_id = 'c'`,
	}
	for name, q := range cases {
		t.Run(name, func(t *testing.T) {
			db := openTemp(t, nil)
			putChain(t, db.Saver(), "t", 3)
			if _, err := db.w.Exec(q); err != nil {
				t.Fatal(err)
			}
			_, err := db.Saver().Load(ctxb(), "t", "c")
			if !errors.Is(err, checkpoint.ErrCorrupt) {
				t.Fatalf("Load = %v, want ErrCorrupt", err)
			}
			t.Log(err)
		})
	}
	t.Run("thread metadata", func(t *testing.T) {
		db := openTemp(t, nil)
		putChain(t, db.Saver(), "t", 1)
		if _, err := db.w.Exec(`UPDATE threads SET metadata = 'x'`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Saver().Threads(ctxb(), checkpoint.ListOptions{}); !errors.Is(err, checkpoint.ErrCorrupt) {
			t.Errorf("Threads = %v, want ErrCorrupt", err)
		}
		if _, err := db.Saver().Thread(ctxb(), "t"); !errors.Is(err, checkpoint.ErrCorrupt) {
			t.Errorf("Thread = %v, want ErrCorrupt", err)
		}
	})
	t.Run("store value", func(t *testing.T) {
		db := openTemp(t, nil)
		if err := db.Store().Put(ctxb(), []string{"n"}, "k", map[string]any{"a": 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.w.Exec(`UPDATE store_items SET value = '{'`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Store().Get(ctxb(), []string{"n"}, "k"); err == nil {
			t.Error("Get of a corrupt value succeeded")
		}
		if _, err := db.Store().Search(ctxb(), nil, store.SearchOptions{}); err == nil {
			t.Error("Search over a corrupt value succeeded")
		}
	})
}

func TestNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	junk := make([]byte, 8192)
	for i := range junk {
		junk[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctxb(), path, nil)
	if !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Fatalf("Open(junk) = %v, want ErrCorrupt", err)
	}
}

func TestOpenRefusesWhatIsNotADatabase(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("my notes, not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{empty, "exists but is empty"},
		{text, "is not a SQLite database"},
		{dir, "is a directory"},
	} {
		db, err := Open(ctxb(), tc.path, nil)
		if err == nil {
			db.Close()
			t.Errorf("Open(%s) succeeded", tc.path)
			continue
		}
		if !errors.Is(err, ErrNotDatabase) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%s) = %v, want ErrNotDatabase saying %q", tc.path, err, tc.want)
		}
	}
	// Neither file was touched.
	if fi, _ := os.Stat(empty); fi.Size() != 0 {
		t.Error("the empty file was written")
	}
	if b, _ := os.ReadFile(text); string(b) != "my notes, not a database\n" {
		t.Error("the text file was changed")
	}
}

// Processes creating the same new database at once all open it.
func TestConcurrentCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			db, err := Open(ctxb(), path, nil)
			if err == nil {
				err = db.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	left, _ := filepath.Glob(path + ".new-*")
	if len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// A database of schema 1 (before file appends) is upgraded in place and
// keeps its data.
func TestMigrateFromSchema1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := Open(ctxb(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	putChain(t, db.Saver(), "t", 2)
	// Make it a schema 1 database, as the previous release wrote it.
	if _, err := db.w.Exec(`ALTER TABLE files DROP COLUMN appended`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(`UPDATE schema_version SET version = 1`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(ctxb(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.w.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("schema version %d (%v), want %d", v, err, SchemaVersion)
	}
	snap, err := db.Saver().Load(ctxb(), "t", "")
	if err != nil || len(snap.Messages) != 4 {
		t.Fatalf("Load after the upgrade: %v, %v", snap, err)
	}
	cp := &checkpoint.Checkpoint{ThreadID: "t", ID: "app", ParentID: snap.ID, Delta: checkpoint.Delta{Keep: 4,
		Appends: map[string]thread.FileData{"/log": {Content: "x"}}}}
	if err := db.Saver().Put(ctxb(), cp); err != nil {
		t.Fatal(err)
	}
	if snap, err = db.Saver().Load(ctxb(), "t", ""); err != nil || snap.Files["/log"].Content != "x" {
		t.Fatalf("an append after the upgrade: %v, %v", snap.Files, err)
	}
}

// A database of schema 2, whose messages and files were WITHOUT ROWID
// tables, is upgraded to rowid tables with unique keys and keeps its data.
func TestMigrateToRowidTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{ms[0].SQL, ms[1].SQL,
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`, `INSERT INTO schema_version VALUES (2)`,
		`INSERT INTO threads (thread_id, status, created_at, updated_at, head) VALUES ('t', 'idle', 1, 1, 'c1')`,
		`INSERT INTO checkpoints (seq, thread_id, checkpoint_id, step, created_at, keep, msg_count) VALUES (1, 't', 'c1', 0, 1, 0, 2)`,
		`INSERT INTO messages VALUES (1, 1, '{"role":"assistant","parts":[{"type":"text","text":"hello"}]}'), (1, 0, '{"role":"user","parts":[{"type":"text","text":"hi"}]}')`,
		`INSERT INTO files (cp_seq, path, content, appended) VALUES (1, '/a', x'6f6e65', 0)`,
	}
	for _, q := range stmts {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	db, err := Open(ctxb(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	snap, err := db.Saver().Load(ctxb(), "t", "")
	if err != nil || len(snap.Messages) != 2 || snap.Messages[0].Text() != "hi" || snap.Messages[1].Text() != "hello" || snap.Files["/a"].Content != "one" {
		t.Fatalf("Load after the upgrade: %+v, %v", snap, err)
	}
	for _, table := range []string{"messages", "files"} {
		var ddl string
		if err := db.w.QueryRow(`SELECT sql FROM sqlite_master WHERE name = ?`, table).Scan(&ddl); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToUpper(ddl), "WITHOUT ROWID") {
			t.Errorf("%s is still WITHOUT ROWID: %s", table, ddl)
		}
	}
	// The keys stay unique.
	if _, err := db.w.Exec(`INSERT INTO messages (cp_seq, pos, data) VALUES (1, 0, '{}')`); err == nil {
		t.Error("a second message at (1, 0) was accepted")
	}
	if _, err := db.w.Exec(`INSERT INTO files (cp_seq, path, content) VALUES (1, '/a', x'00')`); err == nil {
		t.Error("a second file row at (1, /a) was accepted")
	}
	cp := &checkpoint.Checkpoint{ThreadID: "t", ID: "c2", ParentID: "c1", Delta: checkpoint.Delta{Keep: 2, Messages: []llm.Message{llm.UserText("again")}}}
	if err := db.Saver().Put(ctxb(), cp); err != nil {
		t.Fatal(err)
	}
	if snap, err = db.Saver().Load(ctxb(), "t", ""); err != nil || len(snap.Messages) != 3 {
		t.Fatalf("a Put after the upgrade: %v, %v", snap, err)
	}
}

func TestSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.db")
	db, err := Open(ctxb(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	putChain(t, db.Saver(), "t", 2)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopening keeps the data and does not migrate again.
	db, err = Open(ctxb(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap, err := db.Saver().Load(ctxb(), "t", ""); err != nil || len(snap.Messages) != 4 {
		t.Fatalf("Load after reopen: %v, %v", snap, err)
	}
	if _, err := db.w.Exec(`UPDATE schema_version SET version = ?`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(ctxb(), path, nil)
	if !errors.Is(err, checkpoint.ErrSchemaVersion) {
		t.Fatalf("Open of a newer schema = %v, want ErrSchemaVersion", err)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db", filepath.Join(t.TempDir(), "missing-dir", "x.db")} {
		if db, err := Open(ctxb(), p, nil); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

func TestFileMode(t *testing.T) {
	db := openTemp(t, nil)
	fi, err := os.Stat(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
}

// Two DB handles on one file behave like two processes on one machine.
func TestLeaseAcrossHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.db")
	a, err := Open(ctxb(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctxb(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, err := a.Saver().Acquire(ctxb(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Saver().Acquire(ctxb(), "t", nil)
	if !errors.Is(err, checkpoint.ErrBusy) {
		t.Fatalf("Acquire from another handle = %v, want ErrBusy", err)
	}
	t.Log(err)
	if err := l.Release(ctxb(), checkpoint.StatusIdle); err != nil {
		t.Fatal(err)
	}
	l2, err := b.Saver().Acquire(ctxb(), "t", nil)
	if err != nil {
		t.Fatalf("Acquire after release: %v", err)
	}
	// Closing b ends its lease with status error.
	_ = l2
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	th, err := a.Saver().Thread(ctxb(), "t")
	if err != nil || th.Status != checkpoint.StatusError {
		t.Fatalf("after Close: %+v, %v", th, err)
	}
	if _, err := a.Saver().Acquire(ctxb(), "t", nil); err != nil {
		t.Fatalf("Acquire after the holder closed: %v", err)
	}
}

// setLease rewrites the holder of thread t.
func setLease(t *testing.T, db *DB, host string, pid int, start string, expires time.Time) {
	t.Helper()
	if _, err := db.w.Exec(`UPDATE threads SET lease_host = ?, lease_pid = ?, lease_start = ?, lease_expires = ? WHERE thread_id = 't'`,
		host, pid, start, expires.UnixNano()); err != nil {
		t.Fatal(err)
	}
}

func TestLeaseTakeover(t *testing.T) {
	future, past := time.Now().Add(time.Hour), time.Now().Add(-time.Second)
	cases := []struct {
		name     string
		host     func(db *DB) string
		pid      int
		start    string
		expires  time.Time
		wantBusy bool
	}{
		{"other host, live lease", func(*DB) string { return "elsewhere|x|y" }, 1, "", future, true},
		{"other host, expired lease", func(*DB) string { return "elsewhere|x|y" }, 1, "", past, false},
		{"same host, dead pid, live lease", func(db *DB) string { return db.self.Host }, 1 << 30, "", future, false},
		{"same host, reused pid", func(db *DB) string { return db.self.Host }, os.Getpid(), "not-my-start", future, false},
		{"same host, live pid, expired lease", func(db *DB) string { return db.self.Host }, os.Getpid(), "", past, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := openTemp(t, nil)
			l, err := db.Saver().Acquire(ctxb(), "t", nil)
			if err != nil {
				t.Fatal(err)
			}
			start := tc.start
			if start == "" && tc.pid == os.Getpid() {
				start = db.self.Start
			}
			l.(*lease).mu.Lock() // keep the heartbeat from mattering: it only touches lease_expires
			setLease(t, db, tc.host(db), tc.pid, start, tc.expires)
			l.(*lease).mu.Unlock()
			l2, err := db.Saver().Acquire(ctxb(), "t", nil)
			if tc.wantBusy {
				if !errors.Is(err, checkpoint.ErrBusy) {
					t.Fatalf("Acquire = %v, want ErrBusy", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Acquire = %v, want a takeover", err)
			}
			// The first lease lost the thread; its Release says so and
			// leaves the new holder alone.
			if err := l.Release(ctxb(), checkpoint.StatusIdle); !errors.Is(err, checkpoint.ErrBusy) {
				t.Errorf("Release of a lost lease = %v, want ErrBusy", err)
			}
			if th, _ := db.Saver().Thread(ctxb(), "t"); th == nil || th.Status != checkpoint.StatusBusy {
				t.Errorf("status after the stale Release: %+v", th)
			}
			if err := l2.Release(ctxb(), checkpoint.StatusIdle); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestLeaseHeartbeatAndExpiredStatus(t *testing.T) {
	db := openTemp(t, &Options{LeaseTTL: 300 * time.Millisecond})
	l, err := db.Saver().Acquire(ctxb(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	expiry := func() int64 {
		var e sql.NullInt64
		if err := db.r.QueryRow(`SELECT lease_expires FROM threads WHERE thread_id = 't'`).Scan(&e); err != nil {
			t.Fatal(err)
		}
		return e.Int64
	}
	first := expiry()
	deadline := time.Now().Add(5 * time.Second)
	for expiry() == first {
		if time.Now().After(deadline) {
			t.Fatal("the heartbeat never renewed the lease")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := l.Release(ctxb(), checkpoint.StatusIdle); err != nil {
		t.Fatal(err)
	}
	// A busy thread whose lease expired reads as error.
	if _, err := db.w.Exec(`UPDATE threads SET status = 'busy', lease_token = 'x', lease_host = 'elsewhere', lease_expires = 1`); err != nil {
		t.Fatal(err)
	}
	th, err := db.Saver().Thread(ctxb(), "t")
	if err != nil || th.Status != checkpoint.StatusError {
		t.Fatalf("Thread = %+v, %v; want status error", th, err)
	}
	ths, err := db.Saver().Threads(ctxb(), checkpoint.ListOptions{Status: checkpoint.StatusError})
	if err != nil || len(ths) != 1 {
		t.Fatalf("Threads(error) = %v, %v", ths, err)
	}
}

func TestCheckpointWAL(t *testing.T) {
	db := openTemp(t, nil)
	putChain(t, db.Saver(), "t", 5)
	if err := db.Checkpoint(ctxb()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(db.Path() + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("WAL has %d bytes after a truncating checkpoint", fi.Size())
	}
	var mode string
	if err := db.r.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v", mode, err)
	}
}

// A checkpoint written by an older version keeps its plan in the todos
// column: it loads as the value checkpoint.LegacyTodosValue, and a value
// of that key written later wins.
func TestLegacyTodosColumn(t *testing.T) {
	db := openTemp(t, nil)
	s := db.Saver()
	putChain(t, s, "t", 4) // a..d
	for _, q := range []string{
		`UPDATE checkpoints SET todos = '[{"content":"old","status":"pending"}]' WHERE checkpoint_id = 'b'`,
		// An older value of the key: the column, newer, wins over it.
		`INSERT INTO state_values (cp_seq, key, data) SELECT seq, 'todos', '[]' FROM checkpoints WHERE checkpoint_id = 'a'`,
	} {
		if _, err := db.w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	put := func(id, parent string, v json.RawMessage) {
		t.Helper()
		cp := &checkpoint.Checkpoint{ThreadID: "t", ID: id, ParentID: parent, Delta: checkpoint.Delta{Keep: 8,
			Values: map[string]json.RawMessage{checkpoint.LegacyTodosValue: v}}}
		if err := s.Put(ctxb(), cp); err != nil {
			t.Fatal(err)
		}
	}
	put("e", "d", json.RawMessage(`[{"content":"new","status":"completed"}]`))
	put("f", "e", nil)
	for id, want := range map[string]string{
		"a": `[]`,
		"b": `[{"content":"old","status":"pending"}]`,
		"d": `[{"content":"old","status":"pending"}]`,
		"e": `[{"content":"new","status":"completed"}]`,
		"f": ``,
	} {
		snap, err := s.Load(ctxb(), "t", id)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(snap.Values[checkpoint.LegacyTodosValue]); got != want {
			t.Errorf("%s: todos = %s, want %s", id, got, want)
		}
	}
}
