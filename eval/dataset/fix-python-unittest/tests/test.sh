#!/bin/bash
# The folder's own tests, as shipped, and hidden ones the agent never saw.
cp /tests/test_chunks.py ./test_chunks.py
cp /tests/test_hidden.py ./test_hidden.py
if python3 -m unittest test_chunks test_hidden > /logs/verifier/unittest.txt 2>&1; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
rm -f ./test_hidden.py
