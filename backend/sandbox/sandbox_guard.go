package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// How Bubblewrap.Protected holds inside the sandbox, whatever a command
// does in its writable workspace:
//
//   - A protected path that exists is bound read-only over itself, after
//     the workspace and HOME, so nothing can write, remove or rename it.
//   - Every directory between the workspace (or HOME) and the protected
//     path is bound over itself, still writable: a mount point cannot be
//     renamed or removed, so "mv .git old && mkdir -p .git/hooks" fails
//     instead of putting fresh, writable hooks where the protected ones
//     were. A file on the way (".git" holding "gitdir: DIR", as in
//     worktrees and submodules) is bound read-only, so it cannot be
//     pointed at a directory of the command's making; the git directory it
//     names, when inside the workspace, is protected the same way.
//   - A symbolic link on the way is followed (the real path is protected,
//     if the sandbox can write it), but a link is not a mount point and can
//     be changed: the path is then checked after the command, like a
//     missing one.
//   - A protected path missing when the command starts, in a folder that
//     exists, gets an empty read-only folder in its place for the time of
//     the command, so it cannot be created, as a file or a folder, while
//     the command runs. bwrap makes that folder on the host to mount over
//     it (an empty ".envrc" or ".vscode" folder, seen in the workspace while
//     commands run); it is removed when the last command using it ends, and
//     one left by a process killed meanwhile is an empty, read-only
//     protected folder to the next commands.
//   - A protected path whose folder is missing too (".git/hooks" in a
//     workspace without ".git") cannot be held that way without breaking
//     "git init". If the command creates it, it is removed when the
//     command has ended, with everything the command put under it, and the
//     command's output ends with a line saying so. Every process of the
//     command is dead by then (its PID namespace is gone), so nothing can
//     put it back. The check cannot tell who created the path: one created
//     on the host meanwhile (by the user's editor, say) is removed too.
//
// Hidden paths are masked where the sandbox shows them: a directory by an
// empty read-only tmpfs, anything else by /dev/null bound read-only.

// sandboxPlaces maps host paths to where the sandbox shows them.
type sandboxPlaces struct {
	root, realRoot string
	home, realHome string // "" without Bubblewrap.Home
	readOnly       []string
	// placeholders are the shell's placeholder folders in use.
	placeholders placeholderSet
}

func newSandboxPlaces(b *Bubblewrap, root string) *sandboxPlaces {
	p := &sandboxPlaces{root: root, realRoot: realPath(root)}
	if b.Home != "" {
		p.home = filepath.Clean(b.Home)
		p.realHome = realPath(p.home)
	}
	p.readOnly = slices.Clone(sandboxSystemDirs)
	for _, d := range b.ReadOnly {
		if d = filepath.Clean(d); filepath.IsAbs(d) {
			p.readOnly = append(p.readOnly, d)
		}
	}
	return p
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// hostUnder reports whether p is dir or below it, and the rest of p.
func hostUnder(dir, p string) (string, bool) {
	if dir == "" {
		return "", false
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", false
	}
	return rel, true
}

// place is where a host path lies in a place commands may write.
type place struct {
	host       string // the path on the host (as named, or resolved)
	base       string // the workspace or HOME on the host, as host names it
	inside     string // where host appears inside the sandbox
	insideBase string
}

// writable locates the host path p in the workspace or HOME, the places
// commands may write; p is taken as named and, failing that, with its
// links resolved.
func (s *sandboxPlaces) writable(p string) (place, bool) {
	for _, q := range []string{p, ""} {
		if q == "" {
			q = realPath(p)
		}
		for _, b := range [][2]string{{s.root, s.root}, {s.realRoot, s.root}, {s.home, SandboxHome}, {s.realHome, SandboxHome}} {
			if rel, ok := hostUnder(b[0], q); ok {
				return place{host: q, base: b[0], inside: filepath.Join(b[1], rel), insideBase: b[1]}, true
			}
		}
	}
	return place{}, false
}

// visible returns where the resolved host path p appears inside the
// sandbox, writable or not.
func (s *sandboxPlaces) visible(p string) (string, bool) {
	if pl, ok := s.writable(p); ok {
		return pl.inside, true
	}
	for _, d := range s.readOnly {
		if _, ok := hostUnder(d, p); ok {
			return p, true
		}
	}
	return "", false
}

// guard is a protected path checked after a command: one missing when it
// started (before is nil), or reached through a symbolic link.
type guard struct {
	host   string      // the path on the host, as named
	name   string      // the path as the Protected entry names it
	before os.FileInfo // what it was at the start, following links
}

// protection is what a command's bwrap needs for Protected and Hidden.
type protection struct {
	pins, binds, masks []string // bwrap arguments, in this order
	guards             []guard
	// placeholders are the host paths of missing protected paths that
	// empty read-only folders stand in for while the command runs.
	placeholders []string
	seen         map[string]bool // inside paths already bound
}

// protectPaths computes the mounts and guards for b's Protected and Hidden
// paths, as they are on the host when a command starts.
func protectPaths(b *Bubblewrap, places *sandboxPlaces) *protection {
	pr := &protection{seen: map[string]bool{}}
	hosts := make([]string, len(b.Protected))
	for i, p := range b.Protected {
		if filepath.IsAbs(p) {
			hosts[i] = filepath.Clean(p)
			continue
		}
		rel := filepath.FromSlash(path.Clean(p))
		if filepath.IsLocal(rel) { // a relative path out of the workspace means nothing
			hosts[i] = filepath.Join(places.root, rel)
		}
	}
	// A protected folder that exists is read-only whole: what it holds
	// needs nothing of its own (and a placeholder for a missing path in
	// it could not be made there).
	var folders []string
	for _, h := range hosts {
		if st, err := os.Stat(h); h != "" && err == nil && st.IsDir() {
			folders = append(folders, h)
		}
	}
	for i, p := range b.Protected {
		host := hosts[i]
		if host == "" || slices.ContainsFunc(folders, func(f string) bool {
			rel, ok := hostUnder(f, host)
			return ok && rel != "."
		}) {
			continue
		}
		// The workspace or HOME below a protected path: all of it
		// read-only.
		if _, ok := hostUnder(host, places.root); ok {
			pr.bind(places.root, places.root, true)
		} else if _, ok := hostUnder(realPath(host), places.realRoot); ok {
			pr.bind(places.root, places.root, true)
		}
		if places.home != "" {
			if _, ok := hostUnder(realPath(host), places.realHome); ok {
				pr.bind(places.home, SandboxHome, true)
			}
		}
		pr.protect(places, host, p, 0)
	}
	for _, h := range b.Hidden {
		if !filepath.IsAbs(h) {
			continue
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(h))
		if err != nil {
			continue // missing: nothing to hide
		}
		st, err := os.Stat(real)
		if err != nil {
			continue
		}
		if in, ok := places.visible(real); ok {
			pr.masks = append(pr.masks, maskArgs(in, st.IsDir())...)
		}
	}
	return pr
}

// protect protects host, named name, the way the comment above says.
func (pr *protection) protect(places *sandboxPlaces, host, name string, depth int) {
	if depth > 4 {
		return // links to links to links: the guard still checks
	}
	pl, ok := places.writable(host)
	if !ok {
		return // the sandbox cannot write there (or does not show it)
	}
	rel, _ := hostUnder(pl.base, pl.host)
	if rel == "." {
		pr.bind(pl.base, pl.insideBase, true) // the workspace or HOME itself
		return
	}
	// Walk from the workspace or HOME to the path, pinning what is on the
	// way.
	parts := strings.Split(rel, string(filepath.Separator))
	cur, curIn := pl.base, pl.insideBase
	linked := false
	for i, part := range parts {
		cur, curIn = filepath.Join(cur, part), filepath.Join(curIn, part)
		last := i == len(parts)-1
		content, isFile := readIfPresent[path.Clean(name)]
		if last && !linked && places.placeholders.holds(cur) {
			// Another command's placeholder.
			if isFile {
				pr.neutral(cur, curIn, content)
			} else {
				pr.placeholder(cur, curIn)
			}
			return
		}
		st, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) && last && !linked {
			// The path itself is missing, in a folder that exists: an
			// empty read-only folder in its place (a file that means
			// nothing, for the files git reads) keeps the command from
			// creating it, as a file or a folder, while it runs.
			if isFile && pr.neutral(cur, curIn, content) {
				return
			}
			if !isFile {
				pr.placeholder(cur, curIn)
				return
			}
		}
		if err != nil {
			break // missing from here on: the guard checks it
		}
		switch {
		case st.Mode()&os.ModeSymlink != 0:
			linked = true
			if real, err := filepath.EvalSymlinks(host); err == nil {
				pr.protect(places, real, name, depth+1)
			}
		case last:
			pr.bind(cur, curIn, true)
		case st.IsDir():
			pr.bind(cur, curIn, false)
			continue
		default:
			// A file on the way, such as ".git" naming its git directory.
			pr.bind(cur, curIn, true)
			if part == ".git" {
				pr.protectGitDir(places, cur, filepath.Join(parts[i+1:]...), name, depth)
			}
		}
		break
	}
	st, err := os.Stat(host)
	if err == nil && !linked {
		return // bound read-only, on pinned directories: it cannot change
	}
	g := guard{host: host, name: name}
	if err == nil {
		g.before = st
	}
	pr.guards = append(pr.guards, g)
}

// protectGitDir protects rest (such as "hooks") in the git directory that
// the file gitFile names ("gitdir: DIR"), and in its common directory.
func (pr *protection) protectGitDir(places *sandboxPlaces, gitFile, rest, name string, depth int) {
	if rest == "" {
		return
	}
	f, err := os.Open(gitFile)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "gitdir:")
	if !ok {
		return
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(gitFile), dir)
	}
	pr.protect(places, filepath.Join(dir, rest), name, depth+1)
	if b, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		pr.protect(places, filepath.Join(common, rest), name, depth+1)
	}
}

// placeholder masks the missing path host (inside, in the sandbox) with an
// empty read-only folder. bwrap makes the folder on the host to mount over
// (the workspace is bound writable); the shell removes it once no command
// uses it (placeholderSet).
func (pr *protection) placeholder(host, inside string) {
	if pr.seen["ph:"+inside] {
		return
	}
	pr.seen["ph:"+inside] = true
	pr.masks = append(pr.masks, maskArgs(inside, true)...)
	pr.placeholders = append(pr.placeholders, host)
}

// neutral holds the missing file host (inside, in the sandbox) with a
// read-only file of content, made on the host now (or another command's),
// which the shell removes once no command uses it (placeholderSet). It
// reports false when the file cannot be made: the guard checks the path
// after the command then.
func (pr *protection) neutral(host, inside, content string) bool {
	if pr.seen["ph:"+inside] {
		return true
	}
	f, err := os.OpenFile(host, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444) // O_EXCL: never through a link
	if err == nil {
		_, err = f.WriteString(content)
		err = errors.Join(err, f.Close())
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return false
	}
	pr.seen["ph:"+inside] = true
	pr.bind(host, inside, true)
	pr.placeholders = append(pr.placeholders, host)
	return true
}

// placeholderSet counts the commands using each placeholder folder, so that
// the folder is removed from the host when the last of them ends, and not
// while another command's sandbox still mounts over it: removing a mount
// point detaches the mount in every namespace, which would let that
// command create the path after all.
type placeholderSet struct {
	mu    sync.Mutex
	count map[string]int
}

// holds reports whether a command is using host as a placeholder.
func (ps *placeholderSet) holds(host string) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.count[host] > 0
}

// acquire counts a command's placeholders in.
func (ps *placeholderSet) acquire(hosts []string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.count == nil {
		ps.count = map[string]int{}
	}
	for _, h := range hosts {
		ps.count[h]++
	}
}

// release counts a finished command's placeholders out, and removes those
// no command uses any more. os.Remove takes only an empty folder: if
// something was put there on the host meanwhile, it stays.
func (ps *placeholderSet) release(hosts []string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, h := range hosts {
		if ps.count[h]--; ps.count[h] <= 0 {
			delete(ps.count, h)
			if st, err := os.Lstat(h); err == nil && st.Mode().IsRegular() {
				// A file that means nothing (neutral): removed only
				// while it still holds what it was made with.
				if data, err := os.ReadFile(h); err != nil || !neutralContent(h, data) {
					continue
				}
			}
			_ = os.Remove(h)
		}
	}
}

// bind binds host over itself at inside, read-only or (a pin) writable.
func (pr *protection) bind(host, inside string, readOnly bool) {
	key := inside
	if readOnly {
		key = "ro:" + inside
	}
	if pr.seen[key] {
		return
	}
	pr.seen[key] = true
	if readOnly {
		pr.binds = append(pr.binds, "--ro-bind", host, inside)
	} else {
		pr.pins = append(pr.pins, "--bind", host, inside)
	}
}

// args returns the bwrap arguments: the pins first, as binding a
// directory later would cover what was bound below it, then the read-only
// binds and the masks.
func (pr *protection) args() []string {
	return slices.Concat(pr.pins, pr.binds, pr.masks)
}

// check runs after the command: it removes what the command left at a
// guarded path, and says so.
func (g *guard) check(places *sandboxPlaces) string {
	if _, err := os.Lstat(g.host); err != nil {
		return "" // still missing (or gone): nothing was planted
	}
	if g.before != nil {
		if st, err := os.Stat(g.host); err == nil && os.SameFile(st, g.before) {
			return ""
		}
	}
	// Remove the entry at the path itself (not what a link there points
	// to), and only where commands can write: anything else the command
	// did not make.
	parent, err := filepath.EvalSymlinks(filepath.Dir(g.host))
	if err != nil {
		return ""
	}
	leaf := filepath.Join(parent, filepath.Base(g.host))
	if _, ok := places.writable(leaf); !ok || leaf == places.realRoot || leaf == places.realHome {
		return ""
	}
	if err := os.RemoveAll(leaf); err != nil {
		return fmt.Sprintf("[sandbox] %s is a protected path (read-only) and this command created or replaced it; removing it failed: %v", g.name, err)
	}
	return fmt.Sprintf("[sandbox] removed %s: it is a protected path (read-only), and this command created or replaced it", g.name)
}

// readIfPresent are the protected paths that programs read as files when
// they exist, and would fail on if an empty folder stood in for them (git
// stops at a commondir it cannot read), each with the content that means
// what its absence does: a missing one is held, while a command runs, by a
// read-only file of that content, on the host as in the sandbox, so that
// neither git sees anything of the command's; it is removed once no
// command uses it, and one left behind (a process killed meanwhile, a
// folder made read-only) still means nothing.
var readIfPresent = map[string]string{
	".git/commondir":               ".\n", // the git folder itself
	".git/config.worktree":         "",
	".git/objects/info/alternates": "",
}

// neutralContent reports whether the file at host holds what its name
// means when missing (readIfPresent): a placeholder nobody changed.
func neutralContent(host string, data []byte) bool {
	for name, content := range readIfPresent {
		if strings.HasSuffix(filepath.ToSlash(host), "/"+name) {
			return string(data) == content
		}
	}
	return false
}
