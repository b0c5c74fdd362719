// The TypeScript SDK (@modelcontextprotocol/sdk, pinned in setup.sh, found through
// HAL0_TS_SDK) as hal0's tests drive it: a connected client, and a tool call that records
// its progress notifications, how long it took and how it ended.
import path from "node:path";
import { pathToFileURL } from "node:url";

const load = (p) => import(pathToFileURL(path.join(process.env.HAL0_TS_SDK, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

/// A client named `name`, connected to `url` with bearer `key`.
export async function connect(url, key, name) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name, version: "0" });
  await client.connect(transport);
  return client;
}

/// Call `tool` with `args` and request `options` (none: no progress token); `read` turns
/// the result into what is reported. Never throws: an error is reported with its code.
export async function timedCall(client, tool, args, options, read) {
  const progress = [];
  const opts = options && { ...options, onprogress: (p) => progress.push(p) };
  const start = Date.now();
  try {
    const r = await client.callTool({ name: tool, arguments: args }, undefined, opts);
    return { result: read(r), is_error: r.isError ?? false, error: null, progress, elapsed_ms: Date.now() - start };
  } catch (e) {
    return { result: null, error: String(e?.message ?? e), error_code: e?.code ?? null, progress,
             elapsed_ms: Date.now() - start };
  }
}
