package tui

import (
	"charm.land/lipgloss/v2"
	"github.com/deepagents-go/deepagents"

	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/internal/golden"
)

// Diffs as approvals and results show them, with line numbers and three
// lines of context (testdata/diff/NAME.golden; go test -update rewrites
// them).
func TestFileDiff(t *testing.T) {
	lines := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString("line " + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + "\n")
		}
		return b.String()
	}
	for _, c := range []struct {
		name, tool, args, before string
		known                    bool
	}{
		{"edit-middle", "edit_file", `{"file_path":"/f","old_string":"six","new_string":"6\nsix and a half"}`, "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n", true},
		{"edit-first-line", "edit_file", `{"file_path":"/f","old_string":"one","new_string":"ONE"}`, "one\ntwo\n", true},
		{"edit-replace-all", "edit_file", `{"file_path":"/f","old_string":"x","new_string":"y","replace_all":true}`, "x\na\nb\nc\nd\ne\nf\ng\nx\n", true},
		{"edit-not-found", "edit_file", `{"file_path":"/f","old_string":"absent","new_string":"y"}`, "x\n", true},
		{"edit-unreadable", "edit_file", `{"file_path":"/f","old_string":"a","new_string":"b"}`, "", false},
		{"write-over", "write_file", `{"file_path":"/f","content":"# Title\nnew body\n"}`, "# Title\nold body\nmore\n", true},
		{"write-new", "write_file", `{"file_path":"/f","content":"first\nsecond\n"}`, "", false},
		{"write-long", "write_file", `{"file_path":"/f","content":` + jsonString(lines(120)) + `}`, "", false},
		{"escape-dropped", "edit_file", `{"file_path":"/f","old_string":"a","new_string":"\u001b]0;title\u0007b\tc"}`, "a\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := agentRequest(c.tool, c.args)
			got := ansi.Strip(renderApproval(req, c.before, c.known, 100))
			golden.Check(t, filepath.Join("testdata", "diff", c.name+".golden"), []byte(got))
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// lineDiff keeps the longest common subsequence of the lines, whatever
// they are; beyond its bound, what differs is removed and added whole.
func TestLineDiff(t *testing.T) {
	render := func(rows []diffRow) string {
		var b strings.Builder
		for _, r := range rows {
			b.WriteString(string(r.op) + r.text + "\n")
		}
		return b.String()
	}
	for _, c := range []struct{ a, b, want string }{
		{"a b c", "a c", " a\n-b\n c\n"},
		{"a c", "a b c", " a\n+b\n c\n"},
		{"a b c d", "a x c y", " a\n-b\n+x\n c\n-d\n+y\n"},
		{"", "a", "+a\n"},
		{"a", "", "-a\n"},
	} {
		if got := render(lineDiff(strings.Fields(c.a), strings.Fields(c.b))); got != c.want {
			t.Errorf("%q → %q:\n%s\nwant\n%s", c.a, c.b, got, c.want)
		}
	}
}

// An approval reads the file it changes through the backend: a file the
// read rules deny, or a symbolic link, is not read.
func TestReadBefore(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.md"), []byte("text\n"), 0o600)
	os.Symlink(filepath.Join(dir, "f.md"), filepath.Join(dir, "link.md"))
	b, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if text, ok := readBefore(ctx, b, "edit_file", json.RawMessage(`{"file_path":"/f.md"}`)); !ok || text != "text\n" {
		t.Errorf("f.md: %q %v", text, ok)
	}
	for _, args := range []string{`{"file_path":"/link.md"}`, `{"file_path":"/missing"}`, `{"file_path":"/../etc/passwd"}`} {
		if _, ok := readBefore(ctx, b, "write_file", json.RawMessage(args)); ok {
			t.Errorf("%s was read", args)
		}
	}
	if _, ok := readBefore(ctx, nil, "edit_file", json.RawMessage(`{"file_path":"/f.md"}`)); ok {
		t.Error("read without a backend")
	}
}

// Completion of / commands: a single match whole, several as far as they
// agree and listed.
func TestCompleteCommand(t *testing.T) {
	names := commandNames()
	for _, want := range []string{"/help", "/compact", "/context", "/threads", "/resume", "/skills", "/exit"} {
		if !slices.Contains(names, want) {
			t.Errorf("commandNames lacks %s: %v", want, names)
		}
	}
	for _, c := range []struct {
		word, more string
		list       []string
	}{
		{"/he", "lp ", nil},
		{"/co", "", []string{"/compact", "/config", "/context"}},
		{"/comp", "act ", nil},
		{"/thr", "ead", []string{"/thread", "/threads"}},
		{"/nosuch", "", nil},
	} {
		more, list := completeCommand(names, c.word)
		if more != c.more || !slices.Equal(list, c.list) {
			t.Errorf("%s: %q %v, want %q %v", c.word, more, list, c.more, c.list)
		}
	}
}

// Completion of @paths lists the folder through the backend: hidden
// entries only for a dot, folders with a /, no symbolic links.
func TestCompletePath(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"src/main.go", "src/main_test.go", "src/util.go", "readme.md", ".env", "docs/a.md"} {
		mustWrite(t, filepath.Join(dir, f), "x")
	}
	os.Symlink(filepath.Join(dir, "readme.md"), filepath.Join(dir, "src", "mainlink.go"))
	b, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		partial, more string
		list          []string
	}{
		{"sr", "c/", nil},
		{"src/ma", "in", []string{"src/main.go", "src/main_test.go"}},
		{"src/u", "til.go ", nil},
		{"re", "adme.md ", nil},
		{"", "", []string{"docs/", "readme.md", "src/"}},
		{".e", "nv ", nil},
		{"nosuch/x", "", nil},
	} {
		more, list, err := completePath(context.Background(), b, c.partial)
		if err != nil || more != c.more || !slices.Equal(list, c.list) {
			t.Errorf("%q: %q %v %v, want %q %v", c.partial, more, list, err, c.more, c.list)
		}
	}
}

// Pasted or edited text is bounded by the message limit, at a whole
// character, and by the input's lines.
func TestBounded(t *testing.T) {
	if kept, cut := bounded("ab€cd", 0, 4); kept != "ab" || cut != 5 {
		t.Errorf("bounded: %q %d", kept, cut)
	}
	if kept, cut := bounded("abc", 2, 10); kept != "abc" || cut != 0 {
		t.Errorf("bounded: %q %d", kept, cut)
	}
	text := strings.Repeat("x\n", maxInputLines+5)
	kept, cut := boundedLines(text, 0, 1)
	if n := strings.Count(kept, "\n") + 1; n != maxInputLines || cut != len(text)-len(kept) {
		t.Errorf("boundedLines: %d lines, cut %d", n, cut)
	}
}

func agentRequest(tool, args string) deepagents.ActionRequest {
	return deepagents.ActionRequest{Tool: tool, Args: json.RawMessage(args)}
}

// TestFoldedLinesFitTheWidth: a tool call and its folded result each stay
// on one row of the terminal, whatever its width (they wrapped at 100
// columns and below).
func TestFoldedLinesFitTheWidth(t *testing.T) {
	args := []byte(`{"todos":[{"content":"` + strings.Repeat("long item ", 30) + `","status":"pending"}]}`)
	result := "Updated todo list to " + strings.Repeat("[{'content': 'x'}] ", 30) + "\nsecond line"
	for _, width := range []int{40, 60, 80, 100, 160} {
		for _, indent := range []string{"", "  "} {
			if w := lipgloss.Width(callLine(indent, "write_todos", args, width)); w > width {
				t.Errorf("width %d, indent %q: the call line takes %d columns", width, indent, w)
			}
			if w := lipgloss.Width(indent + "  ⎿ " + fold(result, false, resultRoom(indent, width))); w > width {
				t.Errorf("width %d, indent %q: the folded result takes %d columns", width, indent, w)
			}
		}
	}
}

// TestPreviewIsBounded: an edit whose result would be larger than a file
// the preview reads (a model-chosen new_string replacing every one of many
// matches) is not previewed, instead of building gigabytes in memory.
func TestPreviewIsBounded(t *testing.T) {
	before := strings.Repeat("a\n", 50000)
	huge := fileArgs{OldString: "a", NewString: strings.Repeat("x", 200000), ReplaceAll: true}
	if _, ok := changed("edit_file", huge, before); ok {
		t.Error("a 10 GB result was previewed")
	}
	small := fileArgs{OldString: "a", NewString: "b", ReplaceAll: true}
	if after, ok := changed("edit_file", small, before); !ok || after != strings.Repeat("b\n", 50000) {
		t.Error("a small replace_all was not previewed")
	}
}
