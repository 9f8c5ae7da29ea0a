package server_test

import (
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
	"github.com/deepagents-go/deepagents/store"
)

// fixture is servertest's, with this package's test methods.
type fixture struct{ *servertest.Fixture }

// newFixture is servertest's: the LangGraph API alone.
func newFixture(t *testing.T, o servertest.Options, turns ...replay.Turn) *fixture {
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

// newReplicas is servertest's.
func newReplicas(t *testing.T, n int, saver checkpoint.Saver, st store.Store, model func() llm.Model) []*replica {
	return replicas(servertest.NewReplicas(t, n, saver, st, model))
}

// foreignRun is servertest's.
func foreignRun(t *testing.T, seen time.Time) []*replica {
	return replicas(servertest.ForeignRun(t, seen))
}
