#!/usr/bin/env bash
# Regenerates hooks/testdata/continue/generated/: runs the released Continue
# CLI (npm package @continuedev/cli, command cn, pinned below), installed into
# a temp dir, in a temp HOME, against server.js on 127.0.0.1, and copies the
# session files it wrote (~/.continue/sessions/<id>.json and the
# sessions.json index beside them).
#
# Offline: the model is a local ~/.continue/config.yaml (provider openai,
# apiBase on 127.0.0.1), so cn needs no login to Continue's hub (it loads
# that file before any hub config); CONTINUE_API_BASE points its hub client
# at server.js too (which would answer 404; cn 1.5.47 made no such request
# here); telemetry is off (CONTINUE_CLI_ENABLE_TELEMETRY=0,
# CONTINUE_METRICS_ENABLED=0; it is OpenTelemetry, on only when an OTLP
# endpoint is set anyway). cn also asks api.continue.dev for its latest
# version at start, with a hard-coded address and no setting: offline.cjs,
# preloaded with NODE_OPTIONS, makes that fail at once (blocked.log lists
# what it stopped). Headless (-p) with --auto (every tool allowed); three
# prompts in one session (--resume takes the newest session file), and a
# second session of one prompt with a model that gets Edit, not MultiEdit.
# CONTINUE_CLI_TEST_SESSION_ID (cn's own hook for tests) fixes the session
# ids so a rerun writes the same names.
#
# usage: scripts/agent-fixtures/continue/run.sh   (from anywhere; needs node, npm, git)
set -euo pipefail

VERSION=1.5.47
SESSION=5f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b
SESSION2=6a2d3b4c-5e6f-4a71-9b8c-0d1e2f3a4b5c
PORT=${PORT:-18331}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
OUT=$REPO/hooks/testdata/continue/generated
ROOT=/tmp/git-mem-fixture/continue
PROJECT=$ROOT/project
FHOME=$ROOT/home

rm -rf "$ROOT"
mkdir -p "$PROJECT" "$FHOME/.continue" "$ROOT/install"

echo "installing @continuedev/cli@$VERSION" >&2
npm install --prefix "$ROOT/install" --no-audit --no-fund --loglevel=error "@continuedev/cli@$VERSION" >&2
CN=$ROOT/install/node_modules/.bin/cn

cat >"$FHOME/.continue/config.yaml" <<YAML
name: git-mem fixture
version: 1.0.0
schema: v1
models:
  - name: fixture-model
    provider: openai
    model: gpt-4.1
    apiBase: http://127.0.0.1:$PORT/v1/
    apiKey: sk-test-fixture
    roles: [chat, edit, apply]
    capabilities: [tool_use]
YAML
# For the second session: a model name cn does not count as capable
# (src/utils/modelCapability.ts), so it offers Edit instead of MultiEdit.
sed -e 's/name: fixture-model/name: fixture-small/' -e 's/model: gpt-4.1/model: fixture-small/' \
	"$FHOME/.continue/config.yaml" >"$ROOT/config-small.yaml"

# The project the agent works in.
cat >"$PROJECT/notes.md" <<'NOTES'
# Notes

- fix the greeting in hello.sh
- add a test script
NOTES
printf '#!/bin/sh\necho "Helo world"\n' >"$PROJECT/hello.sh"
git -C "$PROJECT" init -q -b main

node "$HERE/server.js" "$PORT" "$PROJECT" "$ROOT/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$ROOT/server.log" ] && break; sleep 0.1; done
kill -0 "$SERVER" 2>/dev/null && [ -s "$ROOT/server.log" ] || { echo "server.js did not start (port $PORT busy?)" >&2; exit 1; }

run() {
	local id=$1
	shift
	(cd "$PROJECT" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$FHOME" TERM=dumb LANG=C.UTF-8 \
		NODE_OPTIONS="--require $HERE/offline.cjs" FIXTURE_BLOCKED_LOG="$ROOT/blocked.log" \
		CONTINUE_API_BASE="http://127.0.0.1:$PORT/" \
		CONTINUE_CLI_ENABLE_TELEMETRY=0 CONTINUE_METRICS_ENABLED=0 \
		CONTINUE_CLI_TEST_SESSION_ID="$id" \
		timeout 180 "$CN" -p --auto "$@" </dev/null)
	sleep 1 # --resume takes the newest file by mtime
}

run "$SESSION" "What does notes.md say?"
run "$SESSION" --resume "Fix the greeting in hello.sh, it should print Hello, world."
run "$SESSION" --resume "Add a test script test.sh that checks the greeting, and run it."
run "$SESSION2" --config "$ROOT/config-small.yaml" "Mark the first task in notes.md as done."

SRC=$FHOME/.continue/sessions
rm -rf "$OUT"
mkdir -p "$OUT/sessions"
cp "$SRC/$SESSION.json" "$SRC/$SESSION2.json" "$SRC/sessions.json" "$OUT/sessions/"
echo "wrote $OUT/sessions" >&2
if [ -s "$ROOT/blocked.log" ]; then
	echo "blocked (kept offline):" >&2
	sort "$ROOT/blocked.log" | uniq -c >&2
fi
