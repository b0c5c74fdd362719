// Drive hal0's A2A face with the official JavaScript A2A SDK (@a2a-js/sdk 1.3): discover
// the card, send (blocking and streaming), answer a question (input-required), get, list,
// cancel, and be refused another client's task. Prints one JSON report on stdout; the Rust
// test (tests/it/a2a.rs) asserts on it.
//
// usage: HAL0_A2A_SDK=<the package's directory> node a2a_client.mjs BASE_URL KEY OTHER_CLIENT_KEY [BINDING]
// (BINDING: JSONRPC, the default, or HTTP+JSON)

import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const sdk = pathToFileURL(join(process.env.HAL0_A2A_SDK, "dist/client/index.js")).href;
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } = await import(sdk);

const [base, key, otherKey, binding = "JSONRPC"] = process.argv.slice(2);
const Transport = binding === "HTTP+JSON" ? RestTransportFactory : JsonRpcTransportFactory;
const STATE = ["UNSPECIFIED", "SUBMITTED", "WORKING", "COMPLETED", "FAILED", "CANCELED", "INPUT_REQUIRED", "REJECTED", "AUTH_REQUIRED"];

function clientFor(k) {
  const fetchImpl = (url, init = {}) => {
    const headers = new Headers(init.headers || {});
    headers.set("authorization", `Bearer ${k}`);
    return fetch(url, { ...init, headers });
  };
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new Transport({ fetchImpl })],
    preferredTransports: [binding],
  });
  return new ClientFactory(options).createFromUrl(base);
}

function message(text, taskId = "", contextId = "") {
  return {
    messageId: randomUUID(),
    role: 1, // ROLE_USER
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
    contextId,
    taskId,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const state = (t) => STATE[t.status?.state ?? 0];
const text = (parts) => (parts || []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const output = (t) => (t.artifacts || []).map((a) => text(a.parts)).join("");
const send = (c, m, extra = {}) => c.sendMessage({ tenant: "", message: m, configuration: undefined, metadata: undefined, ...extra });

const report = { binding };
const client = await clientFor(key);
report.card = (await client.getAgentCard()).name;
report.transport = client.transport?.constructor?.name ?? "";

let t = await send(client, message("hello from javascript"));
report.blocking = { id: t.id, state: state(t), output: output(t) };

const kinds = [];
let streamed = "";
let last = "";
for await (const ev of client.sendMessageStream({ tenant: "", message: message("stream from javascript"), configuration: undefined, metadata: undefined })) {
  const p = ev.payload;
  kinds.push(p?.$case);
  if (p?.$case === "artifactUpdate") streamed += text(p.value.artifact?.parts);
  if (p?.$case === "statusUpdate") last = STATE[p.value.status?.state ?? 0];
}
report.stream = { kinds, output: streamed, last };

t = await send(client, message("CLARIFY which one"));
const asked = { state: state(t), question: text(t.status?.message?.parts) };
const t2 = await send(client, message("the left one", t.id, t.contextId));
asked.after = state(t2);
asked.same = t2.id === t.id;
report.input_required = asked;

const got = await client.getTask({ tenant: "", id: report.blocking.id, historyLength: undefined });
report.get = { state: state(got), output: output(got) };
const listed = await client.listTasks({ tenant: "", contextId: "", status: 0, pageSize: 10, pageToken: "", historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false });
report.list = { ids: listed.tasks.map((x) => x.id), total: listed.totalSize };

const slow = await send(client, message("SLOW work"), { configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: true } });
const cancelled = await client.cancelTask({ tenant: "", id: slow.id, metadata: undefined });
report.cancel = { state: state(cancelled) };

const other = await clientFor(otherKey);
try {
  await other.getTask({ tenant: "", id: report.blocking.id, historyLength: undefined });
  report.other_client_get = "found";
} catch (e) {
  report.other_client_get = `${e.constructor.name}: ${e.message}`;
}
console.log(JSON.stringify(report));
