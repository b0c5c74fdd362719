"use strict";
// The person's own page: who they are, how this session was opened, their passkeys.
const b64 = {
  enc: (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""),
  dec: (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)),
};
async function load() {
  const v = await api("GET", "/ui/account/passkeys");
  $("#who").replaceChildren("Signed in as ", el("strong", {}, v.person), " (" + (v.via || "a session") + "), session " + v.session + ".");
  $("#keys").replaceChildren(...v.passkeys.map((k) => {
    const rm = el("button", { type: "button", class: "deny", "data-id": k.id }, "Remove");
    rm.onclick = async () => {
      try { await api("POST", "/ui/account/passkeys/" + encodeURIComponent(k.id) + "/remove"); await load(); }
      catch (e) { showError(e.message); }
    };
    return el("tr", { "data-id": k.id }, td(k.label), td(k.algorithm), td(when(k.created_at)), td(when(k.last_used)), td(rm));
  }));
  if (!v.passkeys.length) $("#keys").append(el("tr", {}, el("td", { colspan: "5", class: "meta" }, "No passkeys yet.")));
}
$("#add").onsubmit = async (ev) => {
  ev.preventDefault();
  showError("");
  try {
    if (!window.PublicKeyCredential) throw new Error("this browser has no passkeys (WebAuthn)");
    const o = await api("POST", "/ui/account/passkeys/options");
    const pk = o.publicKey;
    const c = await navigator.credentials.create({ publicKey: { ...pk, challenge: b64.dec(pk.challenge),
      user: { ...pk.user, id: b64.dec(pk.user.id) },
      excludeCredentials: pk.excludeCredentials.map((x) => ({ ...x, id: b64.dec(x.id) })) } });
    await api("POST", "/ui/account/passkeys", { request: o.request, label: $("#label").value, credential: {
      id: c.id,
      clientDataJson: b64.enc(c.response.clientDataJSON),
      attestationObject: b64.enc(c.response.attestationObject),
    } });
    $("#label").value = "";
    await load();
  } catch (e) { showError(e.message); }
};
load().catch((e) => showError(e.message));
