package cli

import (
	"context"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/thread"
)

// recentThreads returns the user's n most recently updated threads,
// reading pages until it has them: subagents' threads, which the lists
// leave out, may fill whole pages. It reads at most maxPages pages, and
// drops a thread seen twice (one updated while the pages are read moves).
func recentThreads(ctx context.Context, s checkpoint.Saver, n int) ([]checkpoint.Thread, error) {
	const page, maxPages = 50, 20
	var out []checkpoint.Thread
	seen := map[string]bool{}
	for p := 0; len(out) < n && p < maxPages; p++ {
		threads, err := s.Threads(ctx, checkpoint.ListOptions{Limit: page, Offset: p * page})
		if err != nil {
			return nil, err
		}
		for _, t := range threads {
			if !thread.IsChild(t.ID) && !seen[t.ID] && len(out) < n {
				seen[t.ID] = true
				out = append(out, t)
			}
		}
		if len(threads) < page {
			break
		}
	}
	return out, nil
}
