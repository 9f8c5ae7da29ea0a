#!/bin/bash
# The script, on the task's file and on one it never saw (a tie included).
ok=1
want=$'east 30.00\nnorth 13.00\nsouth 12.50\nwest 12.25'
[ "$(bash report.sh orders.csv 2>/dev/null)" = "$want" ] || ok=0
want=$'zeta 7.50\nalpha 5.00\nmid 5.00\nbeta 1.05'
[ "$(bash report.sh /tests/more.csv 2>/dev/null)" = "$want" ] || ok=0
echo $ok > /logs/verifier/reward.txt
