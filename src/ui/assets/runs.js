"use strict";
let runs = [];
let open = null;   // { id, source } of the run followed live
function statusBadge(s) { return el("span", { class: "st status-" + s }, s); }
function render() {
  const [c, a, s] = [$("#f-client").value, $("#f-agent").value, $("#f-status").value];
  const shown = runs.filter((r) => (!c || r.client === c) && (!a || r.agent === a) && (!s || r.status === s));
  $("#runs").replaceChildren(...shown.map((r) => {
    const b = el("button", { type: "button", class: "open", "data-id": r.run_id, "aria-expanded": String(open && open.id === r.run_id) }, "Follow");
    b.onclick = () => follow(r.run_id);
    return el("li", { class: "card", id: "run-" + r.run_id, "data-id": r.run_id },
      el("h3", {}, r.client + " → " + r.agent + " "),
      el("p", { class: "meta" }, statusBadge(r.status), " ", when(r.created_at), " · ", el("a", { href: "#run-" + r.run_id, class: "permalink", title: "A link to this run" }, r.run_id)),
      el("p", { class: "msg" }, r.input_preview || ""), b);
  }));
  $("#none").hidden = shown.length > 0;
}
async function refresh() {
  try {
    runs = await api("GET", "/api/runs?limit=200");
    fillSelect($("#f-client"), runs.map((r) => r.client));
    fillSelect($("#f-agent"), runs.map((r) => r.agent));
    render();
    showError("");
  } catch (e) { showError("Cannot reach hal0: " + (e.message || e)); }
}
/// One event as a row; an approval request links to its card in the inbox.
function eventRow(e) {
  const rest = Object.assign({}, e); delete rest.seq; delete rest.event; delete rest.timestamp;
  const text = rest.text !== undefined && Object.keys(rest).length === 1 ? rest.text : JSON.stringify(rest);
  const card = e.event === "approval.request" && e.approval_id
    ? [" ", el("a", { href: "/ui/#ap-" + e.approval_id, class: "to-card" }, "Decide it in the inbox")] : [];
  return el("li", { class: "ev", "data-seq": String(e.seq) }, el("code", {}, e.seq + " " + e.event), " ", text, ...card);
}
/// Streamed text arrives a few tokens per event: consecutive deltas share one row.
function addEvent(e) {
  const list = $("#events");
  const last = list.lastElementChild;
  const text = e.event === "message.text" && typeof e.text === "string";
  if (text && last && last.dataset.text === "1") {
    last.querySelector(".text").textContent += e.text;
    const n = Number(last.dataset.count) + 1;
    last.dataset.count = String(n);
    last.querySelector("code").textContent = last.dataset.first + "–" + e.seq + " message.text ×" + n;
    return;
  }
  if (text) {
    list.append(el("li", { class: "ev grouped", "data-seq": String(e.seq), "data-text": "1", "data-count": "1", "data-first": String(e.seq) },
      el("code", {}, e.seq + " message.text"), " ", el("span", { class: "text" }, e.text)));
    return;
  }
  list.append(eventRow(e));
}
/// Follow run `id` from the start, or (`resume`) from where the page is: an EventSource
/// that reconnects by itself would start over with windows cut elsewhere, so on an error
/// the page closes it and opens the stream again from its own offset and last event.
function follow(id, resume) {
  if (open) open.source.close();
  if (!resume) {
    $("#detail").hidden = false;
    $("#output").textContent = "";
    $("#events").replaceChildren();
    $("#stop-result").textContent = "";
  }
  const at = resume ? { next: open.next, seq: open.seq } : { next: 0, seq: 0 };
  const source = new EventSource("/api/runs/" + encodeURIComponent(id) + "/stream?offset=" + at.next + "&since=" + at.seq);
  open = { id, source, next: at.next, seq: at.seq, ended: false };
  const mine = open;
  source.addEventListener("status", (m) => {
    const r = JSON.parse(m.data);
    showError("");
    $("#h-run").replaceChildren("Run ", el("a", { href: "#run-" + r.run_id, class: "permalink" }, r.run_id));
    $("#run-meta").replaceChildren(statusBadge(r.status), " " + r.client + " → " + r.agent + " · started ", when(r.created_at), " · updated ", when(r.updated_at));
    $("#run-input").textContent = r.input_preview || "";
    $("#run-error").textContent = r.error || "";
    $("#stop").hidden = ["completed", "failed", "cancelled", "interrupted"].includes(r.status);
    const row = runs.find((x) => x.run_id === r.run_id);
    if (row && row.status !== r.status) { row.status = r.status; render(); }
  });
  source.addEventListener("output", (m) => {
    const o = JSON.parse(m.data);
    if (o.offset !== mine.next) return;
    mine.next = o.next;
    $("#output").append(o.text);
  });
  source.addEventListener("events", (m) => {
    for (const e of JSON.parse(m.data).events) if (e.seq > mine.seq) { mine.seq = e.seq; addEvent(e); }
  });
  source.addEventListener("end", () => { mine.ended = true; source.close(); $("#stop").hidden = true; showError(""); });
  source.onerror = () => {
    source.close();
    if (mine.ended || open !== mine) return;
    showError("The run's stream broke; picking it up again…");
    setTimeout(() => { if (open === mine) follow(id, true); }, 1000);
  };
  if (!resume) {
    render();
    $("#detail").scrollIntoView({ block: "start" });
  }
}
$("#stop").onclick = async () => {
  if (!open) return;
  $("#stop").disabled = true;
  try {
    const v = await api("POST", "/api/runs/" + encodeURIComponent(open.id) + "/stop", {});
    $("#stop-result").textContent = "Asked to stop: " + v.status;
  } catch (e) { $("#stop-result").textContent = String(e.message || e); }
  $("#stop").disabled = false;
};
for (const s of ["#f-client", "#f-agent", "#f-status"]) $(s).onchange = render;
refresh();
setInterval(refresh, 3000);

/// A permalink (`/ui/runs#run-<id>`) opens that run.
async function fromHash() {
  const m = /^#run-(run_[A-Za-z0-9_-]+)$/.exec(location.hash);
  if (m && !(open && open.id === m[1])) follow(m[1]);
}
window.addEventListener("hashchange", fromHash);
fromHash();
