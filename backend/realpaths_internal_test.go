//go:build unix

package backend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// evalLongest is resolvedPath as it is defined: the longest existing
// part of p resolved by filepath.EvalSymlinks, the rest joined to it.
func evalLongest(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// TestRealPathsAsEvalSymlinks checks the memoised resolver against the
// definition, on the same resolver for every path (as hostRules uses
// it) and on a fresh one for each: links to folders, to files, chains of
// links, relative links with "..", dangling links, links in a loop,
// missing files and folders, and paths through a regular file.
func TestRealPathsAsEvalSymlinks(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := func(p string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("home/u/.config")
	mk("elsewhere/deep/er")
	file("home/u/.bashrc")
	file("elsewhere/deep/secret")
	link(filepath.Join(root, "elsewhere"), "home/u/abs")
	link("../../elsewhere/deep", "home/u/rel")
	link("rel", "home/u/chain")
	link("missing/target", "home/u/dangling")
	link("loop2", "home/u/loop1")
	link("loop1", "home/u/loop2")
	link(".bashrc", "home/u/rc")
	link("..", "home/u/up")

	paths := []string{
		"home/u", "home/u/.bashrc", "home/u/.zshrc", "home/u/.config/git/config",
		"home/u/abs", "home/u/abs/deep/secret", "home/u/abs/deep/none/x",
		"home/u/rel", "home/u/rel/secret", "home/u/rel/er/new",
		"home/u/chain/secret", "home/u/dangling", "home/u/dangling/x",
		"home/u/loop1", "home/u/loop1/x", "home/u/rc", "home/u/rc/x",
		"home/u/.bashrc/x", "home/u/up/u/.bashrc", "home/u/up/u/rel/secret",
		"nothing/at/all", "home/u/./abs/../u/.bashrc",
	}
	shared := realPaths{}
	for _, p := range paths {
		p = filepath.Join(root, p)
		want := evalLongest(p)
		if got := shared.of(p); got != want {
			t.Errorf("shared resolver: %s = %s, want %s", p, got, want)
		}
		if got := resolvedPath(p); got != want {
			t.Errorf("resolvedPath(%s) = %s, want %s", p, got, want)
		}
	}
}

// TestRealPathsRememberFolders checks what hostRules saves: many files in
// one folder resolve the folder's components once, each remembered, so
// that a later path under them stats its own name only.
func TestRealPathsRememberFolders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b", "c")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := realPaths{}
	names := []string{".bashrc", ".profile", ".zshrc", ".gitconfig"}
	for _, name := range names {
		m.of(filepath.Join(dir, name))
	}
	// "/" and each folder on the way to dir, and the four files.
	if want := strings.Count(dir, string(filepath.Separator)) + 1 + len(names); len(m) != want {
		t.Errorf("%d paths remembered, want %d (the four files and the folders of %s)", len(m), want, dir)
	}
}
