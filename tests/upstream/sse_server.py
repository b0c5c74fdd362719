"""A real legacy HTTP+SSE (MCP 2024-11-05) upstream for hal0's tests, built with the official
Python SDK (mcp 2.x, `MCPServer.sse_app()`).

Owns: the Python SSE upstream used by tests/sse_upstream.rs.

Usage: sse_server.py <port>   (0 = pick a free port)
Serves the event stream at http://127.0.0.1:<port>/sse (messages are posted to /messages/) and
prints exactly one line `PORT <n>` on stdout once listening.

Tools: echo(text), add(a, b), whoami() (JSON of the `authorization` and `x-api-key` headers
of the POST that carried the call, or null).

Env:
  UPSTREAM_REQUIRE_BEARER=<token> answer 401 to any HTTP request (the GET and every POST)
                                  whose Authorization is not `Bearer <token>`
"""

import asyncio
import json
import os
import socket
import sys

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

REQUIRED_BEARER = os.environ.get("UPSTREAM_REQUIRE_BEARER")

mcp = MCPServer("hal0-test-upstream-sse", log_level="WARNING")


@mcp.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def whoami(ctx: Context) -> str:
    """Report the Authorization and X-API-Key request headers this server received."""
    headers = ctx.headers or {}
    return json.dumps({"authorization": headers.get("authorization"), "x-api-key": headers.get("x-api-key")})


def require_bearer(app, token: str):
    """ASGI middleware: 401 for HTTP requests without `Authorization: Bearer <token>`."""
    expected = f"Bearer {token}".encode()

    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                }
            )
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    return wrapped


async def main(port: int) -> None:
    app = mcp.sse_app()
    if REQUIRED_BEARER:
        app = require_bearer(app, REQUIRED_BEARER)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            await serving
            sys.exit("server stopped before it started")
        await asyncio.sleep(0.01)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
