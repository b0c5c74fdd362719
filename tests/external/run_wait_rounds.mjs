// `agent_run_wait` on protocol 2026-07-28 with the TypeScript SDK v2 client
// (@modelcontextprotocol/client 2.4, pinned to 2026-07-28): the same rounds as
// run_wait_rounds.py. It starts a run that waits for an approval; hal0 answers the wait at
// once with `input_required` naming the card; this script's elicitation handler plays the
// person (approves the card at the shell) and the SDK's retry waits for the run to end.
//
// Usage: HAL0_TS_CLIENT=<.tools/node/node_modules/@modelcontextprotocol/client> \
//        node run_wait_rounds.mjs URL KEY HAL0_BIN INPUT
// Prints {"protocol", "run_id", "elicitations": [...], "view": <the last view>}.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";

const sdk = pathToFileURL(path.join(process.env.HAL0_TS_CLIENT, "dist/index.mjs")).href;
const { Client, StreamableHTTPClientTransport } = await import(sdk);

const [url, key, hal0, input] = process.argv.slice(2);
const seen = [];
const client = new Client(
  { name: "hal0-run-wait-rounds", version: "1.0.0" },
  { capabilities: { elicitation: { url: {}, form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
client.setRequestHandler("elicitation/create", async (request) => {
  const p = request.params;
  seen.push({ mode: p.mode, url: p.url ?? null, message: p.message });
  const card = (p.url ?? "").split("#ap-")[1];
  execFileSync(hal0, ["approvals", "approve", card, "--yes"], { stdio: "ignore" });
  return { action: "accept" };
});
await client.connect(
  new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
);
const started = await client.callTool({ name: "agent_run", arguments: { agent: "hermes", input } });
const runId = started.structuredContent.run_id;
const waited = await client.callTool({ name: "agent_run_wait", arguments: { run_id: runId, timeout_s: 30 } });
console.log(JSON.stringify({
  protocol: client.getNegotiatedProtocolVersion(),
  run_id: runId,
  elicitations: seen,
  view: waited.structuredContent ?? null,
}));
await client.close();
