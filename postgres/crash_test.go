package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/crashtest"
)

const envCrashSchema = "DEEPAGENTS_CRASH_POSTGRES_SCHEMA"

// TestCrashChild is the child process of TestCrash.
func TestCrashChild(t *testing.T) {
	crashtest.Child(t, "postgres", func() (checkpoint.Saver, error) {
		db, err := Open(context.Background(), os.Getenv(EnvURL), &Options{Schema: os.Getenv(envCrashSchema)})
		if err != nil {
			return nil, err
		}
		return db.Saver(), nil
	})
}

// TestCrash kills a process that is writing checkpoints with SIGKILL and
// checks that every checkpoint it acknowledged survived and that the
// thread's advisory lock went with the process.
func TestCrash(t *testing.T) {
	url := testURL(t)
	schema := newSchemaName()
	dropSchema(t, url, schema)
	crashtest.Parent(t, "postgres", "TestCrashChild", []string{envCrashSchema + "=" + schema}, 60,
		func(t *testing.T) (checkpoint.Saver, func() error) {
			db, err := Open(context.Background(), url, &Options{Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			return db.Saver(), db.Close
		})
}
