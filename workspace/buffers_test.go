package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/workspace"
)

// buffers are an editor's: texts by host path, the calls made.
type buffers struct {
	mu    sync.Mutex
	text  map[string]string
	asked []string
}

func (b *buffers) read(_ context.Context, p string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, "read "+p)
	if t, ok := b.text[p]; ok {
		return t, nil
	}
	data, err := os.ReadFile(p)
	return string(data), err
}

func (b *buffers) write(_ context.Context, p, content string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, "write "+p)
	b.text[p] = content
	return nil
}

// TestOpenBuffers: with an editor's buffers, the workspace folder's text
// files are read and written through them, each capability on its own;
// the other routes, greps, commands, and paths the rules or the host keep
// out of reach never reach the editor.
func TestOpenBuffers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		read, write bool
		shell       bool
		// sees is what read_file reads of /a.txt; asked the editor's calls
		// (DIR for the folder).
		sees  string
		asked []string
	}{
		{name: "none", sees: "disk"},
		{name: "read", read: true, sees: "buffer", asked: []string{"read DIR/a.txt"}},
		{name: "write", write: true, sees: "disk", asked: []string{"write DIR/new.txt"}},
		{name: "both", read: true, write: true, sees: "buffer", asked: []string{"read DIR/a.txt", "write DIR/new.txt"}},
		{name: "both with a shell", read: true, write: true, shell: true, sees: "buffer", asked: []string{"read DIR/a.txt", "write DIR/new.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir, user := t.TempDir(), t.TempDir()
			write(t, filepath.Join(dir, "a.txt"), "disk\n")
			write(t, filepath.Join(dir, ".env"), "KEY=1\n")
			write(t, filepath.Join(dir, "keys.txt"), "sk\n")
			write(t, filepath.Join(user, "AGENTS.md"), "be brief\n")
			ed := &buffers{text: map[string]string{filepath.Join(dir, "a.txt"): "buffer\n", filepath.Join(dir, ".env"): "KEY=2\n"}}
			var bufs backend.Buffers
			if tc.read {
				bufs.ReadText = ed.read
			}
			if tc.write {
				bufs.WriteText = ed.write
			}
			ws, err := workspace.Open(workspace.Config{
				Dir: dir, UserDir: user, Shell: tc.shell, Rules: denyRead(t, "**/.env"),
				Unreadable: []string{filepath.Join(dir, "keys.txt")},
				Buffers:    bufs,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			b := ws.Backend
			if _, ok := b.(backend.Sandbox); ok != tc.shell {
				t.Errorf("a Sandbox: %v, want %v", ok, tc.shell)
			}
			res, err := b.Read(ctx, "/a.txt", 0, 0)
			if err != nil || strings.Join(res.Lines, "\n") != tc.sees {
				t.Errorf("read /a.txt: %v %v, want %q", res.Lines, err, tc.sees)
			}
			if err := b.Write(ctx, "/new.txt", "new\n"); err != nil {
				t.Error(err)
			}
			// Never asked: the user's folder, a path the rules deny, an
			// unreadable host path, a grep.
			if res, err := b.Read(ctx, "/user/AGENTS.md", 0, 0); err != nil || len(res.Lines) != 1 {
				t.Errorf("read /user/AGENTS.md: %v %v", res, err)
			}
			if _, err := b.Read(ctx, "/.env", 0, 0); !errors.Is(err, backend.ErrPermission) {
				t.Errorf("read /.env: %v, want a denial", err)
			}
			if _, err := b.Read(ctx, "/keys.txt", 0, 0); !errors.Is(err, backend.ErrPermission) {
				t.Errorf("read /keys.txt: %v, want a denial", err)
			}
			if ms, err := b.Grep(ctx, backend.GrepQuery{Pattern: "buffer", Path: "/a.txt"}); err != nil || len(ms) != 0 {
				t.Errorf("grep found the buffer: %v %v", ms, err)
			}
			var asked []string
			for _, c := range ed.asked {
				asked = append(asked, strings.ReplaceAll(c, dir, "DIR"))
			}
			if !slices.Equal(asked, tc.asked) {
				t.Errorf("the editor was asked %q, want %q", asked, tc.asked)
			}
			_, err = os.Stat(filepath.Join(dir, "new.txt"))
			if onDisk := err == nil; onDisk == tc.write {
				t.Errorf("new.txt on disk: %v (the editor saves nothing here)", onDisk)
			}
		})
	}
}
