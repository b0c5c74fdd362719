"use strict";
function revokeButton(label, ask, path, after) {
  const b = el("button", { type: "button", class: "deny revoke" }, "Revoke");
  b.setAttribute("aria-label", label);
  b.onclick = async () => {
    if (!confirm(ask)) return;
    try { await api("DELETE", path); await after(); } catch (e) { showError(String(e.message || e)); }
  };
  return b;
}
async function refresh() {
  try {
    const [clients, keys, servers] = await Promise.all([api("GET", "/api/bridge/clients"), api("GET", "/api/mcp/keys"), api("GET", "/api/mcp/servers")]);
    $("#clients").replaceChildren(...clients.map((c) => el("tr", { id: "client-" + c.name, class: c.revoked ? "revoked" : "" },
      td(c.name), td(c.scopes.join(", ")), td((c.origin ? c.origin + " · " : "") + (c.note || "")), td(c.revoked ? "revoked " + fmtTime(c.revoked_at) : fmtTime(c.last_seen)),
      td(c.revoked ? "" : revokeButton("Revoke " + c.name, "Revoke bridge client " + c.name + "? Its key stops working at once.", "/api/bridge/clients/" + encodeURIComponent(c.name), refresh)))));
    $("#keys").replaceChildren(...keys.map((k) => el("tr", { id: "key-" + k.server + "-" + k.name },
      td(k.server), td(k.name + (k.note ? " · " + k.note : "")), td(k.revoked ? "revoked" : "live"), td(fmtTime(k.last_used_at)),
      td(k.revoked ? "" : revokeButton("Revoke " + k.name + " on " + k.server, "Revoke " + k.name + "'s key on " + k.server + "?", "/api/mcp/" + encodeURIComponent(k.server) + "/keys/" + encodeURIComponent(k.name), refresh)))));
    fillSelect($("#k-server"), servers.servers.filter((s) => !s.bundled).map((s) => s.id));
    showError("");
  } catch (e) { showError("Cannot reach hal0: " + (e.message || e)); }
}
$("#add-client").onsubmit = async (ev) => {
  ev.preventDefault();
  const scopes = [...document.querySelectorAll("input[name=scope]:checked")].map((i) => i.value);
  try {
    const v = await api("POST", "/api/bridge/clients", { name: $("#c-name").value, note: $("#c-note").value, scopes });
    shownOnce("Key of " + v.name, [v.key, ...(v.claude_mcp_add || [])]);
    ev.target.reset();
    await refresh();
  } catch (e) { showError(String(e.message || e)); }
};
$("#add-key").onsubmit = async (ev) => {
  ev.preventDefault();
  try {
    const v = await api("POST", "/api/mcp/" + encodeURIComponent($("#k-server").value) + "/keys", { name: $("#k-name").value, note: $("#k-note").value });
    shownOnce("Key of " + v.consumer.name + " on " + v.consumer.server, [v.key, v.url, v.claude_mcp_add]);
    ev.target.reset();
    await refresh();
  } catch (e) { showError(String(e.message || e)); }
};
refresh();
