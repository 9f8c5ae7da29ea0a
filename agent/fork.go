package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// Fork makes a thread continue from one of its earlier checkpoints (see
// checkpoint.Fork): the next run goes on from checkpointID's state, what
// came after it kept on a branch of its own. An empty checkpointID starts
// the thread over. It returns the new head's ID.
func (a *Agent) Fork(ctx context.Context, threadID, checkpointID string) (string, error) {
	if a.saver == nil {
		return "", errors.New("agent: Fork needs a Checkpointer")
	}
	id, err := checkpoint.Fork(ctx, a.saver, threadID, checkpointID)
	if err != nil {
		return "", fmt.Errorf("agent: thread %s: %w", threadID, err)
	}
	return id, nil
}
