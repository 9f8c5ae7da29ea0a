// Package budget gives a task budgets the model knows: model calls,
// tokens, dollars and wall time, counted over the task's run and the runs
// of its subagents.
//
// When one runs low (DefaultLow of it left) the model is told, once, in
// the result of the call that crossed the line: what is left, and to plan
// its end. When one is spent, the next model call is the last: the model
// is asked, without tool calls (llm.Request.NoToolCalls), for a final
// answer that says what was done and what is left, and the run ends,
// completed, with the code agent.EndBudget. A run is never stopped in the
// middle of a tool call: a budget spent during a turn's calls ends the run
// at the next model call.
//
// What is counted is what the agent's and its subagents' model calls
// report (llm.Response.Usage), priced by llm.PriceOf; the summarizer's
// calls, made inside the summarization middleware, are not.
package budget

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
)

// DefaultLow is the share of a budget left at which the model is told.
const DefaultLow = 0.2

// Config sets the budgets of a task; a zero budget is none.
type Config struct {
	// Steps: model calls.
	Steps int
	// Tokens: input and output tokens.
	Tokens int
	// Dollars: what the calls cost at the prices of llm.PriceOf (Prices
	// first). A model of unknown price counts nothing.
	Dollars float64
	// Time: wall time from the task's start.
	Time time.Duration
	// Prices add to or replace the built-in prices, by "provider:model".
	Prices map[string]llm.Price
	// Low is the share of a budget left at which the model is told;
	// DefaultLow when 0.
	Low float64
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// IsZero reports whether c sets no budget.
func (c Config) IsZero() bool { return c.Steps <= 0 && c.Tokens <= 0 && c.Dollars <= 0 && c.Time <= 0 }

// Middleware keeps the budgets.
type Middleware struct {
	cfg    Config
	prices sync.Map // model spec -> price, or nil for an unknown one

	// waiting keeps, by thread, the ledger of a task stopped for human
	// decisions: the run that resumes it goes on spending the same one.
	mu      sync.Mutex
	waiting map[string]*ledger
}

// maxWaiting bounds the tasks kept waiting for decisions; past it the
// oldest are forgotten (their resumes start a new ledger).
const maxWaiting = 4096

// New returns the middleware; a negative budget or share is an error.
func New(cfg Config) (*Middleware, error) {
	if cfg.Steps < 0 || cfg.Tokens < 0 || cfg.Dollars < 0 || cfg.Time < 0 || cfg.Low < 0 || cfg.Low >= 1 {
		return nil, fmt.Errorf("budget: a negative budget, or a share left (Low) outside [0, 1): %+v", cfg)
	}
	if cfg.Low == 0 {
		cfg.Low = DefaultLow
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Middleware{cfg: cfg}, nil
}

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "budget" }

// ledger is what a task has spent, shared by its run and its subagents'
// (the runs nested in its context) and by the runs that resume it after
// human decisions, but for a subagent with a budget of
// its own (another Middleware), whose ledger is a child: what it spends is
// charged to it and to every ledger above it, and each ledger is held to
// its owner's budgets.
type ledger struct {
	owner    *Middleware
	parent   *ledger
	depth    int // the namespace depth of the run whose task it is: that agent is told when it runs low
	mu       sync.Mutex
	start    time.Time
	steps    int
	tokens   int
	dollars  float64
	told     map[measure]bool // the budgets the model was told run low
	over     bool             // the last call was made: no tool runs after it
	unpriced bool             // a notice said that a model's calls cost nothing here
}

type ledgerKey struct{}

// WrapRun implements agent.RunWrapper: a task's run starts its ledger,
// which its subagents' runs, nested in its context, share.
func (m *Middleware) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	above, _ := ctx.Value(ledgerKey{}).(*ledger)
	if above != nil && above.owner == m {
		return next(ctx, req) // a subagent under its task's budget
	}
	l := m.resumed(req)
	if l == nil {
		l = &ledger{owner: m, parent: above, depth: len(req.Input.Namespace), start: m.cfg.Now(), told: make(map[measure]bool)}
	}
	res, err := next(context.WithValue(ctx, ledgerKey{}, l), req)
	if res != nil && res.Status == agent.StatusInterrupted {
		m.mu.Lock()
		if m.waiting == nil || len(m.waiting) >= maxWaiting {
			m.waiting = make(map[string]*ledger)
		}
		m.waiting[req.ThreadID] = l
		m.mu.Unlock()
	}
	return res, err
}

// resumed returns the ledger of the task a run resumes, nil for a new
// task.
func (m *Middleware) resumed(req *agent.RunRequest) *ledger {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.waiting[req.ThreadID]
	delete(m.waiting, req.ThreadID)
	if req.Input.Decisions == nil {
		return nil // a new prompt: a new task
	}
	return l
}

// WrapModel implements agent.ModelWrapper: a call is counted once it is
// answered; a budget spent makes the call the last, without tools.
func (m *Middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	l, ok := ctx.Value(ledgerKey{}).(*ledger)
	if !ok {
		return next(ctx, req)
	}
	if spent := spentOf(l); spent != "" {
		r := *req
		r.NoToolCalls = true
		r.Messages = append(append([]llm.Message(nil), req.Messages...), llm.UserText(
			"The budget of this task is spent ("+spent+"). Do not call any tool. Write your final answer now: "+
				"what you did, what is left to do, and how to go on from here."))
		if req.Runtime != nil {
			req.Runtime.EndRunWith(agent.EndBudget, spent)
		}
		l.mu.Lock()
		l.over = true
		l.mu.Unlock()
		resp, err := next(ctx, &r)
		m.add(l, req, resp)
		return resp, err
	}
	resp, err := next(ctx, req)
	m.add(l, req, resp)
	return resp, err
}

// WrapTool implements agent.ToolWrapper: the result of the call after
// which a budget runs low tells the model, once.
// A call the model makes in its last turn anyway is not run.
func (m *Middleware) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	l, ok := ctx.Value(ledgerKey{}).(*ledger)
	if !ok {
		return next(ctx, req)
	}
	l.mu.Lock()
	over := l.over
	l.mu.Unlock()
	if over {
		return agent.ToolResult{Content: "Error: the task's budget is spent; this call was not run.", IsError: true}, nil
	}
	res, err := next(ctx, req)
	if err != nil {
		return res, err
	}
	if req.Runtime == nil || len(req.Runtime.Namespace()) != l.depth {
		return res, nil // the agent whose task it is plans its end, not a subagent
	}
	if note := l.owner.low(l); note != "" {
		res.Content += "\n\n" + note
	}
	return res, nil
}

// add counts a call's answer.
func (m *Middleware) add(l *ledger, req *agent.ModelRequest, resp *llm.Response) {
	if resp == nil {
		return
	}
	u := resp.Usage
	var cost float64
	spec := llm.Describe(req.Model).Spec()
	if p := m.priceOf(spec); p != nil {
		cost = p.Cost(u)
	} else if m.cfg.Dollars > 0 && req.Runtime != nil {
		l.mu.Lock()
		tell := !l.unpriced
		l.unpriced = true
		l.mu.Unlock()
		if tell {
			req.Runtime.Emit(agent.Event{Type: agent.EventNotice, Name: "budget",
				Content: fmt.Sprintf("%s has no known price: its calls count nothing to the dollar budget (give its price in prices:)", cmp.Or(spec, "the model"))})
		}
	}
	for ; l != nil; l = l.parent {
		l.mu.Lock()
		l.steps++
		l.tokens += u.InputTokens + u.OutputTokens
		l.dollars += cost
		l.mu.Unlock()
	}
}

// spentOf says which budgets of l, or of a ledger above it, are spent;
// "" when none is.
func spentOf(l *ledger) string {
	for ; l != nil; l = l.parent {
		if s := l.owner.spent(l); s != "" {
			return s
		}
	}
	return ""
}

// priceOf is llm.PriceOf, looked up once a model: nil for one of unknown
// price.
func (m *Middleware) priceOf(spec string) *llm.Price {
	if p, ok := m.prices.Load(spec); ok {
		return p.(*llm.Price)
	}
	var price *llm.Price
	if p, ok := llm.PriceOf(spec, m.cfg.Prices); ok {
		price = &p
	}
	m.prices.Store(spec, price)
	return price
}

// measure is what a budget counts.
type measure int

const (
	calls measure = iota
	tokens
	dollars
	wallTime
)

// String names the measure, as the model and the user are told it.
func (k measure) String() string {
	return [...]string{"model calls", "tokens", "dollars", "time"}[k]
}

// format writes an amount of the measure.
func (k measure) format(v float64) string {
	switch k {
	case dollars:
		return fmt.Sprintf("$%.4f", v)
	case wallTime:
		return (time.Duration(v) * time.Second).Round(time.Second).String()
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// use is one budget: what it allows and what was spent of it.
type use struct {
	measure      measure
	limit, spent float64
}

// uses returns the budgets set, with what l spent of each, in buf.
func (m *Middleware) uses(l *ledger, buf *[4]use) []use {
	l.mu.Lock()
	defer l.mu.Unlock()
	us := buf[:0]
	if m.cfg.Steps > 0 {
		us = append(us, use{calls, float64(m.cfg.Steps), float64(l.steps)})
	}
	if m.cfg.Tokens > 0 {
		us = append(us, use{tokens, float64(m.cfg.Tokens), float64(l.tokens)})
	}
	if m.cfg.Dollars > 0 {
		us = append(us, use{dollars, m.cfg.Dollars, l.dollars})
	}
	if m.cfg.Time > 0 {
		us = append(us, use{wallTime, m.cfg.Time.Seconds(), m.cfg.Now().Sub(l.start).Seconds()})
	}
	return us
}

// spent says which budgets are spent, "" when none is.
func (m *Middleware) spent(l *ledger) string {
	var out []string
	var buf [4]use
	for _, u := range m.uses(l, &buf) {
		if u.spent >= u.limit {
			out = append(out, fmt.Sprintf("%s: %s of %s", u.measure, u.measure.format(u.spent), u.measure.format(u.limit)))
		}
	}
	return strings.Join(out, "; ")
}

// low returns the note for the budgets that run low and were not told
// yet.
func (m *Middleware) low(l *ledger) string {
	var out []string
	var buf [4]use
	for _, u := range m.uses(l, &buf) {
		left := u.limit - u.spent
		if left > u.limit*m.cfg.Low {
			continue
		}
		l.mu.Lock()
		told := l.told[u.measure]
		l.told[u.measure] = true
		l.mu.Unlock()
		if !told {
			out = append(out, fmt.Sprintf("%s left of %s (%s)", u.measure.format(max(left, 0)), u.measure.format(u.limit), u.measure))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "Budget: " + strings.Join(out, ", ") + ". Plan to finish within it: do what matters most, then answer; when it is spent you get one last turn, without tools, for your final answer."
}
