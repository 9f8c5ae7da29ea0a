package filesystem

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The guide (docs/guides/files.md) quotes what the tools answer: each
// quote is the product's own text, rendered as the guide shows it (N for
// a line number), so that a change of a message changes the guide too.
func TestFilesGuideQuotesTheTools(t *testing.T) {
	guide, err := os.ReadFile("../../docs/guides/files.md")
	if err != nil {
		t.Fatal(err)
	}
	n := func(format string) string {
		return strings.TrimSpace(strings.ReplaceAll(format, "%d", "N"))
	}
	for _, quote := range []string{
		n(readCutNotice),
		n(longLineNotice),
		strings.TrimSpace(truncatedNote),
		fmt.Sprintf(notUTF8Text, "/x.bin", 3, 0xff),
		"@@ lines a-b | next offset b @@",
	} {
		if !strings.Contains(string(guide), quote) {
			t.Errorf("docs/guides/files.md does not quote %q", quote)
		}
	}
	// What the tools do not do, which the guide once said they did.
	for _, claim := range []string{"U+FFFD", "read_file`, `glob`, `grep` | output"} {
		if strings.Contains(string(guide), claim) {
			t.Errorf("docs/guides/files.md says %q", claim)
		}
	}
}
