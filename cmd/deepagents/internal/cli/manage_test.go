package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
)

func TestParseAge(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30d", 30 * 24 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"1.5h", 90 * time.Minute, true},
		{"0s", 0, false},
		{"-3h", 0, false},
		{"xd", 0, false},
		{"yesterday", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := parseAge(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("parseAge(%q) = %v, %v; want %v (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KB", 3 << 20: "3.0 MB", 17_500 << 20: "17.1 GB"} {
		if got := display.Bytes(n); got != want {
			t.Errorf("display.Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// threads delete removes a thread with its subagents' threads; prune
// removes what is older than the cutoff; db shows the size, and db vacuum
// gives the space back.
func TestThreadsDeletePruneAndVacuum(t *testing.T) {
	w := newWorld(t)
	done := w.script(`{"turns":[{"content":"done"}]}`)
	big := strings.Repeat("x", 200_000)
	bulky := w.script(`{"turns":[{"tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/big.txt","content":"` + big + `"}}]},{"content":"done"}]}`)
	for _, th := range []string{"old-1", "old-2"} {
		if code, _, stderr := w.run(w.runArgs(bulky, "--thread", th, "go")...); code != 0 {
			t.Fatalf("run %s: %s", th, stderr)
		}
	}
	time.Sleep(2100 * time.Millisecond)
	// touchNew runs the new thread again right before a prune, so that it
	// is recent however slow the commands in between were.
	touchNew := func() {
		t.Helper()
		if code, _, stderr := w.run(w.runArgs(done, "--thread", "new", "go")...); code != 0 {
			t.Fatalf("run new: %s", stderr)
		}
	}
	touchNew()
	threads := func() string {
		_, out, _ := w.run("threads", "--db", w.db)
		return out
	}
	// Negative limits are a usage error.
	if code, _, stderr := w.run("threads", "--db", w.db, "--limit", "-3"); code != ExitUsage || !strings.Contains(stderr, "--limit") {
		t.Errorf("threads --limit -3: exit %d, %s", code, stderr)
	}
	// Prune, dry run first.
	code, out, stderr := w.run("threads", "prune", "--older-than", "2s", "--dry-run", "--db", w.db)
	if code != 0 || !strings.Contains(out, "old-1") || !strings.Contains(out, "old-2") || strings.Contains(out, "new") {
		t.Fatalf("prune --dry-run: exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(threads(), "old-1") {
		t.Fatal("a dry run deleted")
	}
	if code, _, stderr := w.run("threads", "prune", "--db", w.db); code != ExitUsage {
		t.Errorf("prune without --older-than: exit %d, %s", code, stderr)
	}
	if code, _, stderr := w.run("threads", "prune", "--older-than", "soon", "--db", w.db); code != ExitUsage {
		t.Errorf("prune --older-than soon: exit %d, %s", code, stderr)
	}
	_, info, _ := w.run("db", "--db", w.db)
	if !strings.Contains(info, "threads\t3") || !strings.Contains(info, "sqlite") {
		t.Errorf("db info:\n%s", info)
	}
	touchNew()
	code, _, stderr = w.run("threads", "prune", "--older-than", "2s", "--db", w.db)
	if code != 0 || !strings.Contains(stderr, "deleted 2 thread(s)") {
		t.Fatalf("prune: exit %d, %s", code, stderr)
	}
	if list := threads(); strings.Contains(list, "old-") || !strings.Contains(list, "new") {
		t.Errorf("after prune:\n%s", list)
	}
	// Vacuum gives the space of the deleted threads back.
	code, out, stderr = w.run("db", "vacuum", "--db", w.db)
	if code != 0 || !strings.Contains(out, "before") {
		t.Fatalf("db vacuum: exit %d\n%s\n%s", code, out, stderr)
	}
	if before, after := vacuumSizes(t, out); after >= before {
		t.Errorf("vacuum did not shrink the database: %s", out)
	}
	// Delete: an unknown thread is an error after the known ones go.
	code, _, stderr = w.run("threads", "delete", "new", "nope", "--db", w.db)
	if code != ExitFailed || !strings.Contains(stderr, "deleted 1 thread(s)") || !strings.Contains(stderr, "no such thread: nope") {
		t.Errorf("delete new nope: exit %d, %s", code, stderr)
	}
	if list := threads(); strings.Contains(list, "new") {
		t.Errorf("after delete:\n%s", list)
	}
	if code, _, _ := w.run("threads", "delete", "--db", w.db); code != ExitUsage {
		t.Errorf("delete without threads: exit %d", code)
	}
}

// vacuumSizes reads the sizes in "LOCATION: N U before, M V after".
func vacuumSizes(t *testing.T, out string) (before, after float64) {
	t.Helper()
	var bu, au string
	_, rest, _ := strings.Cut(out, ": ")
	if _, err := fmt.Sscanf(rest, "%g %s before, %g %s after", &before, &bu, &after, &au); err != nil {
		t.Fatalf("db vacuum output %q: %v", out, err)
	}
	scale := map[string]float64{"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}
	return before * scale[bu], after * scale[au]
}

// A thread's title is its first prompt until it is renamed; threads shows
// it, and delete forgets it.
func TestThreadTitles(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[{"content":"ok"}]}`)
	code, stdout, stderr := w.run(w.runArgs(script, "Plan the\nrelease notes")...)
	if code != 0 {
		t.Fatalf("%d %s", code, stderr)
	}
	id := runEnd(t, stdout).ThreadID
	if _, out, _ := w.run("threads", "--db", w.db); !strings.Contains(out, "TITLE") || !strings.Contains(out, "Plan the release notes") {
		t.Errorf("threads:\n%s", out)
	}
	if code, _, stderr := w.run("threads", "rename", id, "Release notes, v2", "--db", w.db); code != 0 {
		t.Fatalf("rename: %d %s", code, stderr)
	}
	// A later run on the thread keeps the title it was given.
	w.run(w.runArgs(w.script(`{"turns":[{"content":"again"}]}`), "--thread", id, "something else")...)
	_, out, _ := w.run("threads", "--db", w.db, "--output", "jsonl")
	if !strings.Contains(out, `"title":"Release notes, v2"`) {
		t.Errorf("threads --output jsonl: %s", out)
	}
	if code, _, stderr := w.run("threads", "rename", "no-such-thread", "x", "--db", w.db); code == 0 || !strings.Contains(stderr, "no-such-thread") {
		t.Errorf("renaming a missing thread: %d %s", code, stderr)
	}
	if code, _, stderr := w.run("threads", "delete", id, "--db", w.db); code != 0 {
		t.Fatalf("delete: %d %s", code, stderr)
	}
	w.run(w.runArgs(w.script(`{"turns":[{"content":"new"}]}`), "--thread", id, "a new start")...)
	if _, out, _ := w.run("threads", "--db", w.db); !strings.Contains(out, "a new start") || strings.Contains(out, "Release notes") {
		t.Errorf("a deleted thread's title outlived it:\n%s", out)
	}
}
