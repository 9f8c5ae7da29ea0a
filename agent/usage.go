package agent

import (
	"slices"

	"github.com/deepagents-go/deepagents/llm"
)

// UsageTree adds up a run's usage events by agent and by model: the main
// agent at the root, each subagent under the agent that started it (an
// event's Namespace is its path). Feed it the events of Stream with Add;
// Result.Usage is the run's total, flat; it can differ from a tree of the
// run's events when background subagents run: a task's events reach only
// the stream of the run that started it, and while that run lasts, while
// its usage is added to the Result of the run that collects it.
//
// The zero value is an empty tree, ready to use. A UsageTree is not safe
// for concurrent use; Stream delivers events one at a time.
type UsageTree struct {
	// Agent is the namespace element of this agent, such as
	// "general-purpose:call_1"; empty at the root.
	Agent string `json:"agent,omitempty"`
	// Models are this agent's own model calls, by model, in the order the
	// models were first called.
	Models []ModelUsage `json:"models,omitempty"`
	// Subagents are the agents this one started, in the order they first
	// reported usage.
	Subagents []*UsageTree `json:"subagents,omitempty"`
}

// ModelUsage is what one agent used of one model.
type ModelUsage struct {
	// Model is the model as provider:model (the usage event's Name).
	Model string `json:"model"`
	// Calls counts the model calls.
	Calls int       `json:"calls"`
	Usage llm.Usage `json:"usage"`
}

// Add counts e when it is a usage event, and ignores any other.
func (t *UsageTree) Add(e Event) {
	if e.Type != EventUsage || e.Usage == nil {
		return
	}
	n := t
	for _, name := range e.Namespace {
		n = n.child(name)
	}
	n.addModel(ModelUsage{Model: e.Name, Calls: 1, Usage: *e.Usage})
}

// addModel adds m to this agent's own usage of its model.
func (t *UsageTree) addModel(m ModelUsage) {
	i := slices.IndexFunc(t.Models, func(x ModelUsage) bool { return x.Model == m.Model })
	if i < 0 {
		t.Models = append(t.Models, m)
		return
	}
	t.Models[i].Calls += m.Calls
	t.Models[i].Usage.Add(m.Usage)
}

func (t *UsageTree) child(name string) *UsageTree {
	for _, c := range t.Subagents {
		if c.Agent == name {
			return c
		}
	}
	c := &UsageTree{Agent: name}
	t.Subagents = append(t.Subagents, c)
	return c
}

// Own returns the calls and usage of this agent alone.
func (t *UsageTree) Own() (calls int, u llm.Usage) {
	for _, m := range t.Models {
		calls += m.Calls
		u.Add(m.Usage)
	}
	return calls, u
}

// Total returns the calls and usage of this agent and all it started.
func (t *UsageTree) Total() (calls int, u llm.Usage) {
	calls, u = t.Own()
	for _, c := range t.Subagents {
		n, cu := c.Total()
		calls += n
		u.Add(cu)
	}
	return calls, u
}

// Cost returns what this agent and all it started cost at prices (see
// llm.PriceOf: extra over the built-in list prices), and the first model
// without a known price, whose calls the cost leaves out.
func (t *UsageTree) Cost(extra map[string]llm.Price) (dollars float64, unpriced string) {
	dollars, unpriced = t.OwnCost(extra)
	for _, c := range t.Subagents {
		d, u := c.Cost(extra)
		dollars += d
		if unpriced == "" {
			unpriced = u
		}
	}
	return dollars, unpriced
}

// OwnCost is Cost for this agent's own calls alone.
func (t *UsageTree) OwnCost(extra map[string]llm.Price) (dollars float64, unpriced string) {
	for _, m := range t.Models {
		if d, ok := m.Cost(extra); ok {
			dollars += d
		} else if unpriced == "" {
			unpriced = m.Model
		}
	}
	return dollars, unpriced
}

// Cost returns what these calls cost at prices (see llm.PriceOf), and
// false when the model has no known price.
func (m ModelUsage) Cost(extra map[string]llm.Price) (dollars float64, ok bool) {
	p, ok := llm.PriceOf(m.Model, extra)
	if !ok {
		return 0, false
	}
	return p.Cost(m.Usage), true
}

// Walk calls fn for this agent and every agent under it, parents before
// their subagents, with each one's depth (0 at t).
func (t *UsageTree) Walk(fn func(depth int, n *UsageTree)) {
	t.walk(0, fn)
}

func (t *UsageTree) walk(depth int, fn func(int, *UsageTree)) {
	fn(depth, t)
	for _, c := range t.Subagents {
		c.walk(depth+1, fn)
	}
}

// Merge adds o to t: each model's calls and tokens to t's of that model,
// and each of o's subagents to t's subagent of the same name (or as a new
// one). o is left as it is.
func (t *UsageTree) Merge(o *UsageTree) {
	for _, m := range o.Models {
		t.addModel(m)
	}
	for _, c := range o.Subagents {
		t.child(c.Agent).Merge(c)
	}
}
