#!/usr/bin/env python3
"""A gated call through hal0's proxy on protocol 2026-07-28, with the official Python MCP
SDK (mcp==2.3.0, connect mode "auto") as the consumer.

Usage: gated_rounds.py --url http://127.0.0.1:PORT/mcp/proxy/ID/mcp --key hal0pk_... \
           --tool TOOL --args JSON --hal0 /path/to/hal0 --answer approve|deny|decline ...

For each --answer it calls the tool once. hal0 answers the call at once with an
`input_required` result; the SDK hands its URL-mode elicitation to this script's
callback, which plays the person: it reads the card's id from the URL, decides it at the
shell (`hal0 approvals approve|deny ID --yes`, with this process's HAL0_CONFIG_DIR and
HAL0_STATE_DIR) and answers `accept`, or answers `decline` without deciding. The SDK
then retries with the answer and hal0's `requestState`. It prints one JSON object:

    {"protocol": "2026-07-28",
     "approve": {"elicitations": [{"mode": ..., "url": ..., "message": ...}],
                 "result": {"is_error": ..., "text": ..., "structured": ...}},
     "deny": {...}, "decline": {...}}

Any failure exits non-zero with a message on stderr.
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
    sys.stderr.write(f"gated_rounds.py: cannot import the MCP SDK ({e}); run tests/external/setup.sh\n")
    sys.exit(2)


def _result(res: Any) -> dict[str, Any]:
    return {
        "is_error": bool(res.is_error),
        "text": " ".join(getattr(c, "text", "") or "" for c in res.content),
        "structured": res.structured_content,
    }


async def _call(a: argparse.Namespace, answer: str) -> tuple[dict[str, Any], str | None]:
    seen: list[dict[str, Any]] = []

    async def person(_ctx: Any, params: Any) -> types.ElicitResult:
        url = getattr(params, "url", None)
        seen.append({"mode": getattr(params, "mode", None), "url": url, "message": params.message})
        if answer == "decline":
            return types.ElicitResult(action="decline")
        card = (url or "").split("#ap-", 1)[-1]
        subprocess.run([a.hal0, "approvals", answer, card, "--yes"], check=True, capture_output=True)
        return types.ElicitResult(action="accept")

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {a.key}"}, timeout=a.timeout)
    async with http:
        async with Client(
            streamable_http_client(a.url, http_client=http),
            mode="auto",
            cache=None,
            read_timeout_seconds=a.timeout,
            elicitation_callback=person,
        ) as client:
            result = _result(await client.call_tool(a.tool, json.loads(a.args)))
            session = getattr(client, "_session", None)
            version = getattr(session, "protocol_version", None)
    return {"elicitations": seen, "result": result}, str(version) if version else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--args", default="{}")
    ap.add_argument("--hal0", required=True)
    ap.add_argument("--answer", action="append", choices=["approve", "deny", "decline"], required=True)
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    report: dict[str, Any] = {}
    for answer in a.answer:
        try:
            report[answer], version = asyncio.run(_call(a, answer))
            report["protocol"] = version
        except BaseException as e:  # noqa: BLE001 - anyio raises exception groups
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            sys.stderr.write(f"gated_rounds.py: answer={answer}: {type(e).__name__}: {e}\n")
            return 1
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
