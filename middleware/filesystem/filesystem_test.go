package filesystem_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/thread"
	"github.com/deepagents-go/deepagents/tool"
)

// fsTools returns the filesystem middleware's tools by name, and a context
// carrying fresh state files seeded with files.
func fsTools(t *testing.T, fs *filesystem.Middleware, files map[string]string) (map[string]tool.Tool, context.Context, *thread.Files) {
	t.Helper()
	tools := map[string]tool.Tool{}
	for _, tl := range fs.Tools() {
		tools[tl.Spec().Name] = tl
	}
	st := thread.NewFiles(nil)
	for p, c := range files {
		st.Put(p, thread.FileData{Content: c, CreatedAt: time.Now(), ModifiedAt: time.Now()})
	}
	return tools, thread.WithFiles(context.Background(), st), st
}

// newFS returns the filesystem middleware of cfg.
func newFS(t *testing.T, cfg filesystem.Config) *filesystem.Middleware {
	t.Helper()
	m, err := filesystem.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// resultsByID returns the tool results of a conversation by call id.
func resultsByID(msgs []llm.Message) map[string]llm.Message {
	out := map[string]llm.Message{}
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			out[m.ToolCallID] = m
		}
	}
	return out
}

func callTool(ctx context.Context, t tool.Tool, args string) (string, bool) {
	out, err := t.Call(ctx, json.RawMessage(args))
	if err != nil {
		return err.Error(), true
	}
	return out, false
}

func TestFilesystemToolContract(t *testing.T) {
	long := strings.Repeat("x", 10000) + strings.Repeat("y", 10000) + "zz"
	seed := map[string]string{
		"/src/main.go":     "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"/src/util/a.go":   "package util\n// TODO: a\n",
		"/src/util/b.go":   "package util\n// TODO: b\n// TODO: c\n",
		"/README.md":       "# Title\nhello hello\n",
		"/empty.txt":       "",
		"/blank.txt":       "  \n\n",
		"/long.txt":        long + "\nshort\n",
		"/dup.txt":         "a-b a-b a-b",
		"/no-newline.txt":  "one\ntwo",
		"/foo..bar.txt":    "legal name",
		"/data/inside.txt": "inside",
		"/data/twice.txt":  "end, the end",
		"/cr.txt":          "old\rmac\rlines",
		"/latin1.txt":      "caf\xe9 ok\n\xff\xfe\n",
		"/.env":            "SECRET=1",
		"/.github/ci.yml":  "on: push",
	}
	type row struct {
		tool, args string
		want       string // exact result, unless prefix is set
		prefix     bool
		isErr      bool
	}
	rows := []row{
		// ls
		{"ls", `{"path":"/"}`, "/.env\n/.github/\n/README.md\n/blank.txt\n/cr.txt\n/data/\n/dup.txt\n/empty.txt\n/foo..bar.txt\n/latin1.txt\n/long.txt\n/no-newline.txt\n/src/", false, false},
		{"ls", `{"path":"/src"}`, "/src/main.go\n/src/util/", false, false},
		{"ls", `{"path":"src/util/"}`, "/src/util/a.go\n/src/util/b.go", false, false},
		{"ls", `{"path":"/nowhere"}`, "No files found", false, false},
		// read_file
		{"read_file", `{"file_path":"/src/main.go"}`, "@@ lines 1-5 @@\npackage main\n\nfunc main() {\n\tprintln(\"hi\")\n}", false, false},
		{"read_file", `{"file_path":"/src/main.go","offset":2,"limit":2}`, "@@ lines 3-4 | next offset 4 @@\nfunc main() {\n\tprintln(\"hi\")", false, false},
		{"read_file", `{"file_path":"/src/main.go","offset":2,"limit":3}`, "@@ lines 3-5 @@\nfunc main() {\n\tprintln(\"hi\")\n}", false, false}, // the window reaches the end: no notice
		{"read_file", `{"file_path":"/src/main.go","offset":4,"limit":9223372036854775807}`, "@@ lines 5-5 @@\n}", false, false},
		{"read_file", `{"file_path":"/no-newline.txt"}`, "@@ lines 1-2 @@\none\ntwo", false, false},
		{"read_file", `{"file_path":"/long.txt"}`, "@@ lines 1-2 @@\n" + strings.Repeat("x", 10000) + strings.Repeat("y", 10000) + "zz\nshort", false, false},
		{"read_file", `{"file_path":"/empty.txt"}`, "System reminder: File exists but has empty contents", false, false},
		{"read_file", `{"file_path":"/blank.txt"}`, "System reminder: File exists but has empty contents", false, false},
		{"read_file", `{"file_path":"/src/main.go","offset":9}`, "Error: Line offset 9 exceeds file length (5 lines)", false, true},
		{"read_file", `{"file_path":"/missing.txt"}`, "Error: File '/missing.txt' not found", false, true},
		{"read_file", `{"file_path":"foo..bar.txt"}`, "@@ lines 1-1 @@\nlegal name", false, false},
		{"read_file", `{"file_path":"/cr.txt"}`, "@@ lines 1-3 @@\nold\nmac\nlines", false, false},
		{"read_file", `{"file_path":"/cr.txt","offset":1,"limit":1}`, "@@ lines 2-2 | next offset 2 @@\nmac", false, false},
		{"read_file", `{"file_path":"/latin1.txt"}`, "Error reading file '/latin1.txt': it is not UTF-8 text (line 1 holds the byte 0xe9)", false, true},
		{"read_file", `{"file_path":"/latin1.txt","offset":1}`, "Error reading file '/latin1.txt': it is not UTF-8 text (line 2 holds the byte 0xff)", false, true},
		// write_file
		{"write_file", `{"file_path":"/new/file.txt","content":"fresh"}`, "Updated file /new/file.txt", false, false},
		{"write_file", `{"file_path":"/blank.txt","content":"  \n\n"}`, "Updated file /blank.txt", false, false}, // replaces: both references do
		{"write_file", `{"file_path":"/data","content":"x"}`, "Error: '/data' is a directory, not a file", false, true},
		// edit_file
		{"edit_file", `{"file_path":"/README.md","old_string":"# Title","new_string":"# New"}`, "Successfully replaced 1 instance(s) of the string in '/README.md'", false, false},
		{"edit_file", `{"file_path":"/dup.txt","old_string":"a-b","new_string":"c"}`, "Error: String 'a-b' appears 3 times in file. Use replace_all=True to replace all instances, or provide a more specific string with surrounding context.", false, true},
		{"edit_file", `{"file_path":"/dup.txt","old_string":"a-b","new_string":"c","replace_all":true}`, "Successfully replaced 3 instance(s) of the string in '/dup.txt'", false, false},
		{"edit_file", `{"file_path":"/README.md","old_string":"absent","new_string":"x"}`, "Error: String not found in file: 'absent'", false, true},
		{"edit_file", `{"file_path":"/missing.txt","old_string":"a","new_string":"b"}`, "Error: File '/missing.txt' not found", false, true},
		{"edit_file", `{"file_path":"/no-newline.txt","old_string":"two\n","new_string":"2\n"}`, "Error: old_string ends with a newline, but the file does not end with one. Retry without that newline (and without it at the end of new_string, if it has one).", false, true},
		{"edit_file", `{"file_path":"/data/twice.txt","old_string":"end\n","new_string":"x"}`, "Error: old_string ends with a newline, but the file does not end with one. Without that newline old_string occurs 2 times in the file", true, true},
		{"edit_file", `{"file_path":"/no-newline.txt","old_string":"one\n\n","new_string":"x"}`, "Error: String not found in file: 'one\n\n'", false, true},
		// glob
		{"glob", `{"pattern":"**/*.go"}`, "/src/main.go\n/src/util/a.go\n/src/util/b.go", false, false},
		{"glob", `{"pattern":"*.go","path":"/src"}`, "/src/main.go\n/src/util/a.go\n/src/util/b.go", false, false},
		{"glob", `{"pattern":"/*.go","path":"/src"}`, "No files found", false, false},
		{"glob", `{"pattern":"util/*.go","path":"/src"}`, "/src/util/a.go\n/src/util/b.go", false, false},
		{"glob", `{"pattern":"*.go","path":"/src/main.go"}`, "/src/main.go", false, false},
		{"glob", `{"pattern":"*.txt"}`, "/blank.txt\n/cr.txt\n/data/inside.txt\n/data/twice.txt\n/dup.txt\n/empty.txt\n/foo..bar.txt\n/latin1.txt\n/long.txt\n/new/file.txt\n/no-newline.txt", false, false},
		{"glob", `{"pattern":"*"}`, "/.github/ci.yml\n/README.md\n/blank.txt\n/cr.txt\n/data/inside.txt\n/data/twice.txt\n/dup.txt\n/empty.txt\n/foo..bar.txt\n/latin1.txt\n/long.txt\n/new/file.txt\n/no-newline.txt\n/src/main.go\n/src/util/a.go\n/src/util/b.go", false, false},
		{"glob", `{"pattern":".*"}`, "/.env", false, false},
		{"glob", `{"pattern":"**/*.yml"}`, "No files found", false, false},
		{"glob", `{"pattern":".github/*.yml"}`, "/.github/ci.yml", false, false},
		{"glob", `{"pattern":"[unclosed"}`, "Error: Invalid glob pattern: [unclosed (syntax error in pattern)", false, true},
		{"glob", `{"pattern":"` + strings.Repeat("{a,b}", 50) + `"}`, "Error: Invalid glob pattern: " + strings.Repeat("{a,b}", 40) + "... (250 bytes) (its braces expand to more than 1024 alternatives)", false, true},
		{"glob", `{"pattern":"**/*.rs"}`, "No files found", false, false},
		// grep
		{"grep", `{"pattern":"TODO"}`, "/src/util/a.go\n/src/util/b.go", false, false},
		{"grep", `{"pattern":"TODO: ","output_mode":"content"}`, "/src/util/a.go:\n  2: // TODO: a\n/src/util/b.go:\n  2: // TODO: b\n  3: // TODO: c", false, false},
		{"grep", `{"pattern":"TODO","output_mode":"count"}`, "/src/util/a.go: 1\n/src/util/b.go: 2", false, false},
		{"grep", `{"pattern":"hello.hello"}`, "No matches found", false, false}, // "." is a dot, not any character
		{"grep", `{"pattern":"println(\"hi\")","output_mode":"content"}`, "/src/main.go:\n  4: \tprintln(\"hi\")", false, false},
		{"grep", `{"pattern":"TODO|hello"}`, "No matches found\n\nNote: grep searches for the literal text", true, false},
		{"grep", `{"pattern":"caf","output_mode":"content"}`, "/latin1.txt:\n  1: caf\uFFFD ok", false, false},
		{"grep", `{"pattern":"TODO","output_mode":"content","max_count":2}`, "/src/util/a.go:\n  2: // TODO: a\n/src/util/b.go:\n  2: // TODO: b\n\nNote: the search stopped at its limit of 2 matches. The matches above are valid but incomplete; narrow the search (a more specific pattern, path or glob) to see the rest. Or raise max_count (up to 1000).", false, false},
		{"grep", `{"pattern":"TODO","max_count":-1}`, `Error: invalid arguments for tool "grep": field "max_count": got -1, want at least 1`, false, true},
		{"grep", `{"pattern":"x","glob":"[bad"}`, "Error: Invalid glob pattern: [bad", true, true},
		{"grep", `{"pattern":"package","glob":"*.go","path":"/src/util"}`, "/src/util/a.go\n/src/util/b.go", false, false},
		{"grep", `{"pattern":"nothing-matches-this"}`, "No matches found", false, false},
		{"grep", `{"pattern":"(unclosed"}`, "No matches found", false, false},
		// paths
		{"read_file", `{"file_path":"../etc/passwd"}`, "Error: Path traversal not allowed: ../etc/passwd", false, true},
		{"read_file", `{"file_path":"/src/../../etc/passwd"}`, "Error: Path traversal not allowed: /src/../../etc/passwd", false, true},
		{"ls", `{"path":"~/secrets"}`, "Error: Path traversal not allowed: ~/secrets", false, true},
		{"read_file", `{"file_path":"C:\\Users\\x.txt"}`, `Error: Windows absolute paths are not supported: C:\Users\x.txt. Please use virtual paths starting with / (e.g., /workspace/file.txt)`, false, true},
		{"write_file", `{"file_path":"F:/x","content":""}`, "Error: Windows absolute paths are not supported: F:/x. Please use virtual paths starting with / (e.g., /workspace/file.txt)", false, true},
		{"read_file", `{"file_path":"/./src//main.go","limit":1}`, "@@ lines 1-1 | next offset 1 @@\npackage main", true, false},
		{"read_file", `{"file_path":"src\\main.go","limit":1}`, "@@ lines 1-1 | next offset 1 @@\npackage main", true, false},
		// arguments
		{"read_file", `{"file_path":"/README.md","offset":-1}`, "[Requested offset -1 is before the start of the file; read from line 1 instead.]\n@@ lines 1-2 @@\n# New\nhello hello", false, false},
		{"read_file", `{"file_path":"/README.md","limit":0}`, "System reminder: no lines were read because `limit` was 0. The file was not inspected and may have contents; retry with `limit` >= 1 to read it.", false, false},
		{"read_file", `{"file_path":"/README.md","limit":-5}`, "@@ lines 1-2 @@\n# New\nhello hello", false, false},
		{"edit_file", `{"file_path":"/README.md","old_string":"","new_string":"x"}`, "Error: old_string is empty", true, true},
	}
	fs := newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil)})
	tools, ctx, _ := fsTools(t, fs, seed)
	for i, r := range rows {
		t.Run(fmt.Sprintf("%02d_%s", i, r.tool), func(t *testing.T) {
			got, isErr := callTool(ctx, tools[r.tool], r.args)
			if r.prefix && !strings.HasPrefix(got, r.want) || !r.prefix && got != r.want {
				t.Errorf("%s %s\n got: %q\nwant: %q", r.tool, r.args, clipForLog(got), clipForLog(r.want))
			}
			if isErr != r.isErr {
				t.Errorf("is_error = %v, want %v", isErr, r.isErr)
			}
		})
	}
	if _, ok := tools["execute"]; ok {
		t.Error("execute offered over a backend that cannot execute")
	}
}

func clipForLog(s string) string {
	if len(s) > 300 {
		return s[:150] + "…" + s[len(s)-150:]
	}
	return s
}

func TestAllowedPrefixes(t *testing.T) {
	fs := newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil), AllowedPrefixes: []string{"/data/", "/tmp/"}})
	tools, ctx, _ := fsTools(t, fs, map[string]string{"/data/a.txt": "a", "/etc/x": "x"})
	if got, _ := callTool(ctx, tools["read_file"], `{"file_path":"/data/a.txt"}`); got != "@@ lines 1-1 @@\na" {
		t.Errorf("allowed read = %q", got)
	}
	got, isErr := callTool(ctx, tools["read_file"], `{"file_path":"/etc/x"}`)
	if want := "Error: Path must start with one of ['/data/', '/tmp/']: /etc/x"; got != want || !isErr {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestExecuteTool(t *testing.T) {
	sh, err := sandbox.NewLocalShell(t.TempDir(), sandbox.LocalShellOptions{MaxOutputBytes: 64, Timeout: time.Second, MaxTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fs := newFS(t, filesystem.Config{Backend: sh})
	tools, ctx, _ := fsTools(t, fs, nil)
	ex, ok := tools["execute"]
	if !ok {
		t.Fatal("execute not offered over LocalShell")
	}
	if !strings.Contains(fs.SystemPrompt(), "execute") {
		t.Error("prompt does not mention execute")
	}
	if d := ex.Spec().Description; !strings.Contains(d, "overrides the default limit of 1 second, up to 1 second.") {
		t.Errorf("the description does not say the limits: %q", d)
	}
	for _, c := range []struct{ args, want string }{
		{`{"command":"echo hi"}`, "hi\n\n[Command succeeded with exit code 0]"},
		{`{"command":"echo oops >&2; exit 3"}`, "oops\n\n[Command failed with exit code 3]"},
		{`{"command":"yes | head -c 200"}`, "\n[Output was truncated due to size limits]"},
		{`{"command":"sleep 5","timeout":1}`, "[Command timed out after 1 second and was killed: split the work into shorter commands]"},
		// The model cannot raise the limit past the operator's maximum,
		// nor overflow it.
		{`{"command":"sleep 5","timeout":3600}`, "[Command timed out after 1 second and was killed"},
		{`{"command":"sleep 5","timeout":9223372036854775807}`, "[Command timed out after 1 second and was killed"},
		{`{"command":"echo hi","timeout":-1}`, "Error: timeout must be non-negative, got -1."},
		{`{"command":"echo hi","timeout":0}`, "hi\n\n[Command succeeded with exit code 0]"},
	} {
		got, _ := callTool(ctx, ex, c.args)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want it to contain %q", c.args, got, c.want)
		}
	}
}

// A command that times out under a limit the model may raise says how; a
// command that runs a second or more says how long it ran.
func TestExecuteSaysItsTime(t *testing.T) {
	sh, err := sandbox.NewLocalShell(t.TempDir(), sandbox.LocalShellOptions{Timeout: time.Second, MaxTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tools, ctx, _ := fsTools(t, newFS(t, filesystem.Config{Backend: sh}), nil)
	got, _ := callTool(ctx, tools["execute"], `{"command":"sleep 3"}`)
	if !strings.Contains(got, "[Command timed out after 1 second and was killed: run it again with a longer timeout (up to 60 seconds), or split the work into shorter commands]") {
		t.Errorf("timed out: %q", got)
	}
	got, _ = callTool(ctx, tools["execute"], `{"command":"sleep 1.2; echo done","timeout":10}`)
	if !regexp.MustCompile(`done\n\n\[Command succeeded with exit code 0 after [1-9][0-9]*s\]$`).MatchString(got) {
		t.Errorf("a second: %q", got)
	}
}

func TestLargeResultsAreEvicted(t *testing.T) {
	big := tool.Must(tool.New("big", "Big output.", func(context.Context, struct{}) (string, error) {
		var b strings.Builder
		for i := 1; i <= 3000; i++ {
			fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("z", 30))
		}
		return b.String(), nil
	}))
	fs := newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil)})
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "call.1/x", Name: "big"}, {ID: "g", Name: "grep", Args: json.RawMessage(`{"pattern":"line","path":"/large_tool_results","output_mode":"content"}`)}}},
		replay.Turn{Content: "ok"},
	)
	a, err := agent.New(agent.Config{Model: m, Tools: []tool.Tool{big}, Middleware: []agent.Middleware{fs}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err != nil {
		t.Fatal(err)
	}
	got := resultsByID(res.State.Messages)["call.1/x"].Text()
	for _, want := range []string{"/large_tool_results/call_1_x", "read_file", "offset", "     1\tline 1 ", "  3000\tline 3000 "} {
		if !strings.Contains(got, want) {
			t.Errorf("replacement lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "line 6 ") || len(got) > 2000 {
		t.Errorf("replacement is not a short preview (%d chars)", len(got))
	}
	saved, ok := res.State.Files.Get("/large_tool_results/call_1_x")
	if !ok || !strings.HasPrefix(saved.Content, "line 1 ") || strings.Count(saved.Content, "\n") != 3000 {
		t.Errorf("saved result: %v %d lines", ok, strings.Count(saved.Content, "\n"))
	}
}

func TestFileToolsCapTheirOutput(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "match %d %s\n", i, strings.Repeat("q", 20))
	}
	// The output, not the matches, is what is capped here.
	fs := newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil), Grep: filesystem.GrepLimits{MaxMatches: 10000}})
	tools, ctx, _ := fsTools(t, fs, map[string]string{"/big.txt": b.String()})
	got, _ := callTool(ctx, tools["grep"], `{"pattern":"match","output_mode":"content"}`)
	if len(got) > filesystem.DefaultEvictChars+300 || !strings.HasSuffix(got, "\n... [results truncated, try being more specific with your parameters]") {
		t.Errorf("grep output %d chars, ends %q", len(got), got[len(got)-200:])
	}
}

func TestReadFileSaysWhenCut(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte("first\n"+strings.Repeat("z", 2<<20)+"\nlast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{MaxFileSizeMB: 1})
	if err != nil {
		t.Fatal(err)
	}
	fs := newFS(t, filesystem.Config{Backend: b})
	tools, ctx, _ := fsTools(t, fs, nil)
	// The first read holds the first line: the second does not fit.
	got, isErr := callTool(ctx, tools["read_file"], `{"file_path":"/big.txt"}`)
	if isErr || got != "@@ lines 1-1 | next offset 1 @@\nfirst" {
		t.Errorf("read of a file with a line over the limit: %q", got[:min(len(got), 200)])
	}
	// The second line alone: its start, and where to go on.
	got, isErr = callTool(ctx, tools["read_file"], `{"file_path":"/big.txt","offset":1}`)
	want := "[Line 2 is longer than one result can hold: only its start is shown; continue with offset=2.]\n@@ lines 2-2 | next offset 2 @@\nzzz"
	if isErr || !strings.HasPrefix(got, want) || len(got) > filesystem.DefaultEvictChars {
		t.Errorf("read of the long line: %d chars, starts %q", len(got), got[:min(len(got), 200)])
	}
	if got, _ := callTool(ctx, tools["read_file"], `{"file_path":"/big.txt","offset":2}`); got != "@@ lines 3-3 @@\nlast" {
		t.Errorf("continuing after the cut line: %q", got)
	}
}

func TestGrepLimits(t *testing.T) {
	var many strings.Builder
	for i := range 50 {
		fmt.Fprintf(&many, "hit %d\n", i)
	}
	slow := strings.Repeat("the quick brown fox jumps over the lazy dog 0123456789\n", 40000)
	files := map[string]string{
		"/many.txt":     many.String(),
		"/long.txt":     "short hit\n" + strings.Repeat("ab", 100) + "hit" + strings.Repeat("cd", 100) + "\n",
		"/slow/big.txt": slow,
	}
	lim := filesystem.GrepLimits{MaxPatternBytes: 20, MaxMatches: 10, MaxLineBytes: 50, Timeout: 100 * time.Millisecond}
	cases := []struct {
		name, args string
		want       []string
		wantErr    bool
	}{
		{"pattern too long", `{"pattern":"` + strings.Repeat("a", 21) + `"}`, []string{"the pattern is 21 bytes long; grep accepts at most 20"}, true},
		{"pattern at the limit", `{"pattern":"` + strings.Repeat("a", 20) + `"}`, []string{"No matches found"}, false},
		{"matches capped", `{"pattern":"hit","path":"/many.txt","output_mode":"content"}`, []string{"  10: hit 9", "Note: the search stopped at its limit of 10 matches."}, false},
		{"under the cap", `{"pattern":"hit [0-8]$","path":"/many.txt","output_mode":"count"}`, []string{"/many.txt: 9"}, false},
		{"line cut", `{"pattern":"hit","path":"/long.txt","output_mode":"content"}`, []string{"  1: short hit\n", "  2: " + strings.Repeat("ab", 25) + " [... line truncated]"}, false},
		{"time budget", `{"pattern":"(\\w+\\s?){20}[A-Z]","path":"/slow"}`, []string{"grep stopped after 100ms without finishing"}, true},
	}
	// A slow expression is the surest way past the time budget.
	fs := newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil), Grep: lim, GrepRegexp: true})
	tools, ctx, _ := fsTools(t, fs, files)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, isErr := callTool(ctx, tools["grep"], c.args)
			if isErr != c.wantErr {
				t.Errorf("error %v, want %v: %q", isErr, c.wantErr, got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to contain %q", got, w)
				}
			}
			if c.name == "under the cap" && strings.Contains(got, "stopped at its limit") {
				t.Errorf("a result under the cap says it was capped: %q", got)
			}
		})
	}
	// The user's cancellation is not the time budget: it ends the call
	// with the context's error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tools["grep"].Call(cctx, json.RawMessage(`{"pattern":"hit"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled grep: %v, want context.Canceled", err)
	}
}

func TestParallelEditsOfOneFileAllLand(t *testing.T) {
	for _, kind := range []string{"state", "disk"} {
		t.Run(kind, func(t *testing.T) {
			var b backend.Backend = backend.NewStateBackend(nil)
			dir := t.TempDir()
			if kind == "disk" {
				os.WriteFile(filepath.Join(dir, "f.txt"), []byte("A B C D E F"), 0o644)
				fsb, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
				if err != nil {
					t.Fatal(err)
				}
				b = fsb
			}
			var calls []llm.ToolCall
			for i, w := range []string{"A", "B", "C", "D", "E", "F"} {
				calls = append(calls, llm.ToolCall{ID: fmt.Sprint("e", i), Name: "edit_file",
					Args: json.RawMessage(fmt.Sprintf(`{"file_path":"/f.txt","old_string":"%s","new_string":"%s%s"}`, w, strings.ToLower(w), w))})
			}
			m := replay.New(replay.Turn{ToolCalls: calls}, replay.Turn{Content: "ok"})
			a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{newFS(t, filesystem.Config{Backend: b})}})
			if err != nil {
				t.Fatal(err)
			}
			in := agent.Prompt("edit")
			in.Files = map[string]thread.FileData{"/f.txt": {Content: "A B C D E F"}}
			res, err := a.Invoke(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			var content string
			if kind == "disk" {
				raw, _ := os.ReadFile(filepath.Join(dir, "f.txt"))
				content = string(raw)
			} else {
				d, _ := res.State.Files.Get("/f.txt")
				content = d.Content
			}
			if content != "aA bB cC dD eE fF" {
				t.Errorf("content = %q: an edit was lost", content)
			}
		})
	}
}

// racyBackend edits by reading, pausing and writing back, as a naive user
// backend might: without serialisation, parallel edits overwrite each other.
type racyBackend struct{ backend.Backend }

func (r racyBackend) Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (int, error) {
	res := r.Download(ctx, []string{path})
	if res[0].Err != nil {
		return 0, res[0].Err
	}
	content := string(res[0].Content)
	n := strings.Count(content, oldString)
	if n == 0 {
		return 0, backend.ErrNoMatch
	}
	time.Sleep(5 * time.Millisecond)
	out := r.Upload(ctx, []backend.File{{Path: path, Content: []byte(strings.Replace(content, oldString, newString, 1))}})
	return 1, out[0].Err
}

func TestParallelEditsAreSerialisedByTheMiddleware(t *testing.T) {
	files := thread.NewFiles(nil)
	files.Put("/f.txt", thread.FileData{Content: "A B C"})
	var calls []llm.ToolCall
	for i, w := range []string{"A", "B", "C"} {
		calls = append(calls, llm.ToolCall{ID: fmt.Sprint("e", i), Name: "edit_file",
			Args: json.RawMessage(fmt.Sprintf(`{"file_path":"/f.txt","old_string":"%s","new_string":"%s%s"}`, w, strings.ToLower(w), w))})
	}
	m := replay.New(replay.Turn{ToolCalls: calls}, replay.Turn{Content: "ok"})
	a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{newFS(t, filesystem.Config{Backend: racyBackend{backend.NewStateBackend(files)}})}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(context.Background(), agent.Prompt("edit")); err != nil {
		t.Fatal(err)
	}
	if d, _ := files.Get("/f.txt"); d.Content != "aA bB cC" {
		t.Errorf("content = %q: an edit was lost", d.Content)
	}
}

func TestGrepRegexpOption(t *testing.T) {
	fs := newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil), GrepRegexp: true})
	tools, ctx, _ := fsTools(t, fs, map[string]string{
		"/a.go":      "// TODO: a\n",
		"/b.go":      "// TODO: b\n// TODO: c\n",
		"/README.md": "hello\n",
	})
	if d := tools["grep"].Spec().Description; !strings.Contains(d, "RE2") {
		t.Errorf("description does not say RE2: %q", d)
	}
	for _, r := range []struct{ args, want string }{
		{`{"pattern":"TODO: [bc]","output_mode":"content"}`, "/b.go:\n  1: // TODO: b\n  2: // TODO: c"},
		{`{"pattern":"TODO|hello","output_mode":"count"}`, "/README.md: 1\n/a.go: 1\n/b.go: 2"},
		{`{"pattern":"(unclosed"}`, "Invalid regex pattern: missing closing ): `(unclosed`"},
	} {
		if got, _ := callTool(ctx, tools["grep"], r.args); got != r.want {
			t.Errorf("grep %s = %q, want %q", r.args, got, r.want)
		}
	}
}

func TestGlobTimeout(t *testing.T) {
	fs := newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil), GlobTimeout: time.Nanosecond})
	tools, ctx, _ := fsTools(t, fs, map[string]string{"/a.go": "a"})
	got, isErr := callTool(ctx, tools["glob"], `{"pattern":"*.go"}`)
	if !isErr || got != "Error: glob timed out after 1ns. Try a more specific pattern or a narrower path." {
		t.Errorf("glob past its time limit: %q (error %v)", got, isErr)
	}
}

// Each tool carries the traits ToolTraits gives for its name, and every
// tool has some: the layers that ask a tool what it does (rules, plan
// mode, rewind, the editors' kinds) get the same answer from both.
func TestToolsCarryTheirTraits(t *testing.T) {
	sh, err := sandbox.NewLocalShell(t.TempDir(), sandbox.LocalShellOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := filesystem.New(filesystem.Config{Backend: sh})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range fs.Tools() {
		name := tl.Spec().Name
		names = append(names, name)
		want, ok := filesystem.ToolTraits(name)
		if got := tool.TraitsOf(tl); !ok || got != want || got == (tool.Traits{}) {
			t.Errorf("%s: traits %+v, ToolTraits %+v %v", name, got, want, ok)
		}
	}
	if len(names) != 7 {
		t.Errorf("tools %q, want the seven, execute included", names)
	}
}
