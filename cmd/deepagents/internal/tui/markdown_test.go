package tui

import (
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

func TestRenderMarkdown(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		width          int
	}{
		{"plain text stays", "I'll plan first.", "I'll plan first.", 80},
		{"heading and emphasis", "## Done\n\nThe notes are **edited** and *checked*.", "Done\n\nThe notes are edited and checked.", 80},
		{"tight list with code", "- `notes.md` has line 2\n- a subagent read it", "• notes.md has line 2\n• a subagent read it", 80},
		{"ordered from 3, nested", "3. one\n4. two\n   - inner", "3. one\n4. two\n   • inner", 80},
		{"code block as it is", "Run:\n\n```sh\ngo test  ./...\n  indented\n```", "Run:\n\n  go test  ./...\n    indented", 80},
		{"wrapped with a hanging indent", "- " + strings.Repeat("word ", 8), "• word word word\n  word word word\n  word word", 20},
		{"link and autolink", "[docs](https://x.dev/d) and <https://x.dev>", "docs (https://x.dev/d) and https://x.dev", 80},
		{"quote", "> careful\n> now", "│ careful now", 80},
		{"task list", "- [x] done\n- [ ] todo", "• [x] done\n• [ ] todo", 80},
		{"table", "| a | bb |\n|---|---|\n| ccc | d |", "a    bb\n───────\nccc  d", 80},
		{"hard break", "one  \ntwo", "one\ntwo", 80},
		{"empty", "", "", 80},
		{"escape sequences from the model are dropped", "a\x1b]0;pwned\x07b \x1b[2Jc\u009bd", "a]0;pwnedb [2Jcd", 80},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ansi.Strip(renderMarkdown(c.in, c.width))
			if got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// Whatever the model writes, rendering neither panics nor loses all of
// the text.
func FuzzRenderMarkdown(f *testing.F) {
	for _, s := range []string{"# h\n\n- a\n  - b\n\n```\nx\n```", "| a |\n|---|\n| b | c |", "> > nested\n\n***x*** ~~y~~", "<div>raw</div>\n\n1) one"} {
		f.Add(s, 40)
	}
	f.Fuzz(func(t *testing.T, s string, width int) {
		out := ansi.Strip(renderMarkdown(s, width%300))
		if strings.ContainsFunc(out, unsafeControl) {
			t.Errorf("rendering %q let a control character through: %q", s, out)
		}
		if strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz") && strings.TrimSpace(out) == "" {
			t.Errorf("rendering %q lost all its text", s)
		}
	})
}

// unsafeControl is a character display.TerminalSafe drops.
func unsafeControl(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }
