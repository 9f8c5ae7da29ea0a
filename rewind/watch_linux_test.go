package rewind_test

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/rewind"
	"github.com/deepagents-go/deepagents/store"
)

// TestWatchedAsWalked: a tracker that looks at what inotify noticed
// records, after every kind of change a command makes (files written,
// removed, renamed, chmod'ed; folders made with files in them, renamed,
// removed; links; a .gitignore changed; ignored files), the same points
// as one that walks the whole folder every time, and walks far less; so
// does a second thread on the same folder whose points are further apart.
func TestWatchedAsWalked(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, ".gitignore", "*.log\nbuild/\n")
	for i := range 20 {
		write(t, dir, fmt.Sprintf("src/d%d/f%d.txt", i%4, i), fmt.Sprintf("file %d\n", i))
	}
	rewind.SetWatching(t, false)
	walked, err := rewind.New(rewind.Config{Dir: dir, Store: store.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	defer walked.Close()
	if _, err := walked.Record(ctx, "t", rewind.KindTurn, "go", ""); err != nil {
		t.Fatal(err)
	}
	rewind.SetWatching(t, true)
	watched, err := rewind.New(rewind.Config{Dir: dir, Store: store.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	defer watched.Close()
	if _, err := watched.Record(ctx, "t", rewind.KindTurn, "go", ""); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	pick := func() string { // an existing entry below src, or src itself
		var all []string
		filepath.WalkDir(filepath.Join(dir, "src"), func(p string, _ os.DirEntry, _ error) error { all = append(all, p); return nil })
		return all[rng.IntN(len(all))]
	}
	ops := []func(int){
		func(i int) { write(t, dir, fmt.Sprintf("src/d%d/n%d.txt", rng.IntN(6), i), fmt.Sprintf("new %d\n", i)) },
		func(i int) {
			if p := pick(); !isDir(p) {
				os.WriteFile(p, []byte(fmt.Sprintf("changed %d\n", i)), 0o644)
			}
		},
		func(int) {
			if p := pick(); p != filepath.Join(dir, "src") {
				os.RemoveAll(p)
			}
		},
		func(i int) {
			if p := pick(); p != filepath.Join(dir, "src") {
				os.Rename(p, filepath.Join(filepath.Dir(p), fmt.Sprintf("moved%d", i)))
			}
		},
		func(int) { os.Chmod(pick(), 0o700) },
		func(i int) { write(t, dir, fmt.Sprintf("src/deep%d/a/b/c.txt", i), "deep\n") },
		func(i int) { os.Symlink("../elsewhere", filepath.Join(dir, "src", fmt.Sprintf("link%d", i))) },
		func(i int) { write(t, dir, fmt.Sprintf("src/debug%d.log", i), "ignored\n") },
		func(i int) { write(t, dir, fmt.Sprintf("build/out%d", i), "ignored\n") },
		func(i int) {
			if i%7 == 0 {
				write(t, dir, ".gitignore", fmt.Sprintf("*.log\nbuild/\nsrc/d%d/\n", i%4))
			}
		},
	}
	for i := range 300 {
		for range 1 + rng.IntN(3) {
			ops[rng.IntN(len(ops))](i)
		}
		wp, err := walked.Record(ctx, "t", rewind.KindStep, "", "")
		if err != nil {
			t.Fatal(err)
		}
		sp, err := watched.Record(ctx, "t", rewind.KindStep, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := changed(sp), changed(wp); got != want {
			t.Fatalf("step %d: the watched tracker recorded\n%s\nthe walking one\n%s", i, got, want)
		}
		// Another thread, whose points are further apart: it looks at
		// what the first thread's looks were told of since its last.
		if i%5 == 0 {
			wp, err := walked.Record(ctx, "u", rewind.KindStep, "", "")
			if err != nil {
				t.Fatal(err)
			}
			sp, err := watched.Record(ctx, "u", rewind.KindStep, "", "")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := changed(sp), changed(wp); got != want {
				t.Fatalf("step %d, the other thread: the watched tracker recorded\n%s\nthe walking one\n%s", i, got, want)
			}
		}
	}
	if w, n := watched.Counts().Walks, walked.Counts().Walks; w*3 > n {
		t.Errorf("the watched tracker walked %d times of %d", w, n)
	}
}

func isDir(p string) bool {
	info, err := os.Lstat(p)
	return err == nil && info.IsDir()
}

// changed is a point's changes as text, times left out; "" for none.
func changed(p *rewind.Point) string {
	if p == nil {
		return ""
	}
	var s string
	for _, path := range p.Changed() {
		e := p.Changes[path]
		if e == nil {
			s += path + " gone\n"
			continue
		}
		s += fmt.Sprintf("%s %s %o %q %d %v\n", path, e.Hash, e.Mode, e.Link, e.Size, e.Stored)
	}
	return s
}

// TestSandboxedCommandsNoticed: what a command in the bubblewrap sandbox
// changes (through its own mount of the folder) is noticed, and recorded
// without a walk, as a walk would record it.
func TestSandboxedCommandsNoticed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, "a.txt", "alpha\n")
	write(t, dir, "src/b.txt", "bravo\n")
	shell, err := sandbox.NewLocalShell(dir, sandbox.LocalShellOptions{Sandbox: &sandbox.Bubblewrap{}, Timeout: 20 * time.Second})
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("no sandbox here: %v", err)
		}
		t.Fatal(err)
	}
	defer shell.Close()
	rewind.SetWatching(t, true)
	tr := newTracker(t, dir, store.NewMemoryStore())
	if _, err := tr.Record(ctx, "t", rewind.KindTurn, "go", ""); err != nil {
		t.Fatal(err)
	}
	res, err := shell.Execute(ctx, "echo changed > a.txt && rm src/b.txt && mkdir -p gen/sub && echo new > gen/sub/c.txt && chmod 700 gen", 0)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	before := tr.Counts()
	p, err := tr.Record(ctx, "t", rewind.KindStep, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if c := tr.Counts(); c.Walks != before.Walks {
		t.Errorf("the step walked: %+v", c)
	}
	want := []string{"a.txt", "gen", "gen/sub", "gen/sub/c.txt", "src/b.txt"}
	if !slices.Equal(p.Changed(), want) || p.Changes["src/b.txt"] != nil || fs.FileMode(p.Changes["gen"].Mode).Perm() != 0o700 {
		t.Errorf("recorded %s", changed(p))
	}
}

// TestWatchedWithFileSteps: steps of file tools (whose backend reports
// their writes, new folders among them) between commands and changes made
// by hand, on a watched folder: after each command's step the tracker's
// points add up to the folder as a walk finds it.
func TestWatchedWithFileSteps(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i := range 10 {
		write(t, dir, fmt.Sprintf("src/f%d.txt", i), strings.Repeat(fmt.Sprintf("file %d\n", i), 1+i*20))
	}
	rewind.SetWatching(t, true)
	watched := newTracker(t, dir, store.NewMemoryStore())
	if _, err := watched.Record(ctx, "t", rewind.KindTurn, "go", ""); err != nil {
		t.Fatal(err)
	}
	fsb, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 9))
	for i := range 300 {
		switch rng.IntN(3) {
		case 0, 1: // a step of file tools, maybe with a change by hand during it
			ch := edits(ctx, func(ctx context.Context) {
				switch rng.IntN(3) {
				case 0:
					fsb.Write(ctx, fmt.Sprintf("/src/n%d/d%d/w%d.txt", rng.IntN(4), rng.IntN(3), i), strings.Repeat("w", rng.IntN(900)))
				case 1:
					fsb.Edit(ctx, fmt.Sprintf("/src/f%d.txt", rng.IntN(10)), "file", "FILE", true)
				default:
					fsb.Upload(ctx, []backend.File{{Path: fmt.Sprintf("/src/f%d.txt", rng.IntN(10)), Content: []byte(fmt.Sprintf("uploaded %d\n", i))}})
				}
				if rng.IntN(4) == 0 {
					write(t, dir, fmt.Sprintf("src/hand%d.txt", rng.IntN(5)), fmt.Sprintf("by hand %d\n", i))
				}
			})
			if _, err := watched.RecordChanges(ctx, "t", rewind.KindStep, "", "", ch); err != nil {
				t.Fatal(err)
			}
		default: // a command
			switch rng.IntN(3) {
			case 0:
				write(t, dir, fmt.Sprintf("src/n%d/cmd%d.txt", rng.IntN(4), i), "command\n")
			case 1:
				os.RemoveAll(filepath.Join(dir, fmt.Sprintf("src/n%d/d%d", rng.IntN(4), rng.IntN(3))))
			default:
				os.Chmod(filepath.Join(dir, fmt.Sprintf("src/f%d.txt", rng.IntN(10))), 0o600+os.FileMode(rng.IntN(2))*0o100)
			}
			if _, err := watched.Record(ctx, "t", rewind.KindStep, "", ""); err != nil {
				t.Fatal(err)
			}
			rewind.SetWatching(t, false)
			fresh := newTracker(t, dir, store.NewMemoryStore())
			rewind.SetWatching(t, true)
			want, err := fresh.Record(ctx, "t", rewind.KindTurn, "", "")
			if err != nil {
				t.Fatal(err)
			}
			points, _ := watched.Points(ctx, "t")
			if got := folded(points); got != folded([]*rewind.Point{want}) {
				t.Fatalf("step %d: the watched tracker's points add up to\n%s\na walk finds\n%s", i, got, folded([]*rewind.Point{want}))
			}
		}
	}
	if w := watched.Counts().Walks; w > 30 {
		t.Errorf("the watched tracker walked %d times", w)
	}
}

// folded is the folder the points add up to, as text, times left out.
func folded(points []*rewind.Point) string {
	tree := map[string]*rewind.Entry{}
	for _, p := range points {
		for path, e := range p.Changes {
			if e == nil {
				delete(tree, path)
			} else {
				tree[path] = e
			}
		}
	}
	var s string
	for _, path := range slices.Sorted(maps.Keys(tree)) {
		e := tree[path]
		s += fmt.Sprintf("%s %s %o %q %d\n", path, e.Hash, e.Mode, e.Link, e.Size)
	}
	return s
}
