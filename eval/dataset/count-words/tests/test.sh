#!/bin/bash
# The count must be 10, alone on its line.
if [ "$(tr -d ' \n' < count.txt 2>/dev/null)" = "10" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
