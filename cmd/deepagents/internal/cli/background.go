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
// when the process is about to end (a run of run, -p or resume is over,
// or the interactive session ends), and they with it. It says so on
// stderr, naming them, cancels them, and records them as cancelled on the
// threads that started them, so that a later run lists them as such rather
// than as lost.
func stopBackground(ctx context.Context, env Env, o *opened) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	stopped, err := deepagents.ShutdownBackground(ctx, o.Agent)
	for _, l := range backgroundStopped("the run", stopped, err) {
		fmt.Fprintln(env.Stderr, "deepagents: warning: "+l)
	}
}

// backgroundStopped says which background tasks ended with what, and
// whether they could not all be recorded.
func backgroundStopped(with string, stopped map[string]string, err error) []string {
	var out []string
	if len(stopped) > 0 {
		ids := slices.Sorted(maps.Keys(stopped))
		names := make([]string, len(ids))
		for i, id := range ids {
			names[i] = fmt.Sprintf("%s (%s)", id, stopped[id])
		}
		out = append(out, fmt.Sprintf("%s ended %d background task(s) still running, now cancelled: %s; a task's result comes only to a run that waits for it (wait_async_task)", with, len(ids), strings.Join(names, ", ")))
	}
	if err != nil {
		out = append(out, fmt.Sprintf("the cancelled tasks were not all recorded (a later run will list those as lost): %v", err))
	}
	return out
}
