package filesystem_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/tool"
)

// TestMultiEditOffered: multi_edit is offered only when asked for, and
// declares that it edits files, which is how rules, plan mode, rewind,
// approvals and the editors know it.
func TestMultiEditOffered(t *testing.T) {
	for _, on := range []bool{false, true} {
		tools, _, _ := fsTools(t, newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil), MultiEdit: on}), nil)
		tl, ok := tools[filesystem.MultiEditTool]
		if ok != on {
			t.Fatalf("MultiEdit %v: multi_edit offered %v", on, ok)
		}
		if on && tool.TraitsOf(tl) != (tool.Traits{EditsFiles: true}) {
			t.Errorf("multi_edit's traits %+v", tool.TraitsOf(tl))
		}
	}
	if tr, ok := filesystem.ToolTraits(filesystem.MultiEditTool); !ok || !tr.EditsFiles {
		t.Errorf("ToolTraits(multi_edit) = %+v, %v", tr, ok)
	}
}

// TestMultiEdit: the edits apply in order, each to what the ones before
// left; one that fails leaves the file as it was, and says which.
func TestMultiEdit(t *testing.T) {
	const src = "package main\n\nfunc a() { x := 1 }\nfunc b() { x := 1 }\n"
	tests := []struct {
		name, content, args string
		want                string // the file after the call
		result              string // in the result, or in the error when wantErr
		wantErr             bool
	}{
		{name: "in order", content: src,
			args:   `[{"old_string":"func a()","new_string":"func first()"},{"old_string":"func first() { x := 1 }","new_string":"func first() { x := 2 }"}]`,
			want:   "package main\n\nfunc first() { x := 2 }\nfunc b() { x := 1 }\n",
			result: "Successfully made 2 edit(s), 2 replacement(s), in '/f.go'"},
		{name: "replace_all", content: src,
			args:   `[{"old_string":"x := 1","new_string":"y := 1","replace_all":true},{"old_string":"package main","new_string":"package lib"}]`,
			want:   "package lib\n\nfunc a() { y := 1 }\nfunc b() { y := 1 }\n",
			result: "2 edit(s), 3 replacement(s)"},
		{name: "a failing edit makes none", content: src,
			args:    `[{"old_string":"func a()","new_string":"func first()"},{"old_string":"func zzz()","new_string":"func c()"}]`,
			want:    src,
			result:  "Edit 2 of 2 failed, so none was made. Error: String not found in file: 'func zzz()'",
			wantErr: true},
		{name: "an ambiguous edit makes none", content: src,
			args:    `[{"old_string":"x := 1","new_string":"x := 3"}]`,
			want:    src,
			result:  "Edit 1 of 1 failed, so none was made. Error: String 'x := 1' appears 2 times in file.",
			wantErr: true},
		{name: "an edit that undoes the one before", content: src,
			args:   `[{"old_string":"func a()","new_string":"func tmp()"},{"old_string":"func tmp()","new_string":"func a()"}]`,
			want:   src,
			result: "2 edit(s), 2 replacement(s)"},
		{name: "CRLF kept", content: "a\r\nb\r\nc\r\n",
			args:   `[{"old_string":"a\nb","new_string":"A\nB"},{"old_string":"c","new_string":"C"}]`,
			want:   "A\r\nB\r\nC\r\n",
			result: "2 edit(s)"},
		{name: "no edits", content: src, args: `[]`, want: src, result: `field "edits": has 0 items, want at least 1`, wantErr: true},
		{name: "too many edits", content: src, args: "[" + strings.TrimSuffix(strings.Repeat(`{"old_string":"a","new_string":"b"},`, 101), ",") + "]",
			want: src, result: `field "edits": has 101 items, want at most 100`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools, ctx, files := fsTools(t, newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil), MultiEdit: true}), map[string]string{"/f.go": tt.content})
			out, isErr := callTool(ctx, tools[filesystem.MultiEditTool], `{"file_path":"/f.go","edits":`+tt.args+`}`)
			if isErr != tt.wantErr || !strings.Contains(out, tt.result) {
				t.Errorf("multi_edit = %q (error %v), want %q (error %v)", out, isErr, tt.result, tt.wantErr)
			}
			if got, _ := files.Get("/f.go"); got.Content != tt.want {
				t.Errorf("the file is %q, want %q", got.Content, tt.want)
			}
		})
	}
	t.Run("a missing file", func(t *testing.T) {
		tools, ctx, _ := fsTools(t, newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil), MultiEdit: true}), nil)
		out, isErr := callTool(ctx, tools[filesystem.MultiEditTool], `{"file_path":"/nope.go","edits":[{"old_string":"a","new_string":"b"}]}`)
		if !isErr || !strings.Contains(out, "Error: File '/nope.go' not found") {
			t.Errorf("multi_edit of a missing file = %q (error %v)", out, isErr)
		}
	})
}

// changing changes the file after it is read, as another writer would
// between multi_edit's read and its write.
type changing struct {
	backend.Backend
	path, content string
}

func (c changing) Download(ctx context.Context, paths []string) []backend.FileResult {
	got := c.Backend.Download(ctx, paths)
	c.Backend.Edit(ctx, c.path, "old", c.content, false) //nolint:errcheck // the test checks the file
	return got
}

// TestMultiEditOnDisk: on the host's files, through the real backend;
// and a file changed meanwhile keeps the other writer's change.
func TestMultiEditOnDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("one old\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fsb, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tools, ctx, _ := fsTools(t, newFS(t, filesystem.Config{Backend: fsb, MultiEdit: true}), nil)
	if out, isErr := callTool(ctx, tools[filesystem.MultiEditTool], `{"file_path":"/f.txt","edits":[{"old_string":"one","new_string":"1"},{"old_string":"two","new_string":"2"}]}`); isErr {
		t.Fatal(out)
	}
	if b, _ := os.ReadFile(path); string(b) != "1 old\n2\n" {
		t.Fatalf("on disk: %q", b)
	}

	tools, ctx, _ = fsTools(t, newFS(t, filesystem.Config{Backend: changing{fsb, "/f.txt", "theirs"}, MultiEdit: true}), nil)
	out, isErr := callTool(ctx, tools[filesystem.MultiEditTool], `{"file_path":"/f.txt","edits":[{"old_string":"1","new_string":"one"}]}`)
	if !isErr || !strings.Contains(out, "changed while the edits were worked out, so none was made") {
		t.Errorf("a file changed meanwhile: %q (error %v)", out, isErr)
	}
	if b, _ := os.ReadFile(path); string(b) != "1 theirs\n2\n" {
		t.Errorf("the other writer's change was lost: %q", b)
	}
}

// TestToolNamesHaveTraits: every tool the middleware may offer is named
// once in ToolNames, with its traits, and offered in that order.
func TestToolNamesHaveTraits(t *testing.T) {
	names := filesystem.ToolNames()
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := filesystem.ToolTraits(n); !ok || seen[n] {
			t.Errorf("%s: traits %v, named twice %v", n, ok, seen[n])
		}
		seen[n] = true
	}
	sb, err := sandbox.NewLocalShell(t.TempDir(), sandbox.LocalShellOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var offered []string
	for _, tl := range newFS(t, filesystem.Config{Backend: sb, MultiEdit: true}).Tools() {
		offered = append(offered, tl.Spec().Name)
	}
	if strings.Join(offered, ",") != strings.Join(names, ",") {
		t.Errorf("offered %v, ToolNames %v", offered, names)
	}
}
