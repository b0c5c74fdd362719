"use strict";
const expanded = new Set();
// Whole exchanges read when opened (the list carries heads of each message and answer).
const whole = new Map();
let exchanges = [];
async function readWhole(id) {
  try {
    const [x] = await api("GET", "/api/relay/exchanges?request_id=" + encodeURIComponent(id));
    if (x) whole.set(id, x);
  } catch (e) { showError("Cannot read the exchange: " + (e.message || e)); }
  render();
}
function took(x) {
  if (!x.ended_at) return "";
  const ms = Date.parse(x.ended_at) - Date.parse(x.started_at);
  return isNaN(ms) ? "" : (ms / 1000).toFixed(ms < 10000 ? 1 : 0) + " s";
}
function render() {
  const q = $("#search").value.trim().toLowerCase();
  const who = $("#agent").value;
  const shown = exchanges.filter((x) =>
    (!who || x.from === who || x.to === who) &&
    (!q || [x.message, x.answer || "", x.error || ""].some((t) => t.toLowerCase().includes(q))));
  $("#exchanges").replaceChildren(...shown.map((head) => {
    const open = expanded.has(head.request_id);
    const x = (open && whole.get(head.request_id)) || head;
    const long = x.message.length > 180;
    const text = open || !long ? x.message : x.message.slice(0, 180) + "…";
    const more = el("button", { type: "button", class: "more", "aria-expanded": String(open) }, open ? "Show less" : "Show more");
    more.onclick = () => {
      if (expanded.has(x.request_id)) { expanded.delete(x.request_id); whole.delete(x.request_id); render(); }
      else { expanded.add(x.request_id); readWhole(x.request_id); }
    };
    const reply = open ? el("pre", { class: "answer" }, x.status === "pending" ? "Waiting for the answer…" : (x.answer || x.error || "")) : "";
    return el("li", { class: "card", id: "ex-" + x.request_id, "data-id": x.request_id },
      el("h3", {}, x.from + " → " + x.to + " "),
      el("p", { class: "meta" }, el("span", { class: "st st-" + x.status }, x.status), " " + x.started_at + (took(x) ? " · " + took(x) : "")),
      el("p", { class: "msg" }, text), more, reply);
  }));
  $("#none").hidden = shown.length > 0;
}
async function refresh() {
  try {
    // The REST lists are bare arrays (the hal0-admin tools wrap them).
    const [agents, ex] = await Promise.all([api("GET", "/api/relay/agents"), api("GET", "/api/relay/exchanges?limit=200&text_max=1024")]);
    $("#agents").replaceChildren(...agents.map((a) =>
      el("span", { class: "badge " + (a.online ? "online" : "offline"), "data-agent": a.name, title: a.online ? "online" : "offline" },
        el("span", { class: "dot" }), a.name + (a.online ? " · online" : " · offline"))));
    const sel = $("#agent");
    const names = new Set([...sel.options].map((o) => o.value));
    for (const a of agents) if (!names.has(a.name)) sel.append(el("option", { value: a.name }, a.name));
    exchanges = ex;
    // An opened exchange that changed (answered, failed) is read whole again.
    for (const x of ex) {
      const w = whole.get(x.request_id);
      if (expanded.has(x.request_id) && w && w.status !== x.status) readWhole(x.request_id);
    }
    render();
    showError("");
  } catch (e) { showError("Cannot reach hal0: " + (e.message || e)); }
}
$("#search").oninput = render;
$("#agent").onchange = render;
refresh();
setInterval(refresh, 3000);
