package deepagents

import "github.com/deepagents-go/deepagents/middleware/subagents"

// Background subagents (see Config.AsyncSubagents).
type (
	AsyncSubagent = subagents.Async
	AsyncOptions  = subagents.AsyncOptions
	AsyncTask     = subagents.AsyncTask
)

// allSubagents returns the subagents the configuration declares: the task
// tool's and the local background ones (a remote one's tools are its
// server's).
func allSubagents(cfg Config) []Subagent {
	if len(cfg.AsyncSubagents) == 0 {
		return cfg.Subagents
	}
	out := append([]Subagent(nil), cfg.Subagents...)
	for _, a := range cfg.AsyncSubagents {
		if a.URL == "" && a.GraphID == "" {
			out = append(out, a.Subagent)
		}
	}
	return out
}
