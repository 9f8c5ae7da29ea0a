package backend

import (
	"context"
	"errors"
)

// Appender is a Backend that can add text to the end of a file without
// rewriting it. Logs that only grow (the conversation history that
// summarization keeps, say) use it, so that the State backend's checkpoints
// store each addition once instead of the whole file again.
type Appender interface {
	// Append adds text to the end of the file at path, creating the file
	// when it does not exist.
	Append(ctx context.Context, path, text string) error
}

// Append adds text to the end of the file at path in b, creating the file
// when it does not exist. It uses b's own Append when b is an Appender, and
// otherwise reads the file and uploads it whole with text added.
func Append(ctx context.Context, b Backend, path, text string) error {
	if a, ok := b.(Appender); ok {
		return a.Append(ctx, path, text)
	}
	var prev []byte
	switch got := b.Download(ctx, []string{path}); {
	case got[0].Err == nil:
		prev = got[0].Content
	case !errors.Is(got[0].Err, ErrNotFound):
		return got[0].Err
	}
	res := b.Upload(ctx, []File{{Path: path, Content: append(prev, text...)}})
	return res[0].Err
}

// Append implements Appender.
func (s *StateBackend) Append(ctx context.Context, path, text string) error {
	f, err := s.set(ctx)
	if err != nil {
		return err
	}
	p, err := Clean(path)
	if err != nil {
		return err
	}
	if _, ok := f.Get(p); !ok {
		if err := s.checkCreatable(f, "append", p); err != nil {
			return err
		}
	}
	f.Append(p, text, now())
	return nil
}

// Append implements Appender: the path's route appends, natively when its
// backend can.
func (c *Composite) Append(ctx context.Context, path, text string) error {
	p, err := Clean(path)
	if err != nil {
		return err
	}
	if r := c.lookup(p); r != nil {
		return Append(ctx, r.b, r.inner(p), text)
	}
	return Append(ctx, c.def, p, text)
}

// Append implements Appender.
func (u *underView) Append(ctx context.Context, p, text string) error {
	return Append(ctx, u.b, u.in(p), text)
}

// Append implements Appender, under the rules for writing.
func (pol *Policy) Append(ctx context.Context, path, text string) error {
	p, err := pol.check("append", path, AccessWrite)
	if err != nil {
		return err
	}
	return Append(ctx, pol.inner, p, text)
}

var (
	_ Appender = (*StateBackend)(nil)
	_ Appender = (*Composite)(nil)
	_ Appender = (*underView)(nil)
	_ Appender = (*Policy)(nil)
)
