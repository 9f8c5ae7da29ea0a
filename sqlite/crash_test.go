package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/crashtest"
)

const envCrashDB = "DEEPAGENTS_CRASH_SQLITE_PATH"

// TestCrashChild is the child process of TestCrash.
func TestCrashChild(t *testing.T) {
	crashtest.Child(t, "sqlite", func() (checkpoint.Saver, error) {
		db, err := Open(context.Background(), os.Getenv(envCrashDB), nil)
		if err != nil {
			return nil, err
		}
		return db.Saver(), nil
	})
}

// TestCrash kills a process that is writing checkpoints with SIGKILL and
// checks that every checkpoint it acknowledged survived.
func TestCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crash.db")
	crashtest.Parent(t, "sqlite", "TestCrashChild", []string{envCrashDB + "=" + path}, 60,
		func(t *testing.T) (checkpoint.Saver, func() error) {
			db, err := Open(context.Background(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			return db.Saver(), db.Close
		})
}
