package persist

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/postgres"
)

func TestParse(t *testing.T) {
	home, _ := os.UserHomeDir()
	cases := []struct {
		dsn    string
		kind   Kind
		target string
		bad    bool
	}{
		{"/var/lib/x.db", KindSQLite, "/var/lib/x.db", false},
		{"rel/x.db", KindSQLite, "rel/x.db", false},
		{"  x.db ", KindSQLite, "x.db", false},
		{"sqlite:/a/b.db", KindSQLite, "/a/b.db", false},
		{"sqlite:///a/b.db", KindSQLite, "/a/b.db", false},
		{"SQLITE:c.db", KindSQLite, "c.db", false},
		{"file:/a/b.db", KindSQLite, "/a/b.db", false},
		{"~/d.db", KindSQLite, filepath.Join(home, "d.db"), false},
		{"postgres://u@h:5432/db?sslmode=disable", KindPostgres, "postgres://u@h:5432/db?sslmode=disable", false},
		{"postgresql://h/db", KindPostgres, "postgresql://h/db", false},
		{"memory:", KindMemory, "", false},
		{":memory:", KindMemory, "", false},
		{"", "", "", true},
		{"   ", "", "", true},
		{"sqlite:", "", "", true},
		{"mysql://h/db", "", "", true},
		{"redis://h", "", "", true},
		{"a\x00b", "", "", true},
	}
	for _, c := range cases {
		kind, target, err := Parse(c.dsn)
		if c.bad {
			if !errors.Is(err, ErrDSN) {
				t.Errorf("Parse(%q) = %v, %q, %v; want ErrDSN", c.dsn, kind, target, err)
			}
			continue
		}
		if err != nil || kind != c.kind || target != c.target {
			t.Errorf("Parse(%q) = %v, %q, %v; want %v, %q", c.dsn, kind, target, err, c.kind, c.target)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"x.db", "postgres://h/db", "memory:", "sqlite:", "a://b", "~/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		kind, target, err := Parse(dsn)
		if err != nil {
			return
		}
		switch kind {
		case KindSQLite:
			if target == "" {
				t.Fatalf("Parse(%q): empty path", dsn)
			}
		case KindPostgres:
			if !strings.Contains(strings.ToLower(target), "postgres") {
				t.Fatalf("Parse(%q) = postgres %q", dsn, target)
			}
		case KindMemory:
		default:
			t.Fatalf("Parse(%q): kind %q", dsn, kind)
		}
	})
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/tmp/xdg")
	if p, err := DefaultPath(); err != nil || p != "/tmp/xdg/deepagents/deepagents.db" {
		t.Errorf("DefaultPath = %q, %v", p, err)
	}
	t.Setenv("XDG_DATA_HOME", "relative") // ignored: must be absolute
	if p, err := DefaultPath(); err != nil || !strings.HasSuffix(p, filepath.Join("deepagents", "deepagents.db")) || strings.HasPrefix(p, "relative") {
		t.Errorf("DefaultPath = %q, %v", p, err)
	}
}

func TestOpenKinds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	dsns := map[string]Kind{
		"memory:":                                KindMemory,
		filepath.Join(dir, "sub", "dir", "a.db"): KindSQLite,
		"sqlite:" + filepath.Join(dir, "b.db"):   KindSQLite,
		"":                                       KindSQLite, // DefaultPath
	}
	if u := os.Getenv("DEEPAGENTS_TEST_POSTGRES_URL"); u != "" {
		dsns[withSchema(t, u)] = KindPostgres
	}
	for dsn, kind := range dsns {
		db, err := Open(ctx, dsn, nil)
		if err != nil {
			t.Fatalf("Open(%q): %v", dsn, err)
		}
		if db.Kind != kind {
			t.Errorf("Open(%q).Kind = %v, want %v", dsn, db.Kind, kind)
		}
		thread := "persist-test-" + string(kind)
		_ = db.Saver.DeleteThread(ctx, thread)
		if err := db.Saver.Put(ctx, &checkpoint.Checkpoint{ThreadID: thread, ID: "1",
			Delta: checkpoint.Delta{Messages: []llm.Message{llm.UserText("hi")}}}); err != nil {
			t.Errorf("%s: Put: %v", dsn, err)
		}
		if err := db.Store.Put(ctx, []string{"t"}, "k", map[string]any{"v": 1}); err != nil {
			t.Errorf("%s: store Put: %v", dsn, err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("%s: Close: %v", dsn, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "deepagents", "deepagents.db")); err != nil {
		t.Errorf("the default database was not created: %v", err)
	}
	if _, err := Open(ctx, "mysql://x", nil); !errors.Is(err, ErrDSN) {
		t.Errorf("Open(mysql) = %v", err)
	}
}

func TestOpenPostgresSchemaParam(t *testing.T) {
	u := os.Getenv("DEEPAGENTS_TEST_POSTGRES_URL")
	if u == "" {
		t.Skip("DEEPAGENTS_TEST_POSTGRES_URL is not set")
	}
	db, err := Open(context.Background(), withSchema(t, u), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if strings.Contains(db.Location, "schema=") {
		t.Errorf("schema parameter passed on: %s", db.Location)
	}
	var schema string
	if err := db.Saver.(*postgres.Saver).DB().Pool().QueryRow(context.Background(),
		`SELECT nspname FROM pg_namespace WHERE nspname = 'persist_param_test'`).Scan(&schema); err != nil {
		t.Fatalf("schema not created: %v", err)
	}
}

// withSchema adds a schema parameter to a PostgreSQL URL and drops that
// schema at cleanup.
func withSchema(t *testing.T, u string) string {
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		_, _ = conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS persist_param_test CASCADE`)
	})
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "schema=persist_param_test"
}
