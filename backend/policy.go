package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Access is a set of file operations a policy Rule covers.
type Access uint8

// Accesses.
const (
	// AccessRead covers List, Read, Grep, Glob and Download.
	AccessRead Access = 1 << iota
	// AccessWrite covers Write, Edit and Upload. (Edit needs AccessRead
	// too: its result tells whether a string is in the file.)
	AccessWrite
	// AccessAll covers every operation.
	AccessAll = AccessRead | AccessWrite
)

// String names the access: "read", "write" or "read and write".
func (a Access) String() string {
	switch a {
	case AccessRead:
		return "read"
	case AccessWrite:
		return "write"
	case AccessAll:
		return "read and write"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// Rule allows or denies some operations on some paths.
type Rule struct {
	// Path selects the paths. Without glob characters it is a prefix by
	// whole elements: "/secrets" and "/secrets/" both cover /secrets and
	// everything below it, but not /secrets2. With glob characters
	// (* ? [ {) it is a doublestar pattern matched against the whole
	// virtual path and each of its parent directories: "**/.env" covers
	// every .env file, "/build/**" everything under /build.
	Path string
	// Access is the operations the rule covers.
	Access Access
	// Allow allows the operations; false denies them.
	Allow bool
}

// Allow returns a rule allowing access to path.
func Allow(access Access, path string) Rule { return Rule{Path: path, Access: access, Allow: true} }

// Deny returns a rule denying access to path.
func Deny(access Access, path string) Rule { return Rule{Path: path, Access: access} }

// Policy wraps a Backend and allows or denies each operation by its path,
// as the seeds' policy hooks do, around any backend. Rules are tried in
// order; the first one that covers the operation and matches the path
// decides. An operation no rule decides is allowed, so a final
// Deny(AccessAll, "/") turns the list into an allow-list.
//
// A denied operation fails with an error wrapping ErrPermission (in uploads
// and downloads, that file's result). Listings, globs and greps leave out
// the paths the policy denies reading, so their names and contents do not
// leak; a listing, glob or grep of a denied directory itself is refused.
//
// Policy is never a Sandbox, even around one: a shell command can reach
// any file whatever the rules say, so offering one would make the policy
// meaningless. Give the model a shell on purpose, not through a policy.
type Policy struct {
	inner Backend
	rules []policyRule
}

var _ Backend = (*Policy)(nil)

type policyRule struct {
	Rule
	prefix string // clean prefix; "" for a glob
	glob   string // pattern without the leading "/"
}

// NewPolicy returns a Policy applying rules to inner.
func NewPolicy(inner Backend, rules ...Rule) (*Policy, error) {
	if inner == nil {
		return nil, errors.New("policy backend: nil inner backend")
	}
	p := &Policy{inner: inner}
	for _, r := range rules {
		if r.Access&AccessAll == 0 || r.Access&^AccessAll != 0 {
			return nil, fmt.Errorf("policy backend: rule %q: invalid access %d", r.Path, r.Access)
		}
		pr := policyRule{Rule: r}
		if strings.ContainsAny(r.Path, "*?[{") {
			if err := validGlob(r.Path); err != nil {
				return nil, fmt.Errorf("policy backend: rule %q: %w", r.Path, err)
			}
			pr.glob = strings.TrimLeft(r.Path, "/")
		} else {
			c, err := Clean(r.Path)
			if err != nil {
				return nil, fmt.Errorf("policy backend: rule %q: %w", r.Path, err)
			}
			pr.prefix = c
		}
		p.rules = append(p.rules, pr)
	}
	return p, nil
}

func (r *policyRule) matches(p string) bool {
	if r.glob == "" {
		return under(p, r.prefix)
	}
	for q := p; ; q = parentDir(q) {
		if doublestar.MatchUnvalidated(r.glob, q[1:]) {
			return true
		}
		if q == "/" {
			return false
		}
	}
}

// allowed reports whether every access in a is allowed on the clean path p.
func (pol *Policy) allowed(p string, a Access) bool {
	for _, bit := range []Access{AccessRead, AccessWrite} {
		if a&bit == 0 {
			continue
		}
		for i := range pol.rules {
			r := &pol.rules[i]
			if r.Access&bit != 0 && r.matches(p) {
				if !r.Allow {
					return false
				}
				break
			}
		}
	}
	return true
}

// check cleans path and checks access to it.
func (pol *Policy) check(op, path string, a Access) (string, error) {
	p, err := Clean(path)
	if err != nil {
		return "", err
	}
	if !pol.allowed(p, a) {
		return "", fmt.Errorf("%s %s: %w: the policy denies %s access", op, p, ErrPermission, a)
	}
	return p, nil
}

func (pol *Policy) readable(p string) bool { return pol.allowed(p, AccessRead) }

// keepEmpty returns "" for an empty path argument (which some backends
// give a meaning of their own) and the clean path otherwise.
func keepEmpty(arg, clean string) string {
	if arg == "" {
		return ""
	}
	return clean
}

// List implements Backend.
func (pol *Policy) List(ctx context.Context, path string) ([]FileInfo, error) {
	return pol.list(ctx, path, false)
}

// ListNames implements NameLister.
func (pol *Policy) ListNames(ctx context.Context, path string) ([]FileInfo, error) {
	return pol.list(ctx, path, true)
}

func (pol *Policy) list(ctx context.Context, path string, names bool) ([]FileInfo, error) {
	p, err := pol.check("list", path, AccessRead)
	if err != nil {
		return nil, err
	}
	ls, err := listWith(ctx, pol.inner, keepEmpty(path, p), names)
	return slices.DeleteFunc(ls, func(f FileInfo) bool { return !pol.readable(f.Path) }), err
}

// Read implements Backend.
func (pol *Policy) Read(ctx context.Context, path string, offset, limit int) (ReadResult, error) {
	p, err := pol.check("read", path, AccessRead)
	if err != nil {
		return ReadResult{}, err
	}
	return pol.inner.Read(ctx, p, offset, limit)
}

// Write implements Backend.
func (pol *Policy) Write(ctx context.Context, path, content string) error {
	p, err := pol.check("write", path, AccessWrite)
	if err != nil {
		return err
	}
	return pol.inner.Write(ctx, p, content)
}

// Edit implements Backend.
func (pol *Policy) Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (int, error) {
	p, err := pol.check("edit", path, AccessAll)
	if err != nil {
		return 0, err
	}
	return pol.inner.Edit(ctx, p, oldString, newString, replaceAll)
}

// Grep implements Backend.
func (pol *Policy) Grep(ctx context.Context, q GrepQuery) ([]GrepMatch, error) {
	p, err := pol.check("grep", q.Path, AccessRead)
	if err != nil {
		return nil, err
	}
	q.Path = keepEmpty(q.Path, p)
	ms, err := pol.inner.Grep(ctx, q)
	return slices.DeleteFunc(ms, func(m GrepMatch) bool { return !pol.readable(m.Path) }), err
}

// Glob implements Backend.
func (pol *Policy) Glob(ctx context.Context, pattern, path string) ([]FileInfo, error) {
	p, err := pol.check("glob", path, AccessRead)
	if err != nil {
		return nil, err
	}
	fs, err := pol.inner.Glob(ctx, pattern, keepEmpty(path, p))
	return slices.DeleteFunc(fs, func(f FileInfo) bool { return !pol.readable(f.Path) }), err
}

// Upload implements Backend.
func (pol *Policy) Upload(ctx context.Context, files []File) []FileResult {
	out := make([]FileResult, len(files))
	var idx []int
	var pass []File
	for i, f := range files {
		out[i].Path = f.Path
		p, err := pol.check("upload", f.Path, AccessWrite)
		if err != nil {
			out[i].Err = err
			continue
		}
		idx = append(idx, i)
		pass = append(pass, File{Path: p, Content: f.Content})
	}
	if len(pass) > 0 {
		res := pol.inner.Upload(ctx, pass)
		for j, i := range idx {
			if j < len(res) {
				out[i].Err = res[j].Err
			} else {
				out[i].Err = errNoResult
			}
		}
	}
	return out
}

// Download implements Backend.
func (pol *Policy) Download(ctx context.Context, paths []string) []FileResult {
	out := make([]FileResult, len(paths))
	var idx []int
	var pass []string
	for i, path := range paths {
		out[i].Path = path
		p, err := pol.check("download", path, AccessRead)
		if err != nil {
			out[i].Err = err
			continue
		}
		idx = append(idx, i)
		pass = append(pass, p)
	}
	if len(pass) > 0 {
		res := pol.inner.Download(ctx, pass)
		for j, i := range idx {
			if j < len(res) {
				out[i].Content, out[i].Err = res[j].Content, res[j].Err
			} else {
				out[i].Err = errNoResult
			}
		}
	}
	return out
}
