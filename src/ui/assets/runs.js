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
      el("p", { class: "meta" }, statusBadge(r.status), " " + fmtTime(r.created_at) + " · " + r.run_id),
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
function eventRow(e) {
  const rest = Object.assign({}, e); delete rest.seq; delete rest.event; delete rest.timestamp;
  const text = rest.text !== undefined && Object.keys(rest).length === 1 ? rest.text : JSON.stringify(rest);
  return el("li", { class: "ev", "data-seq": String(e.seq) }, el("code", {}, e.seq + " " + e.event), " ", text);
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
    $("#h-run").textContent = "Run " + r.run_id;
    $("#run-meta").replaceChildren(statusBadge(r.status), " " + r.client + " → " + r.agent + " · started " + fmtTime(r.created_at) + " · updated " + fmtTime(r.updated_at));
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
    for (const e of JSON.parse(m.data).events) if (e.seq > mine.seq) { mine.seq = e.seq; $("#events").append(eventRow(e)); }
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
