#!/usr/bin/env bash
# The Debian package and a throwaway Debian root to install it in, for tests/it/package.rs.
#
#   tests/external/package.sh [--dev]
#
# 1. Builds the package with cargo-deb (installed with `cargo install cargo-deb` when
#    missing): a release build, as shipped; `--dev` packages the debug binary that
#    `cargo build` made instead (a quick local loop; cargo-deb warns that it is not for
#    releases).
# 2. Makes .tools/debroot with debootstrap (Debian bookworm, minbase plus systemd, from
#    Debian's mirror), once; the test copies it for each run and never changes it.
# Prints the package's path on its last line of stdout (the rest goes to stderr). Root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

log() { printf '%s\n' "$*" >&2; }

if ! command -v cargo-deb >/dev/null 2>&1; then
    log "package.sh: installing cargo-deb (cargo install)"
    cargo install cargo-deb --locked --version 3.8.0 >&2
fi
out=target/debian
rm -f "$out"/hal0_*.deb
if [ "${1:-}" = "--dev" ]; then
    cargo build --bin hal0 >&2
    cargo deb --profile dev --no-build --fast -o "$out/" >&2
else
    cargo deb --locked -o "$out/" >&2
fi
deb=$(ls "$out"/hal0_*.deb | head -1)

root=.tools/debroot
if [ ! -e "$root/.complete" ]; then
    if ! command -v debootstrap >/dev/null 2>&1; then
        log "package.sh: installing debootstrap (apt)"
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >&2
    fi
    rm -rf "$root"
    log "package.sh: debootstrap bookworm (minbase + systemd) into $root"
    debootstrap --variant=minbase --include=systemd bookworm "$root" http://deb.debian.org/debian >&2
    touch "$root/.complete"
fi
echo "$(pwd)/$deb"
