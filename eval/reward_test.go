package eval

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The reward files are written where the agent's code, run by the
// verifier, could have made them anything: only a small regular file
// holding a number from 0 to 1 is a reward, and its text is never quoted.
func TestReadReward(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("sk-HOST-SECRET"), 0o600)
	for _, c := range []struct {
		name  string
		setup func(dir string)
		want  float64
		ok    bool
	}{
		{"a number", func(d string) { os.WriteFile(filepath.Join(d, "reward.txt"), []byte("1\n"), 0o644) }, 1, true},
		{"json", func(d string) { os.WriteFile(filepath.Join(d, "reward.json"), []byte(`{"reward": 0.5}`), 0o644) }, 0.5, true},
		{"none", func(string) {}, 0, false},
		{"nan", func(d string) { os.WriteFile(filepath.Join(d, "reward.txt"), []byte("NaN"), 0o644) }, 0, false},
		{"above 1", func(d string) { os.WriteFile(filepath.Join(d, "reward.txt"), []byte("7"), 0o644) }, 0, false},
		{"a link to a host file", func(d string) { os.Symlink(secret, filepath.Join(d, "reward.txt")) }, 0, false},
		{"a pipe", func(d string) { syscall.Mkfifo(filepath.Join(d, "reward.txt"), 0o644) }, 0, false},
		{"huge", func(d string) {
			os.WriteFile(filepath.Join(d, "reward.txt"), []byte(strings.Repeat("1", 1<<20)), 0o644)
		}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(dir)
			got, err := readReward(dir)
			if (err == nil) != c.ok || got != c.want {
				t.Errorf("readReward = %v, %v; want %v, ok %v", got, err, c.want, c.ok)
			}
			if err != nil && strings.Contains(err.Error(), "sk-HOST-SECRET") {
				t.Errorf("the error quotes the file: %v", err)
			}
		})
	}
}
