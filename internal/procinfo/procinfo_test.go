package procinfo

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

func TestSelfAlive(t *testing.T) {
	self := Self()
	if self.PID <= 0 || self.Host == "" {
		t.Fatalf("Self = %+v", self)
	}
	if Dead(self, self) {
		t.Errorf("this process looks dead")
	}
	if runtime.GOOS == "linux" && self.Start == "" {
		t.Errorf("no start token on linux")
	}
	if !strings.Contains(self.String(), "pid ") {
		t.Errorf("String = %q", self.String())
	}
}

func TestDeadChild(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no liveness check on windows")
	}
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start sleep:", err)
	}
	self := Self()
	child := Owner{Host: self.Host, PID: cmd.Process.Pid, Start: startToken(cmd.Process.Pid)}
	if Dead(self, child) {
		t.Errorf("running child looks dead")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !Dead(self, child) {
		t.Errorf("reaped child looks alive")
	}
	// Another host: cannot tell.
	other := child
	other.Host = "elsewhere"
	if Dead(self, other) {
		t.Errorf("a process on another host looks dead")
	}
	// Same PID, another start token: the PID was reused.
	if runtime.GOOS == "linux" {
		reused := Owner{Host: self.Host, PID: self.PID, Start: "1"}
		if !Dead(self, reused) {
			t.Errorf("a reused PID looks alive")
		}
	}
}
