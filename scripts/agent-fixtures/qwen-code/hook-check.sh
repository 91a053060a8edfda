#!/usr/bin/env bash
# Checks git mem's Qwen Code hooks against the real agent: installs the
# pinned @qwen-code/qwen-code into a temp dir, `git mem hook install
# qwen-code` into a temp HOME, runs two prompts of one session against
# server.js (a scripted model on 127.0.0.1) and expects the worker to have
# stored both turns after their Stop hooks, then uninstalls. Uses the
# git-mem binaries in bin/ (go build -o bin/ ./cmd/...). Writes nothing in
# the repository.
set -euo pipefail

VERSION=0.24.4
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
[ -x "$repo/bin/git-mem" ] || { echo "build git-mem first: go build -o bin/ ./cmd/..." >&2; exit 1; }
base=$(mktemp -d)
home=$base/home
project=$base/project
session=11111111-2222-4333-8444-555555555555
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$base"
}
trap cleanup EXIT
mkdir -p "$home/.qwen" "$project"
printf 'function greet(name) {\n  return "Hello, world!";\n}\n\nconsole.log(greet(process.argv[2]));\n' > "$project/greet.js"
cat > "$home/.qwen/settings.json" <<'JSON'
{
  "security": {"auth": {"selectedType": "openai"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false}
}
JSON

npm install --prefix "$base/pkg" --no-audit --no-fund --ignore-scripts --loglevel=error "@qwen-code/qwen-code@$VERSION" >&2
cli=$base/pkg/node_modules/@qwen-code/qwen-code/cli-entry.js
node "$here/server.js" 0 "$here/script.json" > "$base/port" 2> "$base/server.log" &
server_pid=$!
for _ in $(seq 50); do [ -s "$base/port" ] && break; sleep 0.1; done
port=$(cat "$base/port")

run() { (cd "$project" && env -i PATH="$repo/bin:$(dirname "$(command -v node)"):/usr/bin:/bin" HOME="$home" TERM=dumb "$@" < /dev/null); }
qwen() {
  run OPENAI_API_KEY=sk-test-fixture OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_MODEL=fixture-model \
    QWEN_DISABLE_AUTO_TITLE=1 QWEN_CODE_SUPPRESS_YOLO_WARNING=1 timeout 180 node "$cli" --yolo "$@"
}

run git-mem init
run git-mem hook install qwen-code
qwen --session-id "$session" "greet.js ignores the name it is given: fix it."
qwen --resume "$session" "Run it with Ada to check."
for _ in $(seq 100); do
  [ "$(run git-mem log --oneline --agent qwen-code | wc -l)" -ge 2 ] && break
  sleep 0.1
done
run git-mem log --oneline --agent qwen-code
n=$(run git-mem log --oneline --agent qwen-code | wc -l)
[ "$n" -eq 2 ] || { echo "FAIL: the Stop hooks stored $n exchanges, want 2" >&2; cat "$home/.git-mem/mem/log/"*.log >&2; exit 1; }
run git-mem hook uninstall qwen-code
if grep -q 'hook qwen-code' "$home/.qwen/settings.json"; then echo "FAIL: hooks left after uninstall" >&2; exit 1; fi
echo "ok: both turns stored by Qwen Code's Stop hooks; uninstall left no git mem hook" >&2
