package backend

import "context"

// Scoped returns a Backend whose every call goes to the backend pick
// chooses from the call's context: one folder per thread, say, picked by
// the run's thread id (the CLI's /conversation_history/). An error from
// pick is the call's error (for uploads and downloads, each file's).
// Appends go to the chosen backend's Append where it has one.
func Scoped(pick func(context.Context) (Backend, error)) Backend {
	return scoped(pick)
}

type scoped func(context.Context) (Backend, error)

var (
	_ Backend  = scoped(nil)
	_ Appender = scoped(nil)
)

// List implements Backend.
func (s scoped) List(ctx context.Context, path string) ([]FileInfo, error) {
	b, err := s(ctx)
	if err != nil {
		return nil, err
	}
	return b.List(ctx, path)
}

// Read implements Backend.
func (s scoped) Read(ctx context.Context, path string, offset, limit int) (ReadResult, error) {
	b, err := s(ctx)
	if err != nil {
		return ReadResult{}, err
	}
	return b.Read(ctx, path, offset, limit)
}

// Write implements Backend.
func (s scoped) Write(ctx context.Context, path, content string) error {
	b, err := s(ctx)
	if err != nil {
		return err
	}
	return b.Write(ctx, path, content)
}

// Edit implements Backend.
func (s scoped) Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (int, error) {
	b, err := s(ctx)
	if err != nil {
		return 0, err
	}
	return b.Edit(ctx, path, oldString, newString, replaceAll)
}

// Grep implements Backend.
func (s scoped) Grep(ctx context.Context, q GrepQuery) ([]GrepMatch, error) {
	b, err := s(ctx)
	if err != nil {
		return nil, err
	}
	return b.Grep(ctx, q)
}

// Glob implements Backend.
func (s scoped) Glob(ctx context.Context, pattern, path string) ([]FileInfo, error) {
	b, err := s(ctx)
	if err != nil {
		return nil, err
	}
	return b.Glob(ctx, pattern, path)
}

// Upload implements Backend.
func (s scoped) Upload(ctx context.Context, files []File) []FileResult {
	b, err := s(ctx)
	if err != nil {
		out := make([]FileResult, len(files))
		for i, f := range files {
			out[i] = FileResult{Path: f.Path, Err: err}
		}
		return out
	}
	return b.Upload(ctx, files)
}

// Download implements Backend.
func (s scoped) Download(ctx context.Context, paths []string) []FileResult {
	b, err := s(ctx)
	if err != nil {
		out := make([]FileResult, len(paths))
		for i, p := range paths {
			out[i] = FileResult{Path: p, Err: err}
		}
		return out
	}
	return b.Download(ctx, paths)
}

// Append implements Appender.
func (s scoped) Append(ctx context.Context, path, text string) error {
	b, err := s(ctx)
	if err != nil {
		return err
	}
	return Append(ctx, b, path, text)
}
