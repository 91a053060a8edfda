#!/bin/bash
# Prints the rows of issue 19's table that a script can measure, at N
# synthetic exchanges (docs/BENCHMARKS.md, "Scale"):
#
#   scripts/bench-scale.sh [-n N] [--1m] [--bin PATH] [--runs R] [--no-coding] [--keep-index] [--coding-share F]
#
# -n N          size of the memory (default 100000); --1m is -n 1000000
# --bin PATH    the git-mem binary to measure (default: built from this tree)
# --runs R      timed runs per whole-process figure (default 15)
# --no-coding   skip the rows on the real coding exchanges (../shared/eval/coding)
# --keep-index  reuse the cached memory's index instead of timing a reindex
# --ingest-only only the write side (ingest_rows): add of 1,000 into N, add of
#               the coding exchanges, reindex, disk, sync of 1,000 on each side
# --no-sync     skip the sync rows (two copies of the memory and a remote)
# --coding-share F  a share F of the memory's sessions are the real coding
#               sessions (../shared/eval/coding, read in place) replicated with
#               new ids (`synth -coding`), so term statistics are realistic;
#               cached apart, in .../N-coding-F
#
# The memory of N exchanges (`go run ./scripts/synth -n N`, `git mem add
# --no-index`) is cached in $GIT_MEM_BENCH_CACHE (default
# ${TMPDIR:-/tmp}/git-mem-bench/N) and reused by later runs; each run copies it
# before writing into it, so the cache stays at N. Whole-process figures come
# from scripts/pbench, paired with a Go hello world built with the same
# toolchain: wall p50, CPU (user+sys) p50, peak RSS p50. Not printed:
# maintenance (repack) waits.
# BIN is the front binary (cmd/git-mem); git-mem-core is taken from beside it.
set -euo pipefail
# Cold searches, and no warm search process left behind (docs/CONTRACT.md,
# "The warm search process"); GIT_MEM_NO_SERVER= in the caller's environment
# measures the warm path.
export GIT_MEM_NO_SERVER=${GIT_MEM_NO_SERVER-1}
N=100000
BIN=
RUNS=15
CODING=1
KEEP=
INGEST=
SYNC=1
SHARE=
while [ $# -gt 0 ]; do
	case "$1" in
	-n) N=$2; shift ;;
	--1m) N=1000000 ;;
	--bin) BIN=$(realpath "$2"); shift ;;
	--runs) RUNS=$2; shift ;;
	--no-coding) CODING= ;;
	--keep-index) KEEP=1 ;;
	--ingest-only) INGEST=1 ;;
	--no-sync) SYNC= ;;
	--coding-share) SHARE=$2; shift ;;
	*) echo "bench-scale.sh: unknown argument $1 (see the comment at the top)" >&2; exit 2 ;;
	esac
	shift
done
cd "$(dirname "$0")/.."
ROOT=$PWD
SYNTH_ARGS=()
SUFFIX=
if [ -n "$SHARE" ]; then
	SYNTH_ARGS=(-coding "$ROOT/../shared/eval/coding" -coding-share "$SHARE")
	SUFFIX=-coding-$SHARE
fi
CACHE=${GIT_MEM_BENCH_CACHE:-${TMPDIR:-/tmp}/git-mem-bench/$N$SUFFIX}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$CACHE"

go build -o "$W/pbench" ./scripts/pbench
go build -o "$W/synth" ./scripts/synth
if [ -z "$BIN" ]; then
	go build -o "$W/" ./cmd/... # git-mem (the front), git-mem-search and git-mem-core beside it
	BIN=$W/git-mem
fi
mkdir -p "$W/hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello world") }\n' >"$W/hello/main.go"
printf 'module hello\n\ngo 1.26\n' >"$W/hello/go.mod"
(cd "$W/hello" && go build -o "$W/hello-world" .)

row() { printf '%-58s %s\n' "$1" "$2"; }
# timed CMD...: runs CMD once under /usr/bin/time; prints "wall s, CPU s, max RSS MB".
timed() {
	/usr/bin/time -f '%e %U %S %M' -o "$W/time" "$@" >/dev/null
	awk '{printf "%.1f s wall, %.1f s CPU, %.0f MB max RSS", $1, $2 + $3, $4 / 1024}' "$W/time"
}
pb() { "$W/pbench" -n "$RUNS" -- "$@" | sed 's/^/    /'; }

echo "# bench-scale: N=$N, $(date -u +%FT%TZ), nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
	"$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(go version | cut -d' ' -f3), $(git --version | cut -d' ' -f3)," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"

# The cached memory of N exchanges, and 1,000 more to add.
if [ ! -f "$CACHE/ready" ]; then
	rm -rf "$CACHE/mem"
	"$W/synth" -n "$N" "${SYNTH_ARGS[@]}" >"$CACHE/ex.jsonl"
	GIT_MEM_DIR=$CACHE/mem "$BIN" init >/dev/null
	row "build cache: add --no-index of $N" "$(GIT_MEM_DIR=$CACHE/mem timed "$BIN" add --no-index "$CACHE/ex.jsonl")"
	touch "$CACHE/ready"
fi
[ -f "$CACHE/more.jsonl" ] || "$W/synth" -n $((N + 1000)) "${SYNTH_ARGS[@]}" | tail -n 1000 >"$CACHE/more.jsonl"
export GIT_MEM_DIR=$CACHE/mem

# git-mem is the front binary; git-mem-core beside it does the rest (a
# build from before the split has no git-mem-core: then both are BIN).
CORE=$(dirname "$BIN")/git-mem-core
[ -x "$CORE" ] || CORE=$BIN
if [ -z "$INGEST" ]; then
	echo "## process start: hello world, the front, git-mem-core, a Claude Code hook (front), exec cost (status through the front vs git-mem-core)"
	GIT_MEM_DIR=$W/hookmem "$BIN" init >/dev/null
	printf '{"session_id":"s1","transcript_path":"%s/none.jsonl","cwd":"%s","hook_event_name":"SessionEnd"}\n' "$W" "$W" >"$W/payload.json"
	GIT_MEM_DIR=$W/hookmem pb "$W/hello-world" "$BIN version" "$CORE version" "$BIN hook claude-code <$W/payload.json" "$BIN status" "$CORE status"
fi

if [ -n "$KEEP" ] && [ -f "$CACHE/indexed" ]; then
	row "reindex" "skipped (--keep-index)"
else
	row "reindex of $N" "$(timed "$BIN" reindex)"
	touch "$CACHE/indexed"
fi
"$BIN" search warm-up >/dev/null 2>&1 || true

if [ -z "$INGEST" ]; then
	echo "## search, whole process, default mode, page cache warm"
	pb "$BIN search auth middleware TypeError sessionTTL" "$BIN search dotnet test hangs" "$BIN version"

	if command -v python3 >/dev/null; then
	echo "## search, whole process, the memory's files evicted from the page cache before each run (binaries cached)"
	printf 'import os, sys\nfor d, _, fs in os.walk(sys.argv[1]):\n    for f in fs:\n        try:\n            fd = os.open(os.path.join(d, f), os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)\n        except OSError:\n            pass\n' >"$W/evict.py"
	"$W/pbench" -n 7 -w 1 -prep "python3 $W/evict.py $CACHE/mem" -- "$BIN search auth middleware TypeError sessionTTL" | sed 's/^/    /'
	fi

	echo "## log -n 20, stats, status"
	pb "$BIN log -n 20" "$BIN stats" "$BIN status"
fi

echo "## disk"
blobs=$(git --git-dir="$CACHE/mem" cat-file --batch-all-objects --batch-check='%(objecttype) %(objectsize)' |
	awk '$1 == "blob" {s += $2} END {print s}')
idx=$(du -sb "$CACHE/mem/mem/index" | cut -f1)
row "indexes / canonical JSON (the exchange blobs)" \
	"$(awk -v i="$idx" -v b="$blobs" 'BEGIN {printf "%.1f MB / %.1f MB = %.2fx", i / 1e6, b / 1e6, i / b}')"
row "packs" "$(find "$CACHE/mem/objects/pack" -name '*.pack' | wc -l) packs, $(du -sh "$CACHE/mem/objects" | cut -f1)"

echo "## add of 1,000 new exchanges into the memory (a copy), redaction and indexing included"
cp -a "$CACHE/mem" "$W/mem"
row "add 1,000 into $N" "$(GIT_MEM_DIR=$W/mem timed "$BIN" add "$CACHE/more.jsonl")"
rm -rf "$W/mem"

CODINGDIR=$ROOT/../shared/eval/coding
if [ -n "$CODING" ] && ls "$CODINGDIR"/*/exchanges.jsonl >/dev/null 2>&1; then
	echo "## real coding exchanges (all of ../shared/eval/coding), fresh memory"
	cat "$CODINGDIR"/*/exchanges.jsonl >"$W/coding.jsonl"
	n=$(wc -l <"$W/coding.jsonl")
	GIT_MEM_DIR=$W/coding "$BIN" init >/dev/null
	t=$(GIT_MEM_DIR=$W/coding timed "$BIN" add "$W/coding.jsonl")
	row "add of $n" "$t, $(awk -v n="$n" '{printf "%.0f /s wall, %.0f /CPU-s", n / $1, n / ($2 + $3)}' "$W/time")"
	blobs=$(git --git-dir="$W/coding" cat-file --batch-all-objects --batch-check='%(objecttype) %(objectsize)' |
		awk '$1 == "blob" {s += $2} END {print s}')
	idx=$(du -sb "$W/coding/mem/index" | cut -f1)
	row "indexes / canonical JSON" "$(awk -v i="$idx" -v b="$blobs" 'BEGIN {printf "%.1f MB / %.1f MB = %.2fx", i / 1e6, b / 1e6, i / b}')"
fi
# sync_rows: 1,000 new exchanges on each of two machines that share the N
# (copies of the cached memory, a local bare remote), each add indexed
# first; then a syncs (push), c syncs (fetch, union merge, index, push), a
# syncs again (fetch, fast-forward, index). Whole `git mem sync` processes.
sync_rows() {
	echo "## sync of 1,000 new on each side over $N (local bare remote)"
	git init -q --bare "$W/remote.git"
	# The remote starts as the cached memory: its objects are copied, not
	# pushed (a push to an empty remote packs every object anew, more than
	# 10 minutes at 1,000,000 on 2 cores, and is not what a sync does).
	cp -a "$CACHE/mem/objects/." "$W/remote.git/objects/"
	git --git-dir="$W/remote.git" update-ref refs/heads/main "$(git --git-dir="$CACHE/mem" rev-parse main)"
	[ -f "$CACHE/more2.jsonl" ] || "$W/synth" -n $((N + 2000)) | tail -n 1000 >"$CACHE/more2.jsonl"
	local s
	for s in a c; do
		cp -a "$CACHE/mem" "$W/$s"
		GIT_MEM_DIR=$W/$s "$BIN" remote add origin "$W/remote.git" >/dev/null
		GIT_MEM_DIR=$W/$s "$BIN" sync >/dev/null
	done
	GIT_MEM_DIR=$W/a "$BIN" add "$CACHE/more.jsonl" >/dev/null
	GIT_MEM_DIR=$W/c "$BIN" add "$CACHE/more2.jsonl" >/dev/null
	# An add over 12 packs starts a background repack of its copy. On two
	# machines each sync would share its cores with its own repack only;
	# here both would run beside the three syncs (session 28: 100k merge
	# side 1.35–1.64 s beside them, 0.69 s after), so they are waited for.
	local i
	sleep 1
	for i in $(seq 1200); do
		pgrep -f "repack.*$W/" >/dev/null || break
		sleep 0.5
	done
	row "a: sync (push 1,000)" "$(GIT_MEM_DIR=$W/a timed "$BIN" sync)"
	row "c: sync (fetch 1,000, merge, index, push)" "$(GIT_MEM_DIR=$W/c timed "$BIN" sync)"
	row "a: sync (fetch 1,001, fast-forward, index)" "$(GIT_MEM_DIR=$W/a timed "$BIN" sync)"
	row "a and c agree" "$(git --git-dir="$W/a" rev-parse main) $(git --git-dir="$W/c" rev-parse main)"
	rm -rf "$W/a" "$W/c" "$W/remote.git"
}
[ -z "$SYNC" ] || sync_rows
echo "# done, load $(cut -d' ' -f1-3 /proc/loadavg)"
