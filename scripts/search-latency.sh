#!/bin/bash
# Whole-process `git mem search` latency on N synthetic exchanges
# (docs/BENCHMARKS.md): builds a memory in a temporary folder with the given
# git-mem binary, then times 21 searches per mode and prints p50 / p95.
#   scripts/search-latency.sh 15000 bin/git-mem
set -euo pipefail
# Cold searches, and no warm search process left behind (docs/CONTRACT.md,
# "The warm search process"); GIT_MEM_NO_SERVER= in the caller's environment
# measures the warm path.
export GIT_MEM_NO_SERVER=${GIT_MEM_NO_SERVER-1}
N=${1:-15000}
BIN=$(realpath "${2:-bin/git-mem}")
cd "$(dirname "$0")/.."
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
go run ./scripts/synth -n "$N" > "$W/ex.jsonl"
export GIT_MEM_DIR=$W/mem
"$BIN" init >/dev/null
secs() { local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
echo "add --no-index: $(secs "$BIN" add --no-index "$W/ex.jsonl") ms"
echo "reindex: $(secs "$BIN" reindex) ms"
"$BIN" search warmup >/dev/null 2>&1 || true
for mode in session-bm25 fused verbatim-bm25; do
	ts=$(for i in $(seq 1 21); do secs "$BIN" search "auth middleware TypeError sessionTTL" --mode "$mode"; done | sort -n)
	echo "$mode p50 $(echo "$ts" | sed -n 11p) ms, p95 $(echo "$ts" | sed -n 20p) ms"
done
echo "index: $(du -sh "$W/mem/mem/index" | cut -f1)"
