//go:build unix

package backend_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/backendtest"
)

func TestFilesystemConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		fs, err := backend.NewFilesystemBackend(t.TempDir(), backend.FilesystemOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return fs
	})
}

func TestFilesystemNonVirtualConformance(t *testing.T) {
	dir := t.TempDir()
	n := 0
	backendtest.RunWith(t, func(t *testing.T) backend.Backend {
		// Each test gets its own directory under dir, and the suite puts
		// its files there: in non-virtual mode paths are host paths.
		n++
		fs, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{NonVirtual: true})
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}, backendtest.Options{Dir: dir})
}

func TestFilesystemWalkCancelled(t *testing.T) {
	fs := newFS(t)
	ctx := t.Context()
	for i := range 50 {
		if err := fs.Write(ctx, fmt.Sprintf("/d%d/f.txt", i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	fds := openFDs()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := fs.Grep(cctx, backend.GrepQuery{Pattern: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Grep with a cancelled context: %v", err)
	}
	if _, err := fs.Glob(cctx, "**", "/"); !errors.Is(err, context.Canceled) {
		t.Errorf("Glob with a cancelled context: %v", err)
	}
	ms, err := fs.Grep(ctx, backend.GrepQuery{Pattern: "x", Mode: backend.GrepFiles})
	if err != nil || len(ms) != 50 {
		t.Errorf("Grep after: %d matches, %v", len(ms), err)
	}
	if after := openFDs(); fds >= 0 && after != fds {
		t.Errorf("%d descriptors open before the walks, %d after", fds, after)
	}
}

// openFDs counts this process's open descriptors, or -1 when unknown.
func openFDs() int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(es)
}
