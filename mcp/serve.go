package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/steer"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

// Names of the tools NewServer offers.
const (
	RunTaskTool   = "run_task"
	GetTodosTool  = "get_todos"
	ListFilesTool = "list_thread_files"
	ReadFileTool  = "read_thread_file"
	SteerTaskTool = "steer_task"
)

// ServeOptions configures NewServer.
type ServeOptions struct {
	// Name and Version introduce the server to clients; Name defaults to
	// "deepagents".
	Name, Version string
	// Values are set on every run's state, as agent.Input.Values.
	Values map[string]json.RawMessage
}

// NewServer returns an MCP server that offers a to MCP hosts: run_task
// runs a task on a thread and returns the answer, with a progress
// notification for each step while it works when the host asks for them;
// cancelling the request (notifications/cancelled) stops the run, whose
// steps so far stay saved. get_todos, list_thread_files and
// read_thread_file show a thread's todo list and the files in its state;
// with an agent that has background subagents, run_task's result lists
// the requests for approval its thread's background tasks wait on, which
// list_background_approvals lists and answer_background_approval answers;
// with an agent that reads them (steer.Enabled), steer_task gives a message to the run
// working on a thread, for its next model request.
//
// The agent needs a Checkpointer for threads to outlive a call. Serve the
// result with its Run method (sdk.StdioTransport) or through
// sdk.NewStreamableHTTPHandler.
func NewServer(a *agent.Agent, opts ServeOptions) *sdk.Server {
	name := opts.Name
	if name == "" {
		name = "deepagents"
	}
	version := opts.Version
	if version == "" {
		version = "1"
	}
	s := sdk.NewServer(&sdk.Implementation{Name: name, Version: version}, nil)
	h := &handlers{a: a, values: opts.Values, bg: backgroundOf(a)}
	sdk.AddTool(s, &sdk.Tool{
		Name: RunTaskTool,
		Description: "Hands a task to a deep agent (planning, files, subagents) and returns its answer and the thread's id. " +
			"Pass thread_id to continue a thread. If the run stops for approval of a tool call, call again with the thread_id and a decision.",
	}, h.runTask)
	if steer.Enabled(a) {
		sdk.AddTool(s, &sdk.Tool{
			Name: SteerTaskTool,
			Description: "Sends a message to the task working on a thread (a run_task call in progress): the agent reads it at its next step, " +
				"as a message the user sent while it worked. Returns once the message is saved.",
		}, h.steerTask)
	}
	if h.bg != nil {
		AddBackgroundTools(s, h.bg)
	}
	sdk.AddTool(s, &sdk.Tool{Name: GetTodosTool, Description: "Returns a thread's todo list, as JSON."}, h.todos)
	sdk.AddTool(s, &sdk.Tool{Name: ListFilesTool, Description: "Lists the files in a thread's state (the agent's scratch files)."}, h.listFiles)
	sdk.AddTool(s, &sdk.Tool{Name: ReadFileTool, Description: "Returns a file from a thread's state."}, h.readFile)
	return s
}

// SteerTaskInput is steer_task's arguments.
type SteerTaskInput struct {
	ThreadID string `json:"thread_id" jsonschema:"the thread whose task gets the message"`
	Message  string `json:"message" jsonschema:"what the agent is told"`
}

// SteerTaskOutput is steer_task's structured result.
type SteerTaskOutput struct {
	ThreadID string `json:"thread_id"`
	Saved    bool   `json:"saved"`
}

func (h *handlers) steerTask(ctx context.Context, _ *sdk.CallToolRequest, in SteerTaskInput) (*sdk.CallToolResult, SteerTaskOutput, error) {
	if err := steer.Send(ctx, h.a.Store(), in.ThreadID, in.Message); err != nil {
		return nil, SteerTaskOutput{}, err
	}
	return nil, SteerTaskOutput{ThreadID: in.ThreadID, Saved: true}, nil
}

type handlers struct {
	a      *agent.Agent
	values map[string]json.RawMessage
	// bg is the agent's background subagents' (nil: it has none).
	bg Background // nil without background subagents
}

// RunTaskInput is run_task's arguments.
type RunTaskInput struct {
	Task     string `json:"task,omitempty" jsonschema:"the task, in words; empty only with a decision"`
	ThreadID string `json:"thread_id,omitempty" jsonschema:"a thread to continue; empty starts a new one"`
	Decision string `json:"decision,omitempty" jsonschema:"approve or reject: the decision on every tool call the thread waits on"`
	Message  string `json:"message,omitempty" jsonschema:"with reject, what the agent is told"`
}

// RunTaskOutput is run_task's structured result.
type RunTaskOutput struct {
	ThreadID string `json:"thread_id"`
	Status   string `json:"status"`
	Answer   string `json:"answer"`
	// Pending are the tool calls awaiting a decision when Status is
	// "interrupted".
	Pending []PendingCall `json:"pending,omitempty"`
	// BackgroundApprovals are the requests for approval the thread's
	// background tasks waited on when the run ended, whatever its status
	// (answer_background_approval answers one).
	BackgroundApprovals []BackgroundApproval `json:"background_approvals,omitempty"`
}

// PendingCall is a tool call that awaits a decision.
type PendingCall struct {
	Tool string `json:"tool"`
	// Args are the call's arguments. A map, not the json.RawMessage the
	// agent keeps: the SDK infers the output schema from this type, and
	// takes a json.RawMessage for bytes (an array), which no call's
	// arguments validate against.
	Args map[string]any `json:"args"`
}

// pendingCall is r as run_task reports it.
func pendingCall(r agent.ActionRequest) PendingCall {
	args := map[string]any{}
	if err := json.Unmarshal(r.Args, &args); err != nil || args == nil {
		// Not an object (a model's malformed call): shown whole, so that
		// the host still sees what it decides on.
		args = map[string]any{"raw": string(r.Args)}
	}
	return PendingCall{Tool: r.Tool, Args: args}
}

func (h *handlers) runTask(ctx context.Context, req *sdk.CallToolRequest, in RunTaskInput) (*sdk.CallToolResult, RunTaskOutput, error) {
	d, err := in.Decide()
	if err != nil {
		return nil, RunTaskOutput{}, err
	}
	run := agent.Input{ThreadID: in.ThreadID, Messages: []llm.Message{llm.UserText(in.Task)}}
	if d != nil {
		pending, err := h.pending(ctx, in.ThreadID)
		if err != nil {
			return nil, RunTaskOutput{}, err
		}
		if len(pending) == 0 {
			return nil, RunTaskOutput{}, fmt.Errorf("thread %s waits on no decision", in.ThreadID)
		}
		run = agent.Input{ThreadID: in.ThreadID, Decisions: slices.Repeat([]agent.Decision{*d}, len(pending))}
	}
	run.Values = h.values
	progress := NewProgress(req)
	var end agent.Event
	answer := ""
	for e, err := range h.a.Stream(ctx, run) {
		if err != nil {
			if ctx.Err() != nil {
				return nil, RunTaskOutput{}, ctx.Err()
			}
			return nil, RunTaskOutput{}, err
		}
		if e.Type == agent.EventRunEnd && len(e.Namespace) == 0 {
			end = e
		}
		if text, ok := Answer(&e); ok {
			answer = text
		}
		if msg := ProgressMessage(&e); msg != "" {
			progress.Notify(ctx, msg)
		}
	}
	res, out := TaskEnd{ThreadID: end.ThreadID, Status: end.Status, Answer: answer, Pending: end.Interrupts, Error: end.Error}.Result(RunTaskTool)
	WithBackgroundApprovals(ctx, h.bg, res, &out)
	return res, out, nil
}

// Decide reads the arguments' decision: nil for a new task, the decision
// on every tool call the thread waits on otherwise. It fails on arguments
// that are neither: no task and no decision, a decision without the
// thread_id or with a task, a decision other than approve or reject.
func (in RunTaskInput) Decide() (*agent.Decision, error) {
	switch in.Decision {
	case "":
		if strings.TrimSpace(in.Task) == "" {
			return nil, errors.New("task is empty")
		}
		return nil, nil
	}
	d, err := decisionOf(in.Decision, in.Message)
	if err != nil {
		return nil, err
	}
	if in.ThreadID == "" || in.Task != "" {
		return nil, errors.New("a decision goes with the thread_id of the thread that waits, and no task")
	}
	return &d, nil
}

// decisionOf reads a tool's decision argument, approve or reject (with
// message, what the agent is told), as run_task and
// answer_background_approval take it.
func decisionOf(decision, message string) (agent.Decision, error) {
	switch decision {
	case "approve":
		return agent.Decision{Type: agent.DecisionApprove}, nil
	case "reject":
		return agent.Decision{Type: agent.DecisionReject, Message: message}, nil
	}
	return agent.Decision{}, fmt.Errorf("decision must be approve or reject, not %q", clip.Text(decision, 40))
}

// TaskEnd is how the run of a task ended, as a tool call reports it: what
// run_task answers, and what each assistant's tool of the LangGraph API
// server's /mcp answers (package server), so that a host sees one
// contract from both.
type TaskEnd struct {
	ThreadID string
	Status   agent.RunStatus
	// Answer is the main agent's last message without tool calls.
	Answer string
	// Pending are the tool calls awaiting a decision, when Status is
	// interrupted.
	Pending []agent.ActionRequest
	// Error is why the run failed, for any other Status.
	Error string
}

// Result returns the call's result and its structured content. tool is
// the tool the host calls again with the thread_id and a decision, as the
// text of an interrupted run tells it.
func (e TaskEnd) Result(tool string) (*sdk.CallToolResult, RunTaskOutput) {
	out := RunTaskOutput{ThreadID: e.ThreadID, Status: string(e.Status), Answer: e.Answer}
	res := &sdk.CallToolResult{}
	switch e.Status {
	case agent.StatusCompleted:
		res.Content = []sdk.Content{&sdk.TextContent{Text: out.Answer + "\n\n[thread_id: " + out.ThreadID + "]"}}
	case agent.StatusInterrupted:
		var b strings.Builder
		fmt.Fprintf(&b, "The run on thread %s stopped: these tool calls need a decision (call %s with the thread_id and decision approve or reject):\n", out.ThreadID, tool)
		for _, r := range e.Pending {
			out.Pending = append(out.Pending, pendingCall(r))
			fmt.Fprintf(&b, "- %s %s\n", r.Tool, r.Args)
		}
		res.Content = []sdk.Content{&sdk.TextContent{Text: b.String()}}
	default:
		res.IsError = true
		res.Content = []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("The run on thread %s failed: %s", out.ThreadID, e.Error)}}
	}
	return res, out
}

// pending returns what a thread waits on.
func (h *handlers) pending(ctx context.Context, threadID string) ([]agent.ActionRequest, error) {
	snap, err := h.load(ctx, threadID)
	if err != nil {
		return nil, err
	}
	return agent.PendingRequests(snap.Meta)
}

func (h *handlers) load(ctx context.Context, threadID string) (*checkpoint.Snapshot, error) {
	saver := h.a.Checkpointer()
	if saver == nil {
		return nil, errors.New("this agent keeps no threads (it has no checkpointer)")
	}
	snap, err := saver.Load(ctx, threadID, "")
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, fmt.Errorf("no thread %q", threadID)
	}
	return snap, err
}

// Answer returns the text of e when e is a message of the main agent
// without tool calls: the run's answer, if no later one comes.
func Answer(e *agent.Event) (string, bool) {
	if e.Type != agent.EventMessage || len(e.Namespace) > 0 || e.Message == nil || len(e.Message.ToolCalls) > 0 {
		return "", false
	}
	return e.Message.Text(), true
}

// ProgressMessage is what a run's event tells a host that follows the
// run, as the message of a progress notification: a tool called, a tool
// failed, the todo list's progress, a notice (a subagent's prefixed with
// its path); "" for an event that tells nothing.
func ProgressMessage(e *agent.Event) string {
	who := ""
	if len(e.Namespace) > 0 {
		who = strings.Join(e.Namespace, "/") + ": "
	}
	switch e.Type {
	case agent.EventToolCall:
		return fmt.Sprintf("%scalling %s", who, e.Name)
	case agent.EventToolResult:
		if e.IsError {
			return fmt.Sprintf("%s%s failed", who, e.Name)
		}
	case agent.EventState:
		plan, ok := todos.FromEvent(*e)
		if !ok {
			return ""
		}
		return fmt.Sprintf("%stodos: %d of %d done", who, todos.Done(plan), len(plan))
	case agent.EventNotice:
		return who + e.Content
	}
	return ""
}

// Progress sends a tool call's progress notifications, when the host
// asked for them (the call's progress token). It is not safe for
// concurrent use: a call's notifications go out in order, from one
// goroutine.
type Progress struct {
	req   *sdk.CallToolRequest
	token any
	n     float64
}

// NewProgress returns the progress of the call req.
func NewProgress(req *sdk.CallToolRequest) *Progress {
	return &Progress{req: req, token: req.Params.GetProgressToken()}
}

// Wanted reports whether the host asked for progress notifications.
func (p *Progress) Wanted() bool { return p.token != nil }

// Notify sends msg as the call's next progress notification, if the host
// asked for them. ctx must be the call's (the SDK sends a notification
// on the stream of the request it belongs to).
func (p *Progress) Notify(ctx context.Context, msg string) {
	if p.token == nil {
		return
	}
	p.n++
	// A client that stopped listening does not stop the run.
	_ = p.req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: msg})
}

// ThreadInput names a thread.
type ThreadInput struct {
	ThreadID string `json:"thread_id" jsonschema:"the thread, as run_task returned it"`
}

func (h *handlers) todos(ctx context.Context, _ *sdk.CallToolRequest, in ThreadInput) (*sdk.CallToolResult, any, error) {
	snap, err := h.load(ctx, in.ThreadID)
	if err != nil {
		return nil, nil, err
	}
	list := string(snap.Values[todos.Value])
	if list == "" || list == "null" {
		list = "[]"
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: list}}}, nil, nil
}

func (h *handlers) listFiles(ctx context.Context, _ *sdk.CallToolRequest, in ThreadInput) (*sdk.CallToolResult, any, error) {
	snap, err := h.load(ctx, in.ThreadID)
	if err != nil {
		return nil, nil, err
	}
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(snap.Files)) {
		fmt.Fprintf(&b, "%s (%d bytes)\n", p, len(snap.Files[p].Content))
	}
	if b.Len() == 0 {
		b.WriteString("No files in the thread's state.")
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}, nil, nil
}

// ReadFileInput names a file of a thread.
type ReadFileInput struct {
	ThreadID string `json:"thread_id" jsonschema:"the thread, as run_task returned it"`
	Path     string `json:"path" jsonschema:"the file's path, as list_thread_files shows it"`
}

func (h *handlers) readFile(ctx context.Context, _ *sdk.CallToolRequest, in ReadFileInput) (*sdk.CallToolResult, any, error) {
	snap, err := h.load(ctx, in.ThreadID)
	if err != nil {
		return nil, nil, err
	}
	f, ok := snap.Files[in.Path]
	if !ok {
		return nil, nil, fmt.Errorf("thread %s has no file %q in its state", in.ThreadID, in.Path)
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: f.Content}}}, nil, nil
}
