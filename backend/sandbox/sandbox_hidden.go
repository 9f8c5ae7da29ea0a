package sandbox

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// hiddenMatches returns the bwrap arguments masking what the sandbox's
// HiddenGlobs match in the workspace now. The walk matches the globs as
// the permission rules do (doublestar, dot-folders included: a rule on
// **/.env covers .config/.env) and does not follow symbolic links; a link
// to a masked file shows the mask. A folder that a glob matches
// ("/secrets" for "/secrets/**") is masked whole, which also hides what a
// command could list there. A link itself is never masked: what it
// points to is masked when the globs match that, as read_file sees it.
func (s *LocalShell) hiddenMatches(ctx context.Context, root string) ([]string, error) {
	globs := s.sandbox.HiddenGlobs
	if len(globs) == 0 {
		return nil, nil
	}
	patterns := make([]string, len(globs))
	for i, g := range globs {
		patterns[i] = "/" + strings.TrimPrefix(g, "/")
		if !doublestar.ValidatePattern(patterns[i]) {
			return nil, fmt.Errorf("sandbox: hidden paths %q: not a valid glob", g)
		}
	}
	matches := func(p string) bool {
		for _, pat := range patterns {
			if ok, _ := doublestar.Match(pat, p); ok {
				return true
			}
		}
		return false
	}
	masked := map[string]bool{} // virtual paths: true for a folder
	err := fs.WalkDir(os.DirFS(root), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable here: the command cannot read it either
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if name == "." {
			return nil
		}
		p := "/" + name
		if d.Type()&fs.ModeSymlink != 0 || !matches(p) {
			return nil
		}
		masked[p] = d.IsDir()
		if len(masked) > MaxHiddenMatches {
			return fmt.Errorf("sandbox: the hidden paths %q match more than %d files; the command does not run rather than show some", globs, MaxHiddenMatches)
		}
		if d.IsDir() {
			return fs.SkipDir // masked whole
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Nothing below a masked folder was visited: mask each, in a stable
	// order.
	var args []string
	for _, p := range slices.Sorted(maps.Keys(masked)) {
		args = append(args, maskArgs(filepath.Join(root, filepath.FromSlash(p[1:])), masked[p])...)
	}
	return args, nil
}
