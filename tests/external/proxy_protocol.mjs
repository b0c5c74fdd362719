// The TypeScript SDK (@modelcontextprotocol/sdk, pinned in setup.sh) as a consumer of hal0's
// proxy in front of @modelcontextprotocol/server-everything, for tests/it/proxy_protocol.rs:
// progress, cancellation, logging, sampling (with and without the capability), resources,
// prompts and completion through the policy.
// usage: HAL0_TS_SDK=<sdk package dir> node proxy_protocol.mjs URL KEY
// Prints one JSON object with what each step saw.
import { attempt, connect as connectTo, load, text } from "./ts_client.mjs";

const { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } = await load("types.js");

const [url, key] = process.argv.slice(2);
const connect = (name, capabilities) => connectTo(url, key, name, capabilities);
const out = {};

const sampler = await connect("hal0-proxy-sampler", { sampling: {}, elicitation: {} });
let elicited = 0;
sampler.setRequestHandler(ElicitRequestSchema, async () => {
  elicited += 1;
  return { action: "decline" };
});
let sampled = 0;
sampler.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  sampled += 1;
  const asked = req.params.messages.map((m) => m.content?.text ?? "").join(" ");
  return { role: "assistant", model: "consumer-model", stopReason: "endTurn",
           content: { type: "text", text: `consumer answered: ${asked}` } };
});
const logs = [];
sampler.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));

out.tools = (await sampler.listTools()).tools.map((t) => t.name).sort();

/// Progress (the upstream's notifications under the client's own token) and cancellation
/// (the client gives up after 1 s of a 20 s operation), through `client`.
async function progressAndCancel(client) {
  const progress = [];
  const long = await attempt(async () =>
    text(await client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 2, steps: 4 } },
      undefined, { onprogress: (p) => progress.push(p) })));
  const abort = new AbortController();
  setTimeout(() => abort.abort("the test gave up"), 1000);
  const started = Date.now();
  const cancelled = await attempt(async () =>
    text(await client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 20, steps: 20 } },
      undefined, { signal: abort.signal })));
  cancelled.elapsed_ms = Date.now() - started;
  return { long, progress, cancelled };
}

Object.assign(out, await progressAndCancel(sampler));

// Sampling: the upstream asks this client's model.
out.sampling = await attempt(async () =>
  text(await sampler.callTool({ name: "trigger-sampling-request", arguments: { prompt: "what is 6 times 7?" } })));
out.sampled = sampled;

// Elicitation: the upstream asks this client's person (who declines).
out.elicitation = await attempt(async () =>
  text(await sampler.callTool({ name: "trigger-elicitation-request", arguments: {} })));
out.elicited = elicited;

// Logging: the upstream's simulated log for this session (every 5 s once toggled on).
await sampler.setLoggingLevel("debug");
out.toggle_logging = await attempt(async () =>
  text(await sampler.callTool({ name: "toggle-simulated-logging", arguments: {} })));
for (let i = 0; i < 60 && logs.length === 0; i++) await new Promise((r) => setTimeout(r, 250));
await attempt(async () => sampler.callTool({ name: "toggle-simulated-logging", arguments: {} }));
out.logs = logs.length;

// Resources and prompts under the record's access lists.
out.resources = await attempt(async () => (await sampler.listResources()).resources.map((r) => r.uri));
out.templates = await attempt(async () =>
  (await sampler.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate));
out.read_allowed = await attempt(async () =>
  (await sampler.readResource({ uri: "demo://resource/static/document/features.md" })).contents.map((c) => c.uri));
out.read_blocked = await attempt(async () =>
  sampler.readResource({ uri: "demo://resource/static/document/instructions.md" }));
out.read_unlisted = await attempt(async () => sampler.readResource({ uri: "demo://resource/dynamic/text/1" }));
out.prompts = await attempt(async () => (await sampler.listPrompts()).prompts.map((p) => p.name).sort());
out.prompt = await attempt(async () =>
  (await sampler.getPrompt({ name: "args-prompt", arguments: { city: "Oslo" } })).messages.map((m) => m.content.text));
out.prompt_unlisted = await attempt(async () => sampler.getPrompt({ name: "resource-prompt", arguments: {} }));
out.complete = await attempt(async () =>
  (await sampler.complete({ ref: { type: "ref/prompt", name: "completable-prompt" },
                            argument: { name: "department", value: "E" } })).completion.values);
out.complete_unlisted = await attempt(async () =>
  sampler.complete({ ref: { type: "ref/prompt", name: "resource-prompt" },
                     argument: { name: "resourceType", value: "T" } }));
out.subscribe = await attempt(async () => {
  await sampler.subscribeResource({ uri: "demo://resource/static/document/features.md" });
  await sampler.unsubscribeResource({ uri: "demo://resource/static/document/features.md" });
  return "subscribed and unsubscribed";
});
out.subscribe_unlisted = await attempt(async () => sampler.subscribeResource({ uri: "demo://resource/dynamic/text/1" }));
out.read_sneaky = await attempt(async () =>
  sampler.readResource({ uri: "demo://resource/static/document/../document/instructions.md" }));
await sampler.close();

// A client without the sampling capability: the upstream's request is refused cleanly. Its
// calls (after the first request, which opens its upstream session) take hal0's wire path
// on an http upstream: progress and cancellation again.
const plain = await connect("hal0-proxy-plain", {});
await plain.listTools();
const seen = await progressAndCancel(plain);
[out.plain_long, out.plain_progress, out.plain_cancelled] = [seen.long, seen.progress, seen.cancelled];
out.plain_sampling = await attempt(async () => {
  const r = await plain.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hello" } });
  return { is_error: r.isError ?? false, text: text(r) };
});
await plain.close();

console.log(JSON.stringify(out));
