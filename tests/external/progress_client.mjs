// The TypeScript SDK (@modelcontextprotocol/sdk, pinned in setup.sh) as a client of
// hal0-agents, for tests/it/progress.rs. Three agent_run_wait calls at once on busy runs:
//   reset_on_progress: 8 s wait, request timeout 3 s reset by each progress notification;
//   no_reset:          the same wait with the same 3 s timeout, not reset (ends at 3 s);
//   defaults:          no options at all (60 s timeout, no progress token), no timeout_s.
// usage: HAL0_TS_SDK=<sdk package dir> node progress_client.mjs URL KEY RUN_A RUN_B
// Prints one JSON object: {reset_on_progress, no_reset, defaults}, each with result or error.
import { connect, timedCall } from "./ts_sdk.mjs";

const [url, key, runA, runB] = process.argv.slice(2);
const client = await connect(url, key, "hal0-progress-test");
const wait = (args, options) =>
  timedCall(client, "agent_run_wait", args, options, (r) => r.structuredContent ?? null);

const [reset_on_progress, no_reset, defaults] = await Promise.all([
  wait({ run_id: runA, timeout_s: 8 }, { timeout: 3000, resetTimeoutOnProgress: true }),
  wait({ run_id: runA, timeout_s: 8 }, { timeout: 3000 }),
  wait({ run_id: runB }, undefined),
]);
console.log(JSON.stringify({ reset_on_progress, no_reset, defaults }));
await client.close();
