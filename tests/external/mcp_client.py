#!/usr/bin/env python3
"""Drive a running `hal0 serve` with the official Python MCP SDK (mcp==2.3.0).

Usage: mcp_client.py --url http://127.0.0.1:PORT --key hal0bk_...

For each connect mode the SDK offers ("legacy": the initialize handshake,
protocol <= 2025-11-25; "auto": probes `server/discover` and, against rmcp 3.x,
lands on 2026-07-28) it connects to the three MCP mounts over TCP, reads the
server name, lists the tools, and calls the admin tool `version_info` with
{"args": {}}. It prints a single JSON object on stdout:

    {"legacy": {"agents": {"server_name": ..., "protocol_version": ..., "tools": [...]},
                "memory": {...}, "admin": {...},
                "version_info": <structuredContent of version_info>},
     "auto":   {...same shape...}}

Any failure exits non-zero with a message on stderr (stdout then carries no JSON).

Server name: `Client.server_info` (mcp/client/client.py) returns
`ClientSession.server_info` (mcp/client/session.py). In legacy mode that is
`InitializeResult.serverInfo` (always present). In auto mode, once the
connection is on 2026-07-28, it is the optional `_meta["io.modelcontextprotocol/serverInfo"]`
stamp of the `server/discover` result, so a server may legitimately omit it;
this script reports `null` in that case and the caller decides whether that is
acceptable (hal0 does send it).

Note: in legacy mode, closing a session sends `DELETE`; rmcp answers 202 but
the SDK expects 200/204, so it logs "Session termination failed: 202" as a
warning on stderr. That is cosmetic and does not affect the result.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import traceback
from typing import Any

try:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
except ImportError as e:  # pragma: no cover - environment problem
    sys.stderr.write(
        f"mcp_client.py: cannot import the MCP SDK ({e}); run tests/external/setup.sh "
        "and use .venv/bin/python\n"
    )
    sys.exit(2)

MOUNTS = ("agents", "memory", "admin")
MODES = ("legacy", "auto")


class Failure(Exception):
    """A check failed; the message says which mode/mount/step."""


def _leaves(e: BaseException) -> list[BaseException]:
    """The innermost exceptions of a (possibly nested) exception group."""
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in _leaves(sub)]
    return [e]


def _tool_names(result: Any) -> list[str]:
    return [t.name for t in result.tools]


async def _probe_mount(base: str, key: str, mode: str, mount: str, timeout: float) -> dict[str, Any]:
    url = f"{base.rstrip('/')}/mcp/{mount}/mcp"
    where = f"mode={mode} mount={mount} url={url}"
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=timeout)
    out: dict[str, Any] = {}
    try:
        async with http:
            # cache=None: every call must reach the server (the default client-side
            # response cache could otherwise answer a repeated tools/list itself).
            async with Client(
                streamable_http_client(url, http_client=http),
                mode=mode,
                cache=None,
                read_timeout_seconds=timeout,
            ) as client:
                info = client.server_info
                out["server_name"] = info.name if info is not None else None
                out["server_version"] = info.version if info is not None else None
                out["protocol_version"] = client.protocol_version

                tools: list[str] = []
                cursor: str | None = None
                for _ in range(100):  # pagination guard
                    page = await client.list_tools(cursor=cursor)
                    tools.extend(_tool_names(page))
                    cursor = page.next_cursor
                    if not cursor:
                        break
                else:
                    raise Failure(f"{where}: tools/list did not finish paginating")
                out["tools"] = tools

                if mount == "admin":
                    res = await client.call_tool("version_info", {"args": {}})
                    if res.is_error:
                        text = " ".join(getattr(c, "text", "") for c in res.content)
                        raise Failure(f"{where}: version_info returned isError: {text}")
                    structured = res.structured_content
                    if structured is None:
                        # Fall back to a JSON text block, so the failure message is useful.
                        for c in res.content:
                            text = getattr(c, "text", None)
                            if text:
                                try:
                                    structured = json.loads(text)
                                    break
                                except ValueError:
                                    pass
                    if structured is None:
                        raise Failure(f"{where}: version_info returned no structured result: {res!r}")
                    out["version_info"] = structured
    except Failure:
        raise
    except BaseException as e:  # noqa: BLE001 - anyio may raise ExceptionGroup
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        summary = "; ".join(f"{type(x).__name__}: {x}" for x in _leaves(e))
        detail = "".join(traceback.format_exception(e)).rstrip()
        raise Failure(f"{where}: {summary}\n--- traceback ---\n{detail}") from e
    return out


async def _run(base: str, key: str, modes: list[str], timeout: float) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for mode in modes:
        per_mode: dict[str, Any] = {}
        for mount in MOUNTS:
            res = await _probe_mount(base, key, mode, mount, timeout)
            vi = res.pop("version_info", None)
            per_mode[mount] = res
            if vi is not None:
                per_mode["version_info"] = vi
        report[mode] = per_mode
    return report


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--url", required=True, help="base URL of hal0, e.g. http://127.0.0.1:8080")
    p.add_argument("--key", required=True, help="bridge key (or admin key) sent as Bearer token")
    p.add_argument(
        "--mode",
        action="append",
        choices=MODES,
        help="connect mode(s) to exercise; default: both legacy and auto",
    )
    p.add_argument("--timeout", type=float, default=20.0, help="per-request timeout in seconds")
    args = p.parse_args()
    modes = args.mode or list(MODES)

    try:
        report = asyncio.run(asyncio.wait_for(_run(args.url, args.key, modes, args.timeout), args.timeout * 10))
    except Failure as e:
        sys.stderr.write(f"mcp_client.py: FAILED: {e}\n")
        return 1
    except (asyncio.TimeoutError, TimeoutError):
        sys.stderr.write("mcp_client.py: FAILED: overall timeout\n")
        return 1
    except Exception as e:  # noqa: BLE001
        sys.stderr.write(f"mcp_client.py: FAILED: {type(e).__name__}: {e}\n")
        traceback.print_exc()
        return 1
    json.dump(report, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
