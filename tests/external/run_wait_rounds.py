#!/usr/bin/env python3
"""`agent_run_wait` on protocol 2026-07-28 with the official Python MCP SDK (mcp==2.3.0,
connect mode "auto"): a run that waits on a person's approval is not waited on with a
request held open.

Usage: run_wait_rounds.py --url http://127.0.0.1:PORT/mcp/agents/mcp --key hal0bk_... \
           --hal0 /path/to/hal0 --input "APPROVE rm"

It starts a run with `agent_run` and waits on it with `agent_run_wait`. hal0 answers the
wait at once with `input_required`: a URL-mode elicitation naming the card. This script's
callback plays the person (approves the card at the shell, with this process's
HAL0_CONFIG_DIR and HAL0_STATE_DIR) and accepts; the SDK retries and the retry waits for
the run to end. It prints {"protocol", "elicitations": [...], "view": <the last view>}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from typing import Any

try:
    import httpx2
    from mcp import Client, types
    from mcp.client.streamable_http import streamable_http_client
except ImportError as e:  # pragma: no cover - environment problem
    sys.stderr.write(f"run_wait_rounds.py: cannot import the MCP SDK ({e}); run tests/external/setup.sh\n")
    sys.exit(2)


async def run(a: argparse.Namespace) -> dict[str, Any]:
    seen: list[dict[str, Any]] = []

    async def person(_ctx: Any, params: Any) -> types.ElicitResult:
        url = getattr(params, "url", None)
        seen.append({"mode": getattr(params, "mode", None), "url": url, "message": params.message})
        card = (url or "").split("#ap-", 1)[-1]
        subprocess.run([a.hal0, "approvals", "approve", card, "--yes"], check=True, capture_output=True)
        return types.ElicitResult(action="accept")

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {a.key}"}, timeout=90)
    async with http:
        async with Client(
            streamable_http_client(a.url, http_client=http),
            mode="auto",
            cache=None,
            read_timeout_seconds=90,
            elicitation_callback=person,
        ) as client:
            started = (await client.call_tool("agent_run", {"agent": "hermes", "input": a.input})).structured_content
            run_id = started["run_id"]
            view = (await client.call_tool("agent_run_wait", {"run_id": run_id, "timeout_s": 30})).structured_content
            session = getattr(client, "_session", None)
            version = getattr(session, "protocol_version", None)
    return {"protocol": str(version) if version else None, "run_id": run_id, "elicitations": seen, "view": view}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--hal0", required=True)
    ap.add_argument("--input", required=True)
    a = ap.parse_args()
    try:
        print(json.dumps(asyncio.run(run(a))))
    except BaseException as e:  # noqa: BLE001 - anyio raises exception groups
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        sys.stderr.write(f"run_wait_rounds.py: {type(e).__name__}: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
