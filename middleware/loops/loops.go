// Package loops is the loop guard: a middleware that tells an agent going
// round in circles from one at work, nudges it, and ends the run when it
// keeps on.
//
// A call is known by its tool and its arguments, and its outcome by the
// result's text. Within a run, the guard counts how many times the same
// call came back with the same outcome since the agent last did something
// new (a call that may change things, with a tool and arguments not seen
// before in the run: an edit, a new command), how many times one tool
// failed with the same error, and how many calls in a row only read.
// What each count means:
//
//   - the same call, the same result, three times: re-reading a file,
//     re-running a command whose output does not change, writing a file
//     with what it holds already, the same todo list again, or two calls
//     taking turns (A, B, A, B, A, B), which count each;
//   - the same error from a tool, three times, whatever its arguments;
//   - many reads in a row, with no write, command or answer between.
//
// At the nudge threshold the guard adds a note to the call's result
// saying what repeats and what to do instead; at the stop threshold it
// ends the run, completed, with the code agent.EndLoop and a reason. A
// tool whose traits say it polls (tool.Traits.Polls: a background task's
// status) is not counted, nor is a call whose result changed (a command's
// output that grows), and an edit, a new command or a new write starts the
// counts again, so that running the tests after an edit is never a loop.
package loops

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/tool"
)

// Defaults of the guard's thresholds.
const (
	// DefaultNudge is how many times the same call may come back with the
	// same result (or a tool fail with the same error) before the model
	// is told so.
	DefaultNudge = 3
	// DefaultStop is how many times before the run ends with EndLoop.
	DefaultStop = 8
	// DefaultReads is how many calls in a row may only read before the
	// model is asked to act or to say what it misses.
	DefaultReads = 40
	// window is how many recent calls the guard compares.
	window = 32
	// maxSeen bounds the calls a run remembers having made; past it, the
	// memory starts again (a new call then looks new once more).
	maxSeen = 4096
)

// Config sets the thresholds. Zero means the default; a negative value
// turns that check off.
type Config struct {
	// Nudge: the count of the same call with the same result, or of the
	// same error, at which the model gets a note. DefaultNudge when 0.
	Nudge int
	// Stop: the count at which the run ends, completed, with the code
	// agent.EndLoop. DefaultStop when 0; it must be above Nudge.
	Stop int
	// Reads: the count of calls in a row of read-only tools at which the
	// model gets a note. DefaultReads when 0.
	Reads int
}

// Off is the Config that turns every check off.
var Off = Config{Nudge: -1, Stop: -1, Reads: -1}

// IsOff reports whether c turns every check off.
func (c Config) IsOff() bool { return c.Nudge < 0 && c.Stop < 0 && c.Reads < 0 }

// Middleware is the loop guard.
type Middleware struct {
	nudge, stop, reads int
	seed               maphash.Seed
}

// New returns the guard. It fails when Stop is not above Nudge.
func New(cfg Config) (*Middleware, error) {
	m := &Middleware{nudge: or(cfg.Nudge, DefaultNudge), stop: or(cfg.Stop, DefaultStop), reads: or(cfg.Reads, DefaultReads), seed: maphash.MakeSeed()}
	if m.nudge > 0 && m.stop > 0 && m.stop <= m.nudge {
		return nil, fmt.Errorf("loops: Stop (%d) must be above Nudge (%d)", m.stop, m.nudge)
	}
	return m, nil
}

// or is v, def when v is 0, and -1 (off) when v is negative.
func or(v, def int) int {
	if v < 0 {
		return -1
	}
	return cmp.Or(v, def)
}

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "loops" }

// call is one call the guard remembers.
type call struct {
	key     uint64 // the tool and its arguments
	outcome uint64 // the result's text and whether it failed
	failure uint64 // the tool and its error, 0 for a success
}

// history is what a run's calls were, guarded by mu: the tools of a turn
// may run in parallel.
type history struct {
	mu     sync.Mutex
	recent []call          // since the last new call that may change things, at most window
	seen   map[uint64]bool // the keys of the run's calls that may change things
	reads  int             // read-only calls in a row
	nudged map[uint64]bool // the failures nudged about already
	// repeated: the model was told it repeats itself, since the last new
	// call that may change things (one note each time it is stuck).
	repeated bool
}

type historyKey struct{}

func (m *Middleware) history(rt *agent.Runtime) *history {
	if h, ok := rt.Local(historyKey{}); ok {
		return h.(*history)
	}
	return rt.LocalOrSet(historyKey{}, &history{seen: make(map[uint64]bool), nudged: make(map[uint64]bool)}).(*history)
}

// WrapTool implements agent.ToolWrapper: the call runs, then the guard
// counts it and may add a note to its result or end the run.
func (m *Middleware) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	res, err := next(ctx, req)
	if err != nil || req.Runtime == nil {
		return res, err
	}
	tr := tool.TraitsOf(req.Tool)
	if tr.Polls {
		return res, nil // waiting for work elsewhere: no loop, no progress
	}
	name := req.Call.Name
	c := call{key: m.hash(name, string(req.Call.Args)), outcome: m.hash(comparableText(res.Content, req.Call.ID), strconv.FormatBool(res.IsError))}
	if res.IsError {
		c.failure = m.hash(name, withoutArgs(res.Content, req.Call.Args))
	}
	note, stop := m.count(m.history(req.Runtime), c, name, tr, res.IsError)
	if stop != "" {
		req.Runtime.EndRunWith(agent.EndLoop, stop)
	}
	if note != "" {
		res.Content += "\n\n" + note
	}
	return res, nil
}

// count records c and returns the note for the model, if any, and the
// reason to stop the run, if it must.
func (m *Middleware) count(h *history, c call, name string, tr tool.Traits, failed bool) (note, stop string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !tr.ReadOnly && !failed && !h.seen[c.key] {
		// Something new that may change things: work, and the counts
		// start again.
		if len(h.seen) >= maxSeen {
			clear(h.seen)
		}
		h.seen[c.key] = true
		h.recent = h.recent[:0]
		clear(h.nudged)
		h.repeated = false
	}
	if len(h.recent) == window {
		h.recent = append(h.recent[:0], h.recent[1:]...)
	}
	h.recent = append(h.recent, c)
	same, errs := count(h.recent, c)
	// The call before, when it is another that repeats as often: the two
	// take turns.
	var other *call
	if n := len(h.recent); n >= 2 && h.recent[n-2].key != c.key {
		if o, _ := count(h.recent, h.recent[n-2]); o >= same-1 && o > 1 {
			other = &h.recent[n-2]
		}
	}
	if tr.ReadOnly {
		h.reads++
	} else {
		h.reads = 0
	}
	switch {
	case m.stop > 0 && same >= m.stop:
		return fmt.Sprintf("The run is stopped: %s was called %d times with the same arguments and the same result.", name, same),
			fmt.Sprintf("%s repeated %d times with the same arguments and result", name, same)
	case m.stop > 0 && errs >= m.stop:
		return fmt.Sprintf("The run is stopped: %s failed %d times with the same error.", name, errs),
			fmt.Sprintf("%s failed %d times with the same error", name, errs)
	case m.nudge > 0 && errs >= m.nudge && !h.nudged[c.failure]:
		h.nudged[c.failure] = true
		return fmt.Sprintf("Note: %s has failed %d times with this same error. Do not retry it unchanged: read the error, check what it depends on (paths, arguments, the state of the files), and change your approach.", name, errs), ""
	case m.nudge > 0 && same >= m.nudge && !h.repeated:
		h.repeated = true
		if other != nil {
			return fmt.Sprintf("Note: your last calls take turns between the same two (this %s and the call before it), with the same results each time, and nothing changed in between. Going round again will not change them: use what they told you, or try a different approach.", name), ""
		}
		if tr.EditsFiles {
			return fmt.Sprintf("Note: you have now made this same %s call %d times; the file already holds what it writes, so it changes nothing. Move on to the next step, or check why you think it is needed.", name, same), ""
		}
		return fmt.Sprintf("Note: you have now called %s %d times with these arguments and got this same result, and nothing changed in between. Calling it again will not change it: use the result you have, or try a different approach. If you are waiting for something, wait longer between checks.", name, same), ""
	case m.reads > 0 && h.reads == m.reads:
		return fmt.Sprintf("Note: your last %d calls only read. If you have what you need, act on it (edit, run, or answer); if you do not, say what is missing.", h.reads), ""
	}
	return "", ""
}

// comparableText is a result's text as two calls' results are compared: what
// differs from one call to the next whatever the call did is taken out,
// how long a command ran ("[Command failed with exit code 1 after 3s]")
// and the call's own id (in the path of a result moved to a file).
func comparableText(text, callID string) string {
	if callID != "" {
		text = strings.ReplaceAll(text, callID, "")
	}
	if strings.Contains(text, " after ") {
		text = ranFor.ReplaceAllString(text, "]")
	}
	return text
}

// ranFor is how long a command ran, at the end of execute's status line.
var ranFor = regexp.MustCompile(` after (?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?s\]`)

// withoutArgs is an error's text without the call's own argument values
// ("File '/no3' not found" for /no3), so that the same failure of
// different arguments counts as one.
func withoutArgs(text string, args json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(args, &in) != nil {
		return text
	}
	var vals []string
	for _, v := range in {
		// Values of a few characters ("/", "e") would cut the text
		// anywhere: they stay.
		if s, ok := v.(string); ok && len(s) >= 3 {
			vals = append(vals, s)
		}
	}
	slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) }) // the longest first
	for _, v := range vals {
		text = strings.ReplaceAll(text, v, "\x00")
	}
	return text
}

// count returns how many calls of recent are c's, with its outcome, and
// how many failed as c did.
func count(recent []call, c call) (same, errs int) {
	for _, p := range recent {
		if p.key == c.key && p.outcome == c.outcome {
			same++
		}
		if c.failure != 0 && p.failure == c.failure {
			errs++
		}
	}
	return same, errs
}

// hash is a run's key for two strings.
func (m *Middleware) hash(a, b string) uint64 {
	var h maphash.Hash
	h.SetSeed(m.seed)
	h.WriteString(a)
	h.WriteByte(0)
	h.WriteString(b)
	return h.Sum64()
}
