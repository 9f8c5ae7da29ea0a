package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/store"
)

// lastThreadNamespace is where the database's store keeps, per workspace,
// the thread that last ran there: what --continue continues.
var lastThreadNamespace = []string{"cli", "last_thread"}

// rememberThread records that thread ran in dir.
func rememberThread(ctx context.Context, db *persist.DB, dir, thread string) error {
	return db.Store.Put(ctx, lastThreadNamespace, dir, map[string]any{"thread_id": thread})
}

// lastThread returns the thread that last ran in dir.
func lastThread(ctx context.Context, db *persist.DB, dir string) (string, error) {
	it, err := db.Store.Get(ctx, lastThreadNamespace, dir)
	if errors.Is(err, store.ErrNotFound) {
		return "", usageError{fmt.Errorf("--continue: no thread has run in %s yet", dir)}
	}
	if err != nil {
		return "", fmt.Errorf("--continue: %w", err)
	}
	id, _ := it.Value["thread_id"].(string)
	if id == "" {
		return "", fmt.Errorf("--continue: the record of %s's last thread is unreadable", dir)
	}
	return id, nil
}
