#!/bin/bash
# Paired before/after: add of the 3,099 real coding exchanges into a fresh
# memory (redaction, distillation, indexing), then 21 whole-process searches.
set -e
# Cold searches, and no warm search process left behind (docs/CONTRACT.md,
# "The warm search process"); GIT_MEM_NO_SERVER= in the caller's environment
# measures the warm path.
export GIT_MEM_NO_SERVER=${GIT_MEM_NO_SERVER-1}
# OLD and NEW are the two binaries; the corpus is ../shared/eval/coding.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cat "$ROOT"/../shared/eval/coding/*/exchanges.jsonl > /tmp/coding.jsonl
q="auth middleware TypeError sessionTTL"
for round in 1 2; do
for b in old new; do
  if [ $b = old ]; then bin=$OLD; else bin=$NEW; fi
  d=$(mktemp -d); export GIT_MEM_DIR=$d/mem.git
  $bin init >/dev/null
  s=$(date +%s.%N); $bin add /tmp/coding.jsonl >/dev/null; e=$(date +%s.%N)
  add=$(echo "$e - $s" | bc)
  $bin search "$q" >/dev/null
  ts=()
  for i in $(seq 21); do s=$(date +%s%N); $bin search "$q" >/dev/null; e=$(date +%s%N); ts+=($(( (e-s)/1000000 ))); done
  p50=$(printf "%s\n" "${ts[@]}" | sort -n | sed -n 11p)
  echo "round $round $b add ${add}s ($(echo "3099 / $add" | bc) /s) search p50 ${p50} ms"
  rm -rf $d
done; done
