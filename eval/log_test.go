package eval_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents/eval"
)

const header = `{"eval_log":1,"dataset":"/d","agent":"oracle","k":2}`

func TestReadLog(t *testing.T) {
	a0 := `{"task":"a","n":0,"reward":1,"outcome":"passed","verifier_exit":0,"usage":{"steps":1},"wall_ns":5}`
	a1 := `{"task":"a","n":1,"reward":0,"outcome":"failed","verifier_exit":1,"usage":{"steps":1},"wall_ns":5}`
	a0again := `{"task":"a","n":0,"reward":0,"outcome":"agent_error","error":"again","verifier_exit":1,"usage":{},"wall_ns":5}`
	for _, tt := range []struct {
		name, body string
		trials     string // task#n:outcome, in order
		truncated  bool
		err        string
	}{
		{"header only", header + "\n", "", false, ""},
		{"header without its newline", header, "", false, ""},
		{"two trials", header + "\n" + a0 + "\n" + a1 + "\n", "a#0:passed a#1:failed", false, ""},
		{"a last trial without its newline", header + "\n" + a0 + "\n" + a1, "a#0:passed a#1:failed", false, ""},
		{"a truncated last line", header + "\n" + a0 + "\n" + a1[:30], "a#0:passed", true, ""},
		{"a trial logged twice", header + "\n" + a0 + "\n" + a1 + "\n" + a0again + "\n", "a#0:agent_error a#1:failed", false, ""},
		{"a bad line in the middle", header + "\n" + a1[:30] + "\n" + a0 + "\n", "", false, "line 2"},
		{"a line without a task", header + "\n{}\n", "", false, "line 2"},
		{"empty", "", "", false, "empty"},
		{"a truncated header", header[:20], "", false, "line 1"},
		{"no header", a0 + "\n", "", false, "no header"},
		{"another version", `{"eval_log":2,"agent":"oracle","k":1}` + "\n", "", false, "no header"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "log.jsonl")
			if err := os.WriteFile(p, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			lc, err := eval.ReadLog(p)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), p) {
					t.Fatalf("got %v, want an error naming the file and %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range lc.Trials {
				got = append(got, r.Task+"#"+string(rune('0'+r.N))+":"+string(r.Outcome))
			}
			if strings.Join(got, " ") != tt.trials || (lc.Truncated > 0) != tt.truncated {
				t.Errorf("trials %q, truncated %d; want %q, truncated %v", got, lc.Truncated, tt.trials, tt.truncated)
			}
			if lc.Header.Agent != "oracle" || lc.Header.K != 2 || lc.Header.Dataset != "/d" {
				t.Errorf("header %+v", lc.Header)
			}
			// Appending after it leaves a log that reads whole: the
			// truncated line cut off, a missing newline written.
			l, err := eval.AppendLog(p, lc)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Append(eval.TrialResult{Task: "b", N: 1, Outcome: eval.Passed, Reward: 1}); err != nil {
				t.Fatal(err)
			}
			l.Close()
			again, err := eval.ReadLog(p)
			if err != nil {
				b, _ := os.ReadFile(p)
				t.Fatalf("%v:\n%s", err, b)
			}
			if len(again.Trials) != len(lc.Trials)+1 || again.Truncated != 0 || again.Trials[len(again.Trials)-1].Task != "b" {
				t.Errorf("after appending: %+v", again)
			}
		})
	}
}

func TestCreateLog(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log.jsonl")
	l, err := eval.CreateLog(p, eval.LogHeader{Dataset: "/d", Agent: "oracle", K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(eval.TrialResult{Task: "a", N: 0, Outcome: eval.Passed, Reward: 1}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	b, _ := os.ReadFile(p)
	if lines := strings.Split(string(b), "\n"); len(lines) != 3 || lines[0] != header || !strings.HasPrefix(lines[1], `{"task":"a","n":0,`) {
		t.Errorf("the log:\n%s", b)
	}
	if _, err := eval.CreateLog(p, eval.LogHeader{Agent: "oracle", K: 1}); err == nil {
		t.Error("CreateLog wrote over a log")
	}
}

// counting is the oracle, counting the trials it attempts.
type counting struct {
	mu  sync.Mutex
	ran []int
}

func (c *counting) Name() string { return "oracle" }
func (c *counting) Attempt(ctx context.Context, tr *eval.Trial) (eval.Usage, error) {
	c.mu.Lock()
	c.ran = append(c.ran, tr.N)
	c.mu.Unlock()
	return eval.Oracle{}.Attempt(ctx, tr)
}

// An eval cut short (a log holding two of its three trials, the last
// line cut mid-write) and resumed runs only the missing trial, logs it
// and scores all three.
func TestResumeRunsOnlyTheMissingTrials(t *testing.T) {
	needsSandbox(t)
	tasks := dataset(t)[:1]
	name := tasks[0].Name
	p := filepath.Join(t.TempDir(), "log.jsonl")
	l, err := eval.CreateLog(p, eval.LogHeader{Dataset: "dataset", Agent: "oracle", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Trial 2 failed in the first run: kept as it was, not run again.
	for _, r := range []eval.TrialResult{{Task: name, N: 0, Outcome: eval.Passed, Reward: 1}, {Task: name, N: 2, Outcome: eval.Failed}} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"task":"` + name + `","n":1,"rew`)
	f.Close()

	lc, err := eval.ReadLog(p)
	if err != nil || lc.Truncated == 0 || len(lc.Trials) != 2 {
		t.Fatalf("%+v %v", lc, err)
	}
	l, err = eval.AppendLog(p, lc)
	if err != nil {
		t.Fatal(err)
	}
	a := &counting{}
	sc, err := eval.Run(context.Background(), tasks, eval.Config{Agent: a, K: 3, VerifierHome: verifierHome, Skip: lc.Skip(), Done: func(r eval.TrialResult) {
		if err := l.Append(r); err != nil {
			t.Error(err)
		}
	}})
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(a.ran) != 1 || a.ran[0] != 1 {
		t.Errorf("ran trials %v, want only 1", a.ran)
	}
	if ts := sc.Tasks[0]; ts.Trials != 3 || ts.Passed != 2 || ts.Outcomes[eval.Failed] != 1 {
		t.Errorf("the scorecard: %+v", ts)
	}
	after, err := eval.ReadLog(p)
	if err != nil || after.Truncated != 0 || len(after.Trials) != 3 || after.Trials[2].N != 1 || after.Trials[2].Outcome != eval.Passed {
		t.Errorf("the log after: %+v %v", after, err)
	}
}

// Two evals on one log: the second open fails with ErrLogLocked while
// the first holds it, and succeeds after Close, reading what the first
// appended; nothing the first logged is cut off.
func TestLogLocked(t *testing.T) {
	trialA := eval.TrialResult{Task: "a", N: 0, Outcome: eval.Passed, Reward: 1}
	trialB := eval.TrialResult{Task: "b", N: 0, Outcome: eval.Failed}
	for _, tt := range []struct {
		name  string
		first func(t *testing.T, path string) *eval.Log
	}{
		{"CreateLog holds it", func(t *testing.T, path string) *eval.Log {
			l, err := eval.CreateLog(path, eval.LogHeader{Agent: "oracle", K: 1})
			if err != nil {
				t.Fatal(err)
			}
			return l
		}},
		{"AppendLog holds it", func(t *testing.T, path string) *eval.Log {
			l, err := eval.CreateLog(path, eval.LogHeader{Agent: "oracle", K: 1})
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
			lc, err := eval.ReadLog(path)
			if err != nil {
				t.Fatal(err)
			}
			if l, err = eval.AppendLog(path, lc); err != nil {
				t.Fatal(err)
			}
			return l
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			first := tt.first(t, path)
			// The second eval reads the log before the first logs its trial.
			seen, err := eval.ReadLog(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := first.Append(trialA); err != nil {
				t.Fatal(err)
			}
			if l, err := eval.AppendLog(path, seen); !errors.Is(err, eval.ErrLogLocked) {
				if l != nil {
					l.Close()
				}
				t.Fatalf("a second open while the first holds the log: %v, want ErrLogLocked", err)
			}
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			second, err := eval.AppendLog(path, seen)
			if err != nil {
				t.Fatalf("after the first closed: %v", err)
			}
			if len(seen.Trials) != 1 || seen.Trials[0].Task != "a" {
				t.Errorf("AppendLog did not read the log again: %+v", seen.Trials)
			}
			if err := second.Append(trialB); err != nil {
				t.Fatal(err)
			}
			second.Close()
			lc, err := eval.ReadLog(path)
			if err != nil || len(lc.Trials) != 2 {
				b, _ := os.ReadFile(path)
				t.Errorf("the log holds %+v (%v), want both trials\n%s", lc, err, b)
			}
		})
	}
}

// Skip keeps the logged trials but those of the outcomes retried; a
// trial run again and appended is read back as its last line.
func TestLogSkipRetry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	l, err := eval.CreateLog(path, eval.LogHeader{Agent: "oracle", K: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []eval.TrialResult{
		{Task: "a", Outcome: eval.Passed}, {Task: "b", Outcome: eval.AgentError}, {Task: "c", Outcome: eval.VerifierError}, {Task: "d", Outcome: eval.Failed},
	} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	lc, err := eval.ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		retry []eval.Outcome
		kept  string
	}{
		{"none", nil, "abcd"},
		{"agent errors", []eval.Outcome{eval.AgentError}, "acd"},
		{"both errors", []eval.Outcome{eval.AgentError, eval.VerifierError}, "ad"},
		{"failed too", []eval.Outcome{eval.AgentError, eval.VerifierError, eval.Failed}, "a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			skip, kept := lc.Skip(tt.retry...), ""
			for _, task := range []string{"a", "b", "c", "d"} {
				if _, ok := skip(task, 0); ok {
					kept += task
				}
			}
			if kept != tt.kept {
				t.Errorf("kept %q, want %q", kept, tt.kept)
			}
		})
	}
	// Run again, b passes: its last line is the one read.
	if l, err = eval.AppendLog(path, lc); err != nil {
		t.Fatal(err)
	}
	l.Append(eval.TrialResult{Task: "b", Outcome: eval.Passed})
	l.Close()
	if lc, err = eval.ReadLog(path); err != nil || len(lc.Trials) != 4 {
		t.Fatalf("%+v %v", lc, err)
	}
	if r, ok := lc.Skip(eval.AgentError)("b", 0); !ok || r.Outcome != eval.Passed {
		t.Errorf("b after its retry: %+v %v", r, ok)
	}
}
