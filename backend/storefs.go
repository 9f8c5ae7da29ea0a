package backend

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/thread"
)

// DefaultStoreNamespace is the namespace a Store backend uses when it is
// given no namespace function.
func DefaultStoreNamespace(context.Context) []string { return []string{"filesystem"} }

// StoreBackend is a Backend whose files are items of a cross-thread store.StoreBackend,
// so they outlive the thread (long-term memory under /memories/, for
// instance). Each file is one item in the namespace the namespace function
// returns for the call's context, keyed by its virtual path, with the value
//
//	{"content": "...", "encoding": "utf-8", "created_at": "...", "modified_at": "..."}
//
// Content that is not valid UTF-8 is stored base64-encoded with "encoding":
// "base64". Items written by other tools with "content" as a list of lines
// are read too.
//
// Edits and create-only writes are atomic within one process; the StoreBackend
// interface has no compare-and-swap, so two processes editing one file at
// the same moment may lose an update.
type StoreBackend struct {
	st    store.Store
	ns    func(context.Context) []string
	locks pathLocks
}

var _ Backend = (*StoreBackend)(nil)

// NewStoreBackend returns a Store backend over s. namespace picks the namespace for
// a call (for example an assistant id plus "filesystem"); nil means
// DefaultStoreNamespace.
func NewStoreBackend(s store.Store, namespace func(context.Context) []string) *StoreBackend {
	if namespace == nil {
		namespace = DefaultStoreNamespace
	}
	return &StoreBackend{st: s, ns: namespace}
}

const (
	storeTimeLayout = time.RFC3339Nano
	storePage       = 1000
)

func encodeFile(d thread.FileData) map[string]any {
	v := map[string]any{
		"content":     d.Content,
		"encoding":    "utf-8",
		"created_at":  d.CreatedAt.Format(storeTimeLayout),
		"modified_at": d.ModifiedAt.Format(storeTimeLayout),
	}
	if !utf8.ValidString(d.Content) {
		v["content"] = base64.StdEncoding.EncodeToString([]byte(d.Content))
		v["encoding"] = "base64"
	}
	return v
}

func decodeFile(it *store.Item) (thread.FileData, error) {
	d := thread.FileData{CreatedAt: it.CreatedAt, ModifiedAt: it.UpdatedAt}
	switch c := it.Value["content"].(type) {
	case string:
		d.Content = c
	case []any:
		lines := make([]string, len(c))
		for i, l := range c {
			s, ok := l.(string)
			if !ok {
				return thread.FileData{}, fmt.Errorf("store item %q: content line %d is %T, not a string", it.Key, i, l)
			}
			lines[i] = s
		}
		d.Content = strings.Join(lines, "\n")
	default:
		return thread.FileData{}, fmt.Errorf("store item %q: content is %T, not a string", it.Key, c)
	}
	if enc, _ := it.Value["encoding"].(string); enc == "base64" {
		b, err := base64.StdEncoding.DecodeString(d.Content)
		if err != nil {
			return thread.FileData{}, fmt.Errorf("store item %q: %w", it.Key, err)
		}
		d.Content = string(b)
	}
	for k, t := range map[string]*time.Time{"created_at": &d.CreatedAt, "modified_at": &d.ModifiedAt} {
		if s, ok := it.Value[k].(string); ok {
			if v, err := time.Parse(storeTimeLayout, s); err == nil {
				*t = v
			}
		}
	}
	return d, nil
}

// get returns the file at p, or ok false.
func (s *StoreBackend) get(ctx context.Context, ns []string, p string) (thread.FileData, bool, error) {
	it, err := s.st.Get(ctx, ns, p)
	if errors.Is(err, store.ErrNotFound) {
		return thread.FileData{}, false, nil
	}
	if err != nil {
		return thread.FileData{}, false, err
	}
	d, err := decodeFile(it)
	return d, err == nil, err
}

// all returns every file of the namespace.
func (s *StoreBackend) all(ctx context.Context, ns []string) (map[string]thread.FileData, error) {
	out := map[string]thread.FileData{}
	for off := 0; ; off += storePage {
		items, err := s.st.Search(ctx, ns, store.SearchOptions{Limit: storePage, Offset: off})
		if err != nil {
			return nil, err
		}
		for i := range items {
			it := &items[i]
			if !slices.Equal(it.Namespace, ns) || !strings.HasPrefix(it.Key, "/") {
				continue // a sub-namespace, or not a file
			}
			if d, err := decodeFile(it); err == nil {
				out[it.Key] = d
			}
		}
		if len(items) < storePage {
			return out, nil
		}
	}
}

// missing returns ErrIsDir when files lie below p, else ErrNotFound.
func (s *StoreBackend) missing(ctx context.Context, ns []string, op, p string) error {
	all, err := s.all(ctx, ns)
	if err != nil {
		return err
	}
	if memIsDir(all, p) {
		return opErr(op, p, ErrIsDir)
	}
	return opErr(op, p, ErrNotFound)
}

// List implements Backend.
func (s *StoreBackend) List(ctx context.Context, path string) ([]FileInfo, error) {
	p, err := Clean(path)
	if err != nil {
		return nil, err
	}
	all, err := s.all(ctx, s.ns(ctx))
	if err != nil {
		return nil, err
	}
	return memList(all, p), nil
}

// Read implements Backend.
func (s *StoreBackend) Read(ctx context.Context, path string, offset, limit int) (ReadResult, error) {
	p, err := Clean(path)
	if err != nil {
		return ReadResult{}, err
	}
	ns := s.ns(ctx)
	d, ok, err := s.get(ctx, ns, p)
	if err != nil {
		return ReadResult{}, err
	}
	if !ok {
		return ReadResult{}, s.missing(ctx, ns, "read", p)
	}
	return stringLines(d.Content, offset, limit)
}

// put stores content at p after checking that p can hold a file. With
// create set an existing file is ErrExists; otherwise it is replaced and
// keeps its creation time. The caller holds p's lock.
func (s *StoreBackend) put(ctx context.Context, ns []string, op, p, content string, create bool) error {
	if p == "/" {
		return opErr(op, p, ErrIsDir)
	}
	all, err := s.all(ctx, ns)
	if err != nil {
		return err
	}
	old, exists := all[p]
	if !exists {
		// The listing may skip an undecodable item: ask directly.
		if _, err := s.st.Get(ctx, ns, p); err == nil {
			exists = true
		}
	}
	switch {
	case exists && create:
		return opErr(op, p, ErrExists)
	case memIsDir(all, p):
		if create {
			return opErr(op, p, fmt.Errorf("%w (a directory)", ErrExists))
		}
		return opErr(op, p, ErrIsDir)
	}
	if a, ok := memFileAncestor(func(q string) bool { _, ok := all[q]; return ok }, p); ok {
		return opErr(op, p, fmt.Errorf("%w: %s is a file", ErrInvalidPath, a))
	}
	t := now()
	d := thread.FileData{Content: content, CreatedAt: t, ModifiedAt: t}
	if exists && !old.CreatedAt.IsZero() {
		d.CreatedAt = old.CreatedAt
	}
	return s.st.Put(ctx, ns, p, encodeFile(d))
}

// Write implements Backend.
func (s *StoreBackend) Write(ctx context.Context, path, content string) error {
	p, err := Clean(path)
	if err != nil {
		return err
	}
	defer s.locks.lock(p)()
	return s.put(ctx, s.ns(ctx), "write", p, content, true)
}

// Edit implements Backend.
func (s *StoreBackend) Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (int, error) {
	p, err := Clean(path)
	if err != nil {
		return 0, err
	}
	ns := s.ns(ctx)
	defer s.locks.lock(p)()
	d, ok, err := s.get(ctx, ns, p)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, s.missing(ctx, ns, "edit", p)
	}
	c, n, err := ReplaceIn(d.Content, oldString, newString, replaceAll)
	if err != nil {
		return 0, opErr("edit", p, err)
	}
	d.Content, d.ModifiedAt = c, now()
	if err := s.st.Put(ctx, ns, p, encodeFile(d)); err != nil {
		return 0, err
	}
	return n, nil
}

// Grep implements Backend.
func (s *StoreBackend) Grep(ctx context.Context, q GrepQuery) ([]GrepMatch, error) {
	p, err := Clean(q.Path)
	if err != nil {
		return nil, err
	}
	all, err := s.all(ctx, s.ns(ctx))
	if err != nil {
		return nil, err
	}
	return memGrep(ctx, all, q, p)
}

// Glob implements Backend.
func (s *StoreBackend) Glob(ctx context.Context, pattern, path string) ([]FileInfo, error) {
	p, err := Clean(path)
	if err != nil {
		return nil, err
	}
	all, err := s.all(ctx, s.ns(ctx))
	if err != nil {
		return nil, err
	}
	return memGlob(ctx, all, pattern, p)
}

// Upload implements Backend.
func (s *StoreBackend) Upload(ctx context.Context, files []File) []FileResult {
	out := make([]FileResult, len(files))
	ns := s.ns(ctx)
	for i, f := range files {
		out[i].Path = f.Path
		p, err := Clean(f.Path)
		if err != nil {
			out[i].Err = err
			continue
		}
		unlock := s.locks.lock(p)
		out[i].Err = s.put(ctx, ns, "upload", p, string(f.Content), false)
		unlock()
	}
	return out
}

// Download implements Backend.
func (s *StoreBackend) Download(ctx context.Context, paths []string) []FileResult {
	out := make([]FileResult, len(paths))
	ns := s.ns(ctx)
	for i, path := range paths {
		out[i].Path = path
		p, err := Clean(path)
		if err != nil {
			out[i].Err = err
			continue
		}
		d, ok, err := s.get(ctx, ns, p)
		switch {
		case err != nil:
			out[i].Err = err
		case !ok:
			out[i].Err = s.missing(ctx, ns, "download", p)
		default:
			out[i].Content = []byte(d.Content)
		}
	}
	return out
}
