#!/usr/bin/env bash
# Run hal0's benchmark harnesses on this machine and write their output, with the machine
# and commit they ran on, to docs/benchmarks-latest.md (the page docs/benchmarks.md points
# to). One release build first; then each harness, one after another (never two at once:
# they share the machine's cores with hal0 and its upstreams).
#
#   bash examples/bench_all.sh            # the quick set
#   bash examples/bench_all.sh --all      # also the store and backup harnesses (millions of rows)
#   bash examples/bench_all.sh bench_proxy bench_audit   # only these
#
# bench_relay runs only when the hermes-bridge peer is built (examples/bench_relay/peer.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

quick=(bench_redact bench_audit bench_bridge bench_admin bench_oauth bench_proxy bench_foundation bench_memory bench_relay)
heavy=(bench_store bench_backup)
if [ "${1:-}" = "--all" ]; then
    set -- "${quick[@]}" "${heavy[@]}"
elif [ $# -eq 0 ]; then
    set -- "${quick[@]}"
fi

cargo build --release --bin hal0 --examples >&2
out=docs/benchmarks-latest.md
bin=target/release/hal0
{
    echo "# Benchmark output (generated)"
    echo
    echo "Written by \`bash examples/bench_all.sh $*\`; do not edit by hand. What each harness"
    echo "measures and how to read it: [benchmarks.md](benchmarks.md)."
    echo
    echo "- when: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with local changes)')"
    echo "- machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
    echo "- load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out"

for b in "$@"; do
    args=("$bin")
    case "$b" in
        bench_redact | bench_audit | bench_memory) args=() ;;
        bench_relay)
            if [ ! -e target/peer-hermes-bridge ]; then
                printf '\n## %s\n\nskipped: the hermes-bridge peer is not built (bash examples/bench_relay/peer.sh)\n' "$b" >>"$out"
                continue
            fi
            ;;
    esac
    echo "==> $b" >&2
    start=$(date +%s)
    if log=$("target/release/examples/$b" "${args[@]}" 2>&1); then status=ok; else status="failed ($?)"; fi
    printf '\n## %s\n\n%s in %s s\n\n```text\n%s\n```\n' "$b" "$status" "$(($(date +%s) - start))" "$log" >>"$out"
done
echo "wrote $out" >&2
