//go:build unix

package sandbox

import (
	"path/filepath"
	"testing"
)

func TestHostUnder(t *testing.T) {
	for _, c := range []struct {
		dir, p, rel string
		ok          bool
	}{
		{"/ws", "/ws", ".", true},
		{"/ws", "/ws/.git/hooks", ".git/hooks", true},
		{"/ws", "/ws/../etc", "", false},
		{"/ws", "/wsx/a", "", false},
		{"/ws", "/", "", false},
		{"", "/ws", "", false},
		{"/", "/etc", "etc", true},
	} {
		rel, ok := hostUnder(c.dir, c.p)
		if ok != c.ok || rel != c.rel {
			t.Errorf("hostUnder(%q, %q) = %q, %v; want %q, %v", c.dir, c.p, rel, ok, c.rel, c.ok)
		}
	}
}

// FuzzHostUnder holds hostUnder to its meaning: when it says p is under
// dir, p is dir joined with the rest, and the rest does not climb out.
func FuzzHostUnder(f *testing.F) {
	f.Add("/ws", "/ws/a/../b")
	f.Add("/ws", "/ws/../../x")
	f.Add("/a/b", "/a/b/c")
	f.Fuzz(func(t *testing.T, dir, p string) {
		if !filepath.IsAbs(dir) || !filepath.IsAbs(p) {
			return
		}
		rel, ok := hostUnder(dir, p)
		if !ok {
			return
		}
		if rel != "." && !filepath.IsLocal(rel) {
			t.Fatalf("hostUnder(%q, %q): rest %q climbs out", dir, p, rel)
		}
		if filepath.Join(dir, rel) != filepath.Clean(p) {
			t.Fatalf("hostUnder(%q, %q) = %q: %q is not %q", dir, p, rel, filepath.Join(dir, rel), filepath.Clean(p))
		}
	})
}

// TestSandboxPlacesWritable maps host paths to the sandbox: the workspace
// at its own path, HOME at SandboxHome, anything else nowhere.
func TestSandboxPlacesWritable(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	s := newSandboxPlaces(&Bubblewrap{Home: home}, ws)
	for _, c := range []struct {
		host, inside string
		ok           bool
	}{
		{filepath.Join(ws, ".envrc"), filepath.Join(ws, ".envrc"), true},
		{filepath.Join(home, ".bashrc"), SandboxHome + "/.bashrc", true},
		{home, SandboxHome, true},
		{"/etc/passwd", "", false},
		{filepath.Dir(ws), "", false},
	} {
		pl, ok := s.writable(c.host)
		if ok != c.ok || pl.inside != c.inside {
			t.Errorf("writable(%q) = %q, %v; want %q, %v", c.host, pl.inside, ok, c.inside, c.ok)
		}
	}
}
