#!/bin/sh
# Makes hooks/testdata/gemini/generated/: real Gemini CLI chat files,
# written by the released CLI against a scripted model (server.js) on
# 127.0.0.1. Run from anywhere: scripts/agent-fixtures/gemini/run.sh
#
# Needs node and npm; the npm registry is reached once, to install the
# pinned CLI into a temp dir (not into the project). Nothing else leaves
# this machine: the CLI's API base is the local server, telemetry, usage
# statistics, auto update and IDE integration are off in its settings.
#
# Three sessions (each first run starts one with a fixed session id, the
# others resume it): four prompts with a read, an edit and a write in one
# reply, a shell command, and a read of a missing file (a failed call);
# two prompts under hooks that add context; two prompts a minute apart,
# the second making the CLI compress its history. Takes about four
# minutes (it waits for the minute to turn, see below).
set -eu

VERSION=0.61.0
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out="$repo/hooks/testdata/gemini/generated"

root=/tmp/git-mem-fixture/gemini
project=$root/project
home=$root/home
npmdir=$root/npm
session=0f1e2d3c-4b5a-4697-8877-665544332211

rm -rf "$project" "$home" "$root/server.log" "$root/port"
mkdir -p "$project" "$home/.gemini" "$npmdir"

if [ ! -x "$npmdir/node_modules/.bin/gemini" ] || ! grep -q "\"version\": \"$VERSION\"" "$npmdir/node_modules/@google/gemini-cli/package.json"; then
	npm install --prefix "$npmdir" --no-audit --no-fund --loglevel=error "@google/gemini-cli@$VERSION"
fi
gemini=$npmdir/node_modules/.bin/gemini

cat >"$home/.gemini/settings.json" <<'JSON'
{
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "sessionRetention": {"enabled": false}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "ide": {"enabled": false}
}
JSON

# Session cleanup is off: at startup 0.61.0 deletes a file with no
# prompt (such as the stub a resume in a later minute leaves) together
# with every file of the same short id, so the third session below would
# be deleted by the next CLI started in this project.
cp "$home/.gemini/settings.json" "$root/settings.base.json"

# Chat files are named by the minute their run starts and the session id's
# first 8 characters: a session's runs within one minute share one file.
# Start each of the first two sessions at the top of a minute, so a rerun
# gives the same files.
top_of_minute() {
	while [ "$(date -u +%S)" -gt 1 ]; do sleep 1; done
}

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
		GEMINI_API_KEY=sk-test-fixture \
		GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" \
		timeout 120 "$gemini" -m gemini-2.5-flash --yolo "$@" </dev/null)
	if [ -n "${GEMINI_FIXTURE_DEBUG:-}" ]; then
		date -u +%T >&2
		wc -l "$home"/.gemini/tmp/*/chats/* >&2
	fi
}

top_of_minute
run --session-id "$session" -p "What does notes.txt say?"
run --resume "$session" -p "Mark the milk as done in notes.txt, and write a count.sh that counts its lines."
run --resume "$session" -p "Run count.sh."
run --resume "$session" -p "What is in todo.txt?"

# A second session, with hooks that add context as a git mem hook could:
# SessionStart's is prepended to the prompt (-p mode), BeforeAgent's is a
# part after it; both <hook_context>, neither the user's words.
node -e '
const fs = require("node:fs");
const f = process.argv[1];
const s = JSON.parse(fs.readFileSync(f, "utf8"));
const say = (ev, text) => [{ hooks: [{ type: "command", timeout: 5000,
  command: "echo \x27" + JSON.stringify({ hookSpecificOutput: { hookEventName: ev, additionalContext: text } }) + "\x27" }] }];
s.hooks = { SessionStart: say("SessionStart", "Recalled: the notes live in notes.txt."), BeforeAgent: say("BeforeAgent", "Recalled: the user likes short answers.") };
fs.writeFileSync(f, JSON.stringify(s, null, 2) + "\n");
' "$home/.gemini/settings.json"
session2=5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d
top_of_minute
run --session-id "$session2" -p "Show the last line of notes.txt."
run --resume "$session2" -p "Thanks, that is all."

# A third session, resumed in a later minute (so the resumed run's stub, a
# file of its own named by that minute, does not land in the session's
# file as it does above), where the model reports a prompt of 900,000
# tokens: the CLI compresses its history (two side calls for a
# <state_snapshot>) before it sends the tool's result.
cp "$root/settings.base.json" "$home/.gemini/settings.json"
session3=7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e
run --session-id "$session3" -p "Keep notes.txt short from now on."
minute=$(date -u +%M)
while [ "$(date -u +%M)" = "$minute" ]; do sleep 1; done
run --resume "$session3" -p "How many lines does notes.txt have now?"

echo "--- server log" >&2
cat "$root/server.log" >&2

rm -rf "$out"
mkdir -p "$out"
(cd "$home/.gemini" && find tmp -path '*/chats/*' -o -name .project_root) | while read -r f; do
	[ -f "$home/.gemini/$f" ] || continue
	mkdir -p "$out/$(dirname "$f")"
	cp "$home/.gemini/$f" "$out/$f"
done

# The file is named by the time of the run: name the new files in
# PROVENANCE.json in place of the old generated ones.
(cd "$out" && find . -type f | sed 's|^\./|generated/|' | sort) | node -e '
const fs = require("node:fs");
const [file, agent, script] = process.argv.slice(1);
const prov = JSON.parse(fs.readFileSync(file, "utf8"));
for (const k of Object.keys(prov)) if (k.startsWith("generated/")) delete prov[k];
for (const name of fs.readFileSync(0, "utf8").split("\n").filter(Boolean)) {
  prov[name] = { synthetic: false, generated: { agent, script, license: "Apache-2.0" } };
}
fs.writeFileSync(file, JSON.stringify(prov, null, 2) + "\n");
' "$repo/hooks/testdata/gemini/PROVENANCE.json" "Gemini CLI $VERSION (npm package @google/gemini-cli)" scripts/agent-fixtures/gemini/run.sh
find "$out" -type f >&2
