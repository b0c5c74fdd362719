// The TypeScript SDK (@modelcontextprotocol/sdk, pinned in setup.sh) as an asker of
// hal0-relay, for tests/it/relay.rs. Two ask_agent calls at once to a bot that answers
// late (the Rust test holds the bot's socket and replies after a few seconds):
//   reset_on_progress: request timeout 2 s, reset by each progress notification;
//   no_reset:          the same 2 s timeout, not reset (ends at 2 s).
// usage: HAL0_TS_SDK=<sdk package dir> node relay_progress_client.mjs URL KEY BOT
// Prints READY once both asks are sent, then one JSON object {reset_on_progress, no_reset}.
import { connect, timedCall } from "./ts_sdk.mjs";

const [url, key, bot] = process.argv.slice(2);
const client = await connect(url, key, "hal0-relay-progress-test");
const ask = (message, options) =>
  timedCall(client, "ask_agent", { to: bot, message }, options, (r) => JSON.parse(r.content?.[0]?.text ?? ""));

const both = Promise.all([
  ask("long one", { timeout: 2000, resetTimeoutOnProgress: true }),
  ask("cut one", { timeout: 2000 }),
]);
console.log("READY");
const [reset_on_progress, no_reset] = await both;
console.log(JSON.stringify({ reset_on_progress, no_reset }));
await client.close();
