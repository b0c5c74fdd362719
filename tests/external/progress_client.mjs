// The TypeScript SDK (@modelcontextprotocol/sdk, pinned in setup.sh) as a client of
// hal0-agents, for tests/it/progress.rs. Three agent_run_wait calls at once on busy runs:
//   reset_on_progress: 8 s wait, request timeout 3 s reset by each progress notification;
//   no_reset:          the same wait with the same 3 s timeout, not reset (ends at 3 s);
//   defaults:          no options at all (60 s timeout, no progress token), no timeout_s.
// usage: HAL0_TS_SDK=<sdk package dir> node progress_client.mjs URL KEY RUN_A RUN_B
// Prints one JSON object: {reset_on_progress, no_reset, defaults}, each with result or error.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [url, key, runA, runB] = process.argv.slice(2);
const sdk = process.env.HAL0_TS_SDK;
const load = (p) => import(pathToFileURL(path.join(sdk, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: "hal0-progress-test", version: "0" });
await client.connect(transport);

async function wait(args, options) {
  const progress = [];
  const opts = options && { ...options, onprogress: (p) => progress.push(p) };
  const start = Date.now();
  try {
    const r = await client.callTool({ name: "agent_run_wait", arguments: args }, undefined, opts);
    return { result: r.structuredContent ?? null, is_error: r.isError ?? false, error: null, progress,
             elapsed_ms: Date.now() - start };
  } catch (e) {
    return { result: null, error: String(e?.message ?? e), error_code: e?.code ?? null, progress,
             elapsed_ms: Date.now() - start };
  }
}

const [reset_on_progress, no_reset, defaults] = await Promise.all([
  wait({ run_id: runA, timeout_s: 8 }, { timeout: 3000, resetTimeoutOnProgress: true }),
  wait({ run_id: runA, timeout_s: 8 }, { timeout: 3000 }),
  wait({ run_id: runB }, undefined),
]);
console.log(JSON.stringify({ reset_on_progress, no_reset, defaults }));
await client.close();
