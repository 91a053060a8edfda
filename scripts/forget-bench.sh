#!/bin/bash
# Forget one exchange from an N-exchange synthetic memory while a writer adds
# one exchange at a time; prints forget's time, its exclusive moments and
# the writer's longest add.
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-git-mem}   # the binary to measure
N=${1:-15000}
d=/tmp/fb-$N; export GIT_MEM_DIR=$d/mem.git
if [ ! -d $d ]; then mkdir -p $d; (cd "$ROOT" && go run ./scripts/synth -n $N > $d/ex.jsonl); $BIN init >/dev/null; $BIN add --no-index $d/ex.jsonl >/dev/null; $BIN reindex >/dev/null; fi
id=$(sed -n "${LINE:-1}p" $d/ex.jsonl | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["id"])')
( for i in $(seq 200); do s=$(date +%s%N); echo "{\"id\":\"w$RANDOM$i\",\"turns\":[{\"role\":\"user\",\"text\":\"writer $i\"}]}" | $BIN add --no-index - >/dev/null; e=$(date +%s%N); echo $(( (e-s)/1000000 )); done > $d/writer.txt ) &
wp=$!
sleep 2
s=$(date +%s.%N); $BIN forget "$id" --yes --json > $d/forget.json; e=$(date +%s.%N)
kill $wp 2>/dev/null || true; wait $wp 2>/dev/null || true
echo "N=$N forget $(echo "$e - $s" | bc) s; exclusive_ms $(python3 -c "import json; print(json.load(open('$d/forget.json'))['purged']['exclusive_ms'])"); writer adds $(wc -l < $d/writer.txt), median $(sort -n $d/writer.txt | sed -n "$(( $(wc -l < $d/writer.txt) / 2 + 1 ))p") ms, max $(sort -n $d/writer.txt | tail -1) ms"
