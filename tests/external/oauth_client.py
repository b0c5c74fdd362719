#!/usr/bin/env python3
"""Connect to an OAuth mount of a running `hal0 serve` with the official Python MCP SDK's
OAuth client (mcp==2.3.0, `OAuthClientProvider`), the way an OAuth-only host does.

Usage: oauth_client.py --url http://127.0.0.1:PORT/oauth/memory/mcp --callback-port N
       [--client-metadata-url https://…/client.json]

The SDK discovers everything itself (401 → protected resource metadata → authorization
server metadata → dynamic client registration) and then sends a person to the
authorization URL: this script prints that URL as one JSON line on stdout,
`{"authorize": URL}`, for the test to open in a browser where a person consents, and
waits for the browser to come back to `http://127.0.0.1:N/callback`.

Once connected it lists the tools, adds and searches a memory note, forces a token
refresh (the SDK refreshes an expired token by itself), revokes the token at the
revocation endpoint, and checks that the old access token now gets 401. The last line on
stdout is one JSON object with what it saw. Any failure exits non-zero with the reason on
stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import traceback
from typing import Any
from urllib.parse import parse_qs, urlparse

try:
    import httpx2
    from mcp import Client
    from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
except ImportError as e:  # pragma: no cover - environment problem
    sys.stderr.write(f"oauth_client.py: cannot import the MCP SDK ({e}); run tests/external/setup.sh\n")
    sys.exit(2)


class Memory(TokenStorage):
    """Tokens and the registration, kept for this run only."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Callback:
    """The redirect URI: a one-shot HTTP server on 127.0.0.1 that takes `?code&state&iss`."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.result: asyncio.Future[dict[str, list[str]]] = asyncio.get_running_loop().create_future()
        self.server: asyncio.base_events.Server | None = None

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = (await reader.readline()).decode("latin-1")
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass
        target = line.split(" ")[1] if line.count(" ") >= 2 else "/"
        query = parse_qs(urlparse(target).query)
        body = b"hal0 test client: you can close this page"
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s"
                     % (len(body), body))
        await writer.drain()
        writer.close()
        if urlparse(target).path == "/callback" and not self.result.done():
            self.result.set_result(query)

    async def wait(self) -> AuthorizationCodeResult:
        q = await self.result
        if "error" in q:
            raise RuntimeError(f"the authorization was refused: {q}")
        one = lambda k: q[k][0] if k in q else None  # noqa: E731
        return AuthorizationCodeResult(code=one("code") or "", state=one("state"), iss=one("iss"))


async def run(url: str, port: int, timeout: float, metadata_url: str | None) -> dict[str, Any]:
    storage = Memory()
    callback = Callback(port)
    await callback.start()
    seen: dict[str, Any] = {"authorize_urls": 0}

    async def redirect(authorize_url: str) -> None:
        seen["authorize_urls"] += 1
        sys.stdout.write(json.dumps({"authorize": authorize_url}) + "\n")
        sys.stdout.flush()

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="hal0 test client (Python SDK)",
            redirect_uris=[f"http://127.0.0.1:{port}/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect,
        callback_handler=callback.wait,
        client_metadata_url=metadata_url,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=timeout) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy", cache=None,
                          read_timeout_seconds=timeout) as client:
            seen["server_name"] = client.server_info.name if client.server_info else None
            seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
            added = await client.call_tool("memory_add", {"text": "the OAuth test note about herons"})
            seen["add_error"] = added.is_error
            found = await client.call_tool("memory_search", {"query": "herons"})
            seen["search_text"] = " ".join(getattr(c, "text", "") for c in found.content)
        first = storage.tokens
        assert first is not None and storage.client is not None
        seen["client_id"] = storage.client.client_id
        seen["scope"] = first.scope
        seen["first_access_prefix"] = first.access_token[:7]

        # Expire the token on the client's side: the SDK refreshes before its next request.
        provider.context.token_expiry_time = 1.0
        async with Client(streamable_http_client(url, http_client=http), mode="legacy", cache=None,
                          read_timeout_seconds=timeout) as client:
            seen["tools_after_refresh"] = len((await client.list_tools()).tools)
        second = storage.tokens
        assert second is not None
        seen["refreshed"] = second.access_token != first.access_token and second.refresh_token != first.refresh_token

    # The old access token stopped with the refresh; revoke the new one and check it too.
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "oauth-check", "version": "0"}}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    meta = provider.context.oauth_metadata
    assert meta is not None and meta.revocation_endpoint is not None
    async with httpx2.AsyncClient(timeout=timeout) as raw:
        old = await raw.post(url, json=init, headers={**headers, "authorization": f"Bearer {first.access_token}"})
        seen["old_token_status"] = old.status_code
        live = await raw.post(url, json=init, headers={**headers, "authorization": f"Bearer {second.access_token}"})
        seen["live_token_status"] = live.status_code
        r = await raw.post(str(meta.revocation_endpoint),
                           data={"token": second.refresh_token, "client_id": storage.client.client_id})
        seen["revoke_status"] = r.status_code
        after = await raw.post(url, json=init, headers={**headers, "authorization": f"Bearer {second.access_token}"})
        seen["after_revoke_status"] = after.status_code
        seen["after_revoke_www_authenticate"] = after.headers.get("www-authenticate", "")
    seen["issuer"] = str(meta.issuer)
    if callback.server is not None:
        callback.server.close()
    return seen


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--url", required=True)
    p.add_argument("--callback-port", type=int, required=True)
    p.add_argument("--timeout", type=float, default=20.0)
    p.add_argument("--client-metadata-url", default=None,
                   help="an https URL of this client's metadata document (CIMD) instead of registering")
    args = p.parse_args()
    try:
        report = asyncio.run(asyncio.wait_for(run(args.url, args.callback_port, args.timeout, args.client_metadata_url), 180))
    except BaseException as e:  # noqa: BLE001 - anyio raises exception groups
        if isinstance(e, KeyboardInterrupt):
            raise
        sys.stderr.write(f"oauth_client.py: FAILED: {type(e).__name__}: {e}\n")
        traceback.print_exception(e)
        return 1
    sys.stdout.write(json.dumps(report, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
