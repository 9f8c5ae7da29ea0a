//go:build linux

// Package asuser runs a test binary again as another user, for the tests
// of what must hold for a normal user when the tests run as root (the
// sandbox, a hidden environment, namespaces): CI runs as root.
package asuser

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// OtherUID is a user that exists nowhere, and is neither root nor nobody
// (65534, which is also what an unmapped user shows as): a test that sees
// it knows it ran as that user.
const OtherUID = 12345

// Command returns this test binary, with args, to run as uid: a copy of it
// in a fresh world-writable folder (the binary's own folder may be private
// to root), started with setpriv, with that folder as its working
// directory, HOME and TMPDIR, and env added to PATH. It skips the test
// where setpriv is missing. Not root, it runs the binary as it is, as this
// user.
func Command(t *testing.T, uid int, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: its parent is private to this user.
	dir, err := os.MkdirTemp("", "asuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("setpriv is missing to run this test as a user other than root")
		}
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		copied := filepath.Join(dir, filepath.Base(exe))
		if err := os.WriteFile(copied, b, 0o755); err != nil {
			t.Fatal(err)
		}
		id := strconv.Itoa(uid)
		cmd = exec.Command(setpriv, append([]string{"--reuid=" + id, "--regid=" + id, "--clear-groups", copied}, args...)...)
	} else {
		cmd = exec.Command(exe, args...)
	}
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir}, env...)
	return cmd
}

// RunTest runs the test named run of this binary as Command does, and
// fails if it fails there (or skips if it skips there).
func RunTest(t *testing.T, uid int, run string, env ...string) {
	t.Helper()
	out, err := Command(t, uid, env, "-test.run=^"+run+"$", "-test.v", "-test.count=1").CombinedOutput()
	if strings.Contains(string(out), "--- SKIP: "+run) {
		t.Skipf("%s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+run) {
		t.Fatalf("as uid %d: %v\n%s", uid, err, out)
	}
}
