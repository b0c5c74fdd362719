#!/usr/bin/env python3
"""Drive hal0's MCP proxy with the official Python MCP SDK (mcp==2.3.0) as the consumer.

Usage: proxy_client.py --url http://127.0.0.1:PORT/mcp/proxy/ID/mcp --key hal0pk_... \
           --allowed TOOL --allowed-args JSON --gated TOOL --gated-args JSON \
           --blocked TOOL --blocked-args JSON

For each connect mode ("legacy" and "auto") it connects, lists the tools, and calls the
allowed, the gated and the blocked tool once each. On 2026-07-28 ("auto") hal0 answers the
gated call with an `input_required` result pointing to its card; this client's person
declines (see gated_rounds.py for one who decides). It prints one JSON object:

    {"legacy": {"server_name": ..., "tools": [...],
                "allowed": {"is_error": false, "text": ..., "structured": ...},
                "gated": {...}, "blocked": {...}},
     "auto": {...}}

Any failure exits non-zero with a message on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

try:
    import httpx2
    from mcp import Client, types
    from mcp.client.streamable_http import streamable_http_client
except ImportError as e:  # pragma: no cover - environment problem
    sys.stderr.write(f"proxy_client.py: cannot import the MCP SDK ({e}); run tests/external/setup.sh\n")
    sys.exit(2)


def _leaves(e: BaseException) -> list[BaseException]:
    """The innermost exceptions of a (possibly nested) exception group."""
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in _leaves(sub)]
    return [e]


def _result(res: Any) -> dict[str, Any]:
    return {
        "is_error": bool(res.is_error),
        "text": " ".join(getattr(c, "text", "") or "" for c in res.content),
        "structured": res.structured_content,
    }


async def _decline(_ctx: Any, _params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


async def _mode(url: str, key: str, mode: str, calls: list[tuple[str, str, dict]], timeout: float) -> dict:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=timeout)
    out: dict[str, Any] = {}
    async with http:
        async with Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            cache=None,
            read_timeout_seconds=timeout,
            elicitation_callback=_decline,
        ) as client:
            info = client.server_info
            out["server_name"] = info.name if info is not None else None
            out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
            for label, tool, args in calls:
                out[label] = _result(await client.call_tool(tool, args))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--key", required=True)
    for label in ("allowed", "gated", "blocked"):
        ap.add_argument(f"--{label}", required=True)
        ap.add_argument(f"--{label}-args", default="{}")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    calls = [
        ("allowed", a.allowed, json.loads(a.allowed_args)),
        ("gated", a.gated, json.loads(a.gated_args)),
        ("blocked", a.blocked, json.loads(a.blocked_args)),
    ]
    report = {}
    for mode in ("legacy", "auto"):
        try:
            report[mode] = asyncio.run(_mode(a.url, a.key, mode, calls, a.timeout))
        except BaseException as e:  # noqa: BLE001 - anyio raises exception groups
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            leaves = "; ".join(f"{type(x).__name__}: {x}" for x in _leaves(e))
            sys.stderr.write(f"proxy_client.py: mode={mode}: {leaves}\n")
            return 1
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
