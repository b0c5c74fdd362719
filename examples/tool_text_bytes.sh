#!/bin/bash
# The tool text a client loads per mount: the number of tools and the bytes of tools/list
# (compact JSON), read with a plain JSON POST. Usage: bash examples/tool_text_bytes.sh
# [path to hal0] (default target/debug/hal0; build it first).
set -e
BIN=${1:-target/debug/hal0}
D=$(mktemp -d); H="$BIN --config-dir $D/etc --state-dir $D/var"
$H config set network.bind 127.0.0.1:18091 >/dev/null
KEY=$($H bridge add all --scope agents --scope memory --scope admin --json | python3 -c 'import json,sys;print(json.load(sys.stdin)["key"])')
RKEY=$($H bridge add bot --scope relay --json | python3 -c 'import json,sys;print(json.load(sys.stdin)["key"])')
$H serve >/dev/null 2>&1 & PID=$!; sleep 1.5
for m in agents memory admin relay; do
  k=$KEY; [ $m = relay ] && k=$RKEY
  curl -s -X POST http://127.0.0.1:18091/mcp/$m/mcp -H 'Content-Type: application/json' -H "Authorization: Bearer $k" -d '{"jsonrpc":"2.0","method":"tools/list","id":1}' | python3 -c "import json,sys; t=json.load(sys.stdin)['result']['tools']; print('$m', len(t), 'tools', len(json.dumps(t,separators=(',',':'))), 'bytes')"
done
kill $PID; rm -rf $D
