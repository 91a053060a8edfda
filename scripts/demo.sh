#!/usr/bin/env bash
# The main job end to end with the embedded defaults (no API key, no
# network): build, init a temporary memory, add exchanges, log, search, show, stats.
set -euo pipefail
# Cold searches, and no warm search process left behind (docs/CONTRACT.md,
# "The warm search process"); GIT_MEM_NO_SERVER= in the caller's environment
# measures the warm path.
export GIT_MEM_NO_SERVER=${GIT_MEM_NO_SERVER-1}
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
mkdir -p bin
go build -o bin/ ./cmd/... # git-mem (the front binary git runs), git-mem-search and git-mem-core beside it
export PATH="$PWD/bin:$PATH"
tmp="$(mktemp -d)"
# The temporary memory goes when the demo ends, however it ends.
trap 'rm -rf "$tmp"' EXIT
export GIT_MEM_DIR="$tmp/memory.git"
input="${1:-testdata/exchanges.jsonl}"
set -x
git mem init
git mem add "$input"
git mem add "$input"            # idempotent: nothing new
git mem log -n 5 --oneline
git mem search "payment webhook retry timeout" -k 3
git mem search "nil pointer in the auth middleware" -k 1 --verbatim
git mem stats
git mem rooms
