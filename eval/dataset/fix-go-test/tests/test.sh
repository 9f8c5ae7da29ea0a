#!/bin/bash
# The module's own test, as shipped, and a hidden one the agent never saw.
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
rm -rf ./sum_test.go ./hidden_test.go
cp /tests/sum_test.go.txt ./sum_test.go
cp /tests/hidden_test.go.txt ./hidden_test.go
if go test ./... > /logs/verifier/go-test.txt 2>&1; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
rm -f ./hidden_test.go
