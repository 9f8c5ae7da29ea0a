#!/bin/bash
# The module builds with the new name in every package and the old name
# free; nothing but the new name is left; the files are gofmt-ed. go build
# of packages without a main links nothing: it is fast even with a fresh
# cache.
export GOTOOLCHAIN=local GOFLAGS=-mod=mod GOWORK=off
ok=1
go build ./... > /logs/verifier/build.txt 2>&1 || ok=0
cp /tests/hidden.go.txt report/zz_hidden.go
cp /tests/oldname.go.txt shape/zz_oldname.go
go build ./... >> /logs/verifier/build.txt 2>&1 || ok=0
rm -f report/zz_hidden.go shape/zz_oldname.go
grep -rqw Rect --include='*.go' . && ok=0
[ -z "$(gofmt -l .)" ] || ok=0
echo $ok > /logs/verifier/reward.txt
