#!/usr/bin/env bash
# Idempotent installer for the external MCP clients used by
# tests/external_clients.rs:
#   - <repo>/.venv        Python venv with the official `mcp` SDK (pinned)
#   - <repo>/.tools/node  the MCP Inspector CLI (pinned), installed locally
# Safe to run repeatedly; it only installs what is missing or at the wrong
# version. Works from any clone: paths are derived from this file's location.
set -euo pipefail

MCP_PY_VERSION="2.3.0"
INSPECTOR_VERSION="2.12.0"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$ROOT/.venv"
NODE_PREFIX="$ROOT/.tools/node"
PYTHON="${PYTHON:-python3}"

log() { printf 'setup.sh: %s\n' "$*" >&2; }

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

# --- MCP Inspector CLI ------------------------------------------------------
inspector_pkg="$NODE_PREFIX/node_modules/@modelcontextprotocol/inspector/package.json"
installed="$(node -e 'try{console.log(require(process.argv[1]).version)}catch(e){}' "$inspector_pkg" 2>/dev/null || true)"
if [ "$installed" != "$INSPECTOR_VERSION" ] || [ ! -x "$NODE_PREFIX/node_modules/.bin/mcp-inspector" ]; then
    log "installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION into $NODE_PREFIX (found: ${installed:-none})"
    mkdir -p "$NODE_PREFIX"
    npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
else
    log "inspector $installed already installed"
fi

log "ok: python=$VENV/bin/python inspector=$NODE_PREFIX/node_modules/.bin/mcp-inspector"
