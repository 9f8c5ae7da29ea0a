package procinfo

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/internal/asuser"
)

// hiddenEnv makes the test binary a process that hides its environment
// and waits (TestHideEnviron).
const hiddenEnv = "DEEPAGENTS_PROCINFO_HIDDEN"

func TestMain(m *testing.M) {
	if v := os.Getenv(hiddenEnv); v != "" {
		if v == "hide" {
			if err := HideEnviron(); err != nil {
				os.Stdout.WriteString("error: " + err.Error() + "\n")
				os.Exit(1)
			}
		}
		os.Stdout.WriteString("ready\n")
		os.Stdin.Read(make([]byte, 1)) // until the test closes it
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestHideEnviron starts a process holding a key in its environment that
// calls HideEnviron: another process of the same user must not read its
// /proc/PID/environ (without the call it can: the test can fail). Root
// reads everything, so as root the test runs itself as user nobody.
func TestHideEnviron(t *testing.T) {
	if os.Geteuid() == 0 {
		asuser.RunTest(t, 65534, "TestHideEnviron")
		return
	}
	const key = "deepagents-procinfo-secret-key"
	read := func(mode string) ([]byte, error) {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), hiddenEnv+"="+mode, "DEEPAGENTS_TEST_API_KEY="+key)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { in.Close(); cmd.Wait() }()
		if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
			t.Fatalf("helper: %q", line)
		}
		return os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
	}
	if b, err := read("show"); err != nil || !strings.Contains(string(b), key) {
		t.Fatalf("without HideEnviron the environment should be readable: %v", err)
	}
	b, err := read("hide")
	if err == nil && strings.Contains(string(b), key) {
		t.Fatal("a process of the same user read the key")
	}
	if err != nil && !errors.Is(err, fs.ErrPermission) {
		t.Errorf("reading a hidden environment: %v", err)
	}
}
