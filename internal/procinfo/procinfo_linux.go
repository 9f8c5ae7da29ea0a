package procinfo

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// hostID is the host name, the boot ID and the PID namespace: two processes
// can compare PIDs only if all three match.
func hostID() string {
	h, _ := os.Hostname()
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return h + "|" + strings.TrimSpace(string(boot)) + "|" + ns
}

// stat returns the state and start time (field 22, in clock ticks since
// boot) of a process from /proc/PID/stat.
func stat(pid int) (state byte, start string, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", err
	}
	// The command name, field 2, is in parentheses and may hold anything;
	// the fields after the last ')' start with field 3.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, "", errors.New("procinfo: malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, "", errors.New("procinfo: malformed stat")
	}
	return f[0][0], f[19], nil
}

func startToken(pid int) string {
	_, start, err := stat(pid)
	if err != nil {
		return ""
	}
	return start
}

func dead(o Owner) bool {
	state, start, err := stat(o.PID)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	if state == 'Z' || state == 'X' {
		return true
	}
	return o.Start != "" && start != o.Start
}
