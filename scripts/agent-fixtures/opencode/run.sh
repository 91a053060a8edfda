#!/bin/sh
# Generates hooks/testdata/opencode/generated/opencode.db: the released
# OpenCode (npm package opencode-ai, pinned below), installed into a temp
# folder, run non-interactively in a temp HOME and a fixed project folder
# against server.js, a scripted OpenAI-compatible model on 127.0.0.1.
# Session 1: three prompts (reasoning and a read; a read, a failed edit
# and an edit; a shell command);
# session 2: one prompt (a write). Nothing leaves the machine: model
# fetches, update checks, sharing and default plugins are off, and the
# npm registry OpenCode's own installer would ask (for its plugin SDK) is
# pointed at the local server.
#
#   scripts/agent-fixtures/opencode/run.sh            # from the repository root
#   OPENCODE_VERSION=1.1.65 scripts/agent-fixtures/opencode/run.sh   # the older JSON storage
#   OUT=/tmp/out KEEP=1 scripts/agent-fixtures/opencode/run.sh       # elsewhere; keep the temp HOME
set -eu

VERSION=${OPENCODE_VERSION:-1.18.33}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
OUT=${OUT:-$REPO/hooks/testdata/opencode/generated}
FIX=/tmp/git-mem-fixture/opencode
PROJECT="$FIX/project"
HOME_DIR="$FIX/home"
NPM_DIR="$FIX/npm-$VERSION"

command -v node >/dev/null || { echo "run.sh: needs node" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "run.sh: needs the sqlite3 CLI" >&2; exit 1; }

rm -rf "$PROJECT" "$HOME_DIR" "$FIX/server.log" "$FIX/requests.jsonl"
mkdir -p "$PROJECT" "$HOME_DIR" "$NPM_DIR"

# The agent, pinned. npm may skip opencode-ai's postinstall (it only links
# the platform binary, which comes as an optional dependency).
if [ ! -x "$NPM_DIR/node_modules/.bin/opencode" ] || [ "$("$NPM_DIR/node_modules/.bin/opencode" --version 2>/dev/null)" != "$VERSION" ]; then
	[ -f "$NPM_DIR/package.json" ] || echo '{"private":true}' >"$NPM_DIR/package.json"
	(cd "$NPM_DIR" && npm install --no-audit --no-fund --silent "opencode-ai@$VERSION")
fi
OC="$NPM_DIR/node_modules/.bin/opencode"
if ! "$OC" --version >/dev/null 2>&1; then
	for p in opencode-linux-x64 opencode-linux-x64-baseline opencode-linux-arm64; do
		if [ -x "$NPM_DIR/node_modules/$p/bin/opencode" ] && "$NPM_DIR/node_modules/$p/bin/opencode" --version >/dev/null 2>&1; then
			OC="$NPM_DIR/node_modules/$p/bin/opencode"
			break
		fi
	done
fi
[ "$("$OC" --version)" = "$VERSION" ] || { echo "run.sh: $OC is not OpenCode $VERSION" >&2; exit 1; }

# The project: a git repository with a fixed first commit, so OpenCode's
# project id (that commit) is the same on every run.
cd "$PROJECT"
printf '# calc\n\nA tiny shell calculator.\n' >README.md
printf '#!/bin/sh\necho $(($1 - $2))\n' >add.sh
printf '#!/bin/sh\nif [ "$(sh add.sh 2 3)" = 5 ]; then echo "ok 2+3=5"; else echo "FAIL 2+3=$(sh add.sh 2 3)"; exit 1; fi\n' >test.sh
export GIT_AUTHOR_NAME=fixture GIT_AUTHOR_EMAIL=fixture@example.com GIT_COMMITTER_NAME=fixture GIT_COMMITTER_EMAIL=fixture@example.com
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
git init -q -b main . && git add . && git -c commit.gpgsign=false commit -q -m 'calc'

# The model server.
PROJECT="$PROJECT" LOG="$FIX/requests.jsonl" node "$HERE/server.js" >"$FIX/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT INT TERM
i=0
while ! grep -q '^listening ' "$FIX/server.log" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "run.sh: the model server did not start" >&2; cat "$FIX/server.log" >&2; exit 1; }
	sleep 0.1
done
PORT=$(sed -n 's/^listening //p' "$FIX/server.log")

mkdir -p "$HOME_DIR/.config/opencode"
cat >"$HOME_DIR/.config/opencode/opencode.json" <<EOF
{
  "\$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "fixture/fixture-model",
  "small_model": "fixture/fixture-model",
  "provider": {
    "fixture": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Fixture",
      "options": { "baseURL": "http://127.0.0.1:$PORT/v1", "apiKey": "sk-test-fixture" },
      "models": { "fixture-model": { "name": "Fixture model", "tool_call": true, "reasoning": true } }
    }
  },
  "permission": { "edit": "allow", "bash": "allow", "webfetch": "deny", "external_directory": "allow" },
  "lsp": false,
  "formatter": false
}
EOF

oc() {
	env -i PATH="$PATH" HOME="$HOME_DIR" TERM=dumb LANG=C.UTF-8 TZ=UTC \
		OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 \
		OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_CLAUDE_CODE=1 \
		npm_config_registry="http://127.0.0.1:$PORT/npm/" npm_config_cache="$FIX/npm-cache" \
		timeout 180 "$OC" run "$@" </dev/null
}

# Session 1. The words of a prompt are passed as separate arguments: one
# argument with spaces is stored with quotes around it ("opencode run"
# quotes such arguments when it joins them).
oc Read README.md and tell me what this project does.
oc --continue Fix the bug in add.sh, it should add.
oc --continue Run the tests.
# Session 2: a new session, the prompt as one quoted argument.
oc "Write a CHANGELOG.md for the fix."

DATA="$HOME_DIR/.local/share/opencode"
mkdir -p "$OUT"
if [ -f "$DATA/opencode.db" ]; then
	rm -f "$OUT/opencode.db"
	# A copy of the live database (WAL folded in), as one file: VACUUM and
	# the rollback journal change pages, not rows.
	sqlite3 "$DATA/opencode.db" ".backup '$OUT/opencode.db'"
	sqlite3 "$OUT/opencode.db" 'PRAGMA journal_mode=DELETE;' 'VACUUM;' >/dev/null
	echo "wrote $OUT/opencode.db ($(wc -c <"$OUT/opencode.db") bytes):"
	sqlite3 "$OUT/opencode.db" 'SELECT (SELECT count(*) FROM session) || " sessions, " || (SELECT count(*) FROM message) || " messages, " || (SELECT count(*) FROM part) || " parts";'
else
	# Before its database (1.1 and older) OpenCode wrote JSON files:
	# storage/session/<projectID>/<id>.json, message/<sessionID>/…,
	# part/<messageID>/…; kept as they are, per version.
	dst="$OUT/$VERSION/storage"
	rm -rf "$OUT/$VERSION"
	mkdir -p "$dst"
	for d in session message part; do
		cp -R "$DATA/storage/$d" "$dst/"
	done
	echo "wrote $dst: $(find "$dst" -name '*.json' | wc -l) files"
fi
[ -n "${KEEP:-}" ] || rm -rf "$HOME_DIR"
