package checkpoint_test

import (
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/checkpoint/checkpointtest"
)

func TestMemoryConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return checkpoint.NewMemorySaver() })
}

func TestMemoryZeroValue(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return new(checkpoint.MemorySaver) })
}
