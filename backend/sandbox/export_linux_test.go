package sandbox

import "sync"

// PidsRoot exposes pidsRoot to the tests of package backend_test.
var PidsRoot = pidsRoot

// CgroupDirs returns the directories of the shell's cgroup, none before
// its first sandboxed command or after Close.
func (s *LocalShell) CgroupDirs() []string {
	s.cgMu.Lock()
	defer s.cgMu.Unlock()
	if s.cg == nil {
		return nil
	}
	return append([]string(nil), s.cg.dirs...)
}

// MemoryRoot is where memory cgroups are made, "" when nowhere.
func MemoryRoot() string { return findCgroupRoots().memory }

// ResetCgroupWarning lets the next shell warn again that it has no
// cgroup.
func ResetCgroupWarning() { noCgroupOnce = sync.Once{} }
