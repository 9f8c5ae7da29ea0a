#!/usr/bin/env bash
# SessionStart and SessionEnd: keep a log of sessions in the project, and
# give a starting session some context (additionalContext).
input=$(cat)
event=$(jq -r '.hook_event_name' <<<"$input")
why=$(jq -r '.source // .reason' <<<"$input")
session=$(jq -r '.session_id' <<<"$input")
echo "$event $why $session" >> "$CLAUDE_PROJECT_DIR/.claude/session.log"
if [ "$event" = SessionStart ]; then
  jq -n '{hookSpecificOutput: {hookEventName: "SessionStart", additionalContext: "Session notes: the build command is make check."}}'
fi
exit 0
