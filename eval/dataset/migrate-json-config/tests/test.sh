#!/bin/bash
# The script, on the task's configuration and on one it never saw.
ok=1
sh migrate.sh < config.json > /logs/verifier/config.v2.json 2>/dev/null || ok=0
python3 /tests/check.py config.json /logs/verifier/config.v2.json 2>/dev/null || ok=0
sh migrate.sh < /tests/other.json > /logs/verifier/other.v2.json 2>/dev/null || ok=0
python3 /tests/check.py /tests/other.json /logs/verifier/other.v2.json 2>/dev/null || ok=0
echo $ok > /logs/verifier/reward.txt
