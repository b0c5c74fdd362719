"use strict";
function card(a) {
  const reason = el("input", { type: "text", placeholder: "Reason (for a denial)", "aria-label": "Reason for " + a.id, name: "reason" });
  // A reconnect card: approving sends this browser to the authorization server.
  const reconnect = a.kind === "account_reauth";
  const approve = el("button", { type: "button", class: "approve", "data-id": a.id }, reconnect ? "Reconnect" : "Approve");
  const deny = el("button", { type: "button", class: "deny", "data-id": a.id }, reconnect ? "Dismiss" : "Deny");
  const out = el("p", { class: "meta result", role: "status" });
  // More than once: a proxied call can leave a standing rule; a Hermes command offers
  // Hermes's own choices (once, session, always) as Hermes does.
  let how = "";
  if (a.kind === "mcp_call") {
    how = choice({ "aria-label": "How long to allow " + a.tool + " for " + a.client, class: "how", name: "how" },
      [["", "Once"], ["15", "This tool for " + a.client + ", 15 minutes"], ["60", "… 1 hour"], ["480", "… 8 hours"], ["args", "Always these exact arguments"]], "");
  } else if (a.kind === "hermes_command") {
    const offered = (Array.isArray(a.arguments && a.arguments.choices) ? a.arguments.choices : ["once", "session", "always"]).filter((c) => c !== "deny");
    how = choice({ "aria-label": "Hermes's choice for " + a.id, class: "how", name: "how" }, offered.map((c) => [c, c === "once" ? "Once" : c === "session" ? "For this session" : "Always"]), "once");
  }
  const decide = async (verb) => {
    approve.disabled = deny.disabled = true;
    try {
      const body = verb === "deny" && reason.value ? { reason: reason.value } : {};
      if (verb === "approve" && how && how.value) {
        if (a.kind === "hermes_command") body.choice = how.value;
        else if (how.value === "args") body.always_these_arguments = true;
        else body.allow_minutes = Number(how.value);
      }
      const v = await api("POST", "/api/agent/approvals/" + encodeURIComponent(a.id) + "/" + verb, body);
      if (reconnect && verb === "approve" && v.output && v.output.authorize_url) { location.assign(v.output.authorize_url); return; }
      out.textContent = verb === "approve" ? "Approved: " + v.status : "Denied.";
      setTimeout(refresh, 300);
    } catch (e) { out.textContent = String(e.message || e); approve.disabled = deny.disabled = false; }
  };
  approve.onclick = () => decide("approve");
  deny.onclick = () => decide("deny");
  // What the decision is bound to, and why it no longer holds when it does not.
  const bound = [a.args_sha256 ? "arguments sha256 " + a.args_sha256.slice(0, 12) : "", a.policy_version ? "policy " + a.policy_version : ""].filter(Boolean).join(" · ");
  const expires = a.expires_at ? ["expires ", when(a.expires_at), bound ? " · " : ""] : [];
  const stale = a.stale ? el("p", { class: "err stale", role: "note" }, "Stale: " + a.stale + ". Approving withdraws it.") : "";
  return el("li", { class: "card", id: "ap-" + a.id, "data-id": a.id },
    el("h3", {}, a.tool + " "),
    el("p", { class: "meta" }, a.kind + " from " + a.client + " · ", when(a.created_at), " · " + a.id),
    bound || expires.length ? el("p", { class: "meta bound" }, ...expires, bound) : "",
    stale,
    el("p", {}, a.preview || ""),
    el("pre", { class: "args" }, JSON.stringify(a.arguments, null, 2)),
    el("div", { class: "act" }, how, reason, approve, deny), out);
}
function decidedRow(a) {
  return el("li", { class: "card", id: "done-" + a.id },
    el("h3", {}, a.tool + " "),
    el("p", { class: "meta" }, el("span", { class: "status-" + a.status }, a.status), " by " + (a.decided_by || "?") + " ", when(a.decided_at), a.reason ? " · " + a.reason : ""));
}
async function refresh() {
  try {
    const pending = (await api("GET", "/api/agent/approvals?status=pending&limit=200")).approvals;
    const list = $("#pending");
    const want = new Set(pending.map((a) => a.id));
    for (const li of [...list.children]) if (!want.has(li.dataset.id)) li.remove();
    const have = new Set([...list.children].map((li) => li.dataset.id));
    // Newest first; rows already shown keep what was typed into them.
    for (const a of [...pending].reverse()) if (!have.has(a.id)) list.prepend(card(a));
    $("#none").hidden = pending.length > 0;
    const all = (await api("GET", "/api/agent/approvals?limit=60")).approvals.filter((a) => a.status !== "pending").slice(0, 20);
    $("#decided").replaceChildren(...all.map(decidedRow));
    showError("");
  } catch (e) { showError("Cannot reach hal0: " + (e.message || e)); }
}
refresh();
setInterval(refresh, 2000);
