package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// System folders, and every folder below the system's trees, are refused
// as a workspace; projects below /opt, /var, /srv, /usr/src, and anything
// in the user's home (wherever it is) are not; the flag accepts them all.
func TestCheckWorkspaceDir(t *testing.T) {
	for _, c := range []struct {
		dir, home string
		refused   bool
	}{
		{"/", "/root", true},
		{"/etc", "/root", true},
		{"/etc/cron.d", "/root", true},
		{"/etc/profile.d", "/home/u", true},
		{"/usr/local/bin", "/root", true},
		{"/usr/lib/python3/dist-packages", "/root", true},
		{"/usr/bin", "/root", true},
		{"/var/lib", "/root", true},
		{"/var/lib/dpkg", "/root", true},
		{"/var/spool/cron", "/root", true},
		{"/boot/grub", "/root", true},
		{"/proc/self", "/root", true},
		{"/sys/kernel", "/root", true},
		{"/dev/shm/x", "/root", false},
		{"/dev/shm", "/root", true},
		{"/dev/pts", "/root", true},
		{"/opt", "/root", true},
		{"/var", "/root", true},
		{"/home", "/home/u", true},
		{"/lib64/x", "/root", true},
		{"/opt/app", "/root", false},
		{"/var/www/site", "/root", false},
		{"/srv/site", "/root", false},
		{"/usr/src/app", "/root", false},
		{"/usr/local/src/tool", "/root", false},
		{"/root", "/root", false},
		{"/root/project", "/root", false},
		{"/home/u/code", "/home/u", false},
		{"/var/lib/jenkins/workspace/job", "/var/lib/jenkins", false},
		{"/var/lib/jenkins-other", "/var/lib/jenkins", true},
		{"/tmp/x", "", false},
		{"/usr/sbin/x", "/usr/sbin", true}, // a system account's home is the system's
		{"/private/etc/x", "/Users/u", true},
		{"/Library/LaunchDaemons", "/Users/u", true},
		{"/Users/u/code", "/Users/u", false},
		{"/etcetera", "/root", false},
	} {
		err := checkWorkspaceDir(c.dir, c.home, false)
		if (err != nil) != c.refused {
			t.Errorf("%s (home %s): %v, want refused %v", c.dir, c.home, err, c.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "--"+SystemDirFlag) {
			t.Errorf("%s: %v does not name the flag", c.dir, err)
		}
		if err := checkWorkspaceDir(c.dir, c.home, true); err != nil {
			t.Errorf("%s with the flag: %v", c.dir, err)
		}
	}
	if err := checkWorkspaceDir("etc", "/root", false); err == nil {
		t.Error("a relative workspace was accepted")
	}
}

// Resolve judges the workspace where it really is: a link to a system
// folder is refused, a relative project folder is not.
func TestResolveJudgesTheRealFolder(t *testing.T) {
	link := filepath.Join(t.TempDir(), "etc")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(Inputs{Flags: Flags{Dir: link}, Places: home(t, "")}); err == nil || !strings.Contains(err.Error(), SystemDirFlag) {
		t.Errorf("a link to /etc: %v", err)
	}
	t.Chdir(t.TempDir())
	if err := os.Mkdir("proj", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(Inputs{Flags: Flags{Dir: "proj"}, Places: home(t, "")}); err != nil {
		t.Errorf("a relative project folder: %v", err)
	}
}
