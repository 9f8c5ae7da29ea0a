package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend/sandbox"
)

// TestSandboxUnprivileged checks that a sandboxed command holds no
// privilege whatever the caller is: run as root (as CI does) it is the
// test that matters, and it passes as a normal user too.
func TestSandboxUnprivileged(t *testing.T) {
	ws := t.TempDir()
	s := sandboxShell(t, ws, sandbox.Bubblewrap{})

	t.Run("no capabilities, not root", func(t *testing.T) {
		r := run(t, s, "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status; echo uid=$(id -u) gid=$(id -g)")
		for _, want := range []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1",
			"uid=" + strconv.Itoa(sandbox.SandboxUID) + " ", "gid=" + strconv.Itoa(sandbox.SandboxGID)} {
			if !strings.Contains(r.Output, want) {
				t.Errorf("want %q in %q", want, r.Output)
			}
		}
	})

	t.Run("the user has a name", func(t *testing.T) {
		if r := run(t, s, "id -un; id -gn"); r.Output != "agent\nagent\n" {
			t.Errorf("user and group names: %q", r.Output)
		}
	})

	t.Run("files written belong to the caller", func(t *testing.T) {
		run(t, s, "echo x > owned && mkdir owned-dir")
		for _, name := range []string{"owned", "owned-dir"} {
			st, err := os.Stat(filepath.Join(ws, name))
			if err != nil {
				t.Fatal(err)
			}
			if uid := statUID(st); uid != os.Geteuid() {
				t.Errorf("%s belongs to uid %d, not the caller's %d", name, uid, os.Geteuid())
			}
		}
	})

	t.Run("remounting the system writable", func(t *testing.T) {
		for _, dir := range []string{"/opt", "/etc", "/usr"} {
			if _, err := os.Stat(dir); err != nil {
				continue
			}
			marker := filepath.Join(dir, "deepagents-test-remount-"+strconv.FormatInt(time.Now().UnixNano(), 36))
			r := run(t, s, "mount -o remount,bind,rw "+dir+" 2>&1; touch "+marker+" && echo WROTE")
			if _, err := os.Stat(marker); err == nil {
				os.Remove(marker)
				t.Errorf("a command remounted %s and wrote %s on the host: %q", dir, marker, r.Output)
			} else if strings.Contains(r.Output, "WROTE") {
				t.Errorf("a command wrote into %s (a private copy?): %q", dir, r.Output)
			}
		}
	})

	t.Run("kernel settings", func(t *testing.T) {
		// Writing back the value read changes nothing on the host if it
		// succeeds, and proves the file writable.
		r := run(t, s, `v=$(cat /proc/sys/kernel/core_pattern) && printf '%s\n' "$v" > /proc/sys/kernel/core_pattern && echo WRITABLE`)
		if strings.Contains(r.Output, "WRITABLE") {
			t.Errorf("/proc/sys/kernel/core_pattern is writable: %q", r.Output)
		}
		r = run(t, s, `grep -E ' /proc/sys ' /proc/self/mountinfo`)
		if !strings.Contains(r.Output, " ro,") && !strings.Contains(r.Output, " ro ") {
			t.Errorf("/proc/sys is not mounted read-only: %q", r.Output)
		}
	})

	t.Run("no nested user namespace", func(t *testing.T) {
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("no unshare here")
		}
		r := run(t, s, "unshare -Ur true && echo NESTED")
		if strings.Contains(r.Output, "NESTED") {
			t.Errorf("a command made a user namespace: %q", r.Output)
		}
	})

	t.Run("secrets of /etc", func(t *testing.T) {
		for _, f := range []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-"} {
			b, err := os.ReadFile(f)
			if err != nil || len(b) == 0 {
				continue // this test cannot tell here
			}
			r := run(t, s, "cat "+f+" 2>/dev/null | wc -c")
			if strings.TrimSpace(r.Output) != "0" {
				t.Errorf("%s readable in the sandbox: %q bytes", f, r.Output)
			}
		}
		keys, _ := filepath.Glob("/etc/ssl/private/*")
		for _, k := range keys {
			r := run(t, s, "cat '"+k+"' 2>/dev/null | wc -c")
			if strings.TrimSpace(r.Output) != "0" {
				t.Errorf("%s readable in the sandbox: %q bytes", k, r.Output)
			}
		}
	})
}

// TestSandboxMasksUnreadableEtc plants, as root, a file and a folder that
// are not world-readable in /etc, and a world-readable *.key under
// /etc/ssl/private: none may be read inside.
func TestSandboxMasksUnreadableEtc(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("planting files in /etc takes root; as another user the sandbox's user cannot read them anyway")
	}
	const secret = "deepagents-planted-secret"
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	file := "/etc/deepagents-test-" + suffix
	dir := "/etc/deepagents-test-dir-" + suffix
	if err := os.WriteFile(file, []byte(secret), 0o600); err != nil {
		t.Skip("cannot plant a file in /etc:", err)
	}
	t.Cleanup(func() { os.Remove(file) })
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "open"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	readable := "/etc/deepagents-test-open-" + suffix
	if err := os.WriteFile(readable, []byte("public"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(readable) })
	s := sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{})
	r := run(t, s, "cat "+file+" "+dir+"/open "+readable+" 2>&1; ls -la "+dir)
	if strings.Contains(r.Output, secret) {
		t.Errorf("a planted secret was read: %q", r.Output)
	}
	if !strings.Contains(r.Output, "public") {
		t.Errorf("a world-readable file of /etc was masked: %q", r.Output)
	}
}

// TestSandboxSetuid checks that a set-user-ID program and one with file
// capabilities gain nothing: neither can read a file only its owner, or
// a privileged process, could.
func TestSandboxSetuid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making set-user-ID programs of another user takes root")
	}
	ws := t.TempDir()
	if err := os.Chmod(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	const secret = "deepagents-setuid-secret"
	victim := filepath.Join(ws, "victim")
	if err := os.WriteFile(victim, []byte(secret), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(victim, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip(err)
	}
	b, err := os.ReadFile(cat)
	if err != nil {
		t.Fatal(err)
	}
	// A copy of cat set-user-ID to the victim's owner, one set-user-ID
	// root, and one with the capability to read anything.
	progs := map[string]func(string) error{
		"suid-owner": func(p string) error { return os.Chown(p, 4242, 4242) },
		"suid-root":  func(p string) error { return nil },
		"filecap": func(p string) error {
			out, err := exec.Command("setcap", "cap_dac_override,cap_dac_read_search+ep", p).CombinedOutput()
			if err != nil {
				return &skipError{string(out)}
			}
			return nil
		},
	}
	s := sandboxShell(t, ws, sandbox.Bubblewrap{})
	for name, setup := range progs {
		p := filepath.Join(ws, name)
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := setup(p); err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		if name != "filecap" {
			if err := os.Chmod(p, 0o4755); err != nil {
				t.Fatal(err)
			}
		}
		r := run(t, s, "./"+name+" victim 2>&1; ./"+name+" /proc/self/status | grep -E '^(Uid|CapEff)'")
		if strings.Contains(r.Output, secret) {
			t.Errorf("%s read a file of another user: %q", name, r.Output)
		}
		uid := strconv.Itoa(sandbox.SandboxUID)
		for _, want := range []string{"CapEff:\t0000000000000000", "Uid:\t" + uid + "\t" + uid + "\t" + uid} {
			if !strings.Contains(r.Output, want) {
				t.Errorf("%s gained privileges: want %q in %q", name, want, r.Output)
			}
		}
	}
}

type skipError struct{ s string }

func (e *skipError) Error() string { return "cannot set up: " + e.s }

func statUID(st os.FileInfo) int { return int(st.Sys().(*syscall.Stat_t).Uid) }

// TestSandboxNoSetIDFiles tries the ways to leave a set-user-ID or
// set-group-ID file in the workspace, which on the host would run as the
// caller (root, in CI) for any user: all must fail, and ordinary modes
// still work.
func TestSandboxNoSetIDFiles(t *testing.T) {
	ws := t.TempDir()
	s := sandboxShell(t, ws, sandbox.Bubblewrap{})
	for _, cmd := range []string{
		"touch a && chmod u+s a",
		"touch b && chmod g+s b",
		"touch c && chmod 6755 c",
		"install -m 4755 /bin/true d",
		"perl -e 'sysopen(F, \"e\", 0101, 04755) or die $!'",
		"python3 -c 'import os; os.open(\"f\", os.O_CREAT|os.O_WRONLY, 0o4755)'",
		"mkdir g && chmod g+s g",
		"mknod h p && chmod u+s h",
	} {
		s.Execute(t.Context(), cmd, 0)
	}
	filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			t.Errorf("%s is %v on the host", p, info.Mode())
		}
		return nil
	})
	r := run(t, s, "touch x && chmod 755 x && mkdir -p y && chmod 700 y && stat -c %a x y")
	if r.Output != "755\n700\n" {
		t.Errorf("ordinary modes: %q", r.Output)
	}
}
