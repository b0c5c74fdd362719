#!/usr/bin/env bash
# Drive a running `hal0 serve` with the MCP Inspector CLI
# (@modelcontextprotocol/inspector, installed by tests/external/setup.sh into
# <repo>/.tools/node; nothing is downloaded here).
#
#   usage: tests/external/inspector.sh BASE_URL KEY
#   e.g.   tests/external/inspector.sh http://127.0.0.1:8080 hal0bk_...
#
# For each protocol era (INSPECTOR_ERAS, default "legacy auto": the Inspector's
# ad-hoc default handshake on 2025-11-25, and `auto`, which negotiates
# 2026-07-28 with rmcp 3.x) it runs, against /mcp/{agents,memory,admin}/mcp:
#   --method initialize     (serverInfo, protocolVersion, capabilities)
#   --method tools/list
#   --method tools/list --strict  (the schema portability lint: its findings, if any)
# and against admin also
#   --method tools/call --tool-name version_info --tool-arg 'args={}'
# (`--tool-arg` parses the value as JSON, so `args={}` sends {"args": {}}).
#
# Output: one JSON object per line on stdout:
#   {"era":"legacy","mount":"admin","method":"tools/list","result":{...}}
# Exits non-zero, with the Inspector's own error on stderr, on any failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
INSPECTOR="${HAL0_INSPECTOR:-$ROOT/.tools/node/node_modules/.bin/mcp-inspector}"
ERAS="${INSPECTOR_ERAS:-legacy auto}"
PER_CALL_TIMEOUT="${INSPECTOR_TIMEOUT:-60}"

die() { printf 'inspector.sh: FAILED: %s\n' "$*" >&2; exit 1; }

if [ $# -ne 2 ] || [ -z "$1" ] || [ -z "$2" ]; then
    echo "usage: $0 BASE_URL KEY" >&2
    exit 2
fi
BASE="${1%/}"
KEY="$2"

command -v node >/dev/null 2>&1 || { echo "inspector.sh: node is not on PATH" >&2; exit 2; }
if [ ! -x "$INSPECTOR" ]; then
    echo "inspector.sh: MCP Inspector not found at $INSPECTOR; run tests/external/setup.sh" >&2
    exit 2
fi

# The Inspector keeps state under ~/.mcp-inspector (catalog, OAuth store).
# Give it a throwaway HOME so runs neither read nor leave anything in the real one.
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/hal0-inspector.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT
export HOME="$SCRATCH" NO_COLOR=1

run_timeout=()
if command -v timeout >/dev/null 2>&1; then
    run_timeout=(timeout "$PER_CALL_TIMEOUT")
fi

# inspect ERA MOUNT METHOD [extra inspector args...]
inspect() {
    local era="$1" mount="$2" method="$3"
    shift 3
    local url="$BASE/mcp/$mount/mcp" out err rc=0
    out="$SCRATCH/out" err="$SCRATCH/err"
    "${run_timeout[@]}" "$INSPECTOR" --cli "$url" --transport http \
        --protocol-era "$era" --stored-auth-only --format json --quiet \
        --method "$method" "$@" \
        --header "Authorization: Bearer $KEY" \
        >"$out" 2>"$err" || rc=$?
    if [ "$rc" -ne 0 ]; then
        {
            echo "inspector.sh: FAILED: era=$era mount=$mount method=$method url=$url exit=$rc"
            [ "$rc" -eq 124 ] && echo "inspector.sh: timed out after ${PER_CALL_TIMEOUT}s"
            sed 's/^/  inspector stderr: /' "$err"
            sed 's/^/  inspector stdout: /' "$out"
        } >&2
        exit 1
    fi
    # Wrap the Inspector's JSON ({"result": ...}) into one tagged line; this also
    # checks that it is JSON and that a tool call did not report isError.
    ERA="$era" MOUNT="$mount" METHOD="$method" node -e '
        const fs = require("fs");
        const raw = fs.readFileSync(process.argv[1], "utf8");
        let doc;
        try { doc = JSON.parse(raw); } catch (e) {
            console.error(`inspector.sh: FAILED: era=${process.env.ERA} mount=${process.env.MOUNT} method=${process.env.METHOD}: output is not JSON: ${raw.slice(0, 500)}`);
            process.exit(1);
        }
        const result = (doc && typeof doc === "object" && "result" in doc) ? doc.result : doc;
        if (process.env.METHOD === "tools/call" && result && result.isError) {
            console.error(`inspector.sh: FAILED: era=${process.env.ERA} mount=${process.env.MOUNT}: tool returned isError: ${JSON.stringify(result)}`);
            process.exit(1);
        }
        process.stdout.write(JSON.stringify({era: process.env.ERA, mount: process.env.MOUNT, method: process.env.METHOD, result}) + "\n");
    ' "$out" || exit 1
}

# lint ERA MOUNT: the Inspector's tool-schema portability lint (`tools/list --strict`),
# which prints every finding on stderr and exits 6 on an error-severity one. Prints
# {"era","mount","method":"lint","result":{"exit":N,"findings":"<stderr>"}}.
lint() {
    local era="$1" mount="$2"
    local url="$BASE/mcp/$mount/mcp" rc=0
    "${run_timeout[@]}" "$INSPECTOR" --cli "$url" --transport http \
        --protocol-era "$era" --stored-auth-only --format json --quiet \
        --method tools/list --strict \
        --header "Authorization: Bearer $KEY" \
        >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 6 ]; then
        {
            echo "inspector.sh: FAILED: era=$era mount=$mount lint url=$url exit=$rc"
            sed 's/^/  inspector stderr: /' "$SCRATCH/err"
        } >&2
        exit 1
    fi
    ERA="$era" MOUNT="$mount" RC="$rc" node -e '
        const findings = require("fs").readFileSync(process.argv[1], "utf8");
        process.stdout.write(JSON.stringify({era: process.env.ERA, mount: process.env.MOUNT, method: "lint",
            result: {exit: Number(process.env.RC), findings}}) + "\n");
    ' "$SCRATCH/err" || exit 1
}

for era in $ERAS; do
    for mount in agents memory admin; do
        inspect "$era" "$mount" initialize
        inspect "$era" "$mount" tools/list
        lint "$era" "$mount"
    done
    inspect "$era" admin tools/call --tool-name version_info --tool-arg 'args={}'
done
