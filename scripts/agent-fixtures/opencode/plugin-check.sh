#!/bin/sh
# Checks git mem's OpenCode plugin against the real agent: a fresh memory,
# `git mem hook install opencode` into a temp HOME, one `opencode run`
# against server.js, then `git mem search` must find the exchange the
# plugin stored when the session went idle. Needs run.sh's npm install
# (it reuses /tmp/git-mem-fixture/opencode/npm-<version>).
#
#   go build -o bin/ ./cmd/... && scripts/agent-fixtures/opencode/plugin-check.sh [path/to/git-mem]
set -eu

VERSION=${OPENCODE_VERSION:-1.18.33}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
GITMEM=${1:-$REPO/bin/git-mem}
FIX=/tmp/git-mem-fixture/opencode-plugin
OC=/tmp/git-mem-fixture/opencode/npm-$VERSION/node_modules/.bin/opencode
[ -x "$OC" ] || { echo "plugin-check.sh: run run.sh first (no $OC)" >&2; exit 1; }

rm -rf "$FIX"
mkdir -p "$FIX/home" "$FIX/project"
cd "$FIX/project"
printf '# calc\n\nA tiny shell calculator.\n' >README.md
git init -q -b main . && git add . && git -c user.name=fixture -c user.email=fixture@example.com -c commit.gpgsign=false commit -q -m calc

PROJECT="$FIX/project" node "$HERE/server.js" >"$FIX/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT INT TERM
i=0
while ! grep -q '^listening ' "$FIX/server.log" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "plugin-check.sh: the model server did not start" >&2; exit 1; }
	sleep 0.1
done
PORT=$(sed -n 's/^listening //p' "$FIX/server.log")
mkdir -p "$FIX/home/.config/opencode"
cat >"$FIX/home/.config/opencode/opencode.json" <<EOF
{
  "autoupdate": false, "share": "disabled",
  "model": "fixture/fixture-model", "small_model": "fixture/fixture-model",
  "provider": { "fixture": { "npm": "@ai-sdk/openai-compatible", "name": "Fixture",
      "options": { "baseURL": "http://127.0.0.1:$PORT/v1", "apiKey": "sk-test-fixture" },
      "models": { "fixture-model": { "name": "Fixture model", "tool_call": true } } } },
  "permission": { "edit": "allow", "bash": "allow", "webfetch": "deny", "external_directory": "allow" },
  "lsp": false, "formatter": false
}
EOF

gm() { env -i PATH="$PATH" HOME="$FIX/home" "$GITMEM" --mem-dir "$FIX/mem" "$@"; }
gm init >/dev/null
gm hook install opencode

env -i PATH="$PATH" HOME="$FIX/home" TERM=dumb LANG=C.UTF-8 \
	OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 \
	OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_CLAUDE_CODE=1 \
	npm_config_registry="http://127.0.0.1:$PORT/npm/" npm_config_cache="$FIX/npm-cache" \
	timeout 180 "$OC" run --print-logs Read README.md and tell me what this project does. </dev/null >"$FIX/run.out" 2>"$FIX/run.err"

# The plugin's git mem runs detached: give it a moment.
i=0
while :; do
	if gm search calculator 2>/dev/null | grep -q 'Read README.md'; then
		gm search calculator
		echo "plugin-check.sh: OK, the plugin stored the exchange"
		exit 0
	fi
	i=$((i + 1))
	[ $i -lt 30 ] || break
	sleep 1
done
echo "plugin-check.sh: FAILED, git mem search finds nothing; git mem status:" >&2
gm status >&2 || true
gm queue >&2 || true
exit 1
