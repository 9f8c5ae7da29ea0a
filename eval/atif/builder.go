package atif

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
)

// Options configure a [Builder].
type Options struct {
	// SessionID identifies the run; empty, it is the thread of the run's
	// run_start event. A subagent's session is its parent's, a slash, and
	// its namespace element ("researcher:call_1"), and "#2", "#3"... for
	// its second, third run at that namespace (a model that reused a
	// tool call's id).
	SessionID string
	// Agent is the agent system. An empty Name is "deepagents"; an empty
	// ModelName is the model of the run's first model call.
	Agent Agent
	// Prompt is the user's message: the first step. Empty, the trajectory
	// begins with the agent's first turn.
	Prompt string
	// Price prices a model call of the model spec ("provider:model"); ok
	// false leaves the call's cost out. Nil, no cost is written.
	Price func(spec string) (p llm.Price, ok bool)
	// Now stamps each step as it is made. Nil, steps have no timestamp.
	Now func() time.Time
	// SubagentPath is where the trajectory of run (0 for the first, 1
	// for the second...) of the subagent at namespace is written (its
	// trajectory_path); nil, or returning "", the reference names the
	// subagent's session only.
	SubagentPath func(namespace []string, run int) string
	// Extra is custom data of the run's own trajectory (its root extra,
	// beside what the builder writes there: the run's status, say).
	Extra map[string]any
}

// Builder turns the events of one run into trajectories: the run's own
// and one per subagent run. Feed it every event of the stream with Add,
// then call Build. A Builder is not safe for concurrent use.
type Builder struct {
	o Options
	// runs is the run at each namespace, the last begun there.
	runs  map[string]*run
	order []*run // in the order they began; the main agent's first
	// count is how many runs began at each namespace.
	count map[string]int
}

// run is the trajectory of one agent (one namespace) being built.
type run struct {
	ns []string
	// seq counts the runs at ns before this one (0 for the first).
	seq int
	// parent is the run it was delegated by, and parentStep the step of
	// the call that started it there (-1 for none); nil for the main
	// agent's.
	parent     *run
	parentStep int
	// ended is set by its run_end: a run_start at ns after it begins
	// another run.
	ended bool
	steps []Step
	extra map[string]any
	// calls finds the step of a tool call.
	calls map[string]int
	// metered is the step whose model call's usage comes next, or -1.
	metered int
	// pending is text streamed since the last message: an answer the run
	// ended in the middle of.
	pending, pendingReasoning strings.Builder
	// The totals of this agent's model calls and those of the agents
	// under it.
	modelCalls, prompt, completion, cached, cacheWrite int
	cost                                               float64
	unpriced                                           []string
	// model is the model of the agent's first call.
	model string
}

// NewBuilder returns a builder of the trajectories of a run.
func NewBuilder(o Options) *Builder {
	if o.Agent.Name == "" {
		o.Agent.Name = "deepagents"
	}
	return &Builder{o: o, runs: map[string]*run{}, count: map[string]int{}}
}

func nsKey(ns []string) string { return strings.Join(ns, "\x00") }

// get returns the run at ns, begun if need be (with its parents); with
// start, a subagent's run that ended is followed by a new one.
func (b *Builder) get(ns []string, start bool) *run {
	if r, ok := b.runs[nsKey(ns)]; ok && !(start && r.ended && len(ns) > 0) {
		return r
	}
	r := &run{ns: slices.Clone(ns), seq: b.count[nsKey(ns)], calls: map[string]int{}, metered: -1, parentStep: -1}
	if len(ns) > 0 {
		r.parent = b.get(ns[:len(ns)-1], false)
		if _, callID, ok := strings.Cut(ns[len(ns)-1], ":"); ok {
			if i, ok := r.parent.calls[callID]; ok {
				r.parentStep = i
			}
		}
	}
	b.count[nsKey(ns)]++
	b.runs[nsKey(ns)] = r
	b.order = append(b.order, r)
	prompt := b.o.Prompt
	if len(ns) > 0 {
		prompt = r.delegated()
	}
	if prompt != "" {
		r.add(b, Step{Source: SourceUser, Message: prompt})
	}
	return r
}

// delegated is what the parent of subagent run r asked of it: the
// description (or the whole arguments) of the tool call that started it.
func (r *run) delegated() string {
	_, callID, ok := strings.Cut(r.ns[len(r.ns)-1], ":")
	if r.parent == nil || !ok || r.parentStep < 0 {
		return ""
	}
	for _, c := range r.parent.steps[r.parentStep].ToolCalls {
		if c.ToolCallID != callID {
			continue
		}
		var args struct {
			Description string `json:"description"`
		}
		if json.Unmarshal(c.Arguments, &args) == nil && args.Description != "" {
			return args.Description
		}
		return string(c.Arguments)
	}
	return ""
}

// add appends a step to r, numbered and stamped.
func (r *run) add(b *Builder, s Step) int {
	s.StepID = len(r.steps) + 1
	if b.o.Now != nil {
		s.Timestamp = b.o.Now().UTC().Format(time.RFC3339Nano)
	}
	r.steps = append(r.steps, s)
	return len(r.steps) - 1
}

// lastAgent returns the index of r's last agent step, made if there is
// none.
func (r *run) lastAgent(b *Builder) int {
	for i := len(r.steps) - 1; i >= 0; i-- {
		if r.steps[i].Source == SourceAgent {
			return i
		}
	}
	return r.add(b, Step{Source: SourceAgent})
}

func (r *run) setExtra(k string, v any) {
	if r.extra == nil {
		r.extra = map[string]any{}
	}
	r.extra[k] = v
}

// Add takes the next event of the run's stream.
func (b *Builder) Add(e agent.Event) {
	if e.Type == agent.EventUsage {
		b.usage(e)
		return
	}
	switch e.Type {
	case agent.EventTextDelta, agent.EventReasoningDelta, agent.EventMessage, agent.EventToolCall,
		agent.EventToolResult, agent.EventRunStart, agent.EventRunEnd, agent.EventError:
	default:
		return // state, checkpoints, notices and interrupts are not mapped
	}
	r := b.get(e.Namespace, e.Type == agent.EventRunStart)
	switch e.Type {
	case agent.EventRunStart:
		if len(e.Namespace) == 0 && b.o.SessionID == "" {
			b.o.SessionID = e.ThreadID
		}
	case agent.EventTextDelta:
		r.pending.WriteString(e.Delta)
	case agent.EventReasoningDelta:
		r.pendingReasoning.WriteString(e.Delta)
	case agent.EventMessage:
		r.pending.Reset()
		r.pendingReasoning.Reset()
		if e.Message == nil {
			return
		}
		s := Step{Source: SourceAgent}
		var text, reasoning []string
		for _, p := range e.Message.Parts {
			switch p.Type {
			case llm.PartText:
				text = append(text, p.Text)
			case llm.PartReasoning:
				if p.Text != "" {
					reasoning = append(reasoning, p.Text)
				}
			}
		}
		s.Message, s.ReasoningContent = strings.Join(text, ""), strings.Join(reasoning, "\n")
		for _, c := range e.Message.ToolCalls {
			s.ToolCalls = append(s.ToolCalls, ToolCall{ToolCallID: c.ID, FunctionName: c.Name, Arguments: arguments(c.Args)})
		}
		i := r.add(b, s)
		for _, c := range s.ToolCalls {
			r.calls[c.ToolCallID] = i
		}
		r.metered = i
	case agent.EventToolCall:
		if _, ok := r.calls[e.ToolCallID]; ok {
			return // the message listed it
		}
		i := r.lastAgent(b)
		r.steps[i].ToolCalls = append(r.steps[i].ToolCalls, ToolCall{ToolCallID: e.ToolCallID, FunctionName: e.Name, Arguments: arguments(e.Args)})
		r.calls[e.ToolCallID] = i
	case agent.EventToolResult:
		i, ok := r.calls[e.ToolCallID]
		content := e.Content
		res := ObservationResult{SourceCallID: e.ToolCallID, Content: &content}
		if !ok {
			// A result of no call this trajectory knows: kept, unlinked.
			i, res.SourceCallID = r.lastAgent(b), ""
		}
		s := &r.steps[i]
		if s.Observation == nil {
			s.Observation = &Observation{}
		}
		s.Observation.Results = append(s.Observation.Results, res)
		if e.IsError {
			if s.Extra == nil {
				s.Extra = map[string]any{}
			}
			failed, _ := s.Extra["failed_tool_calls"].([]string)
			s.Extra["failed_tool_calls"] = append(failed, e.ToolCallID)
		}
	case agent.EventError:
		errs, _ := r.extra["errors"].([]string)
		r.setExtra("errors", append(errs, e.Error))
	case agent.EventRunEnd:
		if r.pending.Len() > 0 || r.pendingReasoning.Len() > 0 {
			r.add(b, Step{Source: SourceAgent, Message: r.pending.String(), ReasoningContent: r.pendingReasoning.String(),
				Extra: map[string]any{"partial": true}})
			r.pending.Reset()
			r.pendingReasoning.Reset()
		}
		r.ended = true
		r.setExtra("status", string(e.Status))
		if e.Error != "" {
			r.setExtra("error", e.Error)
		}
		if e.EndCode != "" {
			r.setExtra("end_code", string(e.EndCode))
			r.setExtra("end_reason", e.EndReason)
		}
	}
}

// arguments is a tool call's arguments as a JSON object: an object as
// the model wrote it, nothing as {}, anything else under "input".
func arguments(raw json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(raw)
	switch {
	case len(trimmed) == 0 || string(trimmed) == "null":
		return json.RawMessage("{}")
	case trimmed[0] == '{' && json.Valid(trimmed):
		return slices.Clone(trimmed)
	case json.Valid(trimmed):
		return json.RawMessage(`{"input":` + string(trimmed) + `}`)
	}
	s, _ := json.Marshal(string(raw))
	return json.RawMessage(`{"input":` + string(s) + `}`)
}

// usage counts a model call: the metrics of the step it answered, when
// it is that of an agent's turn, and the totals of its agent and those
// above it.
func (b *Builder) usage(e agent.Event) {
	if e.Usage == nil {
		return
	}
	u := *e.Usage
	var cost *float64
	priced := false
	if b.o.Price != nil {
		if p, ok := b.o.Price(e.Name); ok {
			// A price of inf or nan is no price: JSON has no such number.
			if c := p.Cost(u); !math.IsNaN(c) && !math.IsInf(c, 0) {
				cost, priced = &c, true
			}
		}
	}
	if r, ok := b.runs[nsKey(e.Namespace)]; ok && r.metered >= 0 {
		m := &Metrics{PromptTokens: ptr(u.InputTokens), CompletionTokens: ptr(u.OutputTokens), CachedTokens: ptr(u.CacheReadTokens), CostUSD: cost}
		if u.CacheWriteTokens > 0 {
			m.Extra = map[string]any{"cache_write_tokens": u.CacheWriteTokens}
		}
		s := &r.steps[r.metered]
		s.Metrics, s.ModelName = m, e.Name
		r.metered = -1
		if r.model == "" {
			r.model = e.Name
		}
	}
	// Every agent at or above the call's namespace counts it.
	for n := len(e.Namespace); n >= 0; n-- {
		r, ok := b.runs[nsKey(e.Namespace[:n])]
		if !ok {
			continue
		}
		r.modelCalls++
		r.prompt += u.InputTokens
		r.completion += u.OutputTokens
		r.cached += u.CacheReadTokens
		r.cacheWrite += u.CacheWriteTokens
		switch {
		case priced:
			r.cost += *cost
		case b.o.Price != nil && !slices.Contains(r.unpriced, e.Name):
			r.unpriced = append(r.unpriced, e.Name)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// Subagent is the trajectory of a subagent's run.
type Subagent struct {
	// Namespace is the subagent's path under the main agent, one element
	// per level ("researcher:call_1").
	Namespace []string
	// Run counts the runs at Namespace before this one: 0 but for a
	// namespace run again (a tool call's id reused).
	Run        int
	Trajectory *Trajectory
}

// Build returns the trajectory of the run and those of its subagents, in
// the order they began, from the events added so far. A step that
// delegated to a subagent references its trajectory in the observation
// result of the tool call that started it.
func (b *Builder) Build() (*Trajectory, []Subagent) {
	b.get(nil, false) // the main agent's, even of no event
	session := b.o.SessionID
	if session == "" {
		session = "deepagents"
	}
	sessionOf := func(r *run) string {
		if len(r.ns) == 0 {
			return session
		}
		id := session + "/" + strings.Join(r.ns, "/")
		if r.seq > 0 {
			id += "#" + strconv.Itoa(r.seq+1)
		}
		return id
	}
	out := map[*run]*Trajectory{}
	for _, r := range b.order {
		steps := make([]Step, len(r.steps))
		for i, s := range r.steps {
			if s.Observation != nil {
				o := *s.Observation
				o.Results = slices.Clone(o.Results)
				s.Observation = &o
			}
			steps[i] = s
		}
		ag := b.o.Agent
		ag.Extra = nil
		if len(r.ns) == 0 {
			ag.Extra = b.o.Agent.Extra
		}
		if ag.ModelName == "" || len(r.ns) > 0 {
			ag.ModelName = r.model
		}
		t := &Trajectory{SchemaVersion: SchemaVersion, SessionID: sessionOf(r), Agent: ag, Steps: steps, FinalMetrics: r.final(len(steps), b.o.Price != nil)}
		if r.modelCalls > 0 {
			t.Notes = "final_metrics count every model call of this agent's run, those of its subagents and its middleware included; a step's metrics are its own model call's."
		}
		if len(r.extra) > 0 || len(r.ns) > 0 || len(b.o.Extra) > 0 {
			t.Extra = map[string]any{}
			if len(r.ns) == 0 {
				for k, v := range b.o.Extra {
					t.Extra[k] = v
				}
			}
			for k, v := range r.extra {
				t.Extra[k] = v
			}
			if len(r.ns) > 0 {
				t.Extra["namespace"] = r.ns
			}
			if r.seq > 0 {
				t.Extra["run"] = r.seq + 1
			}
		}
		out[r] = t
	}
	var subs []Subagent
	for _, r := range b.order[1:] {
		subs = append(subs, Subagent{Namespace: r.ns, Run: r.seq, Trajectory: out[r]})
		parent := out[r.parent]
		_, callID, _ := strings.Cut(r.ns[len(r.ns)-1], ":")
		ref := SubagentTrajectoryRef{SessionID: sessionOf(r)}
		if b.o.SubagentPath != nil {
			ref.TrajectoryPath = b.o.SubagentPath(r.ns, r.seq)
		}
		i, ok := r.parentStep, r.parentStep >= 0
		if !ok && callID != "" {
			// The call was listed after the subagent began.
			i, ok = r.parent.calls[callID]
		}
		if !ok {
			// No call of the parent started it: the parent's last step
			// says it ran, as an action of no tool call.
			i = len(parent.Steps) - 1
			callID = ""
			if i < 0 {
				continue
			}
		}
		s := &parent.Steps[i]
		if s.Observation == nil {
			s.Observation = &Observation{}
		}
		linked := false
		for j := range s.Observation.Results {
			if res := &s.Observation.Results[j]; callID != "" && res.SourceCallID == callID {
				res.SubagentTrajectoryRef = append(res.SubagentTrajectoryRef, ref)
				linked = true
				break
			}
		}
		if !linked {
			s.Observation.Results = append(s.Observation.Results, ObservationResult{SourceCallID: callID, SubagentTrajectoryRef: []SubagentTrajectoryRef{ref}})
		}
	}
	return out[b.runs[nsKey(nil)]], subs
}

// final is r's totals.
func (r *run) final(steps int, pricing bool) *FinalMetrics {
	f := &FinalMetrics{TotalSteps: ptr(steps)}
	if r.modelCalls == 0 {
		return f
	}
	f.TotalPromptTokens, f.TotalCompletionTokens, f.TotalCachedTokens = ptr(r.prompt), ptr(r.completion), ptr(r.cached)
	f.Extra = map[string]any{"model_calls": r.modelCalls}
	if r.cacheWrite > 0 {
		f.Extra["total_cache_write_tokens"] = r.cacheWrite
	}
	switch {
	case pricing && len(r.unpriced) == 0:
		f.TotalCostUSD = ptr(r.cost)
	case len(r.unpriced) > 0:
		f.Extra["unpriced_models"] = r.unpriced
	}
	return f
}
