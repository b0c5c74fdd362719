#!/usr/bin/env bash
# Idempotent installer for the external MCP clients used by
# tests/it/external_clients.rs and the real-Hermes tests (tests/hermes/):
#   - <repo>/.venv         Python venv with the official `mcp` SDK (pinned)
#   - <repo>/.tools/node   the MCP Inspector CLI (pinned), installed locally
#   - <repo>/.tools/node   also @modelcontextprotocol/server-everything (pinned), the
#                          npm reference MCP server used as an upstream by
#                          tests/it/support/upstream.rs (`node .../dist/index.js streamableHttp`)
#   - <repo>/.tools/node   also the TypeScript SDK @modelcontextprotocol/sdk (pinned), the
#                          client of tests/external/progress_client.mjs, and the Claude Code
#                          CLI @anthropic-ai/claude-code (pinned), driven by tests/it/claude_code.rs
#   - <repo>/.tools/conformance  the MCP conformance suite @modelcontextprotocol/conformance
#                          (pinned) with Node 22 from the `node` npm package (it needs 22)
#   - <repo>/.hermes-venv  a separate venv with the Hermes agent (pinned) plus
#                          aiohttp, which its API server needs but does not pull in
#   - <repo>/.tools/registry-capture.json  real npm / PyPI release metadata of two releases
#                          of one server each (tests/external/capture_registries.py)
# Safe to run repeatedly; it only installs what is missing or at the wrong
# version. Works from any clone: paths are derived from this file's location.
set -euo pipefail

MCP_PY_VERSION="2.3.0"
AIOSMTPD_VERSION="1.4.6"
A2A_SDK_VERSION="1.3.0"
A2A_JS_VERSION="1.3.0"
INSPECTOR_VERSION="2.12.0"
EVERYTHING_VERSION="2026.8.31"
TS_SDK_VERSION="1.32.2"
TS_CLIENT_V2_VERSION="2.4.0"
CLAUDE_CODE_VERSION="2.1.332"
HERMES_VERSION="0.19.0"
CONFORMANCE_VERSION="0.1.16"
NODE22_VERSION="22.23.3"
HERMES_AIOHTTP_VERSION="3.14.1"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$ROOT/.venv"
NODE_PREFIX="$ROOT/.tools/node"
CONFORMANCE_PREFIX="$ROOT/.tools/conformance"
HERMES_VENV="$ROOT/.hermes-venv"
PYTHON="${PYTHON:-python3}"

log() { printf 'setup.sh: %s\n' "$*" >&2; }
# The version in an npm package.json (empty when the package is not installed).
npm_version() { node -e 'try{console.log(require(process.argv[1]).version)}catch(e){}' "$1" 2>/dev/null || true; }

# --- Python SDK -------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
    log "creating venv at $VENV"
    "$PYTHON" -m venv "$VENV"
fi
installed="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null || true)"
if [ "$installed" != "$MCP_PY_VERSION" ]; then
    log "installing mcp==$MCP_PY_VERSION into $VENV (found: ${installed:-none})"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$MCP_PY_VERSION"
else
    log "mcp $installed already installed"
fi

# --- aiosmtpd: a real SMTP receiver for the e-mail notification tests ---------
installed="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("aiosmtpd"))' 2>/dev/null || true)"
if [ "$installed" != "$AIOSMTPD_VERSION" ]; then
    log "installing aiosmtpd==$AIOSMTPD_VERSION into $VENV (found: ${installed:-none})"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "aiosmtpd==$AIOSMTPD_VERSION"
else
    log "aiosmtpd $installed already installed"
fi

# --- a2a-sdk: the official Python A2A client, for the A2A face's tests ----------
installed="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("a2a-sdk"))' 2>/dev/null || true)"
if [ "$installed" != "$A2A_SDK_VERSION" ]; then
    log "installing a2a-sdk==$A2A_SDK_VERSION into $VENV (found: ${installed:-none})"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "a2a-sdk==$A2A_SDK_VERSION"
else
    log "a2a-sdk $installed already installed"
fi

# --- MCP Inspector CLI ------------------------------------------------------
inspector_pkg="$NODE_PREFIX/node_modules/@modelcontextprotocol/inspector/package.json"
installed="$(npm_version "$inspector_pkg")"
if [ "$installed" != "$INSPECTOR_VERSION" ] || [ ! -x "$NODE_PREFIX/node_modules/.bin/mcp-inspector" ]; then
    log "installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION into $NODE_PREFIX (found: ${installed:-none})"
    mkdir -p "$NODE_PREFIX"
    npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
else
    log "inspector $installed already installed"
fi

# --- MCP conformance suite (needs Node 22: its own prefix, so nothing else picks it up) ---
conformance_pkg="$CONFORMANCE_PREFIX/node_modules/@modelcontextprotocol/conformance/package.json"
installed="$(npm_version "$conformance_pkg")"
if [ "$installed" != "$CONFORMANCE_VERSION" ] || [ ! -x "$CONFORMANCE_PREFIX/node_modules/.bin/node" ]; then
    log "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION and node@$NODE22_VERSION into $CONFORMANCE_PREFIX (found: ${installed:-none})"
    mkdir -p "$CONFORMANCE_PREFIX"
    npm install --prefix "$CONFORMANCE_PREFIX" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "node@$NODE22_VERSION"
else
    log "conformance $installed already installed"
fi
"$CONFORMANCE_PREFIX/node_modules/.bin/node" --version >/dev/null

# --- MCP reference server "everything" (upstream for proxy tests) -----------
everything_pkg="$NODE_PREFIX/node_modules/@modelcontextprotocol/server-everything/package.json"
installed="$(npm_version "$everything_pkg")"
if [ "$installed" != "$EVERYTHING_VERSION" ] || [ ! -f "$NODE_PREFIX/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ]; then
    log "installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION into $NODE_PREFIX (found: ${installed:-none})"
    mkdir -p "$NODE_PREFIX"
    npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error --save-exact \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
else
    log "server-everything $installed already installed"
fi

# --- TypeScript SDK and Claude Code CLI (progress tests) --------------------
npm_pinned() {  # npm_pinned PACKAGE VERSION FILE-THAT-MUST-EXIST
    local pkg="$1" want="$2" must="$3" installed
    installed="$(npm_version "$NODE_PREFIX/node_modules/$pkg/package.json")"
    if [ "$installed" != "$want" ] || [ ! -e "$NODE_PREFIX/node_modules/$must" ]; then
        log "installing $pkg@$want into $NODE_PREFIX (found: ${installed:-none})"
        mkdir -p "$NODE_PREFIX"
        npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error --save-exact "$pkg@$want"
    else
        log "$pkg $installed already installed"
    fi
}
npm_pinned "@modelcontextprotocol/sdk" "$TS_SDK_VERSION" "@modelcontextprotocol/sdk/dist/esm/client/index.js"
npm_pinned "@anthropic-ai/claude-code" "$CLAUDE_CODE_VERSION" ".bin/claude"
npm_pinned "@a2a-js/sdk" "$A2A_JS_VERSION" "@a2a-js/sdk/dist/client/index.js"
# The TypeScript SDK v2 client (protocol 2026-07-28: gated calls answered round by round).
npm_pinned "@modelcontextprotocol/client" "$TS_CLIENT_V2_VERSION" "@modelcontextprotocol/client/dist/index.mjs"

# --- Hermes agent (real-Hermes end-to-end tests) ----------------------------
# Its own venv: hermes-agent pins mcp 1.x, the SDK venv above uses mcp 2.x.
# Hermes 0.19.0 needs Python >=3.11,<3.14: take the first of $HERMES_PYTHON,
# $PYTHON, python3.13, python3.12, python3.11 that fits.
hermes_python_ok() {
    "$1" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] < (3, 14) else 1)' >/dev/null 2>&1
}
if [ -z "${HERMES_PYTHON:-}" ]; then
    for candidate in "$PYTHON" python3.13 python3.12 python3.11; do
        if hermes_python_ok "$candidate"; then
            HERMES_PYTHON="$candidate"
            break
        fi
    done
fi
# The version comes from the package metadata: `hermes --version` would also
# query PyPI for updates and write ~/.hermes/.update_check.
installed="$("$HERMES_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("hermes-agent"))' 2>/dev/null || true)"
if [ -x "$HERMES_VENV/bin/hermes" ] && [ "$installed" = "$HERMES_VERSION" ]; then
    log "hermes-agent $installed already installed"
else
    if [ ! -x "$HERMES_VENV/bin/python" ]; then
        if [ -z "${HERMES_PYTHON:-}" ]; then
            log "no Python >=3.11,<3.14 found for hermes-agent $HERMES_VERSION; set HERMES_PYTHON"
            exit 1
        fi
        log "creating venv at $HERMES_VENV with $HERMES_PYTHON"
        "$HERMES_PYTHON" -m venv "$HERMES_VENV"
    fi
    log "installing hermes-agent[mcp]==$HERMES_VERSION into $HERMES_VENV (found: ${installed:-none})"
    "$HERMES_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        "hermes-agent[mcp]==$HERMES_VERSION" "aiohttp==$HERMES_AIOHTTP_VERSION"
fi

# Real release metadata of one npm and one PyPI MCP server, served back from a loopback
# mirror by tests/it/pinned_installs.rs (no test talks to a public registry).
if [ ! -s "$ROOT/.tools/registry-capture.json" ]; then
    log "capturing npm and PyPI release metadata into .tools/registry-capture.json"
    mkdir -p "$ROOT/.tools"
    "$PYTHON" "$ROOT/tests/external/capture_registries.py" "$ROOT/.tools/registry-capture.json"
else
    log "registry capture already there"
fi

log "ok: python=$VENV/bin/python inspector=$NODE_PREFIX/node_modules/.bin/mcp-inspector hermes=$HERMES_VENV/bin/hermes"
