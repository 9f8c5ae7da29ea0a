package sandbox_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/netproxy"
)

// BenchmarkSandboxExecute runs `true` in the sandbox with the CLI's
// defaults (the protected paths, and, in "hidden", a read_file deny rule's
// glob over a workspace of 10,000 files): what a sandbox costs per execute
// call, before the command's own work.
func BenchmarkSandboxExecute(b *testing.B) {
	ws := b.TempDir()
	for i := range 10_000 {
		p := filepath.Join(ws, fmt.Sprintf("d%02d/s%02d/f%d.go", i%100, i/100%10, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		bw   sandbox.Bubblewrap
	}{
		{"protected", sandbox.Bubblewrap{Protected: backend.ProtectedPaths}},
		{"hidden", sandbox.Bubblewrap{Protected: backend.ProtectedPaths, HiddenGlobs: []string{"**/.env"}}},
		{"proxy", sandbox.Bubblewrap{Protected: backend.ProtectedPaths, Proxy: benchProxy(b)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			bw := c.bw
			s, err := sandbox.NewLocalShell(ws, sandbox.LocalShellOptions{Sandbox: &bw})
			if err != nil {
				b.Skipf("no sandbox here: %v", err)
			}
			defer s.Close()
			for b.Loop() {
				if r, err := s.Execute(context.Background(), "true", 0); err != nil || r.ExitCode != 0 {
					b.Fatalf("%+v %v", r, err)
				}
			}
		})
	}
}

// benchProxy is a network proxy for the "proxy" case: a command behind
// the bridge, which it does not use.
func benchProxy(b *testing.B) *netproxy.Proxy {
	p, err := netproxy.New(netproxy.Config{Allow: []string{"@go"}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	return p
}
