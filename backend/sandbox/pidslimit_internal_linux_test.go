package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestDelegateV2 runs the take-over of a delegated cgroup v2 directory on
// plain files shaped like one: a cgroup holding this process alone gets
// its controllers enabled for children, with this process moved to a
// leaf; one holding other processes too is left alone.
func TestDelegateV2(t *testing.T) {
	fake := func(t *testing.T, procs string) string {
		dir := t.TempDir()
		for name, content := range map[string]string{
			"cgroup.procs": procs, "cgroup.controllers": "cpu memory pids", "cgroup.subtree_control": "",
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	self := strconv.Itoa(os.Getpid())

	dir := fake(t, self+"\n")
	ctl := delegateV2(dir)
	if !ctl["pids"] || !ctl["memory"] {
		t.Errorf("alone: controllers %v", ctl)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "deepagents-self", "cgroup.procs")); err != nil || string(b) != self+"\n" {
		t.Errorf("this process was not moved to the leaf: %q, %v", b, err)
	}

	dir = fake(t, self+"\n1\n")
	if ctl := delegateV2(dir); len(ctl) != 0 {
		t.Errorf("shared: controllers %v", ctl)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); len(b) != 0 {
		t.Errorf("a shared cgroup was changed: %q", b)
	}
}
