#!/usr/bin/env bash
# Generates the Qwen Code fixtures in hooks/testdata/qwen-code/generated/:
# installs the pinned @qwen-code/qwen-code from the npm registry into a temp
# dir, runs it (qwen --yolo "<prompt>", and once its interactive UI) in a temp HOME and
# a fixed project folder against server.js (a scripted OpenAI-compatible
# model on 127.0.0.1), and copies the session files it wrote.
#
# Session A: three prompts, one run each, the later two resuming it
# (--resume): read + edit greet.js, run it (shell), write README.md.
# Session B: one prompt with reasoning, a read of a missing file (a tool
# error) and a shell command. Session C: the interactive UI (qwen -i, on a
# terminal made by script(1)): one prompt and a read, then /quit, which
# runs the SessionEnd hook. Stop and SessionEnd hooks in the temp
# settings.json save what Qwen Code passes its hooks; the Stop of session
# A's last turn and session C's SessionEnd are kept.
#
# Offline: telemetry, usage statistics, auto update, auto titles, follow-up
# suggestions and the feedback dialog are off; the model is the local
# server (strace -e connect of a run: its only TCP connection). Needs node
# (>= 20 ran it; the package asks for 22), npm and script(1) (util-linux).
set -euo pipefail

VERSION=0.24.4
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
base=/tmp/git-mem-fixture/qwen-code
home=$base/home
project=$base/project
out=$repo/hooks/testdata/qwen-code/generated
session_a=0b6f3c2a-5d4e-4f1a-9b8c-7d6e5f4a3b21
session_b=7e1d9c4b-2a3f-4e5d-8c6b-1f0a9e8d7c65
session_c=3c9a7f2e-6b1d-4e8a-9f5c-2d4b6a8c0e13

rm -rf "$base"
mkdir -p "$home/.qwen" "$project" "$base/log" "$base/hooks"
pkg=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$pkg"
}
trap cleanup EXIT

echo "installing @qwen-code/qwen-code@$VERSION into $pkg" >&2
npm install --prefix "$pkg" --no-audit --no-fund --ignore-scripts --loglevel=error "@qwen-code/qwen-code@$VERSION" >&2
cli=$pkg/node_modules/@qwen-code/qwen-code/cli-entry.js
got=$(node -p "require('$pkg/node_modules/@qwen-code/qwen-code/package.json').version")
[ "$got" = "$VERSION" ] || { echo "installed $got, want $VERSION" >&2; exit 1; }

cat > "$project/greet.js" <<'JS'
function greet(name) {
  return "Hello, world!";
}

console.log(greet(process.argv[2]));
JS

cat > "$home/.qwen/settings.json" <<JSON
{
  "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": false}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false},
  "ui": {"enableFollowupSuggestions": false, "enableUserFeedback": false},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "cat > $base/hooks/stop-\$(date +%s%N).json; echo '{}'", "timeout": 5}]}],
    "SessionEnd": [{"hooks": [{"type": "command", "command": "cat > $base/hooks/end-\$(date +%s%N).json", "timeout": 5}]}]
  }
}
JSON

node "$here/server.js" 0 "$here/script.json" "$base/log" > "$base/port" 2> "$base/server.log" &
server_pid=$!
for _ in $(seq 50); do [ -s "$base/port" ] && break; sleep 0.1; done
port=$(cat "$base/port")

qwen() {
  (cd "$project" && env -i PATH="$(dirname "$(command -v node)"):/usr/bin:/bin" HOME="$home" TERM=dumb \
    OPENAI_API_KEY=sk-test-fixture OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_MODEL=fixture-model \
    QWEN_DISABLE_AUTO_TITLE=1 QWEN_CODE_SUPPRESS_YOLO_WARNING=1 NO_UPDATE_NOTIFIER=1 \
    timeout 180 node "$cli" --yolo "$@" < /dev/null)
}

qwen --session-id "$session_a" "greet.js ignores the name it is given: fix it."
qwen --resume "$session_a" "Run it with Ada to check."
qwen --resume "$session_a" "Add a README that says how to run it."
last_stop=$(ls "$base/hooks" | sort | tail -1)
qwen --session-id "$session_b" "What does greet.js print with no name?"
# Session C on a terminal: type /quit once its Stop hook has run, then wait
# for SessionEnd.
stops=$(ls "$base/hooks" | grep -c '^stop-')
{
  for _ in $(seq 600); do [ "$(ls "$base/hooks" | grep -c '^stop-')" -gt "$stops" ] && break; sleep 0.2; done
  sleep 1; printf '/quit'; sleep 0.5; printf '\r'
  for _ in $(seq 150); do ls "$base/hooks" | grep -q '^end-' && break; sleep 0.2; done
  sleep 1
} | (cd "$project" && env -i PATH="$(dirname "$(command -v node)"):/usr/bin:/bin" HOME="$home" TERM=xterm-256color COLUMNS=120 LINES=40 \
    OPENAI_API_KEY=sk-test-fixture OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_MODEL=fixture-model \
    QWEN_DISABLE_AUTO_TITLE=1 timeout 180 script -qfec "node $cli --yolo --session-id $session_c -i 'What does the README say?'" /dev/null > "$base/tty.out")
end_hook=$(ls "$base/hooks" | grep '^end-' | sort | tail -1)
[ -n "$end_hook" ] || { echo "no SessionEnd hook ran for session C" >&2; exit 1; }

echo "server:" >&2
cat "$base/server.log" >&2

chats=$home/.qwen/projects/-tmp-git-mem-fixture-qwen-code-project/chats
rm -rf "$out"
mkdir -p "$out/projects/-tmp-git-mem-fixture-qwen-code-project/chats"
for s in "$session_a" "$session_b" "$session_c"; do
  cp "$chats/$s.jsonl" "$out/projects/-tmp-git-mem-fixture-qwen-code-project/chats/"
done
cp "$base/hooks/$last_stop" "$out/stop-hook.json"
cp "$base/hooks/$end_hook" "$out/session-end-hook.json"
ls -lR "$out" >&2
