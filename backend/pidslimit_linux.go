package backend

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// pidsRoot returns the directory of this process's cgroup in a pids
// hierarchy it may create cgroups in, or "" when there is none: cgroup v1's
// pids hierarchy (writable as root), or a cgroup v2 directory whose
// subtree has the pids controller enabled (a delegated one).
func pidsRoot() string {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	defer f.Close()
	var v1, v2 string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[1] == "pids":
			v1 = filepath.Join("/sys/fs/cgroup/pids", parts[2])
		case parts[0] == "0" && parts[1] == "":
			v2 = filepath.Join("/sys/fs/cgroup", parts[2])
		}
	}
	if v1 != "" && writable(v1) {
		return v1
	}
	if v2 != "" && writable(v2) {
		if b, err := os.ReadFile(filepath.Join(v2, "cgroup.subtree_control")); err == nil && strings.Contains(" "+string(b), " pids") {
			return v2
		}
	}
	return ""
}

func writable(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "cgroup.procs"))
	return err == nil && st.Mode().IsRegular() && unixAccessW(dir)
}

// sweepPidsCgroups removes the cgroups of earlier commands that a process
// which died (or was killed) before tearing them down left under root.
// Only empty ones older than a minute go: a cgroup with processes cannot
// be removed, and a young one may be another shell's, about to be used.
func sweepPidsCgroups(root string) {
	dirs, _ := filepath.Glob(filepath.Join(root, "deepagents-*"))
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && time.Since(st.ModTime()) > time.Minute {
			_ = os.Remove(d) // fails, harmlessly, while processes are in it
		}
	}
}

// pidsCgroup is one command's cgroup with a cap on its processes.
type pidsCgroup struct{ dir string }

// newPidsCgroup makes a cgroup under root allowing max processes, named
// after the shell that asks (owner) and a random suffix.
func newPidsCgroup(root, owner string, max int) (*pidsCgroup, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(root, "deepagents-"+owner+"-"+hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0o644); err != nil {
		os.Remove(dir)
		return nil, err
	}
	return &pidsCgroup{dir: dir}, nil
}

// enter returns a shell snippet that moves the shell running it into the
// cgroup; the processes it then starts are counted there from their birth.
func (c *pidsCgroup) enter() string {
	return "echo $$ > '" + filepath.Join(c.dir, "cgroup.procs") + "' && exec \"$@\""
}

// cgroupRemoveWait is how long remove waits for a cgroup's processes to be
// gone: tearing down a sandbox whose command forked hundreds of processes
// can take seconds on a loaded machine.
const cgroupRemoveWait = 30 * time.Second

// remove deletes the cgroup once its processes are gone (the sandbox's
// namespace is torn down as its command ends, which can take a moment).
func (c *pidsCgroup) remove() error {
	deadline := time.Now().Add(cgroupRemoveWait)
	for {
		err := os.Remove(c.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("removing cgroup %s: %w", c.dir, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
