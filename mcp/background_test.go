package mcp

import (
	"errors"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
)

// answer_background_approval refuses a decision that is neither approve
// nor reject saying so, and does not echo a hostile client's ids whole.
func TestAnswerBackgroundApprovalRefuses(t *testing.T) {
	huge := strings.Repeat("x", 1<<16)
	bg, err := background.New(background.Config{
		Parent:    subagents.Parent{Agent: agent.Config{Model: replay.New()}},
		Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "x", Description: "x"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bg.Close() })
	h := bgTools{bg}
	for _, tc := range []struct {
		name string
		in   AnswerBackgroundApprovalInput
		want string
		is   error
	}{
		{name: "no decision", in: AnswerBackgroundApprovalInput{ThreadID: "t", TaskID: "a"}, want: "decision must be approve or reject"},
		{name: "edit", in: AnswerBackgroundApprovalInput{ThreadID: "t", TaskID: "a", Decision: "edit"}, want: `not "edit"`},
		{name: "a huge decision", in: AnswerBackgroundApprovalInput{ThreadID: "t", TaskID: "a", Decision: huge}, want: "decision must be approve or reject"},
		{name: "an unknown task", in: AnswerBackgroundApprovalInput{ThreadID: huge, TaskID: huge, Decision: "approve"}, want: "(65536 bytes)", is: background.ErrNotWaiting},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := h.answerBackgroundApproval(t.Context(), nil, tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %.200v, want one saying %s", err, tc.want)
			}
			if len(err.Error()) > 500 {
				t.Errorf("the error is %d bytes", len(err.Error()))
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %.200v is not %v", err, tc.is)
			}
		})
	}
}
