#!/usr/bin/env bash
# Build the hermes-bridge relay (../shared/peers/hermes-bridge, used from there as a
# package: copied to a scratch directory under target/, never into the project) for the
# side-by-side relay benchmark. Prints the built directory. Idempotent.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SRC="${HERMES_BRIDGE_SRC:-$ROOT/../shared/peers/hermes-bridge}"
DEST="$ROOT/target/peer-hermes-bridge"
if [ ! -f "$DEST/dist/server/index.js" ]; then
    rm -rf "$DEST" && mkdir -p "$DEST"
    cp -r "$SRC/." "$DEST/"
    (cd "$DEST" && npm ci --no-audit --no-fund --loglevel=error >&2 && npx tsc >&2)
fi
echo "$DEST"
