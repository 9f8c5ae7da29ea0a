package rusage_test

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/deepagents-go/deepagents/bench/internal/rusage"
)

func TestSelf(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no rusage here")
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	if got := rusage.Self(); got < 64<<20 {
		t.Errorf("Self() = %d after touching 64 MiB", got)
	}
	runtime.KeepAlive(buf)
}

func TestChild(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no rusage here")
	}
	if rusage.Child(nil) != 0 {
		t.Error("Child(nil) != 0")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	// A Go test binary doing nothing still maps a few MiB, and far less
	// than a GiB: this catches a wrong unit either way.
	if got := rusage.Child(cmd.ProcessState); got < 1<<20 || got > 1<<30 {
		t.Errorf("Child() = %d", got)
	}
}
