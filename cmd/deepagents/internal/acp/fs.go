package acp

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// DefaultFSTimeout is how long a file system call waits for the client's
// answer when Config.FSTimeout is zero: an editor reads and writes a
// buffer in milliseconds, so a client that takes longer has stopped
// answering, and the tool fails rather than hold the run.
const DefaultFSTimeout = time.Minute

// ErrNotOffered is the error of a file system call the client did not
// offer in its capabilities.
var ErrNotOffered = errors.New("the client does not offer it")

// ClientFS is the client's file system as one session uses it: the text of
// the files the editor has open, its unsaved changes included
// (fs/read_text_file), and writes that go through the editor, which shows
// them and saves them (fs/write_text_file). It checks no path: the caller
// gives it absolute host paths it has checked, under the session's
// folder. Its methods are safe for concurrent use, and each call waits at
// most the configured time (Config.FSTimeout) for the client's answer.
type ClientFS struct {
	conn        *sdk.AgentSideConnection
	session     sdk.SessionId
	read, write bool
	timeout     time.Duration
}

// CanRead reports whether the client offers fs/read_text_file.
func (c *ClientFS) CanRead() bool { return c.read }

// CanWrite reports whether the client offers fs/write_text_file.
func (c *ClientFS) CanWrite() bool { return c.write }

// ReadTextFile returns the whole text of the file at path (absolute) as
// the editor has it. An error of the client, its silence past the time
// allowed, or ctx ending is an error that says so.
func (c *ClientFS) ReadTextFile(ctx context.Context, path string) (string, error) {
	const method = "fs/read_text_file"
	if !c.read {
		return "", fmt.Errorf("%s: %w", method, ErrNotOffered)
	}
	call, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.conn.ReadTextFile(call, sdk.ReadTextFileRequest{SessionId: c.session, Path: path})
	if err != nil {
		return "", c.err(ctx, call, method, err)
	}
	return resp.Content, nil
}

// WriteTextFile gives the file at path (absolute) the text content
// through the editor. Its errors are ReadTextFile's.
func (c *ClientFS) WriteTextFile(ctx context.Context, path, content string) error {
	const method = "fs/write_text_file"
	if !c.write {
		return fmt.Errorf("%s: %w", method, ErrNotOffered)
	}
	call, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if _, err := c.conn.WriteTextFile(call, sdk.WriteTextFileRequest{SessionId: c.session, Path: path, Content: content}); err != nil {
		return c.err(ctx, call, method, err)
	}
	return nil
}

// err is the error of a call of method that failed with err, parent
// being the caller's context and ctx the call's (parent's, with the time
// allowed): the SDK reports a context that ended as a JSON-RPC error,
// which no longer matches the context's.
func (c *ClientFS) err(parent, ctx context.Context, method string, err error) error {
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("%s: %w", method, parent.Err())
	case ctx.Err() != nil:
		return fmt.Errorf("the editor did not answer %s within %v: %w", method, c.timeout, ctx.Err())
	}
	return fmt.Errorf("the editor failed %s: %w", method, err)
}
