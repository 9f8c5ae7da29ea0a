//go:build unix

package backend_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
)

// BenchmarkGrepGoroot greps the Go source tree, as bench/grep does against
// ripgrep: go test -bench GrepGoroot ./backend/
func BenchmarkGrepGoroot(b *testing.B) {
	root := filepath.Join(goroot(b), "src")
	if _, err := os.Stat(root); err != nil {
		b.Skip("no Go source tree:", err)
	}
	fs, err := backend.NewFilesystemBackend(root, backend.FilesystemOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, pattern string }{
		{"literal", "func main"},
		{"regexp-literal", `func \w+\(ctx context\.Context`},
		{"alternation", `TODO|FIXME`},
		{"fold-case", `(?i)deprecated`},
		{"no-literal", `[A-Z][a-z]+[0-9]{3}\b`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := fs.Grep(context.Background(), backend.GrepQuery{Pattern: bc.pattern, Mode: backend.GrepFiles}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGlobGoroot globs the Go source tree.
func BenchmarkGlobGoroot(b *testing.B) {
	root := filepath.Join(goroot(b), "src")
	if _, err := os.Stat(root); err != nil {
		b.Skip("no Go source tree:", err)
	}
	fs, _ := backend.NewFilesystemBackend(root, backend.FilesystemOptions{})
	for b.Loop() {
		if _, err := fs.Glob(context.Background(), "**/*_test.go", "/"); err != nil {
			b.Fatal(err)
		}
	}
}

// goroot returns the Go installation's root, as "go env GOROOT" says.
func goroot(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("go env GOROOT:", err)
	}
	return strings.TrimSpace(string(out))
}
