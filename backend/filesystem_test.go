package backend_test

import (
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/backendtest"
)

func TestFilesystemConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		fs, err := backend.NewFilesystem(t.TempDir(), backend.FilesystemOptions{})
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
		fs, err := backend.NewFilesystem(dir, backend.FilesystemOptions{NonVirtual: true})
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}, backendtest.Options{Dir: dir})
}
