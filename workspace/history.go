package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
)

// threadHistory is /conversation_history/ in Config.HistoryDir: one
// folder per top-level thread, the one the calling run belongs to, so that
// a model sees its own thread's history and its subagents' (whose threads
// are the parent's, PARENT/CALL_ID, or run within its run) and never
// another thread's. A call made outside a run has no thread and is
// refused.
type threadHistory struct {
	// Backend sends each call to the calling run's folder (scope).
	backend.Backend
	dir string // the history folder on the host
	fs  *backend.FilesystemBackend
	// moved records the folders whose history files of older versions
	// (DIR/THREAD.md, shared by every thread) were moved in.
	moved sync.Map
}

var _ backend.Appender = (*threadHistory)(nil)

// newThreadHistory returns the history kept in dir, through fs (a
// FilesystemBackend rooted there).
func newThreadHistory(dir string, fs *backend.FilesystemBackend) *threadHistory {
	h := &threadHistory{dir: dir, fs: fs}
	h.Backend = backend.Scoped(h.scope)
	return h
}

// historyThreadKey is the context key of the top-level thread of a run.
type historyThreadKey struct{}

// historyScope pins the conversation history of a run, and of every run
// it starts (subagents, background tasks), to the run's thread: the
// outermost run sets it, nested runs keep it.
type historyScope struct{}

// Name implements agent.Middleware.
func (historyScope) Name() string { return "workspace.history_scope" }

// WrapRun implements agent.RunWrapper.
func (historyScope) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	if _, ok := ctx.Value(historyThreadKey{}).(string); !ok && req.ThreadID != "" {
		ctx = context.WithValue(ctx, historyThreadKey{}, req.ThreadID)
	}
	return next(ctx, req)
}

// errNoThread refuses history access outside a run.
var errNoThread = fmt.Errorf("conversation history: %w: no thread to read the history of", backend.ErrPermission)

// historyThread is the top-level thread whose history the calling run may
// see: the one historyScope pinned, else the run's own thread's root.
func historyThread(ctx context.Context) string {
	if id, ok := ctx.Value(historyThreadKey{}).(string); ok {
		return rootThread(id)
	}
	if rt := agent.RuntimeFromContext(ctx); rt != nil {
		return rootThread(rt.ThreadID())
	}
	return ""
}

// rootThread is the top-level thread of id (PARENT of PARENT/CALL_ID).
func rootThread(id string) string {
	root, _, _ := strings.Cut(id, "/")
	return root
}

// historyFolder names the folder of a top-level thread: the id itself
// when it is a plain name, else "=" and a hash of it, so that two ids
// never share a folder ("=" is not in plain names).
func historyFolder(thread string) string {
	plain := thread != "" && len(thread) <= 128 && !strings.ContainsFunc(thread, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	})
	if plain {
		return thread
	}
	sum := sha256.Sum256([]byte(thread))
	return "=" + hex.EncodeToString(sum[:16])
}

// scope returns the history of the calling run's thread.
func (h *threadHistory) scope(ctx context.Context) (backend.Backend, error) {
	thread := historyThread(ctx)
	if thread == "" {
		return nil, errNoThread
	}
	folder := historyFolder(thread)
	if _, done := h.moved.LoadOrStore(folder, true); !done && folder == thread {
		h.adopt(folder)
	}
	return backend.Under("/"+folder, h.fs), nil
}

// adopt moves the history file an older version kept for the plain
// thread id folder at the top of the history folder into its own folder.
func (h *threadHistory) adopt(folder string) {
	old := filepath.Join(h.dir, folder+".md")
	if _, err := os.Lstat(old); err != nil {
		return
	}
	dst := filepath.Join(h.dir, folder, folder+".md")
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	if os.MkdirAll(filepath.Dir(dst), 0o700) == nil {
		_ = os.Rename(old, dst)
	}
}

// RemoveHistory deletes the conversation history Config.HistoryDir dir
// keeps for the top-level thread id (its folder, and the file an older
// version may have kept for it), as deleting the thread should. A
// subagent's thread (PARENT/CALL_ID) has none of its own, and an empty dir
// keeps none: both remove nothing.
func RemoveHistory(dir, id string) error {
	if dir == "" || strings.Contains(id, "/") {
		return nil
	}
	if err := os.RemoveAll(filepath.Join(dir, historyFolder(id))); err != nil {
		return err
	}
	if historyFolder(id) == id {
		if err := os.Remove(filepath.Join(dir, id+".md")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Append implements backend.Appender: summarization appends to the history
// on disk instead of rewriting it.
func (h *threadHistory) Append(ctx context.Context, path, text string) error {
	return backend.Append(ctx, h.Backend, path, text)
}
