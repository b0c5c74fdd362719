// Connect to an OAuth mount of a running `hal0 serve` with the TypeScript SDK's OAuth
// client (@modelcontextprotocol/sdk, pinned in setup.sh; `authProvider` on the Streamable
// HTTP transport), the way an OAuth-only host does.
//
// Usage: node oauth_client.mjs URL CALLBACK_PORT   (HAL0_TS_SDK names the SDK)
//
// The SDK discovers the authorization server from the 401, registers itself (RFC 7591)
// and asks for the browser to be sent to the authorization URL: this script prints it as
// one JSON line, {"authorize": URL}, for the test to open in a browser where a person
// consents, and waits for the browser at http://127.0.0.1:CALLBACK_PORT/callback. Then it
// connects, lists the tools and calls two, makes the SDK refresh (its access token is
// spoiled so the server answers 401), revokes at the revocation endpoint and checks the
// token stops. The last line is one JSON object with what it saw; a failure exits 1.
import http from "node:http";
import { load, text } from "./ts_client.mjs";

const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const { UnauthorizedError } = await load("client/auth.js");

const [url, port] = process.argv.slice(2);
const redirect = `http://127.0.0.1:${port}/callback`;
const seen = { authorize_urls: 0 };

/// The browser's return: a one-shot server that resolves with the query.
const callback = new Promise((resolve) => {
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, redirect);
    res.writeHead(200, { "content-type": "text/plain", connection: "close" });
    res.end("hal0 test client: you can close this page");
    if (u.pathname === "/callback") {
      server.close();
      resolve(Object.fromEntries(u.searchParams));
    }
  });
  server.listen(Number(port), "127.0.0.1");
});

const store = { client: undefined, tokens: undefined, verifier: undefined };
const provider = {
  get redirectUrl() { return redirect; },
  get clientMetadata() {
    return { client_name: "hal0 test client (TypeScript SDK)", redirect_uris: [redirect],
      grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  clientInformation: () => store.client,
  saveClientInformation: (c) => { store.client = c; },
  tokens: () => store.tokens,
  saveTokens: (t) => { store.tokens = t; },
  redirectToAuthorization: (u) => {
    seen.authorize_urls += 1;
    process.stdout.write(JSON.stringify({ authorize: u.toString() }) + "\n");
  },
  saveCodeVerifier: (v) => { store.verifier = v; },
  codeVerifier: () => store.verifier,
};

async function connect() {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: "hal0-oauth-ts", version: "0" }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

async function post(target, token) {
  const r = await fetch(target, { method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "check", version: "0" } } }) });
  return r.status;
}

try {
  // First contact: 401 → discovery → registration → the browser.
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  try {
    await new Client({ name: "hal0-oauth-ts", version: "0" }, { capabilities: {} }).connect(first);
    throw new Error("connected without authorizing");
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  const back = await callback;
  if (back.error) throw new Error(`refused: ${JSON.stringify(back)}`);
  seen.iss = back.iss ?? null;
  await first.finishAuth(back.code);

  let client = await connect();
  seen.server_name = client.getServerVersion()?.name ?? null;
  seen.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  const added = await client.callTool({ name: "memory_add", arguments: { text: "the TypeScript note about kingfishers" } });
  seen.add_error = added.isError ?? false;
  seen.search_text = text(await client.callTool({ name: "memory_search", arguments: { query: "kingfishers" } }));
  await client.close();
  const tokens1 = store.tokens;
  seen.client_id = store.client.client_id;
  seen.scope = tokens1.scope ?? null;

  // Spoil the access token: the server answers 401 and the SDK refreshes by itself.
  store.tokens = { ...tokens1, access_token: "hal0at_spoiled0spoiled0spoiled0spoiled0spoiled" };
  client = await connect();
  seen.tools_after_refresh = (await client.listTools()).tools.length;
  await client.close();
  const tokens2 = store.tokens;
  seen.refreshed = tokens2.access_token !== tokens1.access_token && tokens2.refresh_token !== tokens1.refresh_token;
  seen.authorize_urls_after_refresh = seen.authorize_urls;

  // Revoke (RFC 7009) at the endpoint the metadata names; the token stops.
  const prm = await (await fetch(new URL("/.well-known/oauth-protected-resource" + new URL(url).pathname, url))).json();
  const issuer = new URL(prm.authorization_servers[0]);
  const meta = await (await fetch(new URL("/.well-known/oauth-authorization-server" + issuer.pathname, issuer))).json();
  seen.live_token_status = await post(url, tokens2.access_token);
  const r = await fetch(meta.revocation_endpoint, { method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: tokens2.access_token, client_id: store.client.client_id }) });
  seen.revoke_status = r.status;
  seen.after_revoke_status = await post(url, tokens2.access_token);
  process.stdout.write(JSON.stringify(seen) + "\n");
  process.exit(0);
} catch (e) {
  process.stderr.write(`oauth_client.mjs: FAILED: ${e?.stack ?? e}\n`);
  process.exit(1);
}
