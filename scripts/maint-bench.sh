#!/bin/bash
# How long a writer waits while maintenance runs (issue 19's "never blocks
# a writer for more than 1 s"): on a copy of the cached N-exchange memory of
# scripts/bench-scale.sh, first a writer alone (ADDS adds of one exchange,
# indexed, one whole `git mem add` process each), then the same writer while
# the background maintenance's own command (gitstore.repackArgs: `git repack
# -d -q --geometric=2`) runs. Prints each phase's adds: count, median and
# longest, and the repack's wall time. (No `repack -a -d` phase: beside a
# writer it can delete the writer's new pack, the loss of issue 13.)
#
#   scripts/maint-bench.sh [N] (default 100000; the cache must exist:
#   scripts/bench-scale.sh -n N builds it). BIN: the front (default
#   bin/git-mem); ADDS (default 40); PACKS: split the copy into this many
#   extra small packs first (default 20), so geometric has work to do.
set -euo pipefail
# Cold searches, and no warm search process left behind (docs/CONTRACT.md,
# "The warm search process"); GIT_MEM_NO_SERVER= in the caller's environment
# measures the warm path.
export GIT_MEM_NO_SERVER=${GIT_MEM_NO_SERVER-1}
N=${1:-100000}
cd "$(dirname "$0")/.."
BIN=$(realpath "${BIN:-bin/git-mem}")
ADDS=${ADDS:-40}
PACKS=${PACKS:-20}
CACHE=${GIT_MEM_BENCH_CACHE:-${TMPDIR:-/tmp}/git-mem-bench/$N}
[ -f "$CACHE/ready" ] || { echo "maint-bench.sh: no cached memory at $CACHE (run scripts/bench-scale.sh -n $N)" >&2; exit 2; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
go build -o "$W/synth" ./scripts/synth
cp -a "$CACHE/mem" "$W/mem"
export GIT_MEM_DIR=$W/mem GIT_MEM_AUTO_REPACK=0
"$BIN" search warm-up >/dev/null 2>&1 || true # index caught up before timing
"$W/synth" -n $((N + 3 * ADDS + PACKS * 50)) | tail -n $((3 * ADDS + PACKS * 50)) >"$W/more.jsonl"
split -l 1 -a 5 "$W/more.jsonl" "$W/one-"
mapfile -t ONES < <(ls "$W"/one-*)
next=0
# Small packs, as many writers' adds leave them (each add of 50 writes one).
for _ in $(seq "$PACKS"); do
	cat "${ONES[@]:$next:50}" >"$W/batch.jsonl"
	next=$((next + 50))
	"$BIN" add --no-index "$W/batch.jsonl" >/dev/null
done
"$BIN" search warm-up >/dev/null 2>&1 || true

echo "# maint-bench: N=$N, $(date -u +%FT%TZ), nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg), $(find "$W/mem/objects/pack" -name '*.pack' | wc -l) packs"
# writer PHASE: adds one exchange at a time until ADDS are done or, with a
# pid, until that process ends; prints count, median, longest add in ms.
writer() {
	local phase=$1 pid=${2:-} n=0 s e
	: >"$W/$phase.ms"
	while [ "$n" -lt "$ADDS" ] || { [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }; do
		[ "$next" -lt "${#ONES[@]}" ] || break
		s=$(date +%s%N)
		"$BIN" add "${ONES[$next]}" >/dev/null
		e=$(date +%s%N)
		echo $(((e - s) / 1000000)) >>"$W/$phase.ms"
		next=$((next + 1)) n=$((n + 1))
		[ -z "$pid" ] || kill -0 "$pid" 2>/dev/null || break
	done
	sort -n "$W/$phase.ms" | awk -v p="$phase" '{a[NR] = $1} END {printf "%-34s %3d adds, median %5d ms, longest %5d ms\n", p, NR, a[int(NR / 2) + 1], a[NR]}'
}
writer "writer alone"
for mode in geometric; do
	args=(repack -d -q --geometric=2)
	s=$(date +%s%N)
	git --git-dir "$W/mem" "${args[@]}" &
	rp=$!
	writer "writer beside repack ($mode)" "$rp"
	wait "$rp"
	e=$(date +%s%N)
	echo "  git ${args[*]}: $(((e - s) / 1000000)) ms, $(find "$W/mem/objects/pack" -name '*.pack' | wc -l) packs after"
done
git --git-dir "$W/mem" fsck --strict --no-progress >/dev/null && echo "git fsck --strict: clean"
