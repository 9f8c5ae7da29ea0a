//go:build unix

package backend_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
)

// An edit waits while another writer (a workspace's merge) holds the
// file's lock: it reads the file as that writer left it, so neither
// change is lost. Several rounds, as the edit races the writer without
// the lock.
func TestLockHostFileHoldsEditsBack(t *testing.T) {
	dir := t.TempDir()
	fsb, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		name := "f" + strconv.Itoa(i) + ".txt"
		host := filepath.Join(dir, name)
		if err := os.WriteFile(host, []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		unlock := backend.LockHostFile(host)
		started, done := make(chan struct{}), make(chan error, 1)
		go func() {
			close(started)
			_, err := fsb.Edit(context.Background(), "/"+name, "a\n", "edited\n", false)
			done <- err
		}()
		<-started
		// The other writer replaces the file while it holds the lock.
		if err := os.WriteFile(host, []byte("a\nmerged\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		unlock()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(host); string(b) != "edited\nmerged\n" {
			t.Fatalf("round %d: %s = %q, want both changes", i, name, b)
		}
	}
}
