"use strict";
document.querySelector("#signin").onsubmit = async (ev) => {
  ev.preventDefault();
  const err = document.querySelector("#error");
  const r = await fetch("/ui/login", { method: "POST", credentials: "same-origin",
    headers: { "content-type": "application/json", "accept": "application/json" },
    body: JSON.stringify({ password: document.querySelector("#password").value }) });
  if (r.ok) { location.href = "/ui/"; return; }
  const v = await r.json().catch(() => ({}));
  err.textContent = (v.error && (v.error.message + " [" + v.error.code + "]")) || ("HTTP " + r.status);
  err.hidden = false;
};
