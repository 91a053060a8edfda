#!/usr/bin/env bash
# Generates hooks/testdata/roo-code/generated/: Roo Code task folders written
# by Roo Code's own CLI (apps/cli of RooCodeInc/Roo-Code, tag cli-v0.1.17,
# which runs the Roo Code extension 3.50.4 headless under Roo's own
# @roo-code/vscode-shim and keeps each task in
# ~/.vscode-mock/global-storage/tasks/<task id>/), driven by server.js, a
# scripted Anthropic-compatible model on 127.0.0.1 replaying script.json.
#
# The CLI is not on the npm registry: Roo publishes it only as a GitHub
# release tarball (apps/cli/install.sh). So this script builds that tarball's
# layout from the tagged source the way apps/cli/scripts/build.sh does
# (pnpm, all packages from the npm registry), in a temp dir:
#
#   ROO_CODE_GIT=/path/to/Roo-Code.git scripts/agent-fixtures/roo-code/run.sh
#
# ROO_CODE_GIT is any clone (bare is fine) holding the tag. Or set
# ROO_CLI=/path/to/roo-cli-linux-x64 (a built release folder, e.g. one kept
# by an earlier run with KEEP=1) to skip the build.
#
# Where the build departs from the release (the offline npm registry here
# lacks a few versions; nothing in the task engine changes):
#   - the workspace is cut to the CLI, the extension and their packages
#     (the web apps, evals and webview are not built: the CLI has no webview);
#   - the lockfile is not frozen and @ai-sdk/baseten is pinned to 1.0.33
#     (the lockfile's 1.0.31 is not on the registry);
#   - install scripts are skipped: @vscode/ripgrep's postinstall downloads
#     rg from GitHub; the system's rg (Debian package ripgrep) is put where
#     the release tarball puts it.
#
# Two sessions (one CLI process each, stdin stream mode, driver.js), fixed
# prompts, fixed task ids, in a fixed project folder:
#   1. task ...0001: "What does greet.js print?"  read_file,
#      attempt_completion; then, as the answer to the completion, "Make
#      greet() use the name ...": apply_diff, execute_command "node greet.js
#      Ada", attempt_completion.
#   2. task ...0002: "Add a README.md ...": write_to_file, attempt_completion.
#
# Needs node >= 20, npm, git, rg. Nothing is installed outside the temp dir;
# the CLI's HOME is a temp dir too. Telemetry: the PostHog client has no key
# in a build without .env, and telemetrySetting is "disabled" below; Roo
# Code Cloud URLs point at a closed local port. The extension still asks
# openrouter.ai and the Vercel AI gateway for their model lists at start;
# offline these fail at once (ENOTFOUND) and nothing waits on them.
set -euo pipefail

TAG=cli-v0.1.17
COMMIT=3e237e60616a1ea9c0b8477de3a74ba942de7af2
CLI_VERSION=0.1.17
EXT_VERSION=3.50.4
PNPM_VERSION=10.8.1
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
OUT=$REPO/hooks/testdata/roo-code/generated
PROJECT=/tmp/git-mem-fixture/roo-code/project

WORK=$(mktemp -d /tmp/git-mem-roo.XXXXXX)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  if [ -n "${KEEP:-}" ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

build() {
  local src=$WORK/src rel=$WORK/roo-cli-linux-x64
  [ -n "${ROO_CODE_GIT:-}" ] || { echo "set ROO_CODE_GIT (a Roo-Code clone with tag $TAG) or ROO_CLI" >&2; exit 1; }
  [ "$(git -C "$ROO_CODE_GIT" rev-parse "$TAG^{commit}")" = "$COMMIT" ] || { echo "$TAG is not $COMMIT" >&2; exit 1; }
  mkdir -p "$src"
  git -C "$ROO_CODE_GIT" archive "$COMMIT" | tar -x -C "$src"
  echo "installing pnpm@$PNPM_VERSION into $WORK/pnpm" >&2
  npm install --prefix "$WORK/pnpm" --no-audit --no-fund --loglevel=error "pnpm@$PNPM_VERSION" >&2
  local pnpm=$WORK/pnpm/node_modules/.bin/pnpm
  cat > "$src/pnpm-workspace.yaml" <<'EOF'
packages:
    - "src"
    - "apps/cli"
    - "packages/build"
    - "packages/cloud"
    - "packages/config-eslint"
    - "packages/config-typescript"
    - "packages/core"
    - "packages/ipc"
    - "packages/telemetry"
    - "packages/types"
    - "packages/vscode-shim"
EOF
  node -e '
const fs = require("fs"), f = process.argv[1];
const p = JSON.parse(fs.readFileSync(f, "utf8"));
p.pnpm.overrides["@ai-sdk/baseten"] = "1.0.33";
fs.writeFileSync(f, JSON.stringify(p, null, 2));
' "$src/package.json"
  echo "pnpm install (a few minutes)" >&2
  (cd "$src" && "$pnpm" install --no-frozen-lockfile --ignore-scripts --reporter=silent) >&2
  (cd "$src/packages/build" && "$pnpm" build) >&2
  (cd "$src/packages/types" && "$pnpm" build) >&2
  (cd "$src/src" && "$pnpm" bundle) >&2
  (cd "$src/apps/cli" && "$pnpm" build) >&2

  # The release tarball's layout (apps/cli/scripts/build.sh create_tarball,
  # then apps/cli/install.sh's npm install --production).
  mkdir -p "$rel/bin" "$rel/lib" "$rel/extension"
  cp -r "$src/apps/cli/dist/"* "$rel/lib/"
  cp -r "$src/src/dist/"* "$rel/extension/"
  echo '{"type": "commonjs"}' > "$rel/extension/package.json"
  node -e '
const pkg = require(process.argv[1]), d = pkg.dependencies;
const keys = ["@inkjs/ui", "@trpc/client", "commander", "fuzzysort", "ink", "p-wait-for", "react", "superjson", "zustand"];
console.log(JSON.stringify({ name: "@roo-code/cli", version: pkg.version, type: "module",
  dependencies: Object.fromEntries(keys.map((k) => [k, d[k]])) }, null, 2));
' "$src/apps/cli/package.json" > "$rel/package.json"
  (cd "$rel" && npm install --production --no-audit --no-fund --loglevel=error) >&2
  mkdir -p "$rel/node_modules/@vscode/ripgrep/bin"
  cp "$(command -v rg)" "$rel/node_modules/@vscode/ripgrep/bin/rg"
  cp "$(command -v rg)" "$rel/bin/rg"
  touch "$rel/.env"
  cat > "$rel/bin/roo" <<'EOF'
#!/usr/bin/env node

import { fileURLToPath } from 'url';
import { dirname, join } from 'path';
import { existsSync } from 'fs';

const __filename = fileURLToPath(import.meta.url);
const __dirname = dirname(__filename);

// Set environment variables for the CLI
process.env.ROO_CLI_ROOT = join(__dirname, '..');
process.env.ROO_EXTENSION_PATH = join(__dirname, '..', 'extension');
const ripgrepPath = join(__dirname, 'rg');
if (existsSync(ripgrepPath)) {
  process.env.ROO_RIPGREP_PATH = ripgrepPath;
}

// Import and run the actual CLI
await import(join(__dirname, '..', 'lib', 'index.js'));
EOF
  chmod +x "$rel/bin/roo"
  rm -rf "$src"
  ROO_CLI=$rel
}

if [ -z "${ROO_CLI:-}" ]; then build; fi
ROO=$ROO_CLI/bin/roo
[ "$(node "$ROO" --version)" = "$CLI_VERSION" ] || { echo "$ROO is not $CLI_VERSION" >&2; exit 1; }

export HOME=$WORK/home
mkdir -p "$HOME/.vscode-mock/global-storage"
unset ANTHROPIC_API_KEY OPENROUTER_API_KEY OPENAI_API_KEY ROO_API_KEY || true
# Roo Code Cloud (auth, SDK, provider proxy, Clerk): a closed local port.
export ROO_AUTH_BASE_URL=http://127.0.0.1:9 ROO_SDK_BASE_URL=http://127.0.0.1:9 \
  ROO_CODE_PROVIDER_URL=http://127.0.0.1:9/proxy ROO_CODE_API_URL=http://127.0.0.1:9 \
  CLERK_BASE_URL=http://127.0.0.1:9
# The extension's saved state (vscode-shim FileMemento): telemetry off.
echo '{"telemetrySetting": "disabled"}' > "$HOME/.vscode-mock/global-storage/global-state.json"

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
export ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT

T1=019ae1c0-0001-7000-8000-000000000001
T2=019ae1c0-0002-7000-8000-000000000002
cat > "$WORK/plan1.json" <<EOF
[
 {"command": "start", "taskId": "$T1", "prompt": "What does greet.js print?"},
 {"command": "message", "prompt": "Make greet() use the name it is given, then run it with Ada to check."}
]
EOF
cat > "$WORK/plan2.json" <<EOF
[
 {"command": "start", "taskId": "$T2", "prompt": "Add a README.md that says how to run greet.js."}
]
EOF

roo() {
  (cd "$PROJECT" && node "$HERE/driver.js" "$1" node "$ROO" --print --stdin-prompt-stream \
    --output-format stream-json --provider anthropic -k sk-test-fixture -m claude-sonnet-4-5 \
    -w "$PROJECT" < /dev/null > "$WORK/stream-$(basename "$1" .json).ndjson")
}
roo "$WORK/plan1.json"
roo "$WORK/plan2.json"
cat "$WORK/server.err" >&2

TASKS=$HOME/.vscode-mock/global-storage/tasks
# Beside the task folders: _index.json, the task history's index.
[ "$(ls "$TASKS" | grep -v '^_index.json$')" = "$(printf '%s\n%s' "$T1" "$T2")" ] || { echo "unexpected task folders: $(ls "$TASKS")" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT"
for id in "$T1" "$T2"; do
  mkdir -p "$OUT/$id"
  cp "$TASKS/$id/"{api_conversation_history.json,ui_messages.json,task_metadata.json,history_item.json} "$OUT/$id/"
done

# PROVENANCE.json: one entry per copied file.
node -e '
const fs = require("fs"), path = require("path");
const [prov, out, cli, ext, commit] = process.argv.slice(1);
const p = JSON.parse(fs.readFileSync(prov, "utf8"));
for (const k of Object.keys(p)) if (k.startsWith("generated/")) delete p[k];
for (const id of fs.readdirSync(out).sort())
  for (const f of fs.readdirSync(path.join(out, id)).sort())
    p["generated/" + id + "/" + f] = {
      synthetic: false,
      generated: {
        agent: "Roo Code CLI " + cli + " with the Roo Code extension " + ext +
          " (not on the npm registry: built from RooCodeInc/Roo-Code tag cli-v" + cli + ", commit " + commit + ")",
        script: "scripts/agent-fixtures/roo-code/run.sh",
        license: "Apache-2.0",
      },
    };
fs.writeFileSync(prov, JSON.stringify(p, null, 2) + "\n");
' "$REPO/hooks/testdata/roo-code/PROVENANCE.json" "$OUT" "$CLI_VERSION" "$EXT_VERSION" "$COMMIT"
echo "wrote $T1 $T2 to $OUT" >&2
