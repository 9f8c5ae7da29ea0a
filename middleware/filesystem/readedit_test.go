package filesystem_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
)

// header is read_file's first line: "@@ lines a-b @@" or
// "@@ lines a-b | next offset b @@".
var header = regexp.MustCompile(`\A@@ lines (\d+)-(\d+)(?: \| next offset (\d+))? @@\n?`)

// readAsAModel reads a whole file as a model does: a page, then the next
// from the offset the header gives, until no next offset is given. It
// returns the lines shown, without the headers, and fails if a header is
// missing or the pages do not follow each other.
func readAsAModel(t *testing.T, call func(args string) (string, bool), path string, limit int) string {
	t.Helper()
	var shown []string
	offset := 0
	for page := 0; ; page++ {
		if page > 1000 {
			t.Fatal("read_file never stopped giving a next offset")
		}
		out, isErr := call(fmt.Sprintf(`{"file_path":%q,"offset":%d,"limit":%d}`, path, offset, limit))
		if isErr {
			t.Fatalf("read_file %s at %d: %s", path, offset, out)
		}
		m := header.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("read_file %s at %d answered without a header: %q", path, offset, out)
		}
		if first, _ := strconv.Atoi(m[1]); first != offset+1 {
			t.Fatalf("page at offset %d starts at line %d", offset, first)
		}
		shown = append(shown, out[len(m[0]):])
		if m[3] == "" {
			return strings.Join(shown, "\n")
		}
		offset, _ = strconv.Atoi(m[3])
	}
}

// TestEditsFromWhatReadFileShows: a model that knows a file only as
// read_file showed it (the lines after each page's header) can make the
// edits the tool tests make, by copying what it saw into old_string: across
// pages, with tabs and trailing spaces, with CRLF line ends, with lines
// that look like a header, and in files whose text is not ASCII.
func TestEditsFromWhatReadFileShows(t *testing.T) {
	long := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name       string
		content    string
		limit      int
		old, new   string // old as the model copies it from what it saw
		want       string
		replaceAll bool
	}{
		{name: "go source with tabs", content: "package main\n\nfunc main() {\n\tprintln(\"hi\")  \n}\n", limit: 2000,
			old: "func main() {\n\tprintln(\"hi\")  \n}", new: "func main() {\n\tprintln(\"bye\")\n}",
			want: "package main\n\nfunc main() {\n\tprintln(\"bye\")\n}\n"},
		{name: "lines across two pages", content: long(250), limit: 100,
			old: "line 100\nline 101", new: "line one hundred\nline 101",
			want: strings.Replace(long(250), "line 100\n", "line one hundred\n", 1)},
		{name: "CRLF file", content: "a\r\nb\r\nc\r\n", limit: 2000,
			old: "a\nb", new: "A\nB",
			want: "A\r\nB\r\nc\r\n"},
		{name: "a line that looks like a header", content: "@@ lines 1-9 @@\nbody\n", limit: 2000,
			old: "@@ lines 1-9 @@\nbody", new: "@@ hunk @@\nbody",
			want: "@@ hunk @@\nbody\n"},
		{name: "not ASCII", content: "título: café\n名前: テスト\n", limit: 2000,
			old: "名前: テスト", new: "名前: 試験",
			want: "título: café\n名前: 試験\n"},
		{name: "no final newline", content: "one\ntwo", limit: 2000,
			old: "two", new: "three",
			want: "one\nthree"},
		{name: "every occurrence", content: "x = 1\ny = x\nx = 2\n", limit: 2000,
			old: "x = ", new: "z = ", replaceAll: true,
			want: "z = 1\ny = x\nz = 2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil)})
			tools, ctx, files := fsTools(t, fs, map[string]string{"/f.txt": tt.content})
			read := func(args string) (string, bool) { return callTool(ctx, tools["read_file"], args) }
			seen := readAsAModel(t, read, "/f.txt", tt.limit)
			if !strings.Contains(seen, tt.old) {
				t.Fatalf("the model never saw %q; it saw:\n%s", tt.old, seen)
			}
			args := fmt.Sprintf(`{"file_path":"/f.txt","old_string":%q,"new_string":%q,"replace_all":%v}`, tt.old, tt.new, tt.replaceAll)
			if out, isErr := callTool(ctx, tools["edit_file"], args); isErr {
				t.Fatalf("edit_file: %s", out)
			}
			got, _ := files.Get("/f.txt")
			if got.Content != tt.want {
				t.Errorf("after the edit the file is %q, want %q", got.Content, tt.want)
			}
		})
	}
}
