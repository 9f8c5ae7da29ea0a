package backend

import (
	"context"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// hiddenMatches returns the bwrap arguments masking what the sandbox's
// HiddenGlobs match in the workspace now. The files are found with the
// shell's own Glob, which neither follows nor returns symbolic links: a
// link to a masked file shows the mask. A folder on a file's way that the
// glob matches itself ("/secrets" for "/secrets/**") is masked whole,
// which also hides what the command could otherwise list there.
func (s *LocalShell) hiddenMatches(ctx context.Context) ([]string, error) {
	globs := s.sandbox.HiddenGlobs
	if len(globs) == 0 {
		return nil, nil
	}
	masked := map[string]bool{} // virtual paths: true for a folder
	for _, g := range globs {
		files, err := s.FilesystemBackend.Glob(ctx, "/"+strings.TrimPrefix(g, "/"), "/")
		if err != nil {
			return nil, fmt.Errorf("sandbox: hidden paths %q: %w", g, err)
		}
		for _, f := range files {
			p, dir := topMatch(g, f.Path), false
			if p != f.Path {
				dir = true
			}
			masked[p] = masked[p] || dir
			if len(masked) > MaxHiddenMatches {
				return nil, fmt.Errorf("sandbox: the hidden paths %q match more than %d files; the command does not run rather than show some", g, MaxHiddenMatches)
			}
		}
	}
	// A folder masks what is below it: mask the rest, in a stable order.
	var args []string
	for _, p := range slices.Sorted(maps.Keys(masked)) {
		if !maskedAbove(masked, p) {
			args = append(args, maskArgs(filepath.Join(s.root, filepath.FromSlash(p)), masked[p])...)
		}
	}
	return args, nil
}

// maskedAbove reports whether a folder above the virtual path p is masked.
func maskedAbove(masked map[string]bool, p string) bool {
	for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
		if masked[d] {
			return true
		}
	}
	return false
}

// topMatch returns the topmost folder above the virtual path p that the
// glob matches, or p itself when none does.
func topMatch(glob, p string) string {
	var dirs []string
	for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
		dirs = append(dirs, d)
	}
	pattern := "/" + strings.TrimPrefix(glob, "/")
	for i := len(dirs) - 1; i >= 0; i-- {
		if ok, _ := doublestar.Match(pattern, dirs[i]); ok {
			return dirs[i]
		}
	}
	return p
}
