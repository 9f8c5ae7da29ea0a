//go:build !unix

package rewind

import (
	"context"
	"errors"

	"github.com/deepagents-go/deepagents/backend"
)

// errFolders: a folder's points are recorded on Unix only, where the file
// backends that change it are.
var errFolders = errors.New("rewind: folders are tracked on Unix only")

func (t *Tracker) walk(context.Context, map[string]Entry, *scanned) error { return errFolders }

func (t *Tracker) statEntry(string, *scanned, Entry) (Entry, bool, error) {
	return Entry{}, false, errFolders
}

func (t *Tracker) told(string, backend.Change, *scanned) (Entry, bool) { return Entry{}, false }

func (t *Tracker) noticed(context.Context, *threadState) (*scanned, map[string]*Entry, bool) {
	return nil, nil, false
}

func reportedSig(any) (sig, bool) { return sig{}, false }

func (t *Tracker) settle(*threadState, map[string]backend.Change) {}
