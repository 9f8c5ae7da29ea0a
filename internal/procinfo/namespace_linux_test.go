package procinfo

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestDumpable(t *testing.T) {
	// The test binary hid nothing (HideEnviron runs in helper processes).
	if !Dumpable() {
		t.Fatal("a process that hid nothing is reported not dumpable")
	}
}

// TestUnshareCommand checks the command UnshareCommand makes: unshare
// runs the program, with its arguments, as the first process of its PID
// namespace; a command whose program was not found is left alone.
func TestUnshareCommand(t *testing.T) {
	missing := exec.Command("deepagents-no-such-program")
	before := slices.Clone(missing.Args)
	if UnshareCommand(missing) || !slices.Equal(missing.Args, before) {
		t.Fatalf("a program not found: %v", missing.Args)
	}
	cmd := exec.Command("sh", "-c", `echo "$$ $0 $1"`, "zero", "one")
	program := cmd.Path
	if !UnshareCommand(cmd) {
		t.Skip("util-linux's unshare cannot make user and PID namespaces here")
	}
	i := slices.Index(cmd.Args, "--")
	if cmd.Args[0] != cmd.Path || i < 0 || !slices.Contains(cmd.Args[:i], "--map-current-user") || !slices.Equal(cmd.Args[i+1:], []string{program, "-c", `echo "$$ $0 $1"`, "zero", "one"}) {
		t.Fatalf("command: %s %q", cmd.Path, cmd.Args)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "1 zero one" {
		t.Fatalf("the program printed %q, want its PID 1 and its arguments", got)
	}
}
