package isolate_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/backend/isolate"
)

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", "-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// lines returns n numbered lines, with line i replaced by repl[i].
func lines(n int, repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if r, ok := repl[i]; ok {
			b.WriteString(r + "\n")
			continue
		}
		b.WriteString("line " + string(rune('0'+i/10)) + string(rune('0'+i%10)) + "\n")
	}
	return b.String()
}

// TestParallelWorkspaces forks two workspaces of one folder, with git and
// without, changes the same files and different ones in each, and merges
// them back one after the other: the different files are all there, the
// same file's separate hunks are merged, the overlapping hunks are a
// conflict with both versions kept, a binary file changed by both keeps
// the first and saves the second beside it; the repository's index,
// HEAD and stash are as they were, and the workspaces are gone.
func TestParallelWorkspaces(t *testing.T) {
	for _, withGit := range []bool{false, true} {
		name := map[bool]string{false: "copy", true: "git"}[withGit]
		t.Run(name, func(t *testing.T) { testParallelWorkspaces(t, withGit) })
	}
}

func testParallelWorkspaces(t *testing.T, withGit bool) {
	ctx := context.Background()
	dir, tmp := t.TempDir(), t.TempDir()
	write(t, dir, "same.txt", lines(20, nil))
	write(t, dir, "clash.txt", lines(5, nil))
	write(t, dir, "gone.txt", "remove me\n")
	write(t, dir, "bin.dat", "\x00\x01base")
	write(t, dir, ".gitignore", "build/\n")
	write(t, dir, "build/out.o", "ignored")
	var head, index string
	if withGit {
		git(t, dir, "init", "-q")
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-qm", "base")
		// A change not committed: the workspaces start from it.
		write(t, dir, "dirty.txt", "not committed\n")
		head = git(t, dir, "rev-parse", "HEAD")
		index = read(t, dir, ".git/index")
	}
	fork := func(label string) *isolate.Workspace {
		w, err := isolate.Fork(ctx, dir, isolate.Auto, isolate.Options{TempDir: tmp, Label: label})
		if err != nil {
			t.Fatal(err)
		}
		want := isolate.KindCopy
		if withGit {
			want = isolate.KindWorktree
			if got := read(t, w.Root, "dirty.txt"); got != "not committed\n" {
				t.Errorf("the workspace lacks the folder's uncommitted change: %q", got)
			}
		}
		if w.Kind != want {
			t.Errorf("kind %q, want %q", w.Kind, want)
		}
		if _, err := os.Stat(filepath.Join(w.Root, "build")); err == nil {
			t.Error("the ignored folder was copied")
		}
		return w
	}
	a, b := fork("a"), fork("b")
	write(t, a.Root, "same.txt", lines(20, map[int]string{2: "A was here"}))
	write(t, b.Root, "same.txt", lines(20, map[int]string{18: "B was here"}))
	write(t, a.Root, "clash.txt", lines(5, map[int]string{3: "A's line"}))
	write(t, b.Root, "clash.txt", lines(5, map[int]string{3: "B's line"}))
	write(t, a.Root, "new/a.txt", "from A\n")
	write(t, b.Root, "b.txt", "from B\n")
	write(t, a.Root, "bin.dat", "\x00A")
	write(t, b.Root, "bin.dat", "\x00B")
	if err := os.Remove(filepath.Join(b.Root, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(b.Root, "link")); err != nil {
		t.Fatal(err)
	}
	// The folder's own change since the fork, to a file b removes.
	ra, err := a.Merge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"bin.dat", "clash.txt", "new/a.txt", "same.txt"}; !slices.Equal(ra.Applied, want) || len(ra.Conflicts) != 0 || ra.Kept != "" {
		t.Errorf("a's merge: applied %v conflicts %v kept %q; want %v", ra.Applied, ra.Conflicts, ra.Kept, want)
	}
	rb, err := b.Merge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rb.Applied, []string{"b.txt"}) || !slices.Equal(rb.Merged, []string{"same.txt"}) || !slices.Equal(rb.Removed, []string{"gone.txt"}) || !slices.Equal(rb.Skipped, []string{"link"}) {
		t.Errorf("b's merge: applied %v merged %v removed %v skipped %v", rb.Applied, rb.Merged, rb.Removed, rb.Skipped)
	}
	if got, want := read(t, dir, "same.txt"), lines(20, map[int]string{2: "A was here", 18: "B was here"}); got != want {
		t.Errorf("same.txt:\n%s\nwant\n%s", got, want)
	}
	if read(t, dir, "new/a.txt") != "from A\n" || read(t, dir, "b.txt") != "from B\n" {
		t.Error("a file one of them made is missing")
	}
	if _, err := os.Lstat(filepath.Join(dir, "gone.txt")); err == nil {
		t.Error("gone.txt is still there")
	}
	if _, err := os.Lstat(filepath.Join(dir, "link")); err == nil {
		t.Error("a link was carried back")
	}
	var clash, bin *isolate.Conflict
	for i, c := range rb.Conflicts {
		switch c.Path {
		case "clash.txt":
			clash = &rb.Conflicts[i]
		case "bin.dat":
			bin = &rb.Conflicts[i]
		}
	}
	if clash == nil || len(clash.Hunks) != 1 || clash.Hunks[0].Line != 3 || !slices.Equal(clash.Hunks[0].Ours, []string{"A's line\n"}) || !slices.Equal(clash.Hunks[0].Theirs, []string{"B's line\n"}) {
		t.Fatalf("clash.txt's conflict: %+v", clash)
	}
	want := "line 01\nline 02\n<<<<<<< the folder\nA's line\n=======\nB's line\n>>>>>>> b\nline 04\nline 05\n"
	if got := read(t, dir, "clash.txt"); got != want {
		t.Errorf("clash.txt:\n%s\nwant\n%s", got, want)
	}
	if bin == nil || bin.SavedAs != "bin.dat.subagent-b" {
		t.Fatalf("bin.dat's conflict: %+v", bin)
	}
	if read(t, dir, "bin.dat") != "\x00A" || read(t, dir, "bin.dat.subagent-b") != "\x00B" {
		t.Error("the binary file's versions are not both kept")
	}
	text := rb.Text()
	for _, s := range []string{"CONFLICT in /clash.txt", "B's line", "/bin.dat.subagent-b", "Applied: /b.txt"} {
		if !strings.Contains(text, s) {
			t.Errorf("the report lacks %q:\n%s", s, text)
		}
	}
	for _, w := range []*isolate.Workspace{a, b} {
		if _, err := os.Stat(w.Root); err == nil {
			t.Errorf("the workspace %s is still there", w.Root)
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("left in the workspaces' folder: %v", ents)
	}
	if read(t, dir, "build/out.o") != "ignored" {
		t.Error("an ignored file changed")
	}
	if withGit {
		if got := git(t, dir, "rev-parse", "HEAD"); got != head {
			t.Errorf("HEAD moved: %s, was %s", got, head)
		}
		if read(t, dir, ".git/index") != index {
			t.Error("the repository's index changed")
		}
		if s := git(t, dir, "stash", "list"); s != "" {
			t.Errorf("stashed: %s", s)
		}
		if wt := git(t, dir, "worktree", "list"); strings.Count(wt, "\n") != 1 {
			t.Errorf("worktrees left:\n%s", wt)
		}
		if read(t, dir, "dirty.txt") != "not committed\n" {
			t.Error("the uncommitted change is gone")
		}
	}
}

// TestMergeFolderChanged covers the merges against a folder that changed
// since the fork: a file the subagent removed and the folder changed is
// kept; one the folder removed and the subagent changed is saved beside
// it; a file both changed the same way is left as it is.
func TestMergeFolderChanged(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, "x.txt", "x\n")
	write(t, dir, "y.txt", "y\n")
	write(t, dir, "z.txt", "z\n")
	w, err := isolate.Fork(ctx, dir, isolate.Copy, isolate.Options{TempDir: t.TempDir(), Label: "general-purpose:call_1"})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(w.Root, "x.txt"))
	write(t, dir, "x.txt", "x changed\n")
	write(t, w.Root, "y.txt", "y by the subagent\n")
	os.Remove(filepath.Join(dir, "y.txt"))
	write(t, w.Root, "z.txt", "z both\n")
	write(t, dir, "z.txt", "z both\n")
	r, err := w.Merge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Conflicts) != 2 || r.Conflicts[0].Path != "x.txt" || r.Conflicts[1].Path != "y.txt" || r.Conflicts[1].SavedAs != "y.txt.subagent-general-purpose-call_1" {
		t.Fatalf("conflicts %+v", r.Conflicts)
	}
	if read(t, dir, "x.txt") != "x changed\n" || read(t, dir, r.Conflicts[1].SavedAs) != "y by the subagent\n" || read(t, dir, "z.txt") != "z both\n" {
		t.Error("a version was lost")
	}
	if len(r.Applied)+len(r.Merged)+len(r.Removed) != 0 {
		t.Errorf("report %+v", r)
	}
}

// TestMerge3 is the line merge alone.
func TestMerge3(t *testing.T) {
	for _, tc := range []struct {
		name               string
		base, ours, theirs string
		want               string
		hunks              int
	}{
		{"theirs only", "a\nb\nc\n", "a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n", 0},
		{"ours only", "a\nb\nc\n", "a\nB\nc\n", "a\nb\nc\n", "a\nB\nc\n", 0},
		{"apart", "1\n2\n3\n4\n5\n", "one\n2\n3\n4\n5\n", "1\n2\n3\n4\nfive\n", "one\n2\n3\n4\nfive\n", 0},
		{"same change", "a\nb\n", "a\nX\n", "a\nX\n", "a\nX\n", 0},
		{"insert apart", "a\nb\nc\n", "top\na\nb\nc\n", "a\nb\nc\nend\n", "top\na\nb\nc\nend\n", 0},
		{"clash", "a\nb\nc\n", "a\nO\nc\n", "a\nT\nc\n", "a\n<<<<<<< ours\nO\n=======\nT\n>>>>>>> theirs\nc\n", 1},
		{"no newline", "a", "a\nours", "a\ntheirs", "<<<<<<< ours\na\nours\n=======\na\ntheirs\n>>>>>>> theirs\n", 1},
		{"both from nothing", "", "o\n", "t\n", "<<<<<<< ours\no\n=======\nt\n>>>>>>> theirs\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, hunks := isolate.Merge3ForTest(tc.base, tc.ours, tc.theirs)
			if got != tc.want || hunks != tc.hunks {
				t.Errorf("merge = %q (%d hunks), want %q (%d)", got, hunks, tc.want, tc.hunks)
			}
		})
	}
}

// TestGroupStartsTogether: a fork of a group made after a sibling merged
// back starts where the sibling did (git), so that its change to the line
// the sibling changed is a conflict rather than a silent overwrite.
func TestGroupStartsTogether(t *testing.T) {
	ctx := context.Background()
	dir, tmp := t.TempDir(), t.TempDir()
	write(t, dir, "f.txt", "base\n")
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "base")
	g := &isolate.Group{}
	a, err := isolate.Fork(ctx, dir, isolate.Worktree, isolate.Options{TempDir: tmp, Label: "a", Group: g})
	if err != nil {
		t.Fatal(err)
	}
	write(t, a.Root, "f.txt", "a\n")
	if _, err := a.Merge(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := isolate.Fork(ctx, dir, isolate.Worktree, isolate.Options{TempDir: tmp, Label: "b", Group: g})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, b.Root, "f.txt"); got != "base\n" {
		t.Fatalf("the group's second fork starts from %q, want the first's base", got)
	}
	write(t, b.Root, "f.txt", "b\n")
	r, err := b.Merge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Conflicts) != 1 || !strings.Contains(read(t, dir, "f.txt"), "a\n=======\nb\n") {
		t.Errorf("conflicts %+v, f.txt %q", r.Conflicts, read(t, dir, "f.txt"))
	}
}

// TestHostileRepositoryRunsNothing: a repository whose own config names
// commands (an fsmonitor, a filter driver's clean, smudge and process
// commands, hooks) gets none of them run by a fork, its merge or its
// removal: those git commands run on the host, outside the sandbox.
func TestHostileRepositoryRunsNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	git(t, dir, "init", "-q")
	write(t, dir, ".gitattributes", "*.txt filter=evil.x\n")
	write(t, dir, "a.txt", "a\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	hostile := "touch " + ran + "; cat"
	for k, v := range map[string]string{
		"core.fsmonitor":         "touch " + ran + "; false",
		"filter.evil.x.clean":    hostile,
		"filter.evil.x.smudge":   hostile,
		"filter.evil.x.process":  "touch " + ran,
		"filter.evil.x.required": "true",
		"core.hooksPath":         filepath.Join(dir, "hooks"),
	} {
		git(t, dir, "config", k, v)
	}
	write(t, dir, "hooks/post-checkout", "#!/bin/sh\ntouch "+ran+"\n")
	if err := os.Chmod(filepath.Join(dir, "hooks/post-checkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "b.txt", "b\n") // a change the snapshot takes in
	w, err := isolate.Fork(ctx, dir, isolate.Worktree, isolate.Options{TempDir: t.TempDir(), Label: "t:1"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Kind != isolate.KindWorktree {
		t.Fatalf("kind %s", w.Kind)
	}
	write(t, w.Root, "a.txt", "a by the subagent\n")
	if _, err := w.Merge(ctx); err != nil {
		t.Fatal(err)
	}
	if read(t, dir, "a.txt") != "a by the subagent\n" {
		t.Errorf("a.txt %q", read(t, dir, "a.txt"))
	}
	_ = w.Remove()
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a command of the repository's config ran")
	}
}

// A copy of a folder past Options' bounds is refused with ErrTooLarge, and
// the error names the bound it met (MaxBytes is what both copies hold: a
// copy holds half of it), and no workspace is left behind.
func TestForkCopyBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		opts isolate.Options
		want string
	}{
		{"files", isolate.Options{MaxFiles: 2}, "more than 2 files"},
		{"bytes", isolate.Options{MaxBytes: 100}, "or 50 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, tmp := t.TempDir(), t.TempDir()
			for _, p := range []string{"a.txt", "b.txt", "c.txt"} {
				write(t, dir, p, strings.Repeat("x", 20)+"\n")
			}
			c.opts.TempDir = tmp
			ws, err := isolate.Fork(context.Background(), dir, isolate.Copy, c.opts)
			if !errors.Is(err, isolate.ErrTooLarge) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Fork = %v, %v; want ErrTooLarge naming %q", ws, err, c.want)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("left in the workspaces' folder: %v", ents)
			}
			// Within the bounds it is made.
			c.opts.MaxFiles, c.opts.MaxBytes = 3, 200
			ws, err = isolate.Fork(context.Background(), dir, isolate.Copy, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := ws.Remove(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A git worktree's snapshot adds the folder's untracked files to the
// repository's objects: past the bounds Fork fails with ErrTooLarge before
// it writes any (and does not fall back to a copy, which would hold more);
// ignored files do not count.
func TestForkWorktreeBoundsUntracked(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir, tmp := t.TempDir(), t.TempDir()
	git(t, dir, "init", "-q")
	write(t, dir, "tracked.txt", "tracked\n")
	git(t, dir, "add", "tracked.txt")
	git(t, dir, "commit", "-qm", "one")
	write(t, dir, ".gitignore", "big.bin\n")
	write(t, dir, "big.bin", strings.Repeat("x", 5000)) // ignored: not counted
	write(t, dir, "new.txt", strings.Repeat("y", 300))
	objects := func() string { return git(t, dir, "count-objects", "-v") }
	before := objects()
	_, err := isolate.Fork(context.Background(), dir, isolate.Worktree, isolate.Options{TempDir: tmp, MaxBytes: 200})
	if !errors.Is(err, isolate.ErrTooLarge) || !strings.Contains(err.Error(), "untracked files") {
		t.Fatalf("Fork = %v, want ErrTooLarge naming the untracked files", err)
	}
	if after := objects(); after != before {
		t.Errorf("the repository's objects changed:\n%s\nthen\n%s", before, after)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("left in the workspaces' folder: %v", ents)
	}
	ws, err := isolate.Fork(context.Background(), dir, isolate.Worktree, isolate.Options{TempDir: tmp, MaxBytes: 1000})
	if err != nil || ws.Kind != isolate.KindWorktree {
		t.Fatalf("within the bounds: %+v, %v", ws, err)
	}
	if err := ws.Remove(); err != nil {
		t.Fatal(err)
	}
}
