// What the TypeScript SDK scripts of tests/external share: the SDK named by HAL0_TS_SDK
// (@modelcontextprotocol/sdk, pinned in setup.sh), a client connected to a hal0 mount with a
// bearer key, a step's outcome as data, and a tool result's text.
import path from "node:path";
import { pathToFileURL } from "node:url";

/// A module of the SDK's ESM build.
export const load = (p) => import(pathToFileURL(path.join(process.env.HAL0_TS_SDK, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

/// A client named `name` declaring `capabilities`, connected to `url` with bearer `key`.
export async function connect(url, key, name, capabilities) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name, version: "0" }, { capabilities });
  await client.connect(transport);
  return client;
}

/// Run `f`; its value, or the error's message and code.
export async function attempt(f) {
  try {
    return { ok: await f() };
  } catch (e) {
    return { error: String(e?.message ?? e), code: e?.code ?? null };
  }
}

/// The text of a tool result.
export const text = (r) => (r?.content ?? []).map((c) => c.text ?? "").join("");
