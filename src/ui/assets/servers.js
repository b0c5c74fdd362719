"use strict";
const VERDICTS = [["allow", "allow"], ["gated", "gate"], ["blocked", "block"], ["", "unlisted (refused)"]];
/// Tools each server is known to have (its policy, and what a test found), by server id.
const known = new Map();
function policyOf(s) {
  const p = s.tool_policy || {};
  const m = new Map();
  for (const [list, names] of [["allow", p.allow], ["gated", p.gated], ["blocked", p.blocked]]) for (const t of names || []) m.set(t, list);
  return m;
}
function toolRows(s, tools) {
  return [...tools.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([tool, list]) =>
    el("tr", { "data-tool": tool }, td(el("code", {}, tool)),
      td(choice({ "aria-label": "Policy of " + tool, class: "verdict" }, VERDICTS, list))));
}
function card(s) {
  const tools = known.get(s.id) || policyOf(s);
  known.set(s.id, tools);
  const out = el("p", { class: "meta result", role: "status" });
  const body = el("tbody", {}, ...toolRows(s, tools));
  const table = el("div", { class: "scroll" }, el("table", { class: "tbl" }, el("thead", {}, el("tr", {}, el("th", {}, "Tool"), el("th", {}, "Policy"))), body));
  const save = el("button", { type: "button", class: "approve save" }, "Save policy");
  save.onclick = async () => {
    const lists = { allow: [], gated: [], blocked: [] };
    for (const tr of body.querySelectorAll("tr")) {
      const v = tr.querySelector("select").value;
      tools.set(tr.dataset.tool, v);
      if (v) lists[v].push(tr.dataset.tool);
    }
    try {
      await api("PATCH", "/api/mcp/" + encodeURIComponent(s.id) + "/tools", lists);
      out.textContent = "Saved: " + lists.allow.length + " allowed, " + lists.gated.length + " gated, " + lists.blocked.length + " blocked.";
    } catch (e) { out.textContent = String(e.message || e); }
  };
  const test = el("button", { type: "button", class: "test" }, "Test");
  test.onclick = async () => {
    out.textContent = "Testing…";
    try {
      const v = await api("POST", "/api/mcp/" + encodeURIComponent(s.id) + "/test", {});
      for (const t of v.probe.tools) if (!tools.has(t.tool)) tools.set(t.tool, "");
      body.replaceChildren(...toolRows(s, tools));
      out.textContent = "Reachable: " + v.probe.tools.length + " tools" + (v.probe.server_name ? " from " + v.probe.server_name + " " + (v.probe.server_version || "") : "") + ".";
    } catch (e) { out.textContent = String(e.message || e); }
  };
  const expose = el("input", { type: "checkbox", id: "expose-" + s.id, class: "expose" });
  expose.checked = !!(s.exposure && s.exposure.hermes);
  expose.onchange = async () => {
    try {
      await api("PATCH", "/api/mcp/" + encodeURIComponent(s.id) + "/exposure", { hermes: expose.checked });
      out.textContent = expose.checked ? "Exposed to Hermes through hal0's proxy." : "Withdrawn from Hermes.";
    } catch (e) { expose.checked = !expose.checked; out.textContent = String(e.message || e); }
  };
  const acts = el("div", { class: "act" }, save, test, el("label", { for: "expose-" + s.id }, expose, " Exposed to Hermes"));
  const rules = el("ul", { class: "rules", id: "rules-" + s.id, "aria-label": "Standing rules of " + s.id, hidden: "" });
  rulesOf(s, rules);
  const oauth = s.oauth ? el("p", { class: "meta oauth", id: "oauth-" + s.id }, "OAuth account: …") : "";
  if (s.oauth) accounts(s, oauth, acts, out);
  return el("li", { class: "card", id: "srv-" + s.id, "data-id": s.id },
    el("h3", {}, s.name + (s.name !== s.id ? " (" + s.id + ")" : "")),
    el("p", { class: "meta" }, s.transport + " · " + (s.state || "?") + (s.enabled ? "" : " · disabled") + " · " + (s.url || s.command || "")),
    el("p", {}, s.description || ""),
    oauth,
    table,
    rules,
    acts, out);
}
/// The OAuth account line of server `s` and, for a box-wide account, a Connect button that
/// sends this browser to the server's authorization page (it comes back to hal0's callback).
async function accounts(s, line, acts, out) {
  let v;
  try { v = await api("GET", "/api/mcp/" + encodeURIComponent(s.id) + "/accounts"); }
  catch (e) { line.textContent = "OAuth account: " + (e.message || e); return; }
  if (v.accounts_mode === "delegated") {
    const each = v.accounts.filter((a) => a.holder).map((a) => a.holder + " " + a.state);
    line.textContent = "OAuth: each consumer connects its own account" + (each.length ? " (" + each.join(", ") + ")" : "; none yet") + ".";
    return;
  }
  const a = v.accounts.find((x) => !x.holder);
  if (!a) line.textContent = "OAuth account: not connected. Calls fail until a person connects one.";
  else if (a.state === "connected") line.textContent = "OAuth account: connected at " + a.issuer + (a.expires_at ? ", expires " + a.expires_at : "") + (a.refreshable ? ", refreshed by hal0" : "") + ".";
  else line.textContent = "OAuth account: " + a.state + (a.error ? " (" + a.error + ")" : "") + ". Connect it again.";
  line.classList.toggle("err", !a || a.state !== "connected");
  const connect = el("button", { type: "button", class: "approve connect", id: "connect-" + s.id }, a ? "Reconnect account" : "Connect account");
  connect.onclick = async () => {
    out.textContent = "Starting…";
    try {
      const b = await api("POST", "/api/mcp/" + encodeURIComponent(s.id) + "/connect", {});
      location.assign(b.authorize_url);
    } catch (e) { out.textContent = String(e.message || e); }
  };
  acts.prepend(connect);
}
/// The standing rules people chose for `s` (a caller's tool for some minutes, or always
/// these arguments), each with a Remove button.
async function rulesOf(s, box) {
  let v;
  try { v = await api("GET", "/api/agent/approvals/rules?server_id=" + encodeURIComponent(s.id)); }
  catch (e) { return; }
  box.replaceChildren(...v.rules.map((r) => {
    const rm = el("button", { type: "button", class: "deny", "data-rule": r.id }, "Remove");
    rm.onclick = async () => {
      try { await api("DELETE", "/api/agent/approvals/rules/" + encodeURIComponent(r.id)); rulesOf(s, box); }
      catch (e) { showError(String(e.message || e)); }
    };
    const what = r.client + " may call " + r.tool + (r.args_sha256 ? " with these exact arguments" : "") + (r.expires_at ? " until " + fmtTime(r.expires_at) : " until removed");
    return el("li", { class: "rule", id: "rule-" + r.id }, what + " ", rm);
  }));
  box.hidden = v.rules.length === 0;
}
async function refresh() {
  try {
    const v = await api("GET", "/api/mcp/servers");
    const installed = v.servers.filter((s) => !s.bundled);
    $("#servers").replaceChildren(...installed.map(card));
    $("#none").hidden = installed.length > 0;
    $("#bundled").replaceChildren(...v.servers.filter((s) => s.bundled).map((s) => el("span", { class: "badge", title: s.description }, s.id + " · " + s.mount)));
    showError("");
  } catch (e) { showError("Cannot reach hal0: " + (e.message || e)); }
}
refresh();
