package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/persist"
)

// settingsValue is the state value where a thread keeps how it was run.
const settingsValue = "cli_settings"

// threadSettings are how a thread was run: a continued or resumed run uses
// them for every flag it is not given, so that resuming a thread that used
// execute offers execute again, with the same approvals, in the same
// workspace.
type threadSettings struct {
	Model       string    `json:"model,omitempty"`
	Dir         string    `json:"dir"`
	Shell       bool      `json:"shell,omitempty"`
	Sandbox     string    `json:"sandbox,omitempty"`
	Network     bool      `json:"network,omitempty"`
	GrepRegexp  bool      `json:"grep_regexp,omitempty"`
	InterruptOn []string  `json:"interrupt_on"`
	Rules       ruleLists `json:"rules"`
	MaxSteps    int       `json:"max_steps,omitempty"`
	// Subagents are the names of the subagents the run had. They come
	// from files, not flags: a continued run loads the files again and
	// says when the set changed.
	Subagents []string `json:"subagents"`
}

// settings returns the flags' settings, the approval rules resolved.
func (f *runFlags) settings(interactive bool) threadSettings {
	on := f.interruptOn(interactive)
	if on == nil {
		on = []string{}
	}
	return threadSettings{Model: f.model, Dir: f.dir, Shell: f.shell, Sandbox: f.sandbox,
		Network: f.network, GrepRegexp: f.grepRegexp, InterruptOn: on, Rules: f.rules, MaxSteps: f.maxSteps}
}

// adoptThreadSettings makes the settings the thread was run with the
// defaults of the flags not given, and tells w of each given flag that
// changes one. A new thread, or one run before threads kept settings,
// changes nothing. It returns the thread's settings, nil for none.
func (f *runFlags) adoptThreadSettings(ctx context.Context, db *persist.DB, w io.Writer) (*threadSettings, error) {
	if f.thread == "" {
		return nil, nil
	}
	snap, err := db.Saver.Load(ctx, f.thread, "")
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("thread %s: %w", f.thread, err)
	}
	raw, ok := snap.Values[settingsValue]
	if !ok {
		return nil, nil
	}
	var old threadSettings
	if err := json.Unmarshal(raw, &old); err != nil {
		return nil, fmt.Errorf("thread %s: its settings: %w: %v", f.thread, checkpoint.ErrCorrupt, err)
	}
	given := f.given
	note := func(flag, was, now string) {
		if was != now {
			fmt.Fprintf(w, "note: thread %s ran with %s %s; this run uses %s\n", f.thread, flag, orNone(was), orNone(now))
		}
	}
	// adoptBool keeps a flag the thread ran with unless the run gives it.
	adoptBool := func(flag string, was bool, now *bool) {
		if given(flag) {
			note("--"+flag, strconv.FormatBool(was), strconv.FormatBool(*now))
		} else {
			*now = was
		}
	}
	if given("model") {
		note("--model", old.Model, f.model)
	} else {
		f.model = old.Model
	}
	switch {
	case given("dir"):
		if was, err := workspacePath(old.Dir); err != nil || was != f.dir || !filepath.IsAbs(old.Dir) {
			note("--dir", old.Dir, f.dir)
		}
	case old.Dir != "" && !filepath.IsAbs(old.Dir):
		// An older version kept --dir as typed: relative to a directory
		// nobody recorded. Going on in whatever folder has that name here
		// could write (a pending approval, say) into the wrong one.
		return nil, usageError{fmt.Errorf("thread %s recorded its workspace as %q, relative to a directory it did not keep; pass --dir with the folder it worked in", f.thread, old.Dir)}
	case old.Dir != "":
		if st, err := os.Stat(old.Dir); err != nil || !st.IsDir() {
			return nil, usageError{fmt.Errorf("thread %s worked in %s, which is gone; pass --dir", f.thread, old.Dir)}
		}
		dir, err := workspacePath(old.Dir)
		if err != nil {
			return nil, usageError{fmt.Errorf("thread %s worked in %s: %w; pass --dir", f.thread, old.Dir, err)}
		}
		f.dir = dir
	}
	adoptBool("shell", old.Shell, &f.shell)
	if given("sandbox") {
		note("--sandbox", old.Sandbox, f.sandbox)
	} else if old.Sandbox != "" {
		f.sandbox = old.Sandbox
	}
	adoptBool("network", old.Network, &f.network)
	adoptBool("grep-regexp", old.GrepRegexp, &f.grepRegexp)
	if given("interrupt-on") || given("auto-approve") {
		note("approvals for", strings.Join(old.InterruptOn, ","), strings.Join(f.interruptOn(false), ","))
	} else {
		f.interrupt, f.interruptOK = strings.Join(old.InterruptOn, ","), true
	}
	if given("allow") || given("ask") || given("deny") {
		was, _ := json.Marshal(old.Rules)
		now, _ := json.Marshal(f.rules)
		note("permission rules", string(was), string(now))
	} else {
		f.rules = old.Rules
	}
	if given("max-steps") {
		note("--max-steps", strconv.Itoa(old.MaxSteps), strconv.Itoa(f.maxSteps))
	} else {
		f.maxSteps = old.MaxSteps
	}
	return &old, nil
}

// noteSubagents tells w when the subagents a continued thread has now
// differ from those it had.
func noteSubagents(w io.Writer, thread string, old *threadSettings, now []string) {
	if old == nil || old.Subagents == nil || slices.Equal(old.Subagents, now) {
		return
	}
	fmt.Fprintf(w, "note: thread %s ran with the subagents %s; this run has %s (the files in agents/ changed)\n",
		thread, orNone(strings.Join(old.Subagents, ", ")), orNone(strings.Join(now, ", ")))
}

func orNone(s string) string {
	if s == "" || s == "0" {
		return "(none)"
	}
	return s
}

// settingsValues returns the input values that record s on the thread.
func settingsValues(s threadSettings) map[string]json.RawMessage {
	s.InterruptOn = slices.Clip(s.InterruptOn)
	raw, _ := json.Marshal(s) // plain fields: cannot fail
	return map[string]json.RawMessage{settingsValue: raw}
}
