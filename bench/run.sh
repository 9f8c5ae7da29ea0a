#!/bin/sh
# Runs the side-by-side benchmarks of docs/BENCHMARKS.md ("Side by side:
# JavaScript DeepAgents, Eino and deepagents-go"):
#
#   bench/run.sh                 the full comparison (about 30-45 minutes on 2 cores)
#   bench/run.sh -quick          a quick pass (a few minutes)
#   bench/run.sh -reps 5 -json results.json
#
# Arguments go to bench/compare (go run ./bench/compare -h lists them).
# Then bench/grep (with -cli) and bench/glob compare the grep and glob tools
# with ripgrep and find; SEARCH_RUNS sets their runs per query (default 7;
# 2 with -quick), SEARCH=0 skips them. Needs Go 1.26, Node 20+ with npm,
# ripgrep and find; bench/compare installs bench/js's npm packages (npm ci)
# and builds the bench/eino module itself.
set -eu
cd "$(dirname "$0")/.."

runs=${SEARCH_RUNS:-7}
for a in "$@"; do
	case $a in -quick|--quick) runs=${SEARCH_RUNS:-2} ;; esac
done

echo "== machine"
echo "$(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"
free -h 2>/dev/null | sed -n 2p || true
uname -sr
go version
node --version 2>/dev/null || echo "node: not found"
uptime

echo
echo "== agent loop: go run ./bench/compare $*"
go run ./bench/compare "$@"

if [ "${SEARCH:-1}" != 0 ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	go build -o "$tmp/deepagents" ./cmd/deepagents
	echo
	echo "== grep: go run ./bench/grep -md -runs $runs -cli DEEPAGENTS"
	go run ./bench/grep -md -runs "$runs" -cli "$tmp/deepagents"
	echo
	echo "== glob: go run ./bench/glob -runs $runs -cli DEEPAGENTS"
	go run ./bench/glob -runs "$runs" -cli "$tmp/deepagents"
fi
