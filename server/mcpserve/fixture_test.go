package mcpserve_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
	"github.com/deepagents-go/deepagents/server/mcpserve"
	"github.com/deepagents-go/deepagents/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// protocol is what the fixtures mount beside the LangGraph API.
var protocol server.Protocol = mcpserve.Protocol{}

// fixture is servertest's, with this package's test methods.
type fixture struct{ *servertest.Fixture }

// newFixture is servertest's, with the protocol mounted.
func newFixture(t *testing.T, o servertest.Options, turns ...replay.Turn) *fixture {
	o.Protocols = append(o.Protocols, protocol)
	return &fixture{servertest.New(t, o, turns...)}
}

// replica is servertest's, with this package's test methods.
type replica struct {
	*fixture
	s  *server.Server
	st store.Store
}

func replicas(rs []*servertest.Replica) []*replica {
	out := make([]*replica, len(rs))
	for i, r := range rs {
		out[i] = &replica{fixture: &fixture{r.Fixture}, s: r.S, st: r.St}
	}
	return out
}

// newReplicas is servertest's, with the protocol mounted.
func newReplicas(t *testing.T, n int, saver checkpoint.Saver, st store.Store, model func() llm.Model) []*replica {
	return replicas(servertest.NewReplicas(t, n, saver, st, model, protocol))
}

// foreignRun is servertest's, with the protocol mounted.
func foreignRun(t *testing.T, seen time.Time) []*replica {
	return replicas(servertest.ForeignRun(t, seen, protocol))
}
