package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/middleware/hitl"
)

// SettingsValue is the state value where a thread keeps how it was run.
const SettingsValue = "cli_settings"

// Values returns the input values that record s on the thread.
func (s Settings) Values() map[string]json.RawMessage {
	s.InterruptOn = slices.Clip(s.InterruptOn)
	raw, _ := json.Marshal(s) // plain fields: cannot fail
	return map[string]json.RawMessage{SettingsValue: raw}
}

// Kept are the settings a thread kept, as LoadKept found them.
type Kept struct {
	// Settings are the settings as the thread recorded them.
	Settings Settings
	// Folder is Settings.Dir as the folder it is now: absolute, its
	// symbolic links resolved; FolderErr says why it is not one. Gone
	// reports that it is not a folder at all any more. (Only an absolute
	// Dir is looked at: a relative one names no folder.)
	Folder    string
	FolderErr error
	Gone      bool
	// Mode is the permission mode the thread was left in; "" for none.
	Mode hitl.Mode
}

// LoadKept reads the settings thread kept in saver, and looks at the
// folder they name. A new thread, or one run before threads kept
// settings, has none (nil).
func LoadKept(ctx context.Context, saver checkpoint.Saver, thread string) (*Kept, error) {
	snap, err := saver.Load(ctx, thread, "")
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("thread %s: %w", thread, err)
	}
	raw, ok := snap.Values[SettingsValue]
	if !ok {
		return nil, nil
	}
	k := &Kept{}
	k.Mode, _ = hitl.ModeOf(snap.Values)
	if err := json.Unmarshal(raw, &k.Settings); err != nil {
		return nil, fmt.Errorf("thread %s: its settings: %w: %v", thread, checkpoint.ErrCorrupt, err)
	}
	if dir := k.Settings.Dir; filepath.IsAbs(dir) {
		st, err := os.Stat(dir)
		k.Gone = err != nil || !st.IsDir()
		k.Folder, k.FolderErr = WorkspacePath(dir)
	}
	return k, nil
}

// WorkspacePath returns dir absolute and clean, its symbolic links
// resolved: a workspace is kept, on its threads and in --continue's
// records, as the folder it is, not as typed.
func WorkspacePath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

func orNone(s string) string {
	if s == "" || s == "0" {
		return "(none)"
	}
	return s
}
