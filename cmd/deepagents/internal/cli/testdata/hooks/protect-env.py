#!/usr/bin/env python3
"""PreToolUse (matcher "Read|Edit|Write"): keep the model away from .env files.

Answers with JSON on stdout: hookSpecificOutput.permissionDecision "deny",
whose reason goes to the model.
"""
import json
import sys

data = json.load(sys.stdin)
path = data.get("tool_input", {}).get("file_path", "")
if ".env" in path:
    json.dump({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"{path} holds secrets; .env files are off limits",
        }
    }, sys.stdout)
sys.exit(0)
