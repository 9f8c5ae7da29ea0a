package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
)

// LogVersion is the version of the trial log's format, in its header.
const LogVersion = 1

// LogHeader is a trial log's first line: the eval it logs.
type LogHeader struct {
	// EvalLog is LogVersion: what says the file is a trial log.
	EvalLog int    `json:"eval_log"`
	Dataset string `json:"dataset"`
	Agent   string `json:"agent"`
	K       int    `json:"k"`
	// Model is the model spec the agent ran ("provider:model"; "" for
	// none, the oracle's, and in a log written before it was recorded).
	Model string `json:"model,omitempty"`
	// Mode is "record" or "replay" for an eval recorded (--record) or
	// replayed (--replay); "" for neither.
	Mode string `json:"mode,omitempty"`
	// Tasks are the names of the dataset's tasks, sorted (nil in a log
	// written before they were recorded).
	Tasks []string `json:"tasks,omitempty"`
}

// ErrLogLocked is returned by CreateLog and AppendLog for a log that
// another eval has open (its lock is held until that Log is closed).
var ErrLogLocked = errors.New("another eval has the log open")

// ErrLog is returned for a file that is not a trial log.
var ErrLog = errors.New("not an eval log (deepagents eval --log writes one)")

// LogContents is what ReadLog read from a trial log.
type LogContents struct {
	Header LogHeader
	// Trials are the finished trials, in the order they ended; a trial
	// logged twice is there once, as logged last.
	Trials []TrialResult
	// Truncated is the length of an incomplete last line that was left
	// out: a write cut short (the eval killed as it logged a trial). 0
	// for none.
	Truncated int
	// end is the length of the complete lines, where appending resumes.
	end int64
}

// Skip is Config.Skip for the trials of the log, but those whose
// outcome is one of retry, which run again (their new result, appended,
// is the one a later ReadLog keeps).
func (lc *LogContents) Skip(retry ...Outcome) func(task string, n int) (TrialResult, bool) {
	type key struct {
		task string
		n    int
	}
	done := map[key]TrialResult{}
	for _, r := range lc.Trials {
		if !slices.Contains(retry, r.Outcome) {
			done[key{r.Task, r.N}] = r
		}
	}
	return func(task string, n int) (TrialResult, bool) {
		r, ok := done[key{task, n}]
		return r, ok
	}
}

// ReadLog reads the trial log at path: a header line, then a trial per
// line. An incomplete last line (no newline at its end, and not a trial)
// is left out and counted in Truncated; any other line that is not a
// trial is an error.
func ReadLog(path string) (*LogContents, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	lc := &LogContents{}
	first := true
	type key struct {
		task string
		n    int
	}
	index := map[key]int{}
	for line := 1; len(b) > 0; line++ {
		i := bytes.IndexByte(b, '\n')
		text, complete := b, false
		if i >= 0 {
			text, complete = b[:i], true
		}
		var err error
		if first {
			err = json.Unmarshal(text, &lc.Header)
			if err == nil && lc.Header.EvalLog != LogVersion {
				err = fmt.Errorf("%w: its first line is no header of version %d", ErrLog, LogVersion)
			}
		} else {
			var r TrialResult
			if err = json.Unmarshal(text, &r); err == nil && r.Task == "" {
				err = errors.New("a line without a task")
			}
			if err == nil {
				k := key{r.Task, r.N}
				if j, ok := index[k]; ok {
					lc.Trials[j] = r
				} else {
					index[k] = len(lc.Trials)
					lc.Trials = append(lc.Trials, r)
				}
			}
		}
		if err != nil {
			if !complete && !first {
				lc.Truncated = len(b)
				break
			}
			if errors.Is(err, ErrLog) {
				return nil, fmt.Errorf("eval: %s: %w", path, err)
			}
			return nil, fmt.Errorf("eval: %s: line %d: %w: %v", path, line, ErrLog, err)
		}
		if !complete {
			// A whole line without its newline: kept, and the newline
			// is written before the next.
			lc.end += int64(len(text))
			first = false
			break
		}
		first = false
		lc.end += int64(i + 1)
		b = b[i+1:]
	}
	if first {
		return nil, fmt.Errorf("eval: %s: %w: it is empty", path, ErrLog)
	}
	return lc, nil
}

// Log appends finished trials to a trial log, a JSON line each, each
// synced to the disk before Append returns: an eval killed loses the
// trials it was running, never one it logged.
type Log struct {
	mu sync.Mutex
	f  *os.File
	// newline is owed: the last line on disk lacks its newline.
	newline bool
}

// CreateLog creates a trial log at path, which must not exist, and
// writes its header. The log is locked (flock(2), where there is one)
// until Close: AppendLog of the same file fails with ErrLogLocked.
func CreateLog(path string, h LogHeader) (*Log, error) {
	h.EvalLog = LogVersion
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("eval: %s: %w", path, err)
	}
	l := &Log{f: f}
	if err := l.writeLine(h); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// AppendLog opens the trial log that ReadLog read as lc to append to it:
// it locks the log until Close (ErrLogLocked, at once, when another eval
// holds it), reads it again into *lc (what another eval appended before
// it let go is kept), then cuts off an incomplete last line.
func AppendLog(path string, lc *LogContents) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("eval: %s: %w", path, err)
	}
	now, err := ReadLog(path)
	if err != nil {
		f.Close()
		return nil, err
	}
	*lc = *now
	st, err := f.Stat()
	if err == nil && st.Size() != lc.end {
		err = f.Truncate(lc.end)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("eval: %s: %w", path, err)
	}
	l := &Log{f: f}
	if lc.end > 0 {
		var last [1]byte
		if rf, err := os.Open(path); err == nil {
			if _, err := rf.ReadAt(last[:], lc.end-1); err == nil {
				l.newline = last[0] != '\n'
			}
			rf.Close()
		}
	}
	return l, nil
}

// Append logs trial r.
func (l *Log) Append(r TrialResult) error {
	return l.writeLine(r)
}

func (l *Log) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("eval: the log: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.newline {
		b = append([]byte{'\n'}, b...)
	}
	b = append(b, '\n')
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("eval: the log: %w", err)
	}
	l.newline = false
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("eval: the log: %w", err)
	}
	return nil
}

// Close closes the log, and lets go of its lock.
func (l *Log) Close() error {
	return l.f.Close()
}
