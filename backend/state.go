package backend

import (
	"context"
	"fmt"
	"time"

	"github.com/deepagents-go/deepagents/thread"
)

// StateBackend is a Backend whose files live in a thread's state: a *Files that
// travels with the thread's checkpoints and merges back from subagents.
//
// A StateBackend made by NewState(nil), or the zero value, finds the files of the
// current run in the context (see WithFiles) and fails with ErrNoState
// outside a run. NewState(files) binds it to one set instead.
//
// Directories are implicit: a directory exists while a file lies below it.
type StateBackend struct {
	files *thread.Files
}

var _ Backend = (*StateBackend)(nil)

// NewStateBackend returns a State backend over files, or over the run's files
// (from the context) when files is nil.
func NewStateBackend(files *thread.Files) *StateBackend { return &StateBackend{files: files} }

func (s *StateBackend) set(ctx context.Context) (*thread.Files, error) {
	if s != nil && s.files != nil {
		return s.files, nil
	}
	if f := thread.FilesFromContext(ctx); f != nil {
		return f, nil
	}
	return nil, ErrNoState
}

func now() time.Time { return time.Now().UTC() }

func opErr(op, p string, err error) error { return fmt.Errorf("%s %s: %w", op, p, err) }

// List implements Backend.
func (s *StateBackend) List(ctx context.Context, path string) ([]FileInfo, error) {
	f, err := s.set(ctx)
	if err != nil {
		return nil, err
	}
	p, err := Clean(path)
	if err != nil {
		return nil, err
	}
	entries := f.List(p)
	out := make([]FileInfo, len(entries))
	for i, e := range entries {
		out[i] = FileInfo{Path: e.Path, IsDir: e.IsDir, Size: e.Size, ModTime: e.ModTime}
	}
	return out, nil
}

// missing returns the error for a path that holds no file: ErrIsDir when
// files lie below it, ErrNotFound otherwise.
func (s *StateBackend) missing(f *thread.Files, op, p string) error {
	if f.IsDir(p) {
		return opErr(op, p, ErrIsDir)
	}
	return opErr(op, p, ErrNotFound)
}

// Read implements Backend.
func (s *StateBackend) Read(ctx context.Context, path string, offset, limit int) (ReadResult, error) {
	f, err := s.set(ctx)
	if err != nil {
		return ReadResult{}, err
	}
	p, err := Clean(path)
	if err != nil {
		return ReadResult{}, err
	}
	d, ok := f.Get(p)
	if !ok {
		return ReadResult{}, s.missing(f, "read", p)
	}
	return stringLines(d.Content, offset, limit)
}

// checkCreatable reports why a file cannot be put at p: p is a directory
// (ErrIsDir) or lies below a file (ErrInvalidPath).
func (s *StateBackend) checkCreatable(f *thread.Files, op, p string) error {
	if f.IsDir(p) {
		return opErr(op, p, ErrIsDir)
	}
	if a, ok := memFileAncestor(func(q string) bool { _, ok := f.Get(q); return ok }, p); ok {
		return opErr(op, p, fmt.Errorf("%w: %s is a file", ErrInvalidPath, a))
	}
	return nil
}

// Write implements Backend.
func (s *StateBackend) Write(ctx context.Context, path, content string) error {
	f, err := s.set(ctx)
	if err != nil {
		return err
	}
	p, err := Clean(path)
	if err != nil {
		return err
	}
	if err := s.checkCreatable(f, "write", p); err != nil {
		if isDirErr(err) {
			return opErr("write", p, fmt.Errorf("%w (a directory)", ErrExists))
		}
		return err
	}
	return f.Update(p, func(_ thread.FileData, ok bool) (thread.FileData, bool, error) {
		if ok {
			return thread.FileData{}, false, opErr("write", p, ErrExists)
		}
		t := now()
		return thread.FileData{Content: content, CreatedAt: t, ModifiedAt: t}, true, nil
	})
}

// Edit implements Backend.
func (s *StateBackend) Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (int, error) {
	f, err := s.set(ctx)
	if err != nil {
		return 0, err
	}
	p, err := Clean(path)
	if err != nil {
		return 0, err
	}
	var n int
	var missing bool
	err = f.Update(p, func(d thread.FileData, ok bool) (thread.FileData, bool, error) {
		if !ok {
			missing = true
			return d, false, nil
		}
		c, count, err := ReplaceIn(d.Content, oldString, newString, replaceAll)
		if err != nil {
			return d, false, opErr("edit", p, err)
		}
		n = count
		d.Content, d.ModifiedAt = c, now()
		return d, true, nil
	})
	if missing {
		return 0, s.missing(f, "edit", p)
	}
	return n, err
}

// Grep implements Backend.
func (s *StateBackend) Grep(ctx context.Context, q GrepQuery) ([]GrepMatch, error) {
	f, err := s.set(ctx)
	if err != nil {
		return nil, err
	}
	p, err := Clean(q.Path)
	if err != nil {
		return nil, err
	}
	return memGrep(ctx, f.Subtree(p), q, p)
}

// Glob implements Backend.
func (s *StateBackend) Glob(ctx context.Context, pattern, path string) ([]FileInfo, error) {
	f, err := s.set(ctx)
	if err != nil {
		return nil, err
	}
	p, err := Clean(path)
	if err != nil {
		return nil, err
	}
	return memGlob(ctx, f.Subtree(p), pattern, p)
}

// Upload implements Backend.
func (s *StateBackend) Upload(ctx context.Context, files []File) []FileResult {
	out := make([]FileResult, len(files))
	f, err := s.set(ctx)
	for i, file := range files {
		out[i].Path = file.Path
		if err != nil {
			out[i].Err = err
			continue
		}
		p, perr := Clean(file.Path)
		if perr != nil {
			out[i].Err = perr
			continue
		}
		if cerr := s.checkCreatable(f, "upload", p); cerr != nil {
			out[i].Err = cerr
			continue
		}
		content := string(file.Content)
		_ = f.Update(p, func(d thread.FileData, ok bool) (thread.FileData, bool, error) {
			t := now()
			if !ok {
				d.CreatedAt = t
			}
			d.Content, d.ModifiedAt = content, t
			return d, true, nil
		})
	}
	return out
}

// Download implements Backend.
func (s *StateBackend) Download(ctx context.Context, paths []string) []FileResult {
	out := make([]FileResult, len(paths))
	f, err := s.set(ctx)
	for i, path := range paths {
		out[i].Path = path
		if err != nil {
			out[i].Err = err
			continue
		}
		p, perr := Clean(path)
		if perr != nil {
			out[i].Err = perr
			continue
		}
		d, ok := f.Get(p)
		if !ok {
			out[i].Err = s.missing(f, "download", p)
			continue
		}
		out[i].Content = []byte(d.Content)
	}
	return out
}
