#!/bin/bash
ok=1
[ "$(sh greet.sh Ada)" = "hello Ada" ] || ok=0
[ "$(sh greet.sh --shout Ada)" = "HELLO ADA" ] || ok=0
[ "$(sh greet.sh --shout 'Grace Hopper')" = "HELLO GRACE HOPPER" ] || ok=0
echo $ok > /logs/verifier/reward.txt
