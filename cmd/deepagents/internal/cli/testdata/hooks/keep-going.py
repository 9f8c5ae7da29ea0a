#!/usr/bin/env python3
"""Stop: do not let the agent stop while its answer says work is left (TODO).

{"decision": "block", "reason": ...} sends it back to work with the reason;
stop_hook_active is true when it was sent back already, so that it may stop.
"""
import json
import sys

data = json.load(sys.stdin)
if data.get("stop_hook_active"):
    sys.exit(0)
if "TODO" in data.get("last_assistant_message", ""):
    print(json.dumps({"decision": "block", "reason": "Your answer says TODO: finish the work before you stop."}))
sys.exit(0)
