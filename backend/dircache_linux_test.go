package backend

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/deepagents-go/deepagents/internal/inotify"
)

// withDirCache gives the test a cache of its own with these bounds, and
// skips it when inotify is unavailable.
func withDirCache(t *testing.T, minEntries, maxDirs, maxBytes int) *dirCache {
	t.Helper()
	old, oldMin, oldDirs, oldBytes := dirs, cacheMinEntries, cacheMaxDirs, cacheMaxBytes
	c := &dirCache{ifd: -1}
	c.once.Do(c.init)
	if c.ifd < 0 {
		t.Skip("inotify is unavailable")
	}
	dirs, cacheMinEntries, cacheMaxDirs, cacheMaxBytes = c, minEntries, maxDirs, maxBytes
	t.Cleanup(func() {
		unix.Close(c.ifd)
		dirs, cacheMinEntries, cacheMaxDirs, cacheMaxBytes = old, oldMin, oldDirs, oldBytes
	})
	return c
}

// listCheck lists p with ListText and fails unless it equals the listing
// read afresh (ListNames reads the directory every time).
func listCheck(t *testing.T, fs *FilesystemBackend, p, what string) string {
	t.Helper()
	ctx := context.Background()
	got, err := fs.ListText(ctx, p)
	if err != nil {
		t.Fatalf("%s: ListText(%s): %v", what, p, err)
	}
	infos, err := fs.ListNames(ctx, p)
	if err != nil {
		t.Fatalf("%s: ListNames(%s): %v", what, p, err)
	}
	if want := FormatListing(infos); got != want {
		t.Fatalf("%s: ListText(%s) is stale:\n got %.300q\nwant %.300q", what, p, got, want)
	}
	return got
}

func newTestFS(t *testing.T) (*FilesystemBackend, string) {
	t.Helper()
	root := t.TempDir()
	fs, err := NewFilesystemBackend(root, FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fs, root
}

func fill(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestListTextSeesEveryChange changes a kept directory behind the
// backend's back in every way that changes its listing, and checks each
// listing against one read afresh.
func TestListTextSeesEveryChange(t *testing.T) {
	c := withDirCache(t, 8, 64, 32<<20)
	fs, root := newTestFS(t)
	d := filepath.Join(root, "d")
	fill(t, d, 20)
	outside := filepath.Join(root, "outside.txt")
	if err := os.WriteFile(outside, []byte("o"), 0o644); err != nil {
		t.Fatal(err)
	}
	listCheck(t, fs, "/d", "first")
	if len(c.byKey) != 1 {
		t.Fatalf("the directory is not kept (%d kept)", len(c.byKey))
	}
	reads := c.reads.Load()

	rng := rand.New(rand.NewPCG(1, 2))
	name := func() string { return filepath.Join(d, "n"+strconv.Itoa(rng.IntN(40))) }
	ops := []struct {
		name string
		do   func() error
	}{
		{"create", func() error {
			// O_EXCL: never open a FIFO made by an earlier step.
			fd, err := unix.Open(name(), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"remove", func() error { return os.Remove(name()) }},
		{"mkdir", func() error { return os.Mkdir(name(), 0o755) }},
		{"rename", func() error { return os.Rename(name(), name()) }},
		{"symlink", func() error { return os.Symlink("/etc/hostname", name()) }},
		{"fifo", func() error { return syscall.Mkfifo(name(), 0o644) }},
		{"hard link", func() error { return os.Link(outside, name()) }},
		{"file to directory", func() error {
			p := name()
			if err := os.RemoveAll(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o755)
		}},
		{"directory to file", func() error {
			p := name()
			if err := os.RemoveAll(p); err != nil {
				return err
			}
			return os.WriteFile(p, nil, 0o644)
		}},
		{"rename in from outside", func() error {
			p := filepath.Join(root, "in")
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				return err
			}
			return os.Rename(p, name())
		}},
		{"rename out", func() error { return os.Rename(name(), filepath.Join(root, "out")) }},
		{"backend write", func() error {
			return fs.Write(context.Background(), "/d/"+filepath.Base(name())+".w", "w")
		}},
		{"shell", func() error {
			// Another process: its change is made when the command ends.
			return exec.Command("sh", "-c", `cd "$1" && touch "s$2" && rm -f "n$3"`, "sh", d,
				strconv.Itoa(rng.IntN(5)), strconv.Itoa(rng.IntN(40))).Run()
		}},
	}
	for i := range 600 {
		op := ops[rng.IntN(len(ops))]
		_ = op.do() // many fail (the name exists, or does not): fine
		listCheck(t, fs, "/d", fmt.Sprintf("step %d (%s)", i, op.name))
	}
	// A full read only when pending names pile up or on overflow: the
	// listing was kept up to date name by name.
	if n := c.reads.Load() - reads; n > 5 {
		t.Errorf("%d full reads in 600 listings: the cache was not used", n)
	}
}

// TestListTextDirectoryReplaced gives the path of a kept directory to
// another directory: renamed away, and removed and made again.
func TestListTextDirectoryReplaced(t *testing.T) {
	withDirCache(t, 8, 64, 32<<20)
	fs, root := newTestFS(t)
	d := filepath.Join(root, "d")
	fill(t, d, 10)
	old := listCheck(t, fs, "/d", "first")

	if err := os.Rename(d, filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	fill(t, d, 12)
	if got := listCheck(t, fs, "/d", "after a rename"); got == old {
		t.Fatal("the new directory got the old listing")
	}
	if got := listCheck(t, fs, "/moved", "the moved one"); got != strings.ReplaceAll(old, "/d/", "/moved/") {
		t.Errorf("the moved directory lists %q", got)
	}

	for i := range 5 {
		// Removed and made again, perhaps with the same inode number.
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
		fill(t, d, 9+i)
		listCheck(t, fs, "/d", fmt.Sprintf("made again #%d", i))
	}
}

// TestListTextQueueOverflow makes more changes than the inotify queue holds
// between two listings.
func TestListTextQueueOverflow(t *testing.T) {
	c := withDirCache(t, 8, 64, 32<<20)
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip(err)
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || limit > 1<<17 {
		t.Skipf("max_queued_events %q: too many to overflow quickly", b)
	}
	fs, root := newTestFS(t)
	d := filepath.Join(root, "d")
	fill(t, d, 10)
	listCheck(t, fs, "/d", "first")
	reads := c.reads.Load()
	p := filepath.Join(d, "churn")
	for range limit/2 + 10 {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d, "survivor"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := listCheck(t, fs, "/d", "after an overflow"); !strings.Contains(got, "/d/survivor") {
		t.Fatalf("the last change is missing: %q", got)
	}
	if c.reads.Load() == reads {
		t.Error("the directory was not read again after the queue overflowed")
	}
}

// TestListTextBounds keeps the cache within its bounds and the listings
// right when directories leave it.
func TestListTextBounds(t *testing.T) {
	c := withDirCache(t, 8, 2, 32<<20)
	fs, root := newTestFS(t)
	for i := range 4 {
		fill(t, filepath.Join(root, "d"+strconv.Itoa(i)), 10+i)
	}
	for round := range 3 {
		for i := range 4 {
			p := "/d" + strconv.Itoa(i)
			if err := os.WriteFile(filepath.Join(root, p, fmt.Sprintf("r%d", round)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			listCheck(t, fs, p, fmt.Sprintf("round %d", round))
			if len(c.byKey) > 2 || len(c.byWD) > 2 {
				t.Fatalf("%d directories kept (%d watches), bound 2", len(c.byKey), len(c.byWD))
			}
		}
	}

	cacheMaxBytes = 100 // less than one listing
	fill(t, filepath.Join(root, "big"), 20)
	listCheck(t, fs, "/big", "over the byte bound")
	if _, kept := c.byKey[keyOf(t, filepath.Join(root, "big"))]; kept {
		t.Error("a listing over the byte bound was kept")
	}
	if c.bytes < 0 {
		t.Errorf("cached bytes %d", c.bytes)
	}
}

func keyOf(t *testing.T, dir string) dirKey {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	return dirKey{dev: st.Dev, ino: st.Ino}
}

// TestListTextSmallNotKept lists small directories afresh, unwatched.
func TestListTextSmallNotKept(t *testing.T) {
	c := withDirCache(t, 8, 64, 32<<20)
	fs, root := newTestFS(t)
	fill(t, filepath.Join(root, "small"), 7)
	listCheck(t, fs, "/small", "small")
	if len(c.byKey)+len(c.byWD) != 0 {
		t.Errorf("a directory under the threshold is kept")
	}
}

// TestListTextConcurrent lists and changes one kept directory from several
// goroutines (for the race detector), then checks the final listing.
func TestListTextConcurrent(t *testing.T) {
	withDirCache(t, 8, 64, 32<<20)
	fs, root := newTestFS(t)
	fill(t, filepath.Join(root, "d"), 10)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				if err := fs.Write(ctx, fmt.Sprintf("/d/g%d-%d", g, i), "x"); err != nil {
					t.Error(err)
					return
				}
				text, err := fs.ListText(ctx, "/d")
				if err != nil || !strings.Contains(text, fmt.Sprintf("/d/g%d-%d", g, i)) {
					t.Errorf("goroutine %d: its write %d is not listed (%v)", g, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	listCheck(t, fs, "/d", "after")
}

func TestLocalFS(t *testing.T) {
	for _, c := range []struct {
		name  string
		magic int64
		want  bool
	}{
		{"ext4", unix.EXT4_SUPER_MAGIC, true},
		{"tmpfs", unix.TMPFS_MAGIC, true},
		{"xfs", unix.XFS_SUPER_MAGIC, true},
		{"btrfs", unix.BTRFS_SUPER_MAGIC, true},
		{"nfs", unix.NFS_SUPER_MAGIC, false},
		{"smb2", unix.SMB2_SUPER_MAGIC, false},
		{"cifs", unix.CIFS_SUPER_MAGIC, false},
		{"fuse", unix.FUSE_SUPER_MAGIC, false},
		{"9p", unix.V9FS_MAGIC, false},
		{"proc", unix.PROC_SUPER_MAGIC, false},
	} {
		if got := inotify.LocalType(c.magic); got != c.want {
			t.Errorf("%s: localFS %v, want %v", c.name, got, c.want)
		}
	}
}
