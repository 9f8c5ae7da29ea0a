//go:build unix

package backend_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/backendtest"
	"github.com/deepagents-go/deepagents/backend/sandbox"
)

// editor plays an editor's buffers: the text of the files it has open
// with changes not saved (host path -> text), the others read from disk
// when asked, as an editor opens them. Writes save to disk when saves is
// set, as editors do, and update the buffer alone otherwise.
type editor struct {
	mu    sync.Mutex
	open  map[string]string
	saves bool
	asked []string // "read PATH", "write PATH CONTENT"
	// fail, when set, is the error of every call; hook, when set, runs
	// before each call answers (to block, or to change the disk meanwhile).
	fail error
	hook func(ctx context.Context, path string)
}

func (e *editor) read(ctx context.Context, path string) (string, error) {
	e.mu.Lock()
	e.asked = append(e.asked, "read "+path)
	text, ok := e.open[path]
	fail, hook := e.fail, e.hook
	e.mu.Unlock()
	if hook != nil {
		hook(ctx, path)
	}
	if fail != nil {
		return "", fail
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if ok {
		return text, nil
	}
	// As an editor opens a file, links followed; a FIFO is refused rather
	// than waited on, so that a test that wrongly asks fails, not hangs.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	data, err := os.ReadFile(path)
	return string(data), err
}

func (e *editor) write(ctx context.Context, path, content string) error {
	e.mu.Lock()
	e.asked = append(e.asked, "write "+path+" "+content)
	fail, hook := e.fail, e.hook
	e.mu.Unlock()
	if hook != nil {
		hook(ctx, path)
	}
	if fail != nil {
		return fail
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.saves {
		// Saved, the buffer is the disk's (and follows its changes).
		delete(e.open, path)
		return os.WriteFile(path, []byte(content), 0o644)
	}
	if e.open == nil {
		e.open = map[string]string{}
	}
	e.open[path] = content
	return nil
}

func (e *editor) calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.asked)
}

// buffers are e's functions, read and write as asked.
func (e *editor) buffers(read, write bool) backend.Buffers {
	var b backend.Buffers
	if read {
		b.ReadText = e.read
	}
	if write {
		b.WriteText = e.write
	}
	return b
}

// TestBufferedConformance: a Buffered filesystem, and a Buffered shell,
// over an editor that saves what it is given, keep every rule of a
// backend.
func TestBufferedConformance(t *testing.T) {
	t.Run("Filesystem", func(t *testing.T) {
		backendtest.Run(t, func(t *testing.T) backend.Backend {
			fs, err := backend.NewFilesystemBackend(t.TempDir(), backend.FilesystemOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := backend.NewBuffered(fs, (&editor{saves: true}).buffers(true, true))
			if err != nil {
				t.Fatal(err)
			}
			return b
		})
	})
	t.Run("LocalShell", func(t *testing.T) {
		backendtest.Run(t, func(t *testing.T) backend.Backend {
			b, err := backend.NewBuffered(newShell(t, sandbox.LocalShellOptions{}), (&editor{saves: true}).buffers(true, true))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := b.(backend.Sandbox); !ok {
				t.Fatalf("a buffered LocalShell is a %T, not a Sandbox", b)
			}
			return b
		})
	})
}

// TestBuffered: which operations the buffers see, with which paths, and
// that every path the disk backend refuses is refused the same way before
// the editor is asked anything.
func TestBuffered(t *testing.T) {
	// An op's path may start with OUT, the host path of the folder beside
	// the root.
	type op func(ctx context.Context, b backend.Backend, out string) (string, error)
	read := func(p string, offset, limit int) op {
		return func(ctx context.Context, b backend.Backend, out string) (string, error) {
			res, err := b.Read(ctx, strings.Replace(p, "OUT", out, 1), offset, limit)
			return strings.Join(res.Lines, "|"), err
		}
	}
	write := func(p, content string) op {
		return func(ctx context.Context, b backend.Backend, _ string) (string, error) {
			return "", b.Write(ctx, p, content)
		}
	}
	upload := func(p, content string) op {
		return func(ctx context.Context, b backend.Backend, _ string) (string, error) {
			return "", b.Upload(ctx, []backend.File{{Path: p, Content: []byte(content)}})[0].Err
		}
	}
	edit := func(p, old, new string) op {
		return func(ctx context.Context, b backend.Backend, _ string) (string, error) {
			n, err := b.Edit(ctx, p, old, new, false)
			return strings.Repeat("+", n), err
		}
	}
	grep := func(pattern string) op {
		return func(ctx context.Context, b backend.Backend, _ string) (string, error) {
			ms, err := b.Grep(ctx, backend.GrepQuery{Pattern: pattern})
			var out []string
			for _, m := range ms {
				out = append(out, m.Path)
			}
			return strings.Join(out, "|"), err
		}
	}
	errBoom := errors.New("boom")
	for _, tc := range []struct {
		name string
		// disk are the root's files; open the editor's buffers (by path
		// below the root); setup plants what a file cannot say (links,
		// FIFOs), root and out (a folder beside the root) given.
		disk, open  map[string]string
		setup       func(t *testing.T, root, out string)
		read, write bool
		// buffersOnly: the editor does not save what it is given.
		buffersOnly bool
		fail        error
		// hook runs in the editor before it answers.
		hook    func(t *testing.T, root, out string) func(ctx context.Context, path string)
		opts    backend.FilesystemOptions
		timeout time.Duration
		op      op
		want    string
		wantErr error
		// asked are the editor's calls, ROOT standing for the root.
		asked []string
		// after are files on disk once done.
		after map[string]string
	}{
		{name: "read sees the buffer", disk: map[string]string{"a.txt": "disk\n"}, open: map[string]string{"a.txt": "buffer\nmore\n"}, read: true, write: true,
			op: read("/a.txt", 0, 0), want: "buffer|more", asked: []string{"read ROOT/a.txt"}},
		{name: "read a window of the buffer", disk: map[string]string{"a.txt": "1\n"}, open: map[string]string{"a.txt": "1\r\n2\r\n3\r\n"}, read: true,
			op: read("a.txt", 1, 1), want: "2", asked: []string{"read ROOT/a.txt"}},
		{name: "read past the buffer's end", disk: map[string]string{"a.txt": "1\n2\n3\n4\n5\n6\n"}, open: map[string]string{"a.txt": "1\n2\n3\n"}, read: true,
			op: read("/a.txt", 5, 0), wantErr: backend.ErrOffset, asked: []string{"read ROOT/a.txt"}},
		{name: "read a file the editor has not open", disk: map[string]string{"src/b.go": "package b\n"}, read: true,
			op: read("/src/b.go", 0, 0), want: "package b", asked: []string{"read ROOT/src/b.go"}},
		{name: "read without the read capability", disk: map[string]string{"a.txt": "disk\n"}, open: map[string]string{"a.txt": "buffer\n"}, write: true,
			op: read("/a.txt", 0, 0), want: "disk"},
		{name: "read a binary file", disk: map[string]string{"a.bin": "a\x00b\n"}, read: true,
			op: read("/a.bin", 0, 0), want: "a\x00b"},
		{name: "read a file that is not UTF-8", disk: map[string]string{"a.txt": "caf\xe9\n"}, read: true,
			op: read("/a.txt", 0, 0), want: "caf\xe9"},
		{name: "read a file over the read limit", disk: map[string]string{"big.txt": strings.Repeat("x", 1<<20) + "\nend\n"}, read: true, opts: backend.FilesystemOptions{MaxFileSizeMB: 1},
			op: read("/big.txt", 1, 0), want: "end"},
		{name: "read a missing file", read: true, op: read("/missing.txt", 0, 0), wantErr: backend.ErrNotFound},
		{name: "read ../", read: true, op: read("/../out/secret.txt", 0, 0), wantErr: backend.ErrInvalidPath},
		// A host path is a name below the root, which has no such file.
		{name: "read an absolute host path", read: true, op: read("OUT/secret.txt", 0, 0), wantErr: backend.ErrNotFound},
		{name: "read a link out of the folder", read: true,
			setup: func(t *testing.T, root, out string) {
				symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(root, "link.txt"))
			},
			op: read("/link.txt", 0, 0), wantErr: backend.ErrPermission},
		{name: "read through a folder linked out", read: true,
			setup: func(t *testing.T, root, out string) { symlink(t, out, filepath.Join(root, "dir")) },
			op:    read("/dir/secret.txt", 0, 0), wantErr: backend.ErrPermission},
		{name: "read a link inside the folder", read: true, disk: map[string]string{"a.txt": "a\n"},
			setup: func(t *testing.T, root, out string) {
				symlink(t, filepath.Join(root, "a.txt"), filepath.Join(root, "b.txt"))
			},
			op: read("/b.txt", 0, 0), wantErr: backend.ErrPermission},
		{name: "read an unreadable path", read: true, disk: map[string]string{"keys/k.txt": "key\n"},
			op: read("/keys/k.txt", 0, 0), wantErr: backend.ErrPermission},
		{name: "read a FIFO", read: true,
			setup: func(t *testing.T, root, out string) {
				if err := mkfifo(filepath.Join(root, "fifo")); err != nil {
					t.Skip(err)
				}
			},
			op: read("/fifo", 0, 0), wantErr: backend.ErrPermission},
		{name: "read a folder", read: true, disk: map[string]string{"d/a.txt": "a\n"}, op: read("/d", 0, 0), wantErr: backend.ErrIsDir},
		{name: "the editor fails a read", read: true, disk: map[string]string{"a.txt": "a\n"}, fail: errBoom,
			op: read("/a.txt", 0, 0), wantErr: errBoom, asked: []string{"read ROOT/a.txt"}},
		{name: "the editor's answer is over the limit", read: true, disk: map[string]string{"a.txt": "a\n"}, open: map[string]string{"a.txt": strings.Repeat("y", 1<<20+1)}, opts: backend.FilesystemOptions{MaxFileSizeMB: 1},
			op: read("/a.txt", 0, 0), wantErr: backend.ErrTooLarge, asked: []string{"read ROOT/a.txt"}},
		{name: "the editor never answers a read", read: true, disk: map[string]string{"a.txt": "a\n"}, timeout: 50 * time.Millisecond,
			hook: func(*testing.T, string, string) func(context.Context, string) {
				return func(ctx context.Context, _ string) { <-ctx.Done() }
			},
			op: read("/a.txt", 0, 0), wantErr: context.DeadlineExceeded, asked: []string{"read ROOT/a.txt"}},
		{name: "a link takes the file's place while the editor reads", read: true, disk: map[string]string{"a.txt": "a\n"},
			hook: func(t *testing.T, root, out string) func(context.Context, string) {
				return func(context.Context, string) {
					os.Remove(filepath.Join(root, "a.txt"))
					symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(root, "a.txt"))
				}
			},
			op: read("/a.txt", 0, 0), wantErr: backend.ErrPermission, asked: []string{"read ROOT/a.txt"}},

		{name: "write a new file", read: true, write: true, op: write("/new/dir/x.txt", "x\n"),
			asked: []string{"write ROOT/new/dir/x.txt x\n"}, after: map[string]string{"new/dir/x.txt": "x\n"}},
		{name: "write without the write capability", read: true, op: write("/x.txt", "x\n"), after: map[string]string{"x.txt": "x\n"}},
		{name: "write an existing file", write: true, disk: map[string]string{"a.txt": "a\n"}, op: write("/a.txt", "b\n"), wantErr: backend.ErrExists},
		{name: "write a link's name", write: true,
			setup: func(t *testing.T, root, out string) {
				symlink(t, filepath.Join(out, "new.txt"), filepath.Join(root, "l.txt"))
			},
			op: write("/l.txt", "x\n"), wantErr: backend.ErrExists},
		{name: "write through a folder linked out", write: true,
			setup: func(t *testing.T, root, out string) { symlink(t, out, filepath.Join(root, "dir")) },
			op:    write("/dir/new.txt", "x\n"), wantErr: backend.ErrPermission},
		{name: "write ../", write: true, op: write("../x.txt", "x\n"), wantErr: backend.ErrInvalidPath},
		{name: "write a read-only path", write: true, op: write("/ro/x.txt", "x\n"), wantErr: backend.ErrPermission},
		{name: "write an empty file", write: true, op: write("/empty.txt", ""), after: map[string]string{"empty.txt": ""}},
		{name: "write binary content", write: true, op: write("/b.bin", "a\x00b"), after: map[string]string{"b.bin": "a\x00b"}},
		{name: "the editor fails a write", write: true, fail: errBoom, op: write("/x.txt", "x\n"), wantErr: errBoom, asked: []string{"write ROOT/x.txt x\n"}},
		// (An editor that saved would have written through the link: the
		// check after it can only tell.)
		{name: "a link takes the file's place while the editor writes", write: true, buffersOnly: true,
			hook: func(t *testing.T, root, out string) func(context.Context, string) {
				return func(context.Context, string) { symlink(t, filepath.Join(out, "new.txt"), filepath.Join(root, "x.txt")) }
			},
			op: write("/x.txt", "x\n"), wantErr: backend.ErrPermission, asked: []string{"write ROOT/x.txt x\n"}},
		{name: "upload replaces a file", write: true, disk: map[string]string{"a.txt": "a\n"}, op: upload("/a.txt", "b\n"),
			asked: []string{"write ROOT/a.txt b\n"}, after: map[string]string{"a.txt": "b\n"}},
		{name: "upload over a link", write: true,
			setup: func(t *testing.T, root, out string) {
				symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(root, "l.txt"))
			},
			op: upload("/l.txt", "x\n"), wantErr: backend.ErrPermission},
		{name: "upload over a folder", write: true, disk: map[string]string{"d/a.txt": "a\n"}, op: upload("/d", "x\n"), wantErr: backend.ErrIsDir},
		{name: "upload binary content", write: true, op: upload("/b.bin", "\xff\xfe"), after: map[string]string{"b.bin": "\xff\xfe"}},

		{name: "edit the buffer", read: true, write: true, disk: map[string]string{"a.txt": "hello\n"}, open: map[string]string{"a.txt": "hello world\n"},
			op: edit("/a.txt", "world", "there"), want: "+",
			asked: []string{"read ROOT/a.txt", "write ROOT/a.txt hello there\n"}, after: map[string]string{"a.txt": "hello there\n"}},
		{name: "edit with the write capability alone", write: true, disk: map[string]string{"a.txt": "hello\n"}, open: map[string]string{"a.txt": "hello world\n"},
			op: edit("/a.txt", "hello", "bye"), want: "+",
			asked: []string{"write ROOT/a.txt bye\n"}, after: map[string]string{"a.txt": "bye\n"}},
		{name: "edit with the read capability alone", read: true, disk: map[string]string{"a.txt": "hello\n"}, open: map[string]string{"a.txt": "hello world\n"},
			op: edit("/a.txt", "hello", "bye"), want: "+", after: map[string]string{"a.txt": "bye\n"}},
		{name: "edit a string the buffer lacks", read: true, write: true, disk: map[string]string{"a.txt": "hello\n"}, open: map[string]string{"a.txt": "bye\n"},
			op: edit("/a.txt", "hello", "x"), wantErr: backend.ErrNoMatch, asked: []string{"read ROOT/a.txt"}, after: map[string]string{"a.txt": "hello\n"}},
		{name: "an edit that empties the file", read: true, write: true, disk: map[string]string{"a.txt": "hello"},
			op: edit("/a.txt", "hello", ""), want: "+", asked: []string{"read ROOT/a.txt"}, after: map[string]string{"a.txt": ""}},
		{name: "edit a binary file", read: true, write: true, disk: map[string]string{"a.bin": "a\x00b"},
			op: edit("/a.bin", "b", "c"), want: "+", after: map[string]string{"a.bin": "a\x00c"}},
		{name: "edit a link out of the folder", read: true, write: true,
			setup: func(t *testing.T, root, out string) {
				symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(root, "link.txt"))
			},
			op: edit("/link.txt", "secret", "x"), wantErr: backend.ErrPermission},
		{name: "edit a read-only path", read: true, write: true, disk: map[string]string{"ro/a.txt": "a\n"}, op: edit("/ro/a.txt", "a", "b"), wantErr: backend.ErrPermission},

		{name: "grep stays on disk", read: true, write: true, disk: map[string]string{"a.txt": "disk\n"}, open: map[string]string{"a.txt": "buffer\n"},
			op: grep("buffer"), want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			root, out := filepath.Join(base, "root"), filepath.Join(base, "out")
			for _, d := range []string{root, out} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, filepath.Join(out, "secret.txt"), "secret\n")
			for p, c := range tc.disk {
				writeFile(t, filepath.Join(root, p), c)
			}
			if tc.setup != nil {
				tc.setup(t, root, out)
			}
			opts := tc.opts
			opts.ReadOnly = []string{filepath.Join(root, "ro")}
			opts.Unreadable = []string{filepath.Join(root, "keys")}
			fs, err := backend.NewFilesystemBackend(root, opts)
			if err != nil {
				t.Fatal(err)
			}
			e := &editor{open: map[string]string{}, saves: !tc.buffersOnly, fail: tc.fail}
			for p, c := range tc.open {
				e.open[filepath.Join(root, p)] = c
			}
			if tc.hook != nil {
				e.hook = tc.hook(t, root, out)
			}
			b, err := backend.NewBuffered(fs, e.buffers(tc.read, tc.write))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			got, err := tc.op(ctx, b, out)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			case tc.wantErr == nil && got != tc.want:
				t.Errorf("got %q, want %q", got, tc.want)
			}
			var asked []string
			for _, c := range e.calls() {
				asked = append(asked, strings.ReplaceAll(c, root, "ROOT"))
			}
			if !slices.Equal(asked, tc.asked) {
				t.Errorf("the editor was asked %q, want %q", asked, tc.asked)
			}
			for p, want := range tc.after {
				if data, err := os.ReadFile(filepath.Join(root, p)); err != nil || string(data) != want {
					t.Errorf("%s on disk: %q %v, want %q", p, data, err, want)
				}
			}
			if data, _ := os.ReadFile(filepath.Join(out, "secret.txt")); string(data) != "secret\n" {
				t.Errorf("the file out of the folder was changed: %q", data)
			}
			if _, err := os.Lstat(filepath.Join(out, "new.txt")); err == nil {
				t.Error("a file was made out of the folder")
			}
		})
	}
}

// TestNewBuffered: only a filesystem in virtual mode can be buffered;
// buffers that do nothing leave the backend as it is.
func TestNewBuffered(t *testing.T) {
	e := &editor{}
	fs, err := backend.NewFilesystemBackend(t.TempDir(), backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := backend.NewBuffered(fs, backend.Buffers{}); err != nil || b != backend.Backend(fs) {
		t.Errorf("no buffers: %v %v, want the backend itself", b, err)
	}
	if b, err := backend.NewBuffered(fs, e.buffers(true, false)); err != nil {
		t.Error(err)
	} else if _, ok := b.(backend.Sandbox); ok {
		t.Error("a buffered filesystem is a Sandbox")
	}
	nv, err := backend.NewFilesystemBackend(t.TempDir(), backend.FilesystemOptions{NonVirtual: true})
	if err != nil {
		t.Fatal(err)
	}
	// A user's sandbox that embeds the files or the shell is not buffered:
	// the buffers would read and write the disk past its own methods.
	vfs, err := backend.NewFilesystemBackend(t.TempDir(), backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, disk := range []backend.Backend{nv, backend.NewStateBackend(nil), ownSandbox{vfs}, wrappedShell{newShell(t, sandbox.LocalShellOptions{})}} {
		if _, err := backend.NewBuffered(disk, e.buffers(true, true)); err == nil {
			t.Errorf("a %T was buffered", disk)
		}
	}
}

// ownSandbox is a user's Sandbox over a FilesystemBackend.
type ownSandbox struct{ *backend.FilesystemBackend }

func (ownSandbox) ID() string { return "own" }
func (ownSandbox) Execute(context.Context, string, time.Duration) (backend.ExecResult, error) {
	return backend.ExecResult{}, nil
}

// wrappedShell is a user's type around a LocalShell, with a Write of its
// own that the buffers would pass by.
type wrappedShell struct{ *sandbox.LocalShell }

func (wrappedShell) Write(context.Context, string, string) error {
	return errors.New("refused by the wrapper")
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
