package cli

import (
	"context"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/middleware"
)

// recentThreads returns the user's n most recently updated threads,
// reading pages until it has them: subagents' threads, which the lists
// leave out, may fill whole pages.
func recentThreads(ctx context.Context, s checkpoint.Saver, n int) ([]checkpoint.Thread, error) {
	const page = 50
	var out []checkpoint.Thread
	for offset := 0; len(out) < n; offset += page {
		threads, err := s.Threads(ctx, checkpoint.ListOptions{Limit: page, Offset: offset})
		if err != nil {
			return nil, err
		}
		for _, t := range threads {
			if !middleware.IsSubagentThread(t.ID) && len(out) < n {
				out = append(out, t)
			}
		}
		if len(threads) < page {
			break
		}
	}
	return out, nil
}
