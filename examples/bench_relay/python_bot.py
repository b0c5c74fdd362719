"""Bot B for `bench_relay --replier python`: a bot as a Python harness writes one.

It holds the relay's WebSocket with `websockets` (as the hermes-bridge plugin does) and one
MCP session with the Python MCP SDK, and answers every wake at once: each wake starts a task
that calls `reply` on that session. Used to see how much of a harness's asks/s is the
bot's own cost rather than the relay's.

Usage: python_bot.py MCP_URL WS_URL KEY
Prints READY once the session and the socket are open, then answers until killed.
"""

import asyncio
import json
import sys

import websockets
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main() -> None:
    mcp_url, ws_url, key = sys.argv[1], sys.argv[2], sys.argv[3]
    headers = {"Authorization": f"Bearer {key}"}
    async with streamablehttp_client(mcp_url, headers=headers) as (r, w, _):
        async with ClientSession(r, w) as s:
            await s.initialize()
            async with websockets.connect(ws_url, additional_headers=headers) as ws:
                print("READY", flush=True)
                tasks = set()
                async for raw in ws:
                    request_id = json.loads(raw)["request_id"]
                    t = asyncio.create_task(s.call_tool("reply", {"request_id": request_id, "answer": "pong"}))
                    tasks.add(t)
                    t.add_done_callback(tasks.discard)


if __name__ == "__main__":
    asyncio.run(main())
