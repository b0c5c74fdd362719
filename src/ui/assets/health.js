"use strict";
async function refresh() {
  $("#again").disabled = true;
  try {
    const v = await api("GET", "/api/doctor");
    $("#rows").replaceChildren(...v.rows.map((r) => el("li", { class: "card row-" + r.status, "data-row": r.name },
      el("h3", {}, el("span", { class: "st status-" + r.status }, r.status), " " + r.name), el("p", { class: "msg" }, r.detail))));
    showError("");
  } catch (e) { showError(String(e.message || e)); }
  $("#again").disabled = false;
}
$("#again").onclick = refresh;
refresh();
