package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/checkpoint/checkpointtest"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/store/storetest"
)

// EnvURL names the environment variable holding the test server's URL.
const EnvURL = "DEEPAGENTS_TEST_POSTGRES_URL"

func testURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Skip(EnvURL + " is not set; skipping PostgreSQL tests (e.g. " + EnvURL + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	return u
}

func ctxb() context.Context { return context.Background() }

func newSchemaName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "test_" + hex.EncodeToString(b[:])
}

// dropSchema removes a test schema at cleanup.
func dropSchema(t testing.TB, url, schema string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
}

// openTemp opens a DB in a fresh schema, dropped at cleanup.
func openTemp(t testing.TB, opts *Options) *DB {
	t.Helper()
	return openTempAt(t, testURL(t), opts)
}

// openTempAt opens a DB through url in a fresh schema, dropped at cleanup
// (through the test server's own URL).
func openTempAt(t testing.TB, url string, opts *Options) *DB {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Schema == "" {
		o.Schema = newSchemaName()
	}
	dropSchema(t, testURL(t), o.Schema) // registered first, so it runs after Close
	db, err := Open(ctxb(), url, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestSaverConformance(t *testing.T) {
	testURL(t)
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return openTemp(t, nil).Saver() },
		checkpointtest.WithCorrupter(corruptMessages))
}

func TestStoreConformance(t *testing.T) {
	testURL(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t, nil).Store() })
}

func corruptMessages(t *testing.T, s checkpoint.Saver, threadID, checkpointID string) {
	t.Helper()
	db := s.(*Saver).db
	tag, err := db.pool.Exec(ctxb(), `UPDATE `+db.q+`.messages SET data = '{"role":'::bytea WHERE cp_seq =
		(SELECT seq FROM `+db.q+`.checkpoints WHERE thread_id = $1 AND checkpoint_id = $2)`, threadID, checkpointID)
	if err != nil {
		t.Fatal(err)
	}
	if tag.RowsAffected() == 0 {
		t.Fatal("nothing to corrupt")
	}
}

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
		"todos":        `UPDATE S.checkpoints SET todos = '[{'::bytea WHERE checkpoint_id = 'b'`,
		"value":        `INSERT INTO S.state_values (cp_seq, key, data) SELECT seq, 'k', 'nope'::bytea FROM S.checkpoints WHERE checkpoint_id = 'b'`,
		"meta":         `UPDATE S.checkpoints SET meta = '{'::bytea WHERE checkpoint_id = 'c'`,
		"missing msg":  `DELETE FROM S.messages WHERE pos = 1`,
		"message role": `UPDATE S.messages SET data = '{"role":7}'::bytea WHERE pos = 0`,
		"parent loop":  `UPDATE S.checkpoints SET parent_seq = (SELECT seq FROM S.checkpoints WHERE checkpoint_id = 'c') WHERE checkpoint_id = 'a'`,
		"msg count":    `UPDATE S.checkpoints SET msg_count = 100 WHERE checkpoint_id = 'c'`,
		"huge count":   `UPDATE S.checkpoints SET msg_count = 2000000000 WHERE checkpoint_id = 'c'`,
	}
	for name, q := range cases {
		t.Run(name, func(t *testing.T) {
			db := openTemp(t, nil)
			putChain(t, db.Saver(), "t", 3)
			if _, err := db.pool.Exec(ctxb(), replaceS(q, db.q)); err != nil {
				t.Fatal(err)
			}
			_, err := db.Saver().Load(ctxb(), "t", "c")
			if !errors.Is(err, checkpoint.ErrCorrupt) {
				t.Fatalf("Load = %v, want ErrCorrupt", err)
			}
			t.Log(err)
		})
	}
}

func replaceS(q, schema string) string {
	out := []byte{}
	for i := 0; i < len(q); i++ {
		if q[i] == 'S' && i+1 < len(q) && q[i+1] == '.' {
			out = append(out, schema...)
			continue
		}
		out = append(out, q[i])
	}
	return string(out)
}

func TestSchemaVersion(t *testing.T) {
	url := testURL(t)
	schema := newSchemaName()
	dropSchema(t, url, schema)
	db, err := Open(ctxb(), url, &Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	putChain(t, db.Saver(), "t", 2)
	db.Close()
	db, err = Open(ctxb(), url, &Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if snap, err := db.Saver().Load(ctxb(), "t", ""); err != nil || len(snap.Messages) != 4 {
		t.Fatalf("Load after reopen: %v, %v", snap, err)
	}
	if _, err := db.pool.Exec(ctxb(), `UPDATE `+db.q+`.schema_version SET version = $1`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctxb(), url, &Options{Schema: schema}); !errors.Is(err, checkpoint.ErrSchemaVersion) {
		t.Fatalf("Open of a newer schema = %v, want ErrSchemaVersion", err)
	}
}

func TestConcurrentOpen(t *testing.T) {
	url := testURL(t)
	schema := newSchemaName()
	dropSchema(t, url, schema)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			db, err := Open(ctxb(), url, &Options{Schema: schema})
			if err == nil {
				db.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent Open: %v", err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(ctxb(), "postgres://%zz", nil); err == nil {
		t.Error("Open of a bad URL succeeded")
	}
	url := testURL(t)
	if _, err := Open(ctxb(), url, &Options{Schema: "bad\x00name"}); err == nil {
		t.Error("Open with a NUL in the schema name succeeded")
	}
}

// Two DBs (two pools) behave like two processes.
func TestLeaseAcrossPools(t *testing.T) {
	a := openTemp(t, &Options{LeaseCheck: 50 * time.Millisecond})
	b, err := Open(ctxb(), testURL(t), &Options{Schema: a.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, err := a.Saver().Acquire(ctxb(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond) // let the monitor ping
	_, err = b.Saver().Acquire(ctxb(), "t", nil)
	if !errors.Is(err, checkpoint.ErrBusy) {
		t.Fatalf("Acquire from another pool = %v, want ErrBusy", err)
	}
	t.Log(err)
	// A lease whose connection dies is gone: the thread reads as error and
	// can be taken.
	// (The server ends its session, as it would when the process dies.)
	if _, err := b.pool.Exec(ctxb(), `SELECT pg_terminate_backend($1)`, l.(*lease).conn.PgConn().PID()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var th *checkpoint.Thread
	for {
		th, err = b.Saver().Thread(ctxb(), "t")
		if err != nil {
			t.Fatal(err)
		}
		if th.Status == checkpoint.StatusError || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if th.Status != checkpoint.StatusError {
		t.Errorf("status of a thread whose holder vanished = %s, want error", th.Status)
	}
	l2, err := b.Saver().Acquire(ctxb(), "t", nil)
	if err != nil {
		t.Fatalf("Acquire after the holder's connection closed: %v", err)
	}
	if err := l.Release(ctxb(), checkpoint.StatusIdle); !errors.Is(err, checkpoint.ErrBusy) {
		t.Errorf("Release of a lost lease = %v, want ErrBusy", err)
	}
	if th, _ := b.Saver().Thread(ctxb(), "t"); th == nil || th.Status != checkpoint.StatusBusy {
		t.Errorf("the lost lease's Release changed the thread: %+v", th)
	}
	// Closing b releases its lease with status error.
	_ = l2
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if th, err := a.Saver().Thread(ctxb(), "t"); err != nil || th.Status != checkpoint.StatusError {
		t.Errorf("after Close: %+v, %v", th, err)
	}
	l3, err := a.Saver().Acquire(ctxb(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l3.Release(ctxb(), checkpoint.StatusIdle); err != nil {
		t.Fatal(err)
	}
}

func TestSchemasAreIndependent(t *testing.T) {
	a := openTemp(t, nil)
	b := openTemp(t, nil)
	la, err := a.Saver().Acquire(ctxb(), "same", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer la.Release(ctxb(), checkpoint.StatusIdle)
	lb, err := b.Saver().Acquire(ctxb(), "same", nil)
	if err != nil {
		t.Fatalf("Acquire of the same thread ID in another schema: %v", err)
	}
	defer lb.Release(ctxb(), checkpoint.StatusIdle)
	putChain(t, a.Saver(), "x", 2)
	if _, err := b.Saver().Load(ctxb(), "x", ""); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("schema b sees schema a's thread: %v", err)
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
		`UPDATE S.checkpoints SET todos = '[{"content":"old","status":"pending"}]'::bytea WHERE checkpoint_id = 'b'`,
		// An older value of the key: the column, newer, wins over it.
		`INSERT INTO S.state_values (cp_seq, key, data) SELECT seq, 'todos', '[]'::bytea FROM S.checkpoints WHERE checkpoint_id = 'a'`,
	} {
		if _, err := db.pool.Exec(ctxb(), replaceS(q, db.q)); err != nil {
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
