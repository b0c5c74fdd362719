"use strict";
// A one-time sign-in link's page: the link's token goes to hal0 from this page (same
// origin), so the session cookie is set by, and next sent with, same-site requests even
// when the link was clicked on another site.
(async () => {
  const err = document.querySelector("#error");
  const q = new URLSearchParams(location.search);
  const token = q.get("token") || "";
  // `then=account`: the person's own page (a link to add a first passkey).
  const then = q.get("then") === "account" ? "/ui/account" : "/ui/";
  try {
    const r = await fetch("/ui/login", { method: "POST", credentials: "same-origin",
      headers: { "content-type": "application/json", "accept": "application/json" },
      body: JSON.stringify({ token }) });
    if (r.ok) { location.replace(then); return; }
    const v = await r.json().catch(() => ({}));
    err.textContent = (v.error && (v.error.message + " [" + v.error.code + "]")) || ("HTTP " + r.status);
  } catch (e) { err.textContent = "Cannot reach hal0: " + (e.message || e); }
  err.hidden = false;
  document.querySelector("#wait").hidden = true;
})();
