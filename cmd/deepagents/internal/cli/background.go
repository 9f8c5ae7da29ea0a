package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents"
)

// stopBackground ends the background (async) subagent tasks still running
// when a run of run, -p or resume is over: the process is about to end,
// and they with it. It says so on stderr, naming them, cancels them, and
// records them on the thread as cancelled, so that a later run of the
// thread lists them as such rather than as lost. (The interactive session
// keeps them running until it ends.)
func stopBackground(ctx context.Context, env Env, o *opened, thread string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	stopped, err := deepagents.ShutdownBackground(ctx, o.Agent, thread)
	if len(stopped) > 0 {
		ids := slices.Sorted(maps.Keys(stopped))
		names := make([]string, len(ids))
		for i, id := range ids {
			names[i] = fmt.Sprintf("%s (%s)", id, stopped[id])
		}
		fmt.Fprintf(env.Stderr, "deepagents: warning: the run ended with %d background task(s) still running, now cancelled: %s; a task's result comes only to a run that waits for it (wait_async_task)\n",
			len(ids), strings.Join(names, ", "))
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "deepagents: warning: the cancelled tasks were not recorded on thread %s (a later run will list them as lost): %v\n", thread, err)
	}
}
