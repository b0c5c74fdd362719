// The TypeScript SDK (@modelcontextprotocol/sdk, pinned in setup.sh) making task-augmented
// calls (protocol 2025-11-25 tasks) through hal0's proxy in front of
// @modelcontextprotocol/server-everything's `simulate-research-query`, for
// tests/it/proxy_tasks.rs: the capability and each tool's `execution` as the consumer sees
// them, a task run to its result, one that asks the consumer's person for input, listing,
// cancelling, and another session asking about this one's tasks.
// usage: HAL0_TS_SDK=<sdk package dir> node proxy_tasks.mjs URL KEY [gated]
// With `gated` (the tool is gated): only the listing and one task-augmented call.
// Prints one JSON object with what each step saw.
import { attempt, connect as connectTo, load, text } from "./ts_client.mjs";

const { ElicitRequestSchema, TaskStatusNotificationSchema } = await load("types.js");

const [url, key, mode] = process.argv.slice(2);
const TOOL = "simulate-research-query";
const connect = (name, capabilities) => connectTo(url, key, name, capabilities);

/// The messages of one `callToolStream` of the research tool, in order (at most `limit`).
async function stream(client, args, limit = 1000) {
  const seen = [];
  for await (const m of client.experimental.tasks.callToolStream({ name: TOOL, arguments: args })) {
    if (m.type === "taskCreated" || m.type === "taskStatus") {
      seen.push({ type: m.type, taskId: m.task.taskId, status: m.task.status });
    } else if (m.type === "result") {
      seen.push({ type: "result", text: text(m.result), isError: m.result.isError ?? false });
    } else {
      seen.push({ type: m.type, error: String(m.error?.message ?? m.error) });
    }
    if (seen.length >= limit) break;
  }
  return seen;
}

const out = {};
const elicited = [];
const client = await connect("hal0-tasks", { elicitation: {} });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  elicited.push(req.params.message);
  return { action: "accept", content: { interpretation: "historical" } };
});
const statuses = [];
client.setNotificationHandler(TaskStatusNotificationSchema, (n) =>
  statuses.push({ taskId: n.params.taskId, status: n.params.status }));
out.server_tasks = client.getServerCapabilities()?.tasks ?? null;
const tools = (await client.listTools()).tools;
out.execution = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport ?? null]));

if (mode === "gated") {
  out.gated = await stream(client, { topic: "rust" });
  await client.close();
  console.log(JSON.stringify(out));
  process.exit(0);
}

// The SDK itself refuses a plain call of a tool that requires a task: it saw `execution`.
out.plain_call = await attempt(() => client.callTool({ name: TOOL, arguments: { topic: "rust" } }));
// A task run through: created, polled while working, its result.
out.research = await stream(client, { topic: "rust" });
// An ambiguous one: the task stops at input_required, and tasks/result carries the server's
// question to this client's person, whose answer shapes the report.
out.ambiguous = await stream(client, { topic: "python", ambiguous: true });
out.elicited = elicited;
const ids = [...new Set([...out.research, ...out.ambiguous].map((m) => m.taskId).filter(Boolean))];
out.my_tasks = ids;
out.listed = await attempt(async () => (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId));
out.get_unknown = await attempt(() => client.experimental.tasks.getTask("no-such-task"));
// Cancelling: start one, stop following it after it was created, cancel it.
const started = await stream(client, { topic: "go" }, 1);
const doomed = started[0]?.taskId;
out.cancel = await attempt(async () => (await client.experimental.tasks.cancelTask(doomed)).status);
out.after_cancel = await attempt(async () => (await client.experimental.tasks.getTask(doomed)).status);

out.statuses = statuses;

// Another session (the same key): none of these tasks are its own.
const other = await connect("hal0-tasks-other", {});
out.other_get = await attempt(() => other.experimental.tasks.getTask(ids[0]));
out.other_result = await attempt(() => other.experimental.tasks.getTaskResult(ids[0]));
out.other_list = await attempt(async () => (await other.experimental.tasks.listTasks()).tasks.map((t) => t.taskId));
await other.close();
await client.close();
console.log(JSON.stringify(out));
