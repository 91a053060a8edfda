#!/bin/sh
# Checks that `git mem hook install gemini` works with the real CLI: a temp
# HOME and memory, the hooks installed there, two runs of the pinned CLI
# (-p, then --resume) against the scripted model of server.js, then
# `git mem search` must find both exchanges, once each. Not run in CI.
#
#   scripts/agent-fixtures/gemini/hook-check.sh [path/to/git-mem]
#
# Default binary: bin/git-mem (go build -o bin/ ./cmd/...). The CLI is the
# one run.sh installed (/tmp/git-mem-fixture/gemini/npm); run run.sh first.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
gitmem=$(cd "$(dirname "${1:-$repo/bin/git-mem}")" && pwd)/$(basename "${1:-$repo/bin/git-mem}")
gemini=/tmp/git-mem-fixture/gemini/npm/node_modules/.bin/gemini
[ -x "$gemini" ] || { echo "no CLI at $gemini: run run.sh first" >&2; exit 1; }

root=/tmp/git-mem-fixture/gemini-hook
rm -rf "$root"
mkdir -p "$root/home/.gemini" "$root/project"
home=$root/home
mem=$root/mem
cat >"$home/.gemini/settings.json" <<'JSON'
{
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "ide": {"enabled": false}
}
JSON
HOME=$home "$gitmem" --mem-dir "$mem" init
HOME=$home "$gitmem" --mem-dir "$mem" hook install gemini

# The fixture's script reads /tmp/git-mem-fixture/gemini/project/...: the
# same path here, so the tools succeed.
project=/tmp/git-mem-fixture/gemini/project
rm -rf "$project"
mkdir -p "$project"
printf 'buy milk\ncall the plumber about the kitchen tap\n' >"$project/notes.txt"

node "$here/server.js" "$here/script.json" "$root/port" "$root/server.log" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT INT TERM
i=0
while [ ! -s "$root/port" ]; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "server did not start" >&2; exit 1; }
	sleep 0.1
done
port=$(cat "$root/port")
run() {
	(cd "$project" && env -i PATH="$PATH" HOME="$home" TERM=dumb LANG=C.UTF-8 TZ=UTC \
		GEMINI_API_KEY=sk-test-fixture GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" \
		timeout 120 "$gemini" -m gemini-2.5-flash --yolo "$@" </dev/null >/dev/null 2>&1)
}
run -p "What does notes.txt say?"
run --resume latest -p "Mark the milk as done in notes.txt, and write a count.sh that counts its lines."

# The hook only queues the work; wait for the queue to drain.
i=0
while HOME=$home "$gitmem" --mem-dir "$mem" status | grep -q 'pending  [1-9]'; do
	i=$((i + 1))
	[ $i -lt 100 ] || break
	sleep 0.1
done
HOME=$home "$gitmem" --mem-dir "$mem" status
n=$(HOME=$home "$gitmem" --mem-dir "$mem" log | grep -c '^commit ' || true)
HOME=$home "$gitmem" --mem-dir "$mem" log | head -40
fail=0
for q in "What does notes.txt say" "Mark the milk as done"; do
	if HOME=$home "$gitmem" --mem-dir "$mem" search "$q" | grep -q "$q"; then
		echo "found: $q"
	else
		echo "NOT FOUND: $q" >&2
		fail=1
	fi
done
echo "$n exchanges stored (want 2)"
[ "$n" = 2 ] || fail=1
exit $fail
