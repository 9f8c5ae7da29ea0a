package sandbox

import (
	"bufio"
	"bytes"
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

// cgroupRoots are the cgroups under which this process may make one for a
// shell's commands: per controller, a cgroup v1 hierarchy it can write
// (as root), or one cgroup v2 directory whose subtree has the controller
// (a delegated one). "" where there is none.
type cgroupRoots struct {
	pids, memory string
	// memV2 is set when memory is a cgroup v2 directory.
	memV2 bool
}

// missing names the limits that cannot be enforced.
func (r cgroupRoots) missing() []string {
	var m []string
	if r.pids == "" {
		m = append(m, "processes (MaxProcesses)")
	}
	if r.memory == "" {
		m = append(m, "memory (MaxMemory)")
	}
	return m
}

// findCgroupRoots finds where this process may make cgroups: cgroup v1's
// pids and memory hierarchies where it can write them, else its cgroup v2
// directory when that is delegated to it (see delegateV2).
func findCgroupRoots() cgroupRoots {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return cgroupRoots{}
	}
	var r cgroupRoots
	var v2 string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			switch c {
			case "pids", "memory":
				if d := filepath.Join("/sys/fs/cgroup", c, parts[2]); writable(d) {
					if c == "pids" {
						r.pids = d
					} else {
						r.memory = d
					}
				}
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
		}
	}
	if (r.pids == "" || r.memory == "") && v2 != "" {
		mount := "/sys/fs/cgroup"
		if _, err := os.Stat(filepath.Join(mount, "cgroup.controllers")); err != nil {
			mount = "/sys/fs/cgroup/unified" // a hybrid system
		}
		dir := filepath.Join(mount, v2)
		if ctl := delegateV2(dir); ctl != nil {
			if r.pids == "" && ctl["pids"] {
				r.pids = dir
			}
			if r.memory == "" && ctl["memory"] {
				r.memory, r.memV2 = dir, true
			}
		}
	}
	return r
}

// delegateV2 returns the controllers that cgroups made under the cgroup v2
// directory dir (this process's) get, or nil when this process cannot make
// any there. A delegated cgroup (systemd-run --user --scope -p
// Delegate=yes) has controllers but none enabled for its children yet, and
// it cannot enable them while it holds processes (cgroup v2 puts
// processes only in leaves): when this process is alone in it, it moves
// to a leaf of its own, deepagents-self, and the controllers are enabled.
func delegateV2(dir string) map[string]bool {
	if !writable(dir) {
		return nil
	}
	enabled := func() map[string]bool {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		if err != nil {
			return nil
		}
		m := map[string]bool{}
		for _, c := range strings.Fields(string(b)) {
			// (A "+" is what was written, which only a test's plain
			// files give back.)
			if c = strings.TrimPrefix(c, "+"); c == "pids" || c == "memory" {
				m[c] = true
			}
		}
		return m
	}
	if m := enabled(); len(m) > 0 {
		return m
	}
	avail, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil
	}
	var want []string
	for _, c := range strings.Fields(string(avail)) {
		if c == "pids" || c == "memory" {
			want = append(want, "+"+c)
		}
	}
	if len(want) == 0 {
		return nil
	}
	// Only a cgroup that holds this process alone is taken over: one
	// made for it (systemd-run execs the program in its scope). A
	// terminal's or a session's own cgroup, which a user may also write,
	// is left as it is.
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil || strings.TrimSpace(string(procs)) != strconv.Itoa(os.Getpid()) {
		return nil
	}
	leaf := filepath.Join(dir, "deepagents-self")
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), procs, 0o644); err != nil {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.Join(want, " ")), 0o644); err != nil {
		return nil
	}
	return enabled()
}

func writable(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "cgroup.procs"))
	return err == nil && st.Mode().IsRegular() && unixAccessW(dir)
}

// pidsRoot returns the directory under which process caps are made, ""
// when there is none (the tests use it).
func pidsRoot() string { return findCgroupRoots().pids }

// cgroupPrefix starts the names of the cgroups made here.
const cgroupPrefix = "deepagents-"

// sweepCgroups removes the cgroups that shells of processes now dead left
// under dir (a killed process cannot tear its own down). A cgroup is named
// after its owner's PID and start time; one whose owner still runs is
// kept, even idle between commands. Cgroups of the older, per-command
// naming go once empty and a minute old.
func sweepCgroups(dir string) {
	dirs, _ := filepath.Glob(filepath.Join(dir, cgroupPrefix+"*"))
	for _, d := range dirs {
		name := strings.TrimPrefix(filepath.Base(d), cgroupPrefix)
		if name == "self" {
			continue // this or another process's own leaf (delegateV2)
		}
		f := strings.Split(name, "-")
		if pid, err := strconv.Atoi(f[0]); err == nil && len(f) == 3 {
			if _, start := procStart(pid); start == f[1] {
				continue // its owner is alive
			}
			_ = os.Remove(d) // fails, harmlessly, while processes are in it
			continue
		}
		if st, err := os.Stat(d); err == nil && time.Since(st.ModTime()) > time.Minute {
			_ = os.Remove(d)
		}
	}
}

// procStart returns whether the process pid runs and its start time (in
// clock ticks since boot, field 22 of /proc/PID/stat), which tells it from
// a later process given the same PID.
func procStart(pid int) (bool, string) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false, ""
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return true, ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return false, ""
	}
	return true, f[19]
}

// shellCgroup is a LocalShell's cgroup (one per controller hierarchy with
// cgroup v1): all its sandboxed commands run in it, so its caps hold for
// all of them together.
type shellCgroup struct{ dirs []string }

// newShellCgroup makes the cgroup under roots with the given caps.
func newShellCgroup(roots cgroupRoots, maxProcs int, maxMem int64) (*shellCgroup, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	_, start := procStart(os.Getpid())
	name := cgroupPrefix + strconv.Itoa(os.Getpid()) + "-" + start + "-" + hex.EncodeToString(b[:])
	c := &shellCgroup{}
	mk := func(root string, files [][2]string) error {
		dir := filepath.Join(root, name)
		if !contains(c.dirs, dir) {
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
			c.dirs = append(c.dirs, dir)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0o644); err != nil && f[0] != "memory.memsw.limit_in_bytes" && f[0] != "memory.swap.max" {
				return fmt.Errorf("setting %s: %w", f[0], err)
			}
		}
		return nil
	}
	var err error
	if roots.pids != "" {
		err = mk(roots.pids, [][2]string{{"pids.max", strconv.Itoa(maxProcs)}})
	}
	if err == nil && roots.memory != "" {
		mem := strconv.FormatInt(maxMem, 10)
		if roots.memV2 {
			// Swap is capped at nothing, so the cap is on memory, not
			// on memory that could still be swapped out.
			err = mk(roots.memory, [][2]string{{"memory.max", mem}, {"memory.swap.max", "0"}})
		} else {
			err = mk(roots.memory, [][2]string{{"memory.limit_in_bytes", mem}, {"memory.memsw.limit_in_bytes", mem}})
		}
	}
	if err != nil {
		for _, d := range c.dirs {
			os.Remove(d)
		}
		return nil, err
	}
	return c, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// enter returns a shell snippet that moves the shell running it into the
// cgroup and runs its arguments: the processes it then starts are counted
// there from their birth.
func (c *shellCgroup) enter() string {
	var b strings.Builder
	for _, d := range c.dirs {
		b.WriteString("echo $$ > " + shellQuote(filepath.Join(d, "cgroup.procs")) + " && ")
	}
	b.WriteString(`exec "$@"`)
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// cgroupRemoveWait is how long remove waits for a cgroup's processes to be
// gone: tearing down a sandbox whose command forked hundreds of processes
// can take seconds on a loaded machine.
const cgroupRemoveWait = 30 * time.Second

// remove deletes the cgroup once its processes are gone.
func (c *shellCgroup) remove() error {
	deadline := time.Now().Add(cgroupRemoveWait)
	var errs []error
	for _, d := range c.dirs {
		for {
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}
