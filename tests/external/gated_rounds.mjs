// A gated call through hal0's proxy on protocol 2026-07-28 with the TypeScript SDK v2
// client (@modelcontextprotocol/client 2.4, pinned to 2026-07-28) as the consumer: the
// same rounds as gated_rounds.py. hal0 answers the call at once with `input_required`;
// the SDK hands the URL-mode elicitation to this script's handler, which plays the person
// (decides the card at the shell with `hal0 approvals approve|deny ID --yes`, or declines)
// and the SDK retries with the answer and hal0's requestState.
//
// Usage: HAL0_TS_CLIENT=<.tools/node/node_modules/@modelcontextprotocol/client> \
//        node gated_rounds.mjs URL KEY TOOL ARGS_JSON HAL0_BIN ANSWER...
// Prints {"protocol": ..., "<answer>": {"elicitations": [...], "result": {...}}, ...}.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";

const sdk = pathToFileURL(path.join(process.env.HAL0_TS_CLIENT, "dist/index.mjs")).href;
const { Client, StreamableHTTPClientTransport } = await import(sdk);

const [url, key, tool, argsJson, hal0, ...answers] = process.argv.slice(2);
const report = {};
for (const answer of answers) {
  const seen = [];
  const client = new Client(
    { name: "hal0-gated-rounds", version: "1.0.0" },
    { capabilities: { elicitation: { url: {}, form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  client.setRequestHandler("elicitation/create", async (request) => {
    const p = request.params;
    seen.push({ mode: p.mode, url: p.url ?? null, message: p.message });
    if (answer === "decline") return { action: "decline" };
    const card = (p.url ?? "").split("#ap-")[1];
    execFileSync(hal0, ["approvals", answer, card, "--yes"], { stdio: "ignore" });
    return { action: "accept" };
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  const r = await client.callTool({ name: tool, arguments: JSON.parse(argsJson) });
  report.protocol = client.getNegotiatedProtocolVersion();
  report[answer] = {
    elicitations: seen,
    result: {
      is_error: Boolean(r.isError),
      text: (r.content ?? []).map((c) => c.text ?? "").join(" "),
      structured: r.structuredContent ?? null,
    },
  };
  await client.close();
}
console.log(JSON.stringify(report));
