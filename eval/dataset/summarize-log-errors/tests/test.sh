#!/bin/bash
# The script, on the task's log and on two it never saw (a tie; no errors).
ok=1
want=$'db 3\nauth 1\ncache 1\nhttp 1'
[ "$(python3 errors.py app.log 2>/dev/null)" = "$want" ] || ok=0
want=$'api 2\nqueue 2'
[ "$(python3 errors.py /tests/other.log 2>/dev/null)" = "$want" ] || ok=0
out=$(python3 errors.py /tests/quiet.log 2>/dev/null) || ok=0
[ -z "$out" ] || ok=0
echo $ok > /logs/verifier/reward.txt
