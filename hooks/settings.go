package hooks

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Settings is the hooks object of Claude Code's settings.json, and of the
// CLI's config.yaml: for each event, groups of handlers with a matcher.
//
//	{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh", "timeout": 30}]}]}
type Settings map[string][]Group

// Group is a matcher and the handlers it selects.
type Group struct {
	Matcher string    `json:"matcher,omitempty" yaml:"matcher,omitempty"`
	Hooks   []Handler `json:"hooks" yaml:"hooks"`
}

// Handler is one hook of a Group: a "command" or an "http" handler run
// here; the others are left out.
type Handler struct {
	Type    string `json:"type" yaml:"type"`
	Command string `json:"command" yaml:"command"`
	// Prompt is a prompt handler's.
	Prompt string `json:"prompt,omitempty" yaml:"prompt,omitempty"`
	// URL, Headers and AllowedEnvVars are an http handler's.
	URL            string            `json:"url,omitempty" yaml:"url,omitempty"`
	Headers        map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	AllowedEnvVars []string          `json:"allowedEnvVars,omitempty" yaml:"allowedEnvVars,omitempty"`
	// Timeout is in seconds; zero means DefaultTimeout.
	Timeout float64 `json:"timeout,omitempty" yaml:"timeout,omitempty"`
}

// maxTimeout bounds a handler's timeout: a day.
const maxTimeout = 24 * time.Hour

// ReadClaudeSettings returns the hooks object of a Claude Code settings
// file's JSON (nil when it has none); the file's other settings are not
// read.
func ReadClaudeSettings(data []byte) (Settings, error) {
	var f struct {
		Hooks Settings `json:"hooks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	return f.Hooks, nil
}

// Hooks returns the settings' hooks in dialect d, in the order of Events
// and then of the file. What they hold that is not run here (an event this
// agent does not have, a handler that is not a command) is left out and
// described in skipped; a handler without a command, or with a timeout
// below zero or over a day, is an error.
func (s Settings) Hooks(d Dialect) (hooks []Hook, skipped []string, err error) {
	events := make([]string, 0, len(s))
	for e := range s {
		events = append(events, e)
	}
	slices.Sort(events)
	slices.SortStableFunc(events, func(a, b string) int {
		return slices.Index(Events, Event(a)) - slices.Index(Events, Event(b))
	})
	for _, name := range events {
		e := Event(name)
		if !e.Known() {
			skipped = append(skipped, fmt.Sprintf("%s hooks (no such event here; these are: %s)", name, eventList()))
			continue
		}
		for _, g := range s[name] {
			for _, h := range g.Hooks {
				hook := Hook{Event: e, Matcher: g.Matcher, Timeout: time.Duration(h.Timeout * float64(time.Second)), Dialect: d}
				switch h.Type {
				case "command":
					if strings.TrimSpace(h.Command) == "" {
						return nil, nil, fmt.Errorf("hooks: a %s hook has no command", name)
					}
					hook.Command = h.Command
				case "http":
					if strings.TrimSpace(h.URL) == "" {
						return nil, nil, fmt.Errorf("hooks: a %s http hook has no url", name)
					}
					hook.URL, hook.Headers, hook.AllowedEnvVars = h.URL, h.Headers, h.AllowedEnvVars
				case "prompt":
					if strings.TrimSpace(h.Prompt) == "" {
						return nil, nil, fmt.Errorf("hooks: a %s prompt hook has no prompt", name)
					}
					hook.Prompt = h.Prompt
					if hook.Timeout == 0 {
						hook.Timeout = DefaultPromptTimeout
					}
				default:
					skipped = append(skipped, fmt.Sprintf("a %s hook of type %q (%s hooks run here)", name, h.Type, strings.Join(HandlerTypes, ", ")))
					continue
				}
				if h.Timeout < 0 || h.Timeout > maxTimeout.Seconds() {
					return nil, nil, fmt.Errorf("hooks: the %s hook %q has a timeout of %g seconds (at most %g)", name, cmp.Or(h.Command, h.URL, h.Prompt), h.Timeout, maxTimeout.Seconds())
				}
				hooks = append(hooks, hook)
			}
		}
	}
	return hooks, skipped, nil
}
