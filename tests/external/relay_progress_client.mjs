// The TypeScript SDK (@modelcontextprotocol/sdk, pinned in setup.sh) as an asker of
// hal0-relay, for tests/it/relay.rs. Two ask_agent calls at once to a bot that answers
// late (the Rust test holds the bot's socket and replies after a few seconds):
//   reset_on_progress: request timeout 2 s, reset by each progress notification;
//   no_reset:          the same 2 s timeout, not reset (ends at 2 s).
// usage: HAL0_TS_SDK=<sdk package dir> node relay_progress_client.mjs URL KEY BOT
// Prints READY once both asks are sent, then one JSON object {reset_on_progress, no_reset}.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [url, key, bot] = process.argv.slice(2);
const sdk = process.env.HAL0_TS_SDK;
const load = (p) => import(pathToFileURL(path.join(sdk, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: "hal0-relay-progress-test", version: "0" });
await client.connect(transport);

async function ask(message, options) {
  const progress = [];
  const start = Date.now();
  try {
    const r = await client.callTool({ name: "ask_agent", arguments: { to: bot, message } }, undefined,
      { ...options, onprogress: (p) => progress.push(p) });
    const text = r.content?.[0]?.text ?? "";
    return { result: JSON.parse(text), is_error: r.isError ?? false, error: null, progress,
             elapsed_ms: Date.now() - start };
  } catch (e) {
    return { result: null, error: String(e?.message ?? e), error_code: e?.code ?? null, progress,
             elapsed_ms: Date.now() - start };
  }
}

const both = Promise.all([
  ask("long one", { timeout: 2000, resetTimeoutOnProgress: true }),
  ask("cut one", { timeout: 2000 }),
]);
console.log("READY");
const [reset_on_progress, no_reset] = await both;
console.log(JSON.stringify({ reset_on_progress, no_reset }));
await client.close();
