package sqlcore

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/dbtime"
	"github.com/deepagents-go/deepagents/sqlcore/internal/cpcodec"
	"github.com/deepagents-go/deepagents/thread"
)

// CheckpointRows is a checkpoint encoded into the values of its rows, for
// a Put to write (each package writes them its own way).
type CheckpointRows struct {
	CP       *checkpoint.Checkpoint
	Created  int64    // CP.CreatedAt as Unix nanoseconds
	Messages [][]byte // CP.Messages as JSON
	Files    []FileRow
}

// FileRow is a file a checkpoint changed, or text appended to one.
type FileRow struct {
	Path              string
	Deleted, Appended bool
	Content           []byte // never nil unless Deleted: empty content is not NULL
	Created, Modified sql.NullInt64
}

// EncodeCheckpoint validates cp, sets a zero cp.CreatedAt to now, and
// encodes cp into the values of its rows: its files (cp.Files), then the
// appends (cp.Appends).
func EncodeCheckpoint(cp *checkpoint.Checkpoint, now time.Time) (CheckpointRows, error) {
	r := CheckpointRows{CP: cp}
	if err := cp.Validate(); err != nil {
		return r, err
	}
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = now
	}
	var err error
	if r.Created, err = dbtime.Encode(cp.CreatedAt); err != nil {
		return r, fmt.Errorf("%w: created_at: %v", checkpoint.ErrInvalid, err)
	}
	if r.Messages, err = cpcodec.EncodeMessages(cp.Messages); err != nil {
		return r, err
	}
	r.Files = make([]FileRow, 0, len(cp.Files)+len(cp.Appends))
	addFile := func(p string, f *thread.FileData, appended bool) error {
		fr := FileRow{Path: p, Deleted: f == nil, Appended: appended}
		if f != nil {
			fr.Content = append(make([]byte, 0, len(f.Content)), f.Content...)
			var err error
			if fr.Created, err = nullNanos(f.CreatedAt); err == nil {
				fr.Modified, err = nullNanos(f.ModifiedAt)
			}
			if err != nil {
				return fmt.Errorf("%w: file %q: %v", checkpoint.ErrInvalid, p, err)
			}
		}
		r.Files = append(r.Files, fr)
		return nil
	}
	for p, f := range cp.Files {
		if err := addFile(p, f, false); err != nil {
			return r, err
		}
	}
	for p, f := range cp.Appends {
		if err := addFile(p, &f, true); err != nil {
			return r, err
		}
	}
	return r, nil
}

// nullNanos is t as Unix nanoseconds, NULL for the zero time.
func nullNanos(t time.Time) (sql.NullInt64, error) {
	if t.IsZero() {
		return sql.NullInt64{}, nil
	}
	n, err := dbtime.Encode(t)
	return sql.NullInt64{Int64: n, Valid: err == nil}, err
}
