package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// shell is the shell command hooks run in: bash, as Claude Code's hooks
// expect, else sh.
var shell = sync.OnceValue(func() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
})

// runCommand runs a command hook with payload on its standard input: in
// its own process group, killed whole at the timeout, its output read up
// to maxOutput.
func (r *Runner) runCommand(ctx context.Context, h compiled, payload []byte) outcome {
	cmd := exec.CommandContext(ctx, shell(), "-c", h.Command)
	cmd.Dir = r.cfg.Dir
	cmd.Env = append(append(os.Environ(), "CLAUDE_PROJECT_DIR="+r.cfg.Dir, "DEEPAGENTS_PROJECT_DIR="+r.cfg.Dir), h.Env...)
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ownGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		// It exited 0, leaving a process behind that holds its output
		// open (a hook that forks its work into the background): what it
		// wrote until then is its answer.
		err = nil
	}
	if ctx.Err() != nil {
		return ended(ctx, h)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		reason := stderr.String()
		if strings.TrimSpace(reason) == "" {
			reason = "blocked by a " + string(h.Event) + " hook (exit status 2)"
		}
		return outcome{block: reason}
	case errors.As(err, &exit):
		return outcome{fail: strings.TrimSpace(fmt.Sprintf("%v: %s", err, stderr.String()))}
	default:
		return outcome{fail: err.Error()}
	}
	return parseStdout(stdout.String())
}

// parseStdout is what a hook that exited 0 said: JSON output, or plain
// text.
func parseStdout(s string) outcome {
	text := strings.TrimSpace(s)
	if strings.HasPrefix(text, "{") {
		var out Output
		if err := json.Unmarshal([]byte(text), &out); err == nil {
			return outcome{out: &out}
		}
	}
	return outcome{plain: text}
}

// capped keeps the first maxOutput bytes written to it and drops the rest.
type capped struct {
	b   bytes.Buffer
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.b.Len(); room < len(p) {
		c.b.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	return c.b.Write(p)
}

func (c *capped) String() string {
	if c.cut {
		return c.b.String() + "\n... (output cut)"
	}
	return c.b.String()
}
