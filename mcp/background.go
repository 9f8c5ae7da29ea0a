package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
)

// Names of the tools NewServer offers for an agent with background
// subagents.
const (
	ListBackgroundApprovalsTool  = "list_background_approvals"
	AnswerBackgroundApprovalTool = "answer_background_approval"
)

// BackgroundApproval is a background task's request for approval, as
// run_task and list_background_approvals report it.
type BackgroundApproval struct {
	TaskID   string `json:"task_id"`
	Subagent string `json:"subagent"`
	// Task is the task the subagent was given (shortened).
	Task string `json:"task"`
	// Pending are the tool calls the task waits to have decided, in
	// order.
	Pending []PendingCall `json:"pending"`
}

// Background is what the background tools ask of the agents they answer
// for: an agent's *background.Middleware (deepagents mcp-serve), or a
// server's assistants' (deepagents serve's /mcp).
type Background interface {
	// Approvals lists the requests a top-level thread's background tasks
	// wait on.
	Approvals(ctx context.Context, threadID string) ([]background.Approval, error)
	// Answer gives a waiting task its decisions, one per call, in order.
	Answer(ctx context.Context, threadID, taskID string, decisions []agent.Decision) error
}

// backgroundOf is the agent's background subagents' middleware, nil when
// it has none.
func backgroundOf(a *agent.Agent) Background {
	for _, m := range a.Middleware() {
		if bg, ok := m.(*background.Middleware); ok {
			return bg
		}
	}
	return nil
}

// AddBackgroundTools adds list_background_approvals and
// answer_background_approval, over bg, to s.
func AddBackgroundTools(s *sdk.Server, bg Background) {
	t := bgTools{bg}
	sdk.AddTool(s, &sdk.Tool{
		Name: ListBackgroundApprovalsTool,
		Description: "Lists the requests for approval a thread's background tasks wait on (each task's id, its subagent, the tool calls). " +
			"run_task's result lists them too, as they were when its run ended.",
	}, t.listBackgroundApprovals)
	sdk.AddTool(s, &sdk.Tool{
		Name: AnswerBackgroundApprovalTool,
		Description: "Answers a background task's request for approval: approve or reject (with a message the subagent reads) every tool call it waits on. " +
			"The task resumes in the background; the thread's next run collects its result.",
	}, t.answerBackgroundApproval)
}

// WithBackgroundApprovals adds to a run's result (res, out) the requests
// its thread's background tasks wait on, and how to answer them; a list
// that could not be read whole is left out (list_background_approvals
// says why). bg may be nil.
func WithBackgroundApprovals(ctx context.Context, bg Background, res *sdk.CallToolResult, out *RunTaskOutput) {
	if list, err := (bgTools{bg}).waitingApprovals(context.WithoutCancel(ctx), out.ThreadID); err == nil && len(list) > 0 {
		out.BackgroundApprovals = list
		res.Content = append(res.Content, &sdk.TextContent{Text: approvalsText(out.ThreadID, list)})
	}
}

// bgTools are the background tools over a Background.
type bgTools struct{ bg Background }

// waitingApprovals returns the requests the background tasks of thread
// wait on.
func (h bgTools) waitingApprovals(ctx context.Context, thread string) ([]BackgroundApproval, error) {
	if h.bg == nil || thread == "" {
		return nil, nil
	}
	list, err := h.bg.Approvals(ctx, thread)
	out := make([]BackgroundApproval, 0, len(list))
	for _, a := range list {
		b := BackgroundApproval{TaskID: a.TaskID, Subagent: a.Subagent, Task: a.Task}
		for _, r := range a.Requests {
			b.Pending = append(b.Pending, pendingCall(r))
		}
		out = append(out, b)
	}
	return out, err
}

// approvalsText says what each waiting task asks, and how to answer it.
func approvalsText(thread string, list []BackgroundApproval) string {
	var b strings.Builder
	for _, a := range list {
		tools := make([]string, len(a.Pending))
		for i, p := range a.Pending {
			tools[i] = p.Tool
		}
		fmt.Fprintf(&b, "Background task %s (subagent %s) waits for approval of %s: call %s with thread_id %s, task_id %s and decision approve or reject.\n",
			a.TaskID, a.Subagent, strings.Join(tools, ", "), AnswerBackgroundApprovalTool, thread, a.TaskID)
	}
	return b.String()
}

// ListBackgroundApprovalsOutput is list_background_approvals' result.
type ListBackgroundApprovalsOutput struct {
	ThreadID  string               `json:"thread_id"`
	Approvals []BackgroundApproval `json:"background_approvals"`
}

func (h bgTools) listBackgroundApprovals(ctx context.Context, _ *sdk.CallToolRequest, in ThreadInput) (*sdk.CallToolResult, ListBackgroundApprovalsOutput, error) {
	if in.ThreadID == "" {
		return nil, ListBackgroundApprovalsOutput{}, errors.New("thread_id is empty")
	}
	list, err := h.waitingApprovals(ctx, in.ThreadID)
	if err != nil && len(list) == 0 {
		return nil, ListBackgroundApprovalsOutput{}, err
	}
	text := approvalsText(in.ThreadID, list)
	if text == "" {
		text = "No background task of thread " + in.ThreadID + " waits for approval."
	}
	if err != nil {
		// Some tasks' requests could not be read: the host is told so
		// (run_task leaves a partial list out, and points here).
		text = strings.TrimSuffix(text, "\n") + "\nSome background tasks' requests could not be read: " + clip.Text(err.Error(), 2000)
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, ListBackgroundApprovalsOutput{ThreadID: in.ThreadID, Approvals: list}, nil
}

// AnswerBackgroundApprovalInput is answer_background_approval's
// arguments.
type AnswerBackgroundApprovalInput struct {
	ThreadID string `json:"thread_id" jsonschema:"the thread whose background task waits"`
	TaskID   string `json:"task_id" jsonschema:"the waiting task, as run_task or list_background_approvals names it"`
	Decision string `json:"decision" jsonschema:"approve or reject: the decision on every tool call the task waits on"`
	Message  string `json:"message,omitempty" jsonschema:"with reject, what the subagent is told"`
}

// AnswerBackgroundApprovalOutput is answer_background_approval's result.
type AnswerBackgroundApprovalOutput struct {
	ThreadID string `json:"thread_id"`
	TaskID   string `json:"task_id"`
	// Status is the task's: running, once answered.
	Status string `json:"status"`
}

func (h bgTools) answerBackgroundApproval(ctx context.Context, _ *sdk.CallToolRequest, in AnswerBackgroundApprovalInput) (*sdk.CallToolResult, AnswerBackgroundApprovalOutput, error) {
	if in.ThreadID == "" || in.TaskID == "" {
		return nil, AnswerBackgroundApprovalOutput{}, errors.New("thread_id and task_id name the task that waits")
	}
	d, err := decisionOf(in.Decision, in.Message)
	if err != nil {
		return nil, AnswerBackgroundApprovalOutput{}, err
	}
	list, err := h.bg.Approvals(ctx, in.ThreadID)
	i := slices.IndexFunc(list, func(a background.Approval) bool { return a.TaskID == in.TaskID })
	if i < 0 {
		if err != nil {
			return nil, AnswerBackgroundApprovalOutput{}, err
		}
		return nil, AnswerBackgroundApprovalOutput{}, fmt.Errorf("%w: task %s of thread %s", background.ErrNotWaiting, clip.Text(in.TaskID, 100), clip.Text(in.ThreadID, 100))
	}
	ds := slices.Repeat([]agent.Decision{d}, len(list[i].Requests))
	// The subagent resumes on a goroutine of the server's that outlives
	// this call.
	if err := h.bg.Answer(context.WithoutCancel(ctx), in.ThreadID, in.TaskID, ds); err != nil {
		return nil, AnswerBackgroundApprovalOutput{}, err
	}
	text := fmt.Sprintf("Background task %s resumes (%s). Its result comes to the thread's next run: give thread_id %s and a task such as \"wait for background task %s and report its result\".",
		in.TaskID, in.Decision, in.ThreadID, in.TaskID)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}},
		AnswerBackgroundApprovalOutput{ThreadID: in.ThreadID, TaskID: in.TaskID, Status: background.Running}, nil
}
