#!/usr/bin/env bash
# PreToolUse (matcher "Bash"): refuse recursive forced deletes. Exit status 2
# blocks the call; what is written on stderr goes back to the model.
command=$(jq -r '.tool_input.command // empty')
if printf '%s\n' "$command" | grep -Eq '(^|[[:space:];&|])rm[[:space:]]+-[[:alpha:]]*(rf|fr)'; then
  echo "Blocked: 'rm -rf' is not allowed in this project. Delete the files you mean one by one." >&2
  exit 2
fi
exit 0
