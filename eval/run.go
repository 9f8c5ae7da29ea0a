package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/backend/sandbox"
)

// Agent attempts tasks: the oracle (Oracle), or a harness with a model.
type Agent interface {
	// Name names the agent in scorecards.
	Name() string
	// Attempt works on tr's task in tr.Dir until done or ctx ends (the
	// task's agent timeout), and says what it used.
	Attempt(ctx context.Context, tr *Trial) (Usage, error)
}

// Usage is what one attempt used.
type Usage struct {
	InputTokens      int     `json:"input_tokens"`
	CacheWriteTokens int     `json:"cache_write_tokens"`
	CacheReadTokens  int     `json:"cache_read_tokens"`
	OutputTokens     int     `json:"output_tokens"`
	Cost             float64 `json:"cost"`
	// Unpriced names a model whose price is unknown, whose tokens Cost
	// leaves out ("" for none).
	Unpriced string `json:"unpriced,omitempty"`
	Steps    int    `json:"steps"`
}

// NonFinitePrice is Usage.Unpriced for a cost that came out NaN or
// infinite (a price of inf or nan in the user's prices): left out, as an
// unknown price's is.
const NonFinitePrice = "a model with a price that is not a finite number"

// finite is u with a cost that is NaN or infinite taken as unpriced: 0,
// and Unpriced set (NonFinitePrice, unless it names a model already). A
// NaN would break the scorecard's JSON and its HTML's charts.
func (u Usage) finite() Usage {
	if math.IsNaN(u.Cost) || math.IsInf(u.Cost, 0) {
		u.Cost = 0
		if u.Unpriced == "" {
			u.Unpriced = NonFinitePrice
		}
	}
	return u
}

func (u *Usage) add(v Usage) {
	v = v.finite()
	u.InputTokens += v.InputTokens
	u.CacheWriteTokens += v.CacheWriteTokens
	u.CacheReadTokens += v.CacheReadTokens
	u.OutputTokens += v.OutputTokens
	u.Cost += v.Cost
	u.Steps += v.Steps
	if u.Unpriced == "" {
		u.Unpriced = v.Unpriced
	}
}

// Oracle is the agent that runs the task's solution/solve.sh (mounted at
// SolutionDir) in its workspace: a dataset's self-check, which should
// score 1 on every task.
type Oracle struct{}

// Name implements Agent.
func (Oracle) Name() string { return "oracle" }

// Attempt implements Agent.
func (Oracle) Attempt(ctx context.Context, tr *Trial) (Usage, error) {
	sol, err := tr.copyOut("solution")
	if err != nil {
		return Usage{}, fmt.Errorf("eval: the solution: %w", err)
	}
	timeout := tr.Task.AgentTimeout()
	sh, err := tr.Shell(timeout, sandbox.Bind{Host: sol, At: SolutionDir})
	if err != nil {
		return Usage{}, err
	}
	defer sh.Close()
	res, err := sh.Execute(ctx, "bash "+SolutionDir+"/solve.sh", timeout)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("eval: solve.sh exited %d: %s", res.ExitCode, clip(res.Output, 500))
	}
	return Usage{Steps: 1}, err
}

// Outcome names how a trial ended.
type Outcome string

// Outcomes lists the outcomes a trial can have.
var Outcomes = []Outcome{Passed, Failed, AgentTimeout, AgentError, VerifierError}

// Outcomes of a trial.
const (
	Passed        Outcome = "passed"         // reward 1
	Failed        Outcome = "failed"         // a reward below 1
	AgentTimeout  Outcome = "agent_timeout"  // the agent ran out of time (then verified)
	AgentError    Outcome = "agent_error"    // the agent failed (then verified)
	VerifierError Outcome = "verifier_error" // no reward could be read
)

// TrialResult is one trial's result.
type TrialResult struct {
	Task    string  `json:"task"`
	N       int     `json:"n"`
	Reward  float64 `json:"reward"`
	Outcome Outcome `json:"outcome"`
	// Error is the agent's or the verifier's error, when there was one.
	Error string `json:"error,omitempty"`
	// VerifierExit is test.sh's exit status.
	VerifierExit int           `json:"verifier_exit"`
	Usage        Usage         `json:"usage"`
	Wall         time.Duration `json:"wall_ns"`
}

// Config configures Run.
type Config struct {
	// Agent attempts the tasks; K trials per task (0: 1), Parallel at once
	// (0: 1).
	Agent    Agent
	K        int
	Parallel int
	// Base is where trials' folders are made ("": the system's temporary
	// folder).
	Base string
	// Done, when set, is told each trial's result as it ends (a progress
	// bar); calls do not overlap.
	Done func(TrialResult)
	// Skip, when set, reports the trials already done (an interrupted
	// eval resumed): their results, which Run keeps instead of running
	// them again.
	Skip func(task string, n int) (TrialResult, bool)
	// VerifierHome, when set, is a HOME the verifiers share, so that what
	// they build (Go's build cache, pip's) is kept across trials and
	// evals. The agents never see it, but a verifier runs the agent's code
	// (go test does), which could write there for later trials: share it
	// only for agents you trust. "" gives each verification a fresh HOME.
	VerifierHome string
}

// Run runs cfg.K trials of each task with cfg.Agent and scores them. A
// trial that fails is a result, not an error; Run's error is ctx's.
func Run(ctx context.Context, tasks []Task, cfg Config) (*Scorecard, error) {
	start := time.Now()
	k := max(cfg.K, 1)
	type job struct {
		t Task
		n int
	}
	var jobs []job
	var results []TrialResult
	for _, t := range tasks {
		for n := range k {
			if cfg.Skip != nil {
				if r, ok := cfg.Skip(t.Name, n); ok {
					results = append(results, r)
					continue
				}
			}
			jobs = append(jobs, job{t, n})
		}
	}
	var mu sync.Mutex
	work := make(chan job)
	var wg sync.WaitGroup
	for range max(cfg.Parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				r := runTrial(ctx, cfg, j.t, j.n)
				if ctx.Err() != nil {
					continue // cut short: not a result
				}
				mu.Lock()
				results = append(results, r)
				if cfg.Done != nil {
					cfg.Done(r)
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	sc := Score(cfg.Agent.Name(), k, results)
	sc.Elapsed = time.Since(start)
	if ctx.Err() != nil {
		sc.Partial = true
	}
	return sc, ctx.Err()
}

// runTrial runs one trial: the agent, then the verifier (whatever the
// agent's end).
func runTrial(ctx context.Context, cfg Config, t Task, n int) TrialResult {
	start := time.Now()
	r := attempt(ctx, cfg, t, n)
	r.Wall = time.Since(start)
	return r
}

// attempt is runTrial but for the wall time.
func attempt(ctx context.Context, cfg Config, t Task, n int) TrialResult {
	r := TrialResult{Task: t.Name, N: n}
	tr, err := NewTrial(t, n, cfg.Base)
	if err != nil {
		r.Outcome, r.Error = VerifierError, err.Error()
		return r
	}
	defer tr.Close()
	tr.verifierHome = cfg.VerifierHome
	actx, cancel := context.WithTimeout(ctx, t.AgentTimeout())
	u, agentErr := cfg.Agent.Attempt(actx, tr)
	timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
	cancel()
	r.Usage = u.finite()
	v, err := tr.Verify(ctx)
	r.Reward, r.VerifierExit = v.Reward, v.ExitCode
	switch {
	case err != nil:
		r.Outcome, r.Error = VerifierError, err.Error()
	case v.Reward >= 1:
		r.Outcome = Passed
	case timedOut:
		r.Outcome = AgentTimeout
	case agentErr != nil:
		r.Outcome = AgentError
	default:
		r.Outcome = Failed
	}
	if agentErr != nil && r.Error == "" {
		r.Error = agentErr.Error()
	}
	return r
}

// Scorecard is an eval's score: per task and in all.
type Scorecard struct {
	Agent string      `json:"agent"`
	K     int         `json:"k"`
	Tasks []TaskScore `json:"tasks"`
	Total TaskScore   `json:"total"`
	// Elapsed is the eval's wall time (Total.Wall adds up the trials').
	Elapsed time.Duration `json:"elapsed_ns"`
	// Partial says the eval was cut short: the trials not run are missing,
	// and a task with fewer than k trials is scored on those it has.
	Partial bool `json:"partial,omitempty"`
}

// TaskScore is one task's score (or, as Scorecard.Total, the mean over
// tasks, with the sums of what they used).
type TaskScore struct {
	Task   string `json:"task"`
	Trials int    `json:"trials"`
	Passed int    `json:"passed"`
	// PassAtK and AvgAtK are pass@k (PassAtK) and the mean reward.
	PassAtK  float64         `json:"pass_at_k"`
	AvgAtK   float64         `json:"avg_at_k"`
	Usage    Usage           `json:"usage"`
	Wall     time.Duration   `json:"wall_ns"`
	Outcomes map[Outcome]int `json:"outcomes"`
	Results  []TrialResult   `json:"results,omitempty"`
}

// Score scores results (k trials a task).
func Score(agent string, k int, results []TrialResult) *Scorecard {
	sc := &Scorecard{Agent: agent, K: k, Total: TaskScore{Task: "all", Outcomes: map[Outcome]int{}}}
	by := map[string][]TrialResult{}
	for _, r := range results {
		r.Usage = r.Usage.finite() // a logged trial's too
		by[r.Task] = append(by[r.Task], r)
	}
	for name, rs := range by {
		slices.SortFunc(rs, func(a, b TrialResult) int { return cmp.Compare(a.N, b.N) })
		ts := TaskScore{Task: name, Trials: len(rs), Outcomes: map[Outcome]int{}, Results: rs}
		var sum float64
		for _, r := range rs {
			if r.Outcome == Passed {
				ts.Passed++
			}
			sum += r.Reward
			ts.Usage.add(r.Usage)
			ts.Wall += r.Wall
			ts.Outcomes[r.Outcome]++
			sc.Total.Outcomes[r.Outcome]++
		}
		ts.PassAtK = PassAtK(len(rs), ts.Passed, min(k, len(rs)))
		ts.AvgAtK = sum / float64(len(rs))
		sc.Tasks = append(sc.Tasks, ts)
	}
	slices.SortFunc(sc.Tasks, func(a, b TaskScore) int { return cmp.Compare(a.Task, b.Task) })
	var pass, avg float64
	for _, ts := range sc.Tasks {
		sc.Total.Trials += ts.Trials
		sc.Total.Passed += ts.Passed
		pass += ts.PassAtK
		avg += ts.AvgAtK
		sc.Total.Usage.add(ts.Usage)
		sc.Total.Wall += ts.Wall
	}
	if n := float64(len(sc.Tasks)); n > 0 {
		// Summed, then divided once: six tasks of 1 make 1, not 0.999....
		sc.Total.PassAtK, sc.Total.AvgAtK = pass/n, avg/n
	}
	return sc
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// Reproducible returns the scorecard without its wall times, which no
// two runs share: what a replay of recorded trials must reproduce byte
// for byte (as JSON).
func (sc *Scorecard) Reproducible() *Scorecard {
	c := *sc
	c.Elapsed = 0
	strip := func(ts TaskScore) TaskScore {
		ts.Wall = 0
		rs := slices.Clone(ts.Results)
		for i := range rs {
			rs[i].Wall = 0
		}
		ts.Results = rs
		return ts
	}
	c.Tasks = make([]TaskScore, len(sc.Tasks))
	for i, ts := range sc.Tasks {
		c.Tasks[i] = strip(ts)
	}
	c.Total = strip(sc.Total)
	return &c
}
