//go:build unix

package backend_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
)

// hostPathsWorld is a home directory with the user's configuration in it,
// as the CLI protects it.
type hostPathsWorld struct {
	home, user, config, mcp, bashrc string
}

func newHostPathsWorld(t *testing.T) hostPathsWorld {
	t.Helper()
	home := t.TempDir()
	w := hostPathsWorld{
		home:   home,
		user:   filepath.Join(home, ".deepagents"),
		config: filepath.Join(home, ".deepagents", "config.yaml"),
		mcp:    filepath.Join(home, ".deepagents", "mcp.json"),
		bashrc: filepath.Join(home, ".bashrc"),
	}
	for path, body := range map[string]string{
		filepath.Join(w.user, "AGENTS.md"): "be brief\n",
		w.config:                           "secret: sk-config-key\n",
		w.mcp:                              `{"token":"sk-mcp-key"}`,
		filepath.Join(home, "src", "a.go"): "package a // sk-not-secret\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w hostPathsWorld) options() backend.FilesystemOptions {
	return backend.FilesystemOptions{
		ReadOnly:   []string{w.user, w.bashrc},
		Unreadable: []string{w.config, w.mcp},
	}
}

// TestFilesystemHostPaths checks ReadOnly and Unreadable by real path:
// whether the root is the home directory, a parent of it, a path through
// a symbolic link, or the protected directory itself.
func TestFilesystemHostPaths(t *testing.T) {
	ctx := context.Background()
	w := newHostPathsWorld(t)
	link := filepath.Join(t.TempDir(), "home-link")
	if err := os.Symlink(w.home, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		root string
		// prefix is the virtual path of the home directory under root.
		prefix string
		opts   backend.FilesystemOptions
	}{
		{"root at home", w.home, "", w.options()},
		{"root above home", filepath.Dir(w.home), "/" + filepath.Base(w.home), w.options()},
		{"root through a link", link, "", w.options()},
		{"rules through a link", w.home, "", backend.FilesystemOptions{
			ReadOnly:   []string{filepath.Join(link, ".deepagents"), filepath.Join(link, ".bashrc")},
			Unreadable: []string{filepath.Join(link, ".deepagents", "config.yaml"), filepath.Join(link, ".deepagents", "mcp.json")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, err := backend.NewFilesystemBackend(tt.root, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			p := func(rel string) string { return tt.prefix + rel }
			// Writes into the read-only places fail, whatever the op.
			for _, target := range []string{"/.deepagents/AGENTS.md", "/.deepagents/agents/evil.md", "/.bashrc"} {
				if err := fs.Write(ctx, p(target), "x"); !errors.Is(err, backend.ErrPermission) && !errors.Is(err, backend.ErrExists) {
					t.Errorf("write %s: %v, want a permission error", target, err)
				}
				if res := fs.Upload(ctx, []backend.File{{Path: p(target), Content: []byte("x")}}); !errors.Is(res[0].Err, backend.ErrPermission) {
					t.Errorf("upload %s: %v", target, res[0].Err)
				}
				if err := fs.Append(ctx, p(target), "x"); !errors.Is(err, backend.ErrPermission) {
					t.Errorf("append %s: %v", target, err)
				}
			}
			if _, err := fs.Edit(ctx, p("/.deepagents/AGENTS.md"), "be brief", "obey", false); !errors.Is(err, backend.ErrPermission) {
				t.Errorf("edit: %v", err)
			}
			if _, err := os.Stat(w.bashrc); err == nil {
				t.Error(".bashrc was created")
			}
			if _, err := os.Stat(filepath.Join(w.user, "agents")); err == nil {
				t.Error("a subagent was planted")
			}
			if b, _ := os.ReadFile(filepath.Join(w.user, "AGENTS.md")); string(b) != "be brief\n" {
				t.Errorf("AGENTS.md = %q", b)
			}
			// Reading the read-only places works; the secrets do not.
			if r, err := fs.Read(ctx, p("/.deepagents/AGENTS.md"), 0, 0); err != nil || len(r.Lines) != 1 {
				t.Errorf("read AGENTS.md: %v %v", r, err)
			}
			for _, secret := range []string{"/.deepagents/config.yaml", "/.deepagents/mcp.json"} {
				if _, err := fs.Read(ctx, p(secret), 0, 0); !errors.Is(err, backend.ErrPermission) {
					t.Errorf("read %s: %v", secret, err)
				}
				if res := fs.Download(ctx, []string{p(secret)}); !errors.Is(res[0].Err, backend.ErrPermission) {
					t.Errorf("download %s: %v", secret, res[0].Err)
				}
				if _, err := fs.Grep(ctx, backend.GrepQuery{Pattern: "sk-", Path: p(secret)}); !errors.Is(err, backend.ErrPermission) {
					t.Errorf("grep %s: %v", secret, err)
				}
			}
			ms, err := fs.Grep(ctx, backend.GrepQuery{Pattern: "sk-", Path: tt.prefix})
			if err != nil || len(ms) != 1 || !strings.HasSuffix(ms[0].Path, "/src/a.go") {
				t.Errorf("grep of the home: %v %v", ms, err)
			}
			ls, err := fs.List(ctx, p("/.deepagents"))
			if err != nil || len(ls) != 1 || !strings.HasSuffix(ls[0].Path, "AGENTS.md") {
				t.Errorf("list: %v %v", ls, err)
			}
			if _, err := backend.ListText(ctx, fs, p("/.deepagents/config.yaml")); !errors.Is(err, backend.ErrPermission) {
				t.Errorf("ls of a hidden path: %v", err)
			}
			text, err := backend.ListText(ctx, fs, p("/.deepagents"))
			if err != nil || strings.Contains(text, "config.yaml") || !strings.Contains(text, "AGENTS.md") {
				t.Errorf("ls text: %q %v", text, err)
			}
			gl, err := fs.Glob(ctx, "**/*", tt.prefix)
			if err != nil {
				t.Fatal(err)
			}
			for _, fi := range gl {
				if strings.Contains(fi.Path, "config.yaml") || strings.Contains(fi.Path, "mcp.json") {
					t.Errorf("glob shows %s", fi.Path)
				}
			}
			// Elsewhere the workspace is writable as ever.
			if err := fs.Write(ctx, p("/src/b.go"), "package a\n"); err != nil {
				t.Errorf("write elsewhere: %v", err)
			}
			os.Remove(filepath.Join(w.home, "src", "b.go"))
		})
	}
	// A root inside a read-only directory is read-only as a whole.
	fs, err := backend.NewFilesystemBackend(w.user, w.options())
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Write(ctx, "/new.md", "x"); !errors.Is(err, backend.ErrPermission) {
		t.Errorf("write below a read-only root: %v", err)
	}
	if _, err := fs.Read(ctx, "/config.yaml", 0, 0); !errors.Is(err, backend.ErrPermission) {
		t.Errorf("read config.yaml from ~/.deepagents as root: %v", err)
	}
	// In non-virtual mode paths are host paths, matched by real path.
	nv, err := backend.NewFilesystemBackend(w.home, backend.FilesystemOptions{NonVirtual: true, ReadOnly: w.options().ReadOnly, Unreadable: w.options().Unreadable})
	if err != nil {
		t.Fatal(err)
	}
	if err := nv.Write(ctx, filepath.Join(link, ".bashrc"), "x"); !errors.Is(err, backend.ErrPermission) {
		t.Errorf("non-virtual write through a link: %v", err)
	}
	if _, err := nv.Read(ctx, filepath.Join(link, ".deepagents", "config.yaml"), 0, 0); !errors.Is(err, backend.ErrPermission) {
		t.Errorf("non-virtual read through a link: %v", err)
	}
}

// FuzzFilesystemReadOnly writes to any path of a root holding a read-only
// directory: nothing may change inside it.
func FuzzFilesystemReadOnly(f *testing.F) {
	for _, s := range []string{"/.deepagents/x", ".deepagents/agents/a.md", "/./.deepagents//x", "/a/../.deepagents/x", `\.deepagents\x`, "/.deepagents", "/x"} {
		f.Add(s)
	}
	home := f.TempDir()
	user := filepath.Join(home, ".deepagents")
	if err := os.MkdirAll(user, 0o755); err != nil {
		f.Fatal(err)
	}
	fs, err := backend.NewFilesystemBackend(home, backend.FilesystemOptions{ReadOnly: []string{user}})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, p string) {
		fs.Write(ctx, p, "x")
		fs.Upload(ctx, []backend.File{{Path: p, Content: []byte("x")}})
		fs.Append(ctx, p, "x")
		entries, err := os.ReadDir(user)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		if len(entries) != 0 {
			t.Fatalf("%q wrote into the read-only directory: %v", p, entries)
		}
	})
}
