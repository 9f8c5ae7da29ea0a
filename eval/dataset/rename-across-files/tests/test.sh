#!/bin/bash
ok=1
[ "$(python3 main.py 2>/dev/null)" = "13 [3, 5, 7]" ] || ok=0
grep -qw calc ./*.py && ok=0
python3 -c "from mathlib import compute; assert compute(2, 5) == 11" 2>/dev/null || ok=0
echo $ok > /logs/verifier/reward.txt
