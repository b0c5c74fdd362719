"use strict";
// The sign-in form: a name and password, or a passkey (WebAuthn) when the browser has them.
const err = document.querySelector("#error");
function fail(r, v) {
  err.textContent = (v.error && (v.error.message + " [" + v.error.code + "]")) || ("HTTP " + r.status);
  err.hidden = false;
}
async function signIn(body) {
  const r = await fetch("/ui/login", { method: "POST", credentials: "same-origin",
    headers: { "content-type": "application/json", "accept": "application/json" },
    body: JSON.stringify(body) });
  if (r.ok) { location.href = "/ui/"; return; }
  fail(r, await r.json().catch(() => ({})));
}
document.querySelector("#signin").onsubmit = async (ev) => {
  ev.preventDefault();
  const name = document.querySelector("#name").value.trim();
  const body = { password: document.querySelector("#password").value };
  if (name) body.name = name;
  await signIn(body);
};
const b64 = {
  enc: (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""),
  dec: (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)),
};
const passkey = document.querySelector("#passkey");
if (window.PublicKeyCredential) {
  passkey.hidden = false;
  passkey.onclick = async () => {
    err.hidden = true;
    const r = await fetch("/ui/login/passkey", { method: "POST", credentials: "same-origin",
      headers: { "accept": "application/json" } });
    const o = await r.json().catch(() => ({}));
    if (!r.ok) { fail(r, o); return; }
    const pk = o.publicKey;
    let c;
    try {
      c = await navigator.credentials.get({ publicKey: { ...pk, challenge: b64.dec(pk.challenge),
        allowCredentials: pk.allowCredentials.map((x) => ({ ...x, id: b64.dec(x.id) })) } });
    } catch (e) {
      err.textContent = "No passkey was used: " + e.message; err.hidden = false; return;
    }
    await signIn({ passkey: { request: o.request, credential: {
      id: c.id,
      clientDataJson: b64.enc(c.response.clientDataJSON),
      authenticatorData: b64.enc(c.response.authenticatorData),
      signature: b64.enc(c.response.signature),
      userHandle: c.response.userHandle ? b64.enc(c.response.userHandle) : null,
    } } });
  };
}
