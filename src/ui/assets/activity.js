"use strict";
async function refresh() {
  const q = new URLSearchParams();
  for (const [k, id] of [["since", "#a-since"], ["client", "#a-client"], ["tool", "#a-tool"], ["limit", "#a-limit"]]) if ($(id).value.trim()) q.set(k, $(id).value.trim());
  try {
    const rows = await api("GET", "/api/activity?" + q);
    $("#entries").replaceChildren(...rows.map((r) => el("tr", { "data-id": String(r.id) },
      td(fmtTime(r.at)), td(r.identity), td(el("code", {}, r.tool)), td(el("span", { class: "status-" + r.verdict }, r.verdict)),
      td([r.result_code, r.approval_id && ("approval " + r.approval_id), r.detail].filter(Boolean).join(" · ")))));
    $("#none").hidden = rows.length > 0;
    showError("");
  } catch (e) { showError(String(e.message || e)); }
}
$("#filters").onsubmit = (ev) => { ev.preventDefault(); refresh(); };
refresh();
setInterval(() => { if (!document.activeElement || document.activeElement.tagName !== "INPUT") refresh(); }, 5000);
