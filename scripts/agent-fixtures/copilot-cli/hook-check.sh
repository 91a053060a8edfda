#!/usr/bin/env bash
# Checks git mem's GitHub Copilot CLI hooks against the real CLI: installs
# the pinned @github/copilot into a temp dir, `git mem hook install
# copilot-cli` into a temp HOME (for a memory named by GIT_MEM_DIR, which
# the agent's own environment then lacks: the hooks must name it), runs one
# session against server.js (BYOK, COPILOT_OFFLINE=true: nothing leaves
# 127.0.0.1) in three -p runs: two answered, the third refused by the
# provider (HTTP 400: no agentStop, only sessionEnd closes it); then a
# prompt typed into the interactive UI (in tmux), stored by its agentStop
# while the agent still runs, and /exit. It expects
# the hooks' worker to have stored the exchanges (git mem log, search),
# then uninstalls and expects the user's Copilot config as it was.
#
# A hook file of the user's own (hooks/user.json) sits beside git mem's; it
# copies every payload it gets into $base/payloads: with --save-payloads
# DIR, those of the first run, the sessionEnd after the provider error and
# the session's events.jsonl are kept there (hooks/testdata/copilot-cli/hook).
#
# usage: scripts/agent-fixtures/copilot-cli/hook-check.sh [--save-payloads DIR]
# (uses bin/git-mem: go build -o bin/ ./cmd/...; needs node, npm, git, tmux).
# Writes nothing in the repository unless --save-payloads names a folder in it.
set -euo pipefail

VERSION=1.0.102
SESSION=9d3b5f7a-2c4e-4a6b-8d0f-1a3c5e7b9d2f
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
save=
if [ "${1:-}" = --save-payloads ]; then save=$(mkdir -p "$2" && cd "$2" && pwd); fi
[ -x "$repo/bin/git-mem" ] || { echo "build git-mem first: go build -o bin/ ./cmd/..." >&2; exit 1; }
base=$(mktemp -d)
home=$base/home
# server.js answers tool calls on paths under the project it is given.
project=$base/project
mem=$base/mem
port=${PORT:-18337}
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
	if [ -z "${KEEP:-}" ]; then rm -rf "$base"; else echo "kept $base" >&2; fi
}
trap cleanup EXIT
mkdir -p "$home/.copilot/hooks" "$project" "$base/payloads"
printf '# Notes\n\n- fix the greeting in hello.sh\n- add a test script\n' >"$project/notes.md"
printf '#!/bin/sh\necho "Helo world"\n' >"$project/hello.sh"
git -C "$project" init -q -b main

# The user's own config: settings, and a hook file that records payloads.
cat >"$home/.copilot/settings.json" <<'JSON'
{
  "banner": "never",
  "beep": false,
  "hooks": {
    "userPromptSubmitted": [
      {"type": "command", "bash": "true", "timeoutSec": 5}
    ]
  }
}
JSON
cat >"$base/record.sh" <<SH
#!/bin/sh
cat >"$base/payloads/\$1-\$(date +%s%N).json"
SH
chmod +x "$base/record.sh"
cat >"$home/.copilot/hooks/user.json" <<JSON
{
  "version": 1,
  "hooks": {
    "agentStop": [{"type": "command", "bash": "$base/record.sh agentStop", "timeoutSec": 5}],
    "sessionEnd": [{"type": "command", "bash": "$base/record.sh sessionEnd", "timeoutSec": 5}]
  }
}
JSON
snapshot() { (cd "$home/.copilot" && find settings.json hooks -type f | sort | xargs sha256sum); }
before=$(snapshot)

echo "installing @github/copilot@$VERSION" >&2
npm install --prefix "$base/pkg" --no-audit --no-fund --loglevel=error "@github/copilot@$VERSION" >&2
copilot=$base/pkg/node_modules/.bin/copilot

node "$here/server.js" "$port" "$project" "$base/server.log" &
server_pid=$!
for _ in $(seq 50); do [ -s "$base/server.log" ] && break; sleep 0.1; done

# git mem in the user's shell: GIT_MEM_DIR names the memory.
gm() { env -i PATH="$repo/bin:/usr/bin:/bin" HOME="$home" GIT_MEM_DIR="$mem" git-mem "$@"; }
gm init >/dev/null
gm hook install copilot-cli
grep -q -- "--mem-dir $mem hook copilot-cli" "$home/.copilot/hooks/git-mem.json" ||
	{ echo "FAIL: the hook does not name the memory" >&2; cat "$home/.copilot/hooks/git-mem.json" >&2; exit 1; }
# Each handler also has the command Copilot CLI runs on Windows (not run
# here: this is Linux, where it takes "bash").
[ "$(grep -c -- "\"powershell\": \".*--mem-dir $mem hook copilot-cli\"" "$home/.copilot/hooks/git-mem.json")" = 2 ] ||
	{ echo "FAIL: want a powershell command naming the memory in both handlers" >&2; cat "$home/.copilot/hooks/git-mem.json" >&2; exit 1; }

# The agent's whole environment: no GIT_MEM_DIR; git-mem on PATH.
run() {
	(cd "$project" && env -i PATH="$repo/bin:/usr/local/bin:/usr/bin:/bin" HOME="$home" TERM=dumb LANG=C.UTF-8 \
		XDG_CACHE_HOME="$base/cache" COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false \
		COPILOT_PROVIDER_TYPE=openai COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$port/v1" \
		COPILOT_PROVIDER_API_KEY=sk-test-fixture COPILOT_MODEL=gpt-4.1 \
		timeout 180 "$copilot" "$@" --allow-all-tools --no-auto-update --disable-client-telemetry </dev/null >/dev/null)
}
stored() { gm log --oneline --agent copilot-cli 2>/dev/null | wc -l; }
waitfor() { # waitfor N: until N exchanges are stored (the worker is detached)
	for _ in $(seq 100); do [ "$(stored)" -ge "$1" ] && return 0; sleep 0.1; done
	return 0
}

run --session-id "$SESSION" -p "What does notes.md say?"
waitfor 1
if [ -n "$save" ]; then
	cp "$base"/payloads/agentStop-*.json "$save/agentStop.json"
	cp "$base"/payloads/sessionEnd-*.json "$save/sessionEnd.json"
fi
run --resume "$SESSION" -p "Fix the greeting in hello.sh, it should print Hello, world."
waitfor 2
run --resume "$SESSION" -p "Check the build log." || true # the provider answers 400: copilot exits 1
waitfor 3
if [ -n "$save" ]; then
	cp "$(ls "$base"/payloads/sessionEnd-*.json | tail -1)" "$save/sessionEnd-error.json"
	# The session, whose hook.start events record the payloads above.
	cp "$home/.copilot/session-state/$SESSION/events.jsonl" "$save/events.jsonl"
fi

# A second session in the interactive UI (in tmux, on a socket of its own):
# its turn is stored by agentStop while the agent still runs, before /exit.
tmux_sock=git-mem-hook-check-$$
session2=4e6a8c0e-3d5f-4b7a-9c1e-2b4d6f8a0c3e
(cd "$project" && tmux -L "$tmux_sock" new-session -d -s agent -x 160 -y 50 \
	env -i PATH="$repo/bin:/usr/local/bin:/usr/bin:/bin" HOME="$home" TERM=xterm-256color LANG=C.UTF-8 \
	XDG_CACHE_HOME="$base/cache" COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false COPILOT_ALLOW_ALL=true \
	COPILOT_PROVIDER_TYPE=openai COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$port/v1" \
	COPILOT_PROVIDER_API_KEY=sk-test-fixture COPILOT_MODEL=gpt-4.1 \
	timeout 300 "$copilot" --session-id "$session2" --no-auto-update --disable-client-telemetry)
for _ in $(seq 600); do tmux -L "$tmux_sock" capture-pane -p -t agent 2>/dev/null | grep -q '/ commands' && break; sleep 0.1; done
type_line() {
	tmux -L "$tmux_sock" send-keys -t agent -l "$1"
	sleep 0.5
	tmux -L "$tmux_sock" send-keys -t agent Enter
}
type_line "List the shell scripts in this folder."
waitfor 4
live=$(stored)
tmux -L "$tmux_sock" has-session -t agent 2>/dev/null || live="(the agent had exited)"
type_line "/exit"
for _ in $(seq 100); do tmux -L "$tmux_sock" has-session -t agent 2>/dev/null || break; sleep 0.1; done
tmux -L "$tmux_sock" kill-server 2>/dev/null || true
sleep 1

gm status >&2 || true
gm log --oneline --agent copilot-cli
fail=0
[ "$live" = 4 ] || { echo "FAIL: while the interactive agent ran, $live exchanges were stored, want 4" >&2; fail=1; }
n=$(stored)
[ "$n" -eq 4 ] || { echo "FAIL: the hooks stored $n exchanges, want 4" >&2; fail=1; }
[ "$(ls "$base"/payloads/agentStop-*.json | wc -l)" -eq 3 ] || { echo "FAIL: want 3 agentStop payloads" >&2; fail=1; }
[ "$(ls "$base"/payloads/sessionEnd-*.json | wc -l)" -eq 4 ] || { echo "FAIL: want 4 sessionEnd payloads" >&2; fail=1; }
for q in "What does notes.md say" "Fix the greeting" "Check the build log" "List the shell scripts"; do
	out=$(gm search "$q" 2>&1 || true)
	if grep -q "$q" <<<"$out"; then echo "found: $q" >&2; else echo "FAIL: not found: $q; search said:" >&2; echo "$out" >&2; fail=1; fi
done
# Copilot CLI records each hook's run in the session: ours must not fail.
for s in "$SESSION" "$session2"; do
	ev=$home/.copilot/session-state/$s/events.jsonl
	if grep '"type":"hook.end"' "$ev" | grep -q '"success":false'; then
		echo "FAIL: a hook failed:" >&2
		grep '"type":"hook.end"' "$ev" | grep '"success":false' >&2
		fail=1
	fi
done
if ls "$mem"/mem/log/*.log >/dev/null 2>&1 && grep -h -i error "$mem"/mem/log/*.log >&2; then
	echo "FAIL: the worker logged errors" >&2
	fail=1
fi

gm hook uninstall copilot-cli
after=$(snapshot)
if [ "$before" != "$after" ]; then
	echo "FAIL: the Copilot config after uninstall differs from before install:" >&2
	diff <(echo "$before") <(echo "$after") >&2 || true
	fail=1
fi
[ "$fail" -eq 0 ] || exit 1
echo "ok: $n exchanges stored by Copilot CLI $VERSION's agentStop/sessionEnd hooks (into GIT_MEM_DIR's memory), the interactive one before /exit; uninstall left settings.json and hooks/ as they were" >&2
