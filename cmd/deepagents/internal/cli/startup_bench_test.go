package cli

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkSessionStartup measures the interactive session to its first
// prompt, as a user meets it: the real binary on a pseudo-terminal
// (script(1)), a fresh HOME, a SQLite database in it, the scripted model;
// from exec until the input's hint is on the screen. It reports the time
// (ms-to-prompt) and the process's peak RSS at that moment (MB-peak-RSS,
// VmHWM); BENCHMARKS.md records them. Linux only (it reads /proc).
func BenchmarkSessionStartup(b *testing.B) {
	if _, err := exec.LookPath("script"); err != nil {
		b.Skip("needs script (util-linux)")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc")
	}
	bin := binary(b)
	script := filepath.Join(b.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"content":"never"}]}`), 0o600); err != nil {
		b.Fatal(err)
	}
	var totalMS, peakMB float64
	for b.Loop() {
		home, dir := b.TempDir(), b.TempDir()
		db := filepath.Join(home, "threads.db")
		shell := strings.Join([]string{bin, "--model", "replay:" + script, "--dir", dir, "--db", db}, " ")
		cmd := exec.Command("script", "-qec", shell, "/dev/null")
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_DATA_HOME=" + filepath.Join(home, "data"), "TERM=xterm-256color"}
		keys, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var screen bytes.Buffer
		buf := make([]byte, 4096)
		for !strings.Contains(screen.String(), "/help for commands") {
			n, err := out.Read(buf)
			screen.Write(buf[:n])
			if err != nil {
				b.Fatalf("the session ended before its prompt: %q", screen.String())
			}
		}
		took := time.Since(start)
		hwm := peakRSS(b, cmd.Process.Pid, filepath.Base(bin))
		keys.Write([]byte{4}) // ctrl+d on the empty line leaves
		go io.Copy(io.Discard, out)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		totalMS += float64(took.Microseconds()) / 1000
		peakMB = max(peakMB, hwm)
	}
	b.ReportMetric(totalMS/float64(b.N), "ms-to-prompt")
	b.ReportMetric(peakMB, "MB-peak-RSS")
}

// peakRSS returns the VmHWM, in MB, of the process named name that
// descends from pid (script(1), then perhaps a shell, then the binary).
func peakRSS(b *testing.B, pid int, name string) float64 {
	b.Helper()
	for range 3 { // script, sh -c, the binary
		children, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
		fields := strings.Fields(string(children))
		if len(fields) == 0 {
			break
		}
		pid, _ = strconv.Atoi(fields[0])
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		if strings.TrimSpace(string(comm)) != name {
			continue
		}
		f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				return float64(kb) / 1024
			}
		}
	}
	b.Fatalf("no process %s under %d", name, pid)
	return 0
}
