package hooks

import (
	"encoding/json"
	"slices"
	"time"
)

// Event names a moment a hook can run at, as Claude Code names it.
type Event string

// The events.
const (
	// PreToolUse: before a tool call runs (and before the permission rules
	// and approvals decide about it). Matched on the tool's name.
	PreToolUse Event = "PreToolUse"
	// PermissionRequest: a tool call is about to wait for the user's
	// approval. Matched on the tool's name; a hook may allow it (unless
	// an ask rule asked) or deny it, in the user's place.
	PermissionRequest Event = "PermissionRequest"
	// PostToolUse: after a tool call succeeded. Matched on the tool's name.
	PostToolUse Event = "PostToolUse"
	// PostToolUseFailure: after a tool call failed (its result is an
	// error). Matched on the tool's name; its context is added to the
	// error the model reads.
	PostToolUseFailure Event = "PostToolUseFailure"
	// SubagentStart: a subagent starts its task. Matched on its name; its
	// context is added to the task the subagent reads.
	SubagentStart Event = "SubagentStart"
	// UserPromptSubmit: a user's prompt, before the model sees it.
	UserPromptSubmit Event = "UserPromptSubmit"
	// Stop: the main agent's final answer, before the run ends.
	Stop Event = "Stop"
	// SubagentStop: a subagent's final answer. Matched on its name.
	SubagentStop Event = "SubagentStop"
	// PreCompact: before the conversation is summarized. Matched on the
	// trigger: "manual" or "auto".
	PreCompact Event = "PreCompact"
	// Notification: the agent waits for the user. Matched on the type:
	// "permission_prompt" (an approval) or "idle_prompt" (the terminal
	// waited a minute for input).
	Notification Event = "Notification"
	// SessionStart: a terminal session or a run starts. Matched on the
	// source: "startup", "resume", "clear" or "compact".
	SessionStart Event = "SessionStart"
	// SessionEnd: a terminal session or a run ends. Matched on the reason:
	// "clear", "prompt_input_exit" or "other".
	SessionEnd Event = "SessionEnd"
)

// Events are the events, in the order of an agent's life.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure, Notification, SubagentStart, PreCompact, SubagentStop, Stop, SessionEnd}

// About says when an event runs and what its hooks' matcher is matched
// on ("" for none), as deepagents hooks lists them.
type About struct {
	When, MatchedOn string
}

// Abouts describes each of Events.
var Abouts = map[Event]About{
	SessionStart:       {"a terminal session or a run starts", "source: startup, resume, clear, compact"},
	UserPromptSubmit:   {"a prompt is sent, before the model sees it", ""},
	PreToolUse:         {"before a tool call, before the rules and approvals decide", "the tool's name"},
	PermissionRequest:  {"a tool call is about to wait for approval", "the tool's name"},
	PostToolUse:        {"after a tool call that succeeded", "the tool's name"},
	PostToolUseFailure: {"after a tool call that failed", "the tool's name"},
	Notification:       {"the agent waits for the user", "notification_type: permission_prompt, idle_prompt"},
	SubagentStart:      {"a subagent starts its task", "the subagent's name"},
	PreCompact:         {"before the conversation is summarized", "trigger: manual, auto"},
	SubagentStop:       {"a subagent's final answer", "the subagent's name"},
	Stop:               {"the main agent's final answer", ""},
	SessionEnd:         {"a terminal session or a run ends", "reason: clear, prompt_input_exit, other"},
}

// HandlerTypes are the types of Claude Code's handlers that run here.
var HandlerTypes = []string{"command", "http", "prompt"}

// DefaultPromptTimeout bounds a prompt hook that sets no timeout, as in
// Claude Code.
const DefaultPromptTimeout = 30 * time.Second

// Known reports whether e is one of Events.
func (e Event) Known() bool { return slices.Contains(Events, e) }

// Notification types, and their messages.
const (
	NotifyPermission = "permission_prompt"
	NotifyIdle       = "idle_prompt"
)

// Input is an event as a hook receives it: the JSON on a command's
// standard input, with Claude Code's field names. Which fields are set
// depends on the event.
type Input struct {
	// SessionID is the thread's ID.
	SessionID string `json:"session_id"`
	// TranscriptPath is where the conversation is kept, when it is a
	// file; "" here (threads are in a database).
	TranscriptPath string `json:"transcript_path"`
	// Cwd is the project folder (Config.Dir).
	Cwd string `json:"cwd"`
	// PermissionMode is the thread's permission mode, in Claude Code's
	// words for hooks of its dialect (default, acceptEdits, plan,
	// bypassPermissions).
	PermissionMode string `json:"permission_mode,omitempty"`
	HookEventName  Event  `json:"hook_event_name"`

	// PreToolUse, PermissionRequest, PostToolUse and PostToolUseFailure.
	ToolName  string          `json:"tool_name,omitempty"`
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// ToolResponse (PostToolUse) is the result: {"content": ...} in the
	// agent's dialect; in Claude Code's, what its tool of that name
	// answers (Bash's stdout, Write's filePath, ...).
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	// Error is PostToolUseFailure's: the failed call's result.
	Error string `json:"error,omitempty"`

	// Prompt is UserPromptSubmit's prompt.
	Prompt string `json:"prompt,omitempty"`

	// StopHookActive (Stop, SubagentStop) is true when a Stop hook has
	// already sent this run back for more work: a hook should let it end
	// then, or it may loop.
	StopHookActive *bool `json:"stop_hook_active,omitempty"`
	// AgentType is SubagentStart's and SubagentStop's subagent; AgentID
	// names that subagent's run (its thread).
	AgentType string `json:"agent_type,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	// LastAssistantMessage is the final answer's text (Stop,
	// SubagentStop).
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`

	// Trigger is PreCompact's "manual" or "auto"; CustomInstructions the
	// user's focus for a manual one.
	Trigger            string  `json:"trigger,omitempty"`
	CustomInstructions *string `json:"custom_instructions,omitempty"`

	// Source is SessionStart's; Reason SessionEnd's.
	Source string `json:"source,omitempty"`
	Reason string `json:"reason,omitempty"`

	// Message and NotificationType are Notification's.
	Message          string `json:"message,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`
}

// matchOn is what a hook's matcher is matched against for the event.
func (in *Input) matchOn() string {
	switch in.HookEventName {
	case PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure:
		return in.ToolName
	case SubagentStart, SubagentStop:
		return in.AgentType
	case PreCompact:
		return in.Trigger
	case Notification:
		return in.NotificationType
	case SessionStart:
		return in.Source
	case SessionEnd:
		return in.Reason
	}
	return "" // no matcher: every hook of the event runs
}

// matched reports whether the event has a matcher field at all.
func matched(e Event) bool {
	switch e {
	case UserPromptSubmit, Stop:
		return false
	}
	return true
}
