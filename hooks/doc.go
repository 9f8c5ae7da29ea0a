// Package hooks runs hooks: commands, or Go functions, that a user ties to
// the events of an agent's life, in Claude Code's hook format, so that the
// hooks people already have for Claude Code work unchanged.
//
// The events (Events, Abouts) are PreToolUse (before a tool call, which a
// hook may allow, refuse, send for approval or rewrite), PermissionRequest
// (an approval about to be asked, which a hook may answer), PostToolUse and
// PostToolUseFailure (after a call that succeeded or failed),
// UserPromptSubmit (a prompt, which a hook may block or add context to),
// SubagentStart, Stop and SubagentStop (a final answer, which a hook may
// send back for more work), PreCompact (before the conversation is
// summarized), Notification (approval needed, or the terminal idle),
// SessionStart and SessionEnd. The agent's events are run by [Middleware] (deepagents.New
// adds it); SessionStart, SessionEnd and the idle notification belong to
// the program that has sessions (the CLI), which calls [Runner.Run].
//
// A hook is a command, an http endpoint (the event POSTed as JSON, see
// http.go), a prompt (a model decides, see prompt.go) or a Go function.
// A command hook gets the event as JSON on its standard input and answers
// with its exit status and, optionally, JSON on its standard output: exit 0
// goes on, exit 2 blocks (its standard error is the reason, given to the
// model), any other status is a warning shown to the user. See
// docs/hooks.md for every field and how hooks meet permission rules and
// approvals.
//
// Hooks read from Claude Code's settings files are in its dialect
// ([DialectClaude]): they match and receive Claude Code's tool names
// (Bash, Write, Edit, Read, Glob, Grep, Task, ...) and input fields, with
// the agent's paths as the host's absolute paths, and their updatedInput
// is mapped back.
package hooks
