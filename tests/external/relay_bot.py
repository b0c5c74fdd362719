"""A hermes-bridge bot against hal0's relay, built from the plugin's own code.

The wake is parsed, turned into the model's text and its request_id read back with the
functions of the hermes-bridge adapter (`wake.py`, imported from ../shared/peers, never
copied); the socket is opened as the adapter opens it (`websockets`, Authorization header,
its default 1 MiB frame limit and 20 s pings); the answer goes back through `reply` with
the Python MCP SDK, as the model's tool call would.

Usage: relay_bot.py BASE_URL KEY WAKES
Prints READY once connected, then for each wake `WAKE <request_id> <bytes>`, answers
`echo: <first 20 characters>`, and prints DONE after WAKES wakes.
"""

import asyncio
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTER = os.path.join(HERE, "..", "..", "..", "shared", "peers", "hermes-bridge", "adapter")
sys.path.insert(0, os.path.abspath(ADAPTER))

import wake  # noqa: E402  (the plugin's module)
import websockets  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamablehttp_client  # noqa: E402


async def reply(base: str, key: str, request_id: str, answer: str) -> dict:
    headers = {"Authorization": f"Bearer {key}"}
    async with streamablehttp_client(f"{base}/mcp/relay/mcp", headers=headers) as (r, w, _):
        async with ClientSession(r, w) as s:
            await s.initialize()
            res = await s.call_tool("reply", {"request_id": request_id, "answer": answer})
            return json.loads(res.content[0].text)


async def main() -> None:
    base, key, wakes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ws_url = base.replace("http://", "ws://", 1) + "/bridge/connect"
    async with websockets.connect(ws_url, additional_headers={"Authorization": f"Bearer {key}"}) as ws:
        print("READY", flush=True)
        for _ in range(wakes):
            raw = await ws.recv()
            payload = wake.parse_wake_payload(raw)
            text = wake.build_wake_text(payload)
            request_id = wake.extract_request_id(text)
            assert request_id == payload["request_id"], (request_id, payload["request_id"])
            print(f"WAKE {request_id} {len(raw)}", flush=True)
            await ws.send(json.dumps({"type": "heartbeat", "request_id": request_id}))
            out = await reply(base, key, request_id, "echo: " + payload["message"][:20])
            assert out == {"ok": True}, out
    print("DONE", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
