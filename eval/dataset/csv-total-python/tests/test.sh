#!/bin/bash
# The script, on the task's file and on one it never saw.
ok=1
[ "$(python3 total.py sales.csv 2>/dev/null)" = "35.75" ] || ok=0
[ "$(python3 total.py /tests/more.csv 2>/dev/null)" = "1000.01" ] || ok=0
echo $ok > /logs/verifier/reward.txt
