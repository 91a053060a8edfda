#!/usr/bin/env bash
# Regenerates hooks/testdata/copilot-cli/generated/: runs the released GitHub
# Copilot CLI (npm package @github/copilot, pinned below; its LICENSE.md is
# the proprietary "GitHub Copilot CLI License"), installed into a temp dir,
# in a temp HOME, against server.js on 127.0.0.1 (its BYOK mode:
# COPILOT_PROVIDER_BASE_URL, with COPILOT_OFFLINE=true so it skips GitHub
# login, telemetry and update checks; strace showed connections to the
# local server only), and copies the session files it wrote:
#   1. four prompts in one session (-p, then --resume): reads, edits, a
#      create, a shell command, the last one through a subagent;
#   2. a prompt interrupted (SIGINT) during a shell call, one that meets a
#      provider error (HTTP 400), one answered;
#   3. through an Anthropic-compatible provider (thinking blocks), a skill;
#   4. typed into the interactive UI (in tmux): /undo, /compact, /exit;
#   5. a small context window, so the agent compacts mid-task;
#   6. a subagent in the background.
#
# usage: scripts/agent-fixtures/copilot-cli/run.sh   (from anywhere; needs
# node, npm, git, tmux and setsid)
set -euo pipefail

VERSION=1.0.102
SESSION=7c0f1e2d-3b4a-4c5d-8e6f-0a1b2c3d4e5f
SESSION2=3b9d5f7a-1c2e-4f6a-8b0d-2e4f6a8c0e1f
SESSION3=5d1f3b5c-7e9a-4b2c-9d4e-6f8a0b2c4d6e
SESSION4=8e2a4c6e-0b1d-4e3f-a5b7-c9d1e3f5a7b9
SESSION5=2f4a6c8e-1a3b-4c5d-9e7f-8a0b1c2d3e4f
SESSION6=6a8c0e2a-4b6d-4f8a-8c1e-3a5b7c9d1e3f
PORT=${PORT:-18321}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
OUT=$REPO/hooks/testdata/copilot-cli/generated
ROOT=/tmp/git-mem-fixture/copilot-cli
PROJECT=$ROOT/project
FHOME=$ROOT/home

rm -rf "$ROOT"
mkdir -p "$PROJECT" "$FHOME" "$ROOT/install" "$ROOT/cache"

echo "installing @github/copilot@$VERSION" >&2
npm install --prefix "$ROOT/install" --no-audit --no-fund --loglevel=error "@github/copilot@$VERSION" >&2
COPILOT=$ROOT/install/node_modules/.bin/copilot

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

# The agent's whole environment: nothing of the caller's.
ENV=(PATH=/usr/local/bin:/usr/bin:/bin HOME="$FHOME" TERM=dumb LANG=C.UTF-8
	XDG_CACHE_HOME="$ROOT/cache"
	COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false
	COPILOT_PROVIDER_TYPE=openai COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$PORT/v1"
	COPILOT_PROVIDER_API_KEY=sk-test-fixture COPILOT_MODEL=gpt-4.1)
FLAGS=(--allow-all-tools --no-auto-update --disable-client-telemetry)
run() {
	(cd "$PROJECT" && env -i "${ENV[@]}" timeout 180 "$COPILOT" "$@" "${FLAGS[@]}" </dev/null)
}

run --session-id "$SESSION" -p "What does notes.md say?"
run --resume "$SESSION" -p "Fix the greeting in hello.sh, it should print Hello, world."
run --resume "$SESSION" -p "Add a test script test.sh that checks the greeting, and run it."
run --resume "$SESSION" -p "Have a subagent count the lines of notes.md."

# A second session: the first prompt is interrupted (SIGINT, as Ctrl-C in a
# terminal) while its shell command runs; in a resumed run the provider
# refuses the request (HTTP 400); a third run says to skip the build.
# The platform binary is run directly (the npm loader runs it with
# spawnSync), in a process group of its own.
NATIVE=$ROOT/install/node_modules/@github/copilot-linux-x64/copilot
EV2=$FHOME/.copilot/session-state/$SESSION2/events.jsonl
(cd "$PROJECT" && exec setsid env -i "${ENV[@]}" timeout 180 "$NATIVE" --session-id "$SESSION2" -p "Run the slow build." "${FLAGS[@]}" </dev/null) &
AGENT=$!
for _ in $(seq 300); do grep -q '"type":"tool.execution_start"' "$EV2" 2>/dev/null && break; sleep 0.1; done
sleep 1
kill -INT -- "-$AGENT" 2>/dev/null || true
wait "$AGENT" || true
run --resume "$SESSION2" -p "Check the build log." || true # the provider answers 400: copilot exits 1
run --resume "$SESSION2" -p "Skip the build, it is not needed."

# A third session through an Anthropic-compatible provider (thinking blocks),
# its second prompt answered with a skill.
anthropic() {
	(cd "$PROJECT" && env -i "${ENV[@]}" COPILOT_PROVIDER_TYPE=anthropic \
		COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$PORT" COPILOT_MODEL=claude-sonnet-4.5 \
		timeout 180 "$COPILOT" "$@" "${FLAGS[@]}" </dev/null)
}
anthropic --session-id "$SESSION3" -p "Explain hello.sh."
anthropic --resume "$SESSION3" -p "Set up the cloud agent for this repo."

# A fourth session in the interactive terminal UI (in tmux, on a socket of
# its own): two prompts typed into one running agent, /undo of the second
# (Copilot CLI then rewrites events.jsonl without it), a third prompt,
# /compact, /exit.
TMUX_SOCK=git-mem-fixture-copilot
EV4=$FHOME/.copilot/session-state/$SESSION4/events.jsonl
count() { # count TYPE: the session's events of TYPE so far
	local n=0
	if [ -f "$EV4" ]; then n=$(grep -c "\"type\":\"$1\"" "$EV4" || true); fi
	echo "$n"
}
waitfor() { # waitfor TYPE N: until the session has N events of TYPE
	for _ in $(seq 600); do [ "$(count "$1")" -ge "$2" ] && return 0; sleep 0.1; done
	echo "timed out waiting for $2 $1 events" >&2
	return 1
}
type_line() {
	tmux -L "$TMUX_SOCK" send-keys -t agent -l "$1"
	sleep 0.5
	tmux -L "$TMUX_SOCK" send-keys -t agent Enter
}
(cd "$PROJECT" && tmux -L "$TMUX_SOCK" new-session -d -s agent -x 160 -y 50 \
	env -i "${ENV[@]}" TERM=xterm-256color COPILOT_ALLOW_ALL=true \
	timeout 300 "$COPILOT" --session-id "$SESSION4" --no-auto-update --disable-client-telemetry)
for _ in $(seq 600); do tmux -L "$TMUX_SOCK" capture-pane -p -t agent 2>/dev/null | grep -q '/ commands' && break; sleep 0.1; done
type_line "List the shell scripts in this folder."
waitfor assistant.turn_end 2
type_line "Run test.sh please."
waitfor assistant.turn_end 4
# /undo: the rewind dialog, its latest turn picked, then "Conversation
# only"; the rewound prompt is put back in the input, cleared with C-u.
cp "$EV4" "$ROOT/before-undo.jsonl"
type_line "/undo"
sleep 2
tmux -L "$TMUX_SOCK" send-keys -t agent Enter
sleep 2
tmux -L "$TMUX_SOCK" send-keys -t agent Enter
waitfor session.info 1
sleep 1
tmux -L "$TMUX_SOCK" send-keys -t agent C-u
type_line "Explain hello.sh."
waitfor assistant.turn_end 4
type_line "/compact"
waitfor session.compaction_complete 1
type_line "/exit"
waitfor session.shutdown 1
for _ in $(seq 100); do tmux -L "$TMUX_SOCK" has-session -t agent 2>/dev/null || break; sleep 0.1; done
tmux -L "$TMUX_SOCK" kill-server 2>/dev/null || true

# A fifth session: two long files read with a small context window
# (15000 prompt tokens, the system prompt and tools take ~11000), so the
# agent compacts in the middle of the task.
for i in $(seq 200); do echo "line $i of a long file with some words in it to take tokens"; done >"$PROJECT/big.txt"
cp "$PROJECT/big.txt" "$PROJECT/big2.txt"
(cd "$PROJECT" && env -i "${ENV[@]}" COPILOT_PROVIDER_MAX_PROMPT_TOKENS=15000 \
	timeout 180 "$COPILOT" --session-id "$SESSION5" -p "Read big.txt and big2.txt." "${FLAGS[@]}" </dev/null)

# A sixth session: a subagent in the background, still working after the
# main agent's first reply.
run --session-id "$SESSION6" -p "Start a background count of the lines of notes.md."

rm -rf "$OUT"
for s in "$SESSION" "$SESSION2" "$SESSION3" "$SESSION4" "$SESSION5" "$SESSION6"; do
	SRC=$FHOME/.copilot/session-state/$s
	mkdir -p "$OUT/session-state/$s"
	cp "$SRC/events.jsonl" "$SRC/workspace.yaml" "$OUT/session-state/$s/"
	echo "wrote $OUT/session-state/$s" >&2
done
# The fourth session's file as it was just before /undo.
mkdir -p "$OUT/before-undo/session-state/$SESSION4"
cp "$ROOT/before-undo.jsonl" "$OUT/before-undo/session-state/$SESSION4/events.jsonl"
