package agent_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
)

func TestUsageTree(t *testing.T) {
	use := func(model string, in, out int, ns ...string) agent.Event {
		return agent.Event{Type: agent.EventUsage, Name: model, Namespace: ns, Usage: &llm.Usage{InputTokens: in, OutputTokens: out}}
	}
	var tree agent.UsageTree
	for _, e := range []agent.Event{
		use("anthropic:claude-sonnet-4-5", 1000, 100),
		use("openai:gpt-4.1", 2000, 0, "researcher:call_1"),
		use("openai:gpt-4.1", 500, 50, "researcher:call_1"),
		use("anthropic:claude-haiku-4-5", 10, 1, "researcher:call_1", "general-purpose:call_9"),
		use("anthropic:claude-sonnet-4-5", 1000, 100),
		use("local:mystery", 7, 7, "coder:call_2"),
		{Type: agent.EventToolCall, Name: "ls"},          // not usage: ignored
		{Type: agent.EventUsage, Name: "openai:gpt-4.1"}, // no usage: ignored
	} {
		tree.Add(e)
	}

	var walked []string
	tree.Walk(func(depth int, n *agent.UsageTree) {
		calls, _ := n.Own()
		walked = append(walked, string(rune('0'+depth))+" "+n.Agent+" "+string(rune('0'+calls)))
	})
	want := []string{"0  2", "1 researcher:call_1 2", "2 general-purpose:call_9 1", "1 coder:call_2 1"}
	if diff := cmp.Diff(want, walked); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}

	calls, u := tree.Total()
	if calls != 6 || u != (llm.Usage{InputTokens: 4517, OutputTokens: 258}) {
		t.Errorf("Total = %d, %+v", calls, u)
	}
	researcher := tree.Subagents[0]
	if got := researcher.Models; len(got) != 1 || got[0].Calls != 2 || got[0].Usage.InputTokens != 2500 {
		t.Errorf("researcher's models = %+v", got)
	}

	prices := map[string]llm.Price{"local:mystery": {Input: 1_000_000, Output: 0}}
	sonnet, _ := llm.PriceOf("anthropic:claude-sonnet-4-5", nil)
	gpt, _ := llm.PriceOf("openai:gpt-4.1", nil)
	haiku, _ := llm.PriceOf("anthropic:claude-haiku-4-5", nil)
	wantCost := sonnet.Cost(llm.Usage{InputTokens: 2000, OutputTokens: 200}) +
		gpt.Cost(llm.Usage{InputTokens: 2500, OutputTokens: 50}) +
		haiku.Cost(llm.Usage{InputTokens: 10, OutputTokens: 1}) + 7
	if cost, unpriced := tree.Cost(prices); unpriced != "" || diffCost(cost, wantCost) {
		t.Errorf("Cost = %v, %q; want %v", cost, unpriced, wantCost)
	}
	if _, unpriced := tree.Cost(nil); unpriced != "local:mystery" {
		t.Errorf("without its price, Cost names %q as unpriced", unpriced)
	}
}

func diffCost(a, b float64) bool { return a-b > 1e-9 || b-a > 1e-9 }

func TestUsageTreeMerge(t *testing.T) {
	one := func(model string, in int, ns ...string) *agent.UsageTree {
		var u agent.UsageTree
		u.Add(agent.Event{Type: agent.EventUsage, Name: model, Namespace: ns, Usage: &llm.Usage{InputTokens: in}})
		return &u
	}
	a := one("m:a", 10)
	a.Merge(one("m:a", 5, "sub"))
	var empty agent.UsageTree
	empty.Merge(a)
	if diff := cmp.Diff(a, &empty); diff != "" {
		t.Errorf("merged into an empty tree (-want +got):\n%s", diff)
	}
	empty.Merge(one("m:a", 1))
	empty.Merge(one("m:b", 2, "sub"))
	empty.Merge(one("m:a", 3, "sub", "deeper"))
	want := &agent.UsageTree{
		Models: []agent.ModelUsage{{Model: "m:a", Calls: 2, Usage: llm.Usage{InputTokens: 11}}},
		Subagents: []*agent.UsageTree{{
			Agent:     "sub",
			Models:    []agent.ModelUsage{{Model: "m:a", Calls: 1, Usage: llm.Usage{InputTokens: 5}}, {Model: "m:b", Calls: 1, Usage: llm.Usage{InputTokens: 2}}},
			Subagents: []*agent.UsageTree{{Agent: "deeper", Models: []agent.ModelUsage{{Model: "m:a", Calls: 1, Usage: llm.Usage{InputTokens: 3}}}}},
		}},
	}
	if diff := cmp.Diff(want, &empty); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if a.Models[0].Calls != 1 || len(a.Subagents[0].Models) != 1 {
		t.Errorf("Merge changed its argument: %+v", a)
	}
}

// namedModel is a scripted model that describes itself as spec.
type namedModel struct {
	llm.Model
	provider, name string
}

func (m namedModel) Info() llm.Info { return llm.Info{Provider: m.provider, Name: m.name} }

// swapModel sends every call to another model, as a fallback would.
type swapModel struct{ to llm.Model }

func (swapModel) Name() string { return "swap_model" }
func (s swapModel) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	req.Model = s.to
	return next(ctx, req)
}

// A usage event names the model that answered, not the one configured
// when a middleware swapped it.
func TestUsageNamesTheModelThatAnswered(t *testing.T) {
	configured := namedModel{provider: "anthropic", name: "claude-sonnet-4-5"}
	fallback := namedModel{Model: replay.New(replay.Turn{Content: "from the fallback", Usage: llm.Usage{InputTokens: 10}}), provider: "openai", name: "gpt-4.1"}
	for _, c := range []struct {
		mw   []agent.Middleware
		want string
	}{
		{nil, "anthropic:claude-sonnet-4-5"},
		{[]agent.Middleware{swapModel{fallback}}, "openai:gpt-4.1"},
	} {
		m := namedModel{Model: replay.New(replay.Turn{Content: "answer"}), provider: configured.provider, name: configured.name}
		a := newAgent(t, agent.Config{Model: m, Middleware: c.mw})
		var names []string
		for e, err := range a.Stream(context.Background(), agent.Prompt("hi")) {
			if err != nil {
				t.Fatal(err)
			}
			if e.Type == agent.EventUsage {
				names = append(names, e.Name)
			}
		}
		if len(names) != 1 || names[0] != c.want {
			t.Errorf("usage named %v, want %s", names, c.want)
		}
	}
}

// uncomparable is a model value whose type == cannot compare.
type uncomparable struct {
	llm.Model
	tags []string
}

// A model whose type is not comparable runs: the agent never compares
// models (it did, to name usage, and panicked).
func TestUncomparableModel(t *testing.T) {
	a := newAgent(t, agent.Config{Model: uncomparable{Model: replay.New(replay.Turn{Content: "ok"}), tags: []string{"x"}}})
	for e, err := range a.Stream(context.Background(), agent.Prompt("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == agent.EventRunEnd && e.Status != agent.StatusCompleted {
			t.Fatalf("run ended %s: %s", e.Status, e.Error)
		}
	}
}
