package deepagents_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/patch"
	"github.com/deepagents-go/deepagents/middleware/skills"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/middleware/summarization"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

// The guides (docs/guides) quote what the product answers and the values
// it defaults to: each quote here is the product's own value, so that a
// change of one changes its guide too. (docs/guides/files.md has its own
// test, beside the file tools' texts: middleware/filesystem.)
func TestGuidesQuoteTheProduct(t *testing.T) {
	thousands := func(n int) string {
		s := fmt.Sprint(n)
		for i := len(s) - 3; i > 0; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		return s
	}
	for _, c := range []struct{ guide, quote string }{
		{"human-in-the-loop.md", patch.CancelledToolCall},
		{"human-in-the-loop.md", hitl.ExitPlanTool},
		{"threads.md", "checkpoint.ErrBusy"},
		{"summarization.md", summarization.HistoryDir},
		{"summarization.md", thousands(summarization.DefaultTriggerTokens) + " tokens when the window is unknown"},
		{"summarization.md", fmt.Sprintf("| `KeepTokens` / `KeepMessages` | %.0f%% of the window / %d |", summarization.KeepFraction*100, summarization.DefaultKeepMessages)},
		{"summarization.md", fmt.Sprintf("past %.0f%% of the window", summarization.TriggerFraction*100)},
		{"summarization.md", fmt.Sprintf("| `RetryGrowth` | %.2f |", summarization.DefaultRetryGrowth)},
		{"summarization.md", fmt.Sprintf("| `MaxFailures` | %d |", summarization.DefaultMaxFailures)},
		{"summarization.md", "`" + summarization.NoticeSummaryFailed + "`"},
		{"summarization.md", "`" + summarization.NoticeContextTrimmed + "`"},
		{"subagents.md", "`" + subagents.GeneralPurpose + "`"},
		{"planning.md", "`" + todos.WriteTodosTool + "`"},
		{"planning.md", "Updated todo list to [{'content': '...', 'status': '...'}]"},
		{"memory-and-skills.md", skills.File},
	} {
		data, err := os.ReadFile("docs/guides/" + c.guide)
		if err != nil {
			t.Fatal(err)
		}
		// A quote may wrap at a line's end in the guide.
		text := strings.Join(strings.Fields(string(data)), " ")
		if !strings.Contains(text, strings.Join(strings.Fields(c.quote), " ")) {
			t.Errorf("docs/guides/%s does not say %q", c.guide, c.quote)
		}
	}
	// The error ErrBusy names, as threads.md describes it.
	if !strings.Contains(checkpoint.ErrBusy.Error(), "already running") {
		t.Errorf("checkpoint.ErrBusy = %q", checkpoint.ErrBusy)
	}
}
