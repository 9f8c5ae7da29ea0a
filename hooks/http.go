package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

// An http hook (Hook.URL) is Claude Code's "http" handler: the event is
// POSTed as JSON to the URL, and a 2xx answer's body is what a command's
// standard output would be (JSON output, or plain text). Any other status,
// a refused connection or the timeout is a failed hook: a warning, never a
// block, so that a hook server that is down stops nothing. Redirects are
// not followed: the URL the settings name is where the event goes.

// httpClient sends http hooks' events; each request is bounded by its
// hook's context.
var httpClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// runHTTP POSTs payload to h's URL and reads the answer up to maxOutput.
func (r *Runner) runHTTP(ctx context.Context, h compiled, payload []byte) outcome {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(payload))
	if err != nil {
		return outcome{fail: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h.Headers {
		req.Header.Set(k, expandAllowed(v, h.AllowedEnvVars, r.getenv))
	}
	resp, err := httpClient.Do(req)
	if ctx.Err() != nil {
		return ended(ctx, h)
	}
	if err != nil {
		return outcome{fail: err.Error()}
	}
	defer resp.Body.Close()
	var body capped
	if _, err := io.Copy(&body, resp.Body); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return outcome{fail: fmt.Sprintf("reading the answer of %s: %v", h.URL, err)}
	}
	if ctx.Err() != nil {
		return ended(ctx, h)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return outcome{fail: strings.TrimSpace(fmt.Sprintf("%s answered %s: %s", h.URL, resp.Status, body.String()))}
	}
	return parseStdout(body.String())
}

// expandAllowed expands $VAR and ${VAR} in s for the variables allowed
// names; any other is empty, as in Claude Code, so that a settings file
// cannot send a variable its author did not list.
func expandAllowed(s string, allowed []string, getenv func(string) string) string {
	return os.Expand(s, func(name string) string {
		if !slices.Contains(allowed, name) {
			return ""
		}
		return getenv(name)
	})
}

// getenv reads the process's environment, or Config.Getenv's.
func (r *Runner) getenv(name string) string {
	if r.cfg.Getenv != nil {
		return r.cfg.Getenv(name)
	}
	return os.Getenv(name)
}
