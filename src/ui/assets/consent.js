"use strict";
// The OAuth consent page: reads the request with a same-origin request (so the session
// cookie goes with it), asks a person to sign in when there is no session (and checks
// again every few seconds), shows what the app asks, and sends the person's decision.
// Everything shown is set as text, never as markup: the app named itself.
(() => {
  const $ = (s) => document.querySelector(s);
  const id = $("#consent").dataset.request;
  let csrf = "";
  let decidedHere = false;
  const show = (sel, on) => { $(sel).hidden = !on; };
  const fail = (text) => { const p = $("#error"); p.textContent = text; p.hidden = !text; };
  const message = (v, r) => (v.error && (v.error.message + " [" + v.error.code + "]")) || ("HTTP " + r.status);

  function render(req) {
    $("#client").textContent = req.client_name;
    $("#server").textContent = req.server;
    $("#to").textContent = req.redirect_to;
    $("#cid").textContent = req.client_id;
    $("#resource").textContent = req.resource;
    $("#expires").textContent = String(req.expires_at).replace("T", " ");
    const box = $("#scopes");
    box.querySelectorAll("label").forEach((l) => l.remove());
    for (const s of req.scopes) {
      const input = document.createElement("input");
      input.type = "checkbox";
      input.name = "scope";
      input.value = s;
      input.id = "scope-" + s;
      // The admin scope is granted only when the person ticks it.
      input.checked = s !== "admin";
      const label = document.createElement("label");
      label.append(input, " " + s);
      box.append(label);
    }
  }

  async function decide(what) {
    fail("");
    decidedHere = true;
    const scopes = [...document.querySelectorAll('input[name="scope"]:checked')].map((i) => i.value);
    $("#approve").disabled = $("#deny").disabled = true;
    try {
      const r = await fetch("/oauth/requests/" + encodeURIComponent(id) + "/" + what, {
        method: "POST", credentials: "same-origin",
        headers: { "content-type": "application/json", "accept": "application/json", "x-csrf-token": csrf },
        body: JSON.stringify(what === "approve" ? { scopes } : {}) });
      const v = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(message(v, r));
      show("#ask", false);
      const done = $("#done");
      done.textContent = what === "approve" ? "Approved. Returning to the app…" : "Denied. Returning to the app…";
      done.hidden = false;
      location.assign(v.redirect);
    } catch (e) {
      fail(e.message || String(e));
      $("#approve").disabled = $("#deny").disabled = false;
    }
  }

  async function load() {
    try {
      const r = await fetch("/oauth/requests/" + encodeURIComponent(id), { credentials: "same-origin",
        headers: { "accept": "application/json" } });
      const v = await r.json().catch(() => ({}));
      if (!r.ok) { fail(message(v, r)); return; }
      const req = v.request;
      // Decided in the approvals inbox: come back for the code (or the denial) and go on.
      if ((req.status === "approved" && !req.code_issued) || (req.status === "denied" && req.approval_id && !decidedHere)) {
        const c = await fetch("/oauth/requests/" + encodeURIComponent(id) + "/continue", { method: "POST",
          credentials: "same-origin", headers: { "content-type": "application/json", "accept": "application/json" },
          body: "{}" });
        const w = await c.json().catch(() => ({}));
        if (!c.ok) { fail(message(w, c)); return; }
        show("#signin", false); show("#ask", false);
        const done = $("#done");
        done.textContent = req.status === "approved" ? "Approved in the inbox. Returning to the app…" : "Denied in the inbox. Returning to the app…";
        done.hidden = false;
        location.assign(w.redirect);
        return;
      }
      if (req.status !== "pending") {
        show("#signin", false); show("#ask", false);
        fail("This request is " + req.status + ". Start again from the app.");
        return;
      }
      if (!v.signed_in) {
        show("#signin", true);
        if (req.approval_id) $("#card").textContent = req.approval_id;
        setTimeout(load, 2000);
        return;
      }
      csrf = v.csrf;
      show("#signin", false);
      render(req);
      show("#ask", true);
    } catch (e) { fail("Cannot reach hal0: " + (e.message || e)); }
  }

  $("#approve").onclick = () => decide("approve");
  $("#deny").onclick = () => decide("deny");
  load();
})();
