#!/usr/bin/env bash
# Generates hooks/testdata/cline/generated/: Cline task folders written by
# the released Cline CLI itself (npm package cline, pinned below; its 2.x
# line runs the extension's task loop in node and keeps each task in
# ~/.cline/data/tasks/<task id>/), driven by server.js, a scripted
# OpenAI-compatible model on 127.0.0.1 replaying script.json.
#
# Two tasks, fixed prompts, in a fixed project folder:
#   1. "greet.js ignores the name ..."  read_file, replace_in_file,
#      execute_command, attempt_completion; then the task is resumed
#      (cline task -T <id>) with a second prompt: write_to_file README.md,
#      attempt_completion.
#   2. "What does greet.js print ...": execute_command, attempt_completion.
#
# Needs node >= 20 and npm. Nothing is installed outside a temp dir; the
# CLI's HOME is a temp dir too. Task ids are the start time in ms, so a
# rerun gives new folder names and times, with the same shape.
set -euo pipefail

VERSION=2.18.0
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
OUT=$REPO/hooks/testdata/cline/generated
PROJECT=/tmp/git-mem-fixture/cline/project

WORK=$(mktemp -d /tmp/git-mem-cline.XXXXXX)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  if [ -n "${KEEP:-}" ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

echo "installing cline@$VERSION into $WORK" >&2
npm install --prefix "$WORK/pkg" --no-audit --no-fund --ignore-scripts --loglevel=error "cline@$VERSION" >&2
CLI="$WORK/pkg/node_modules/cline/dist/cli.mjs"

export HOME=$WORK/home
mkdir -p "$HOME"
# No update checks, no telemetry (telemetrySetting below), no OTEL export.
export CLINE_NO_AUTO_UPDATE=1 CLINE_OTEL_TELEMETRY_ENABLED=false
unset CLINE_DIR CLINE_DATA_DIR OPENAI_API_KEY ANTHROPIC_API_KEY || true

rm -rf "$PROJECT"
mkdir -p "$PROJECT"
cat > "$PROJECT/greet.js" <<'JS'
function greet(name) {
  return "Hello";
}

console.log(greet(process.argv[2] || "world"));
JS

mkdir -p "$WORK/log"
node "$HERE/server.js" 0 "$HERE/script.json" "$WORK/log" > "$WORK/port" 2> "$WORK/server.err" &
SERVER_PID=$!
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")
echo "scripted model on 127.0.0.1:$PORT" >&2

cline() { (cd "$PROJECT" && timeout "${CLINE_TIMEOUT:-180}" node "$CLI" "$@" < /dev/null); }

cline auth -p openai -k sk-test-fixture -b "http://127.0.0.1:$PORT/v1" -m fixture-model >&2
node -e '
const fs = require("fs"), p = process.argv[1];
const s = JSON.parse(fs.readFileSync(p, "utf8"));
s.telemetrySetting = "disabled";
fs.writeFileSync(p, JSON.stringify(s, null, 2));
' "$HOME/.cline/data/globalState.json"

TASKS=$HOME/.cline/data/tasks
cline task -y -c "$PROJECT" "greet.js ignores the name it is given: make greet() use it, then run it with Ada to check." >&2
ID1=$(ls "$TASKS")
# Resuming with a prompt races in this CLI (utils/plain-text-task.ts waits
# 100 ms, then answers the task's resume_task ask; when the task loads more
# slowly the answer is lost and the CLI waits forever). So the resume gets
# the CLI's own timeout and is tried again; a lost try adds only a
# resume_task ask to ui_messages.json, nothing to the conversation.
resumed=
for try in 1 2 3 4 5; do
  if cline task -y -t 40 -c "$PROJECT" -T "$ID1" "Add a README.md that says how to run it." >&2; then resumed=1; break; fi
  echo "resume try $try lost its prompt; again" >&2
done
[ -n "$resumed" ] || { echo "could not resume task $ID1" >&2; exit 1; }
sleep 1
cline task -y -c "$PROJECT" "What does greet.js print when it is given no name?" >&2
cat "$WORK/server.err" >&2

[ "$(ls "$TASKS" | wc -l)" -eq 2 ] || { echo "expected 2 task folders, got: $(ls "$TASKS")" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT"
for d in "$TASKS"/*/; do
  id=$(basename "$d")
  mkdir -p "$OUT/$id"
  cp "$d"api_conversation_history.json "$d"ui_messages.json "$d"task_metadata.json "$OUT/$id/"
done

# PROVENANCE.json: one entry per copied file (the ids change with each run).
node -e '
const fs = require("fs"), path = require("path");
const [prov, out, version] = process.argv.slice(1);
const p = JSON.parse(fs.readFileSync(prov, "utf8"));
for (const k of Object.keys(p)) if (k.startsWith("generated/")) delete p[k];
for (const id of fs.readdirSync(out).sort())
  for (const f of fs.readdirSync(path.join(out, id)).sort())
    p["generated/" + id + "/" + f] = {
      synthetic: false,
      generated: {
        agent: "Cline CLI " + version + " (npm package cline)",
        script: "scripts/agent-fixtures/cline/run.sh",
        license: "Apache-2.0",
      },
    };
fs.writeFileSync(prov, JSON.stringify(p, null, 2) + "\n");
' "$REPO/hooks/testdata/cline/PROVENANCE.json" "$OUT" "$VERSION"
echo "wrote $(ls "$OUT" | tr '\n' ' ')to $OUT" >&2
