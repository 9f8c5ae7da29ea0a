#!/usr/bin/env bash
# PostToolUse (matcher "Edit|Write"): format the file just written: no
# whitespace at the ends of its lines. tool_input.file_path is the file's
# absolute path.
file=$(jq -r '.tool_input.file_path // empty')
[ -n "$file" ] || exit 0
case "$file" in
  "$CLAUDE_PROJECT_DIR"/*) ;;
  *) echo "not a file of the project: $file" >&2; exit 1 ;;
esac
sed 's/[[:space:]]*$//' "$file" > "$file.fmt" && mv "$file.fmt" "$file"
