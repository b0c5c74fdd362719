//! The dashboard's pages, served by `hal0 serve` under `/ui` with no build step and no
//! external fonts, scripts or CDNs (the box may be offline): `GET /ui/login?token=…` turns
//! a one-time link into a session cookie; `GET /ui/` is the approvals inbox (pending rows
//! appear without a reload, each with what will run; approve, or deny with a reason;
//! decided rows with who and when); `POST /ui/logout` ends the session. The page reads and
//! decides through the same REST routes as every other front, with its session cookie and
//! CSRF token.

use super::password;
use super::session::{self, COOKIE, Session};
use crate::server::AppState;
use crate::server::guard::Caller;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use std::sync::Arc;

/// The value of cookie `name` in a request's headers.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// A page in the dashboard's frame.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · hal0</title><style>{CSS}</style></head><body>{body}</body></html>",
        title = escape(title)
    )
}

/// How to sign in, for anyone without a session.
const SIGN_IN: &str = "Sign in with a one-time link: run `hal0 ui login` on the box and open the link it prints \
     (or at /ui/login with the dashboard password, when one is set).";

/// The 401 page for someone without a session.
fn sign_in_first() -> Response {
    refusal(StatusCode::UNAUTHORIZED, "ui.session_required", SIGN_IN)
}

/// A page that says what went wrong and what to do, with its code.
fn refusal(status: StatusCode, code: &str, message: &str) -> Response {
    let body = format!(
        "<main class=\"narrow\"><h1>hal0</h1><p class=\"err\" role=\"alert\">{}</p><p><code>{}</code></p></main>",
        escape(message),
        escape(code)
    );
    (status, Html(page("Not signed in", &body))).into_response()
}

#[derive(serde::Deserialize)]
pub struct LoginQuery {
    #[serde(default)]
    token: String,
}

/// The response that hands a new session's cookie to the browser (`then`: where to go).
fn signed_in(state: &AppState, token: &str, then: Response) -> Response {
    // `Secure` when hal0 serves https itself (behind a TLS proxy the cookie still travels
    // only to this origin: SameSite=Strict, HttpOnly).
    let secure = if state.config.network.tls_cert.is_some() { "; Secure" } else { "" };
    let cookie = format!(
        "{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
        session::SESSION_HOURS * 3600
    );
    let mut r = then;
    if let Ok(v) = header::HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

fn user_agent(headers: &HeaderMap) -> String {
    headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("").to_string()
}

/// `GET /ui/login?token=…`: a one-time link becomes a session (cookie), then the inbox.
/// Without a token: the password form when a password is set, else how to get a link.
pub async fn login(State(state): State<Arc<AppState>>, headers: HeaderMap, Query(q): Query<LoginQuery>) -> Response {
    if q.token.is_empty() {
        if password::is_set(&state.paths) {
            return Html(page("Sign in", LOGIN_FORM)).into_response();
        }
        return sign_in_first();
    }
    let ua = user_agent(&headers);
    let opened = state.store.call(move |s| session::redeem(s, &q.token, &ua)).await;
    match opened {
        Ok((_, token)) => {
            signed_in(&state, &token, (StatusCode::SEE_OTHER, [(header::LOCATION, "/ui/")]).into_response())
        }
        Err(e) => refusal(StatusCode::FORBIDDEN, e.code, &e.message),
    }
}

#[derive(serde::Deserialize)]
pub struct PasswordLogin {
    password: String,
}

/// Wrong passwords of this daemon, for [`password::Throttle`].
static FAILURES: std::sync::LazyLock<password::Throttle> = std::sync::LazyLock::new(Default::default);

/// `POST /ui/login` `{"password": …}` (JSON: a cross-site form cannot send it): a session
/// when the password is right; wrong guesses are throttled and audited.
pub async fn password_login(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<axum::Json<PasswordLogin>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Ok(axum::Json(body)) = body else {
        return crate::error::Error::invalid("ui.invalid_request", "send {\"password\": \"…\"} as application/json")
            .into_response();
    };
    let ua = user_agent(&headers);
    let paths = state.paths.clone();
    let outcome = state
        .store
        .call(move |s| {
            let refused = match FAILURES.check().and_then(|()| password::verify(&paths, &body.password)) {
                Ok(true) => None,
                Ok(false) => {
                    FAILURES.failed();
                    Some(crate::error::Error::unauthorized("ui.wrong_password", "that is not the dashboard's password"))
                }
                Err(e) => Some(e),
            };
            session::by_password(s, &ua, refused)
        })
        .await;
    match outcome {
        Ok((_, token)) => signed_in(&state, &token, axum::Json(serde_json::json!({"signed_in": true})).into_response()),
        Err(e) => e.into_response(),
    }
}

fn person(req: &Request) -> Option<Session> {
    match req.extensions().get::<Caller>().map(|c| &c.cred) {
        Some(crate::auth::Credential::Person(p)) => Some(p.clone()),
        _ => None,
    }
}

/// Page `template` for the request's person (its `{csrf}` and `{session}` filled in, the
/// shared script first), never cached; for anyone else, how to sign in.
fn for_person(req: &Request, title: &str, template: &str) -> Response {
    let Some(p) = person(req) else { return sign_in_first() };
    let body = template
        .replace("{common}", COMMON_JS)
        .replace("{csrf}", &escape(&p.csrf))
        .replace("{session}", &escape(&p.id));
    let mut r = Html(page(title, &body)).into_response();
    r.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    r
}

/// `GET /ui/`: the approvals inbox.
pub async fn inbox(req: Request) -> Response {
    for_person(&req, "Approvals", INBOX)
}

/// `GET /ui/conversations`: the relay's bots and exchanges (spec 002's page).
pub async fn conversations(req: Request) -> Response {
    for_person(&req, "Conversations", CONVERSATIONS)
}

/// `GET /ui`: to the inbox.
pub async fn root() -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, "/ui/")]).into_response()
}

/// `POST /ui/logout` (CSRF checked by the guard): the session ends and its cookie goes.
pub async fn logout(State(state): State<Arc<AppState>>, req: Request) -> Response {
    if let Some(p) = person(&req) {
        let by = p.identity();
        if let Err(e) = state.store.call(move |s| session::end(s, Some(&p.id), &by)).await {
            return e.into_response();
        }
    }
    let gone = format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    (StatusCode::NO_CONTENT, [(header::SET_COOKIE, gone)]).into_response()
}

const CSS: &str = "\
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fafafa;--card:#fff;--line:#d0d7de;--ok:#1a7f37;--no:#cf222e;--dim:#57606a}\
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--card:#161b22;--line:#30363d;--dim:#8b949e}}\
*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg)}\
header{display:flex;align-items:center;gap:1rem;padding:.6rem 1rem;border-bottom:1px solid var(--line)}\
header h1{font-size:1.1rem;margin:0}header .who{margin-left:auto;color:var(--dim);font-size:.85rem}\
main{max-width:60rem;margin:0 auto;padding:1rem}.narrow{max-width:32rem}\
h2{font-size:1rem;margin:1.2rem 0 .5rem}ol{list-style:none;margin:0;padding:0}\
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.8rem;margin:.6rem 0}\
.card h3{margin:0 0 .2rem;font-size:1rem;word-break:break-all}.card p{overflow-wrap:anywhere}.meta{color:var(--dim);font-size:.85rem}\
pre{white-space:pre-wrap;word-break:break-word;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.5rem;max-height:24rem;overflow:auto;font-size:.85rem}\
.act{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}.act input{flex:1 1 12rem;min-width:0;padding:.5rem;font:inherit}\
button{font:inherit;padding:.5rem 1rem;border-radius:6px;border:1px solid var(--line);cursor:pointer;min-height:2.75rem}\
button.approve{background:var(--ok);color:#fff;border-color:var(--ok)}button.deny{background:var(--no);color:#fff;border-color:var(--no)}\
button:focus-visible,input:focus-visible{outline:3px solid #0969da;outline-offset:2px}\
nav a{margin-right:.6rem;color:inherit}nav a[aria-current]{font-weight:600}\
.badges{display:flex;flex-wrap:wrap;gap:.4rem;margin:.5rem 0}.badge{border:1px solid var(--line);border-radius:999px;padding:.15rem .6rem;font-size:.85rem}\
.dot{display:inline-block;width:.6rem;height:.6rem;border-radius:50%;margin-right:.35rem;background:var(--dim)}.online .dot{background:var(--ok)}\
.tools{display:flex;flex-wrap:wrap;gap:.5rem}.tools input,.tools select{font:inherit;padding:.5rem;min-width:0;flex:1 1 10rem}\
.st{font-size:.8rem;border-radius:4px;padding:0 .4rem;border:1px solid var(--line)}.st-ok{color:var(--ok)}.st-pending{color:var(--dim)}\
.err{color:var(--no)}.empty{color:var(--dim)}.status-approved,.status-executed{color:var(--ok)}.status-denied,.status-failed{color:var(--no)}";

const LOGIN_FORM: &str = r##"<main class="narrow"><h1>hal0</h1>
<form id="signin"><p><label for="password">Dashboard password</label></p>
<p class="act"><input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button type="submit" class="approve">Sign in</button></p>
<p id="error" class="err" role="alert" hidden></p>
<p class="meta">Or run <code>hal0 ui login</code> on the box for a one-time link.</p></form></main>
<script>
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
</script>"##;

/// What every page's script starts with: `$`, `el` (an element with attributes and
/// children), `showError`, and `api` (a same-origin JSON call that carries the CSRF token on
/// a change and reloads to the sign-in page on a 401).
const COMMON_JS: &str = r##""use strict";
const CSRF = "{csrf}";
const $ = (s) => document.querySelector(s);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) { if (k === "class") e.className = v; else e.setAttribute(k, v); }
  for (const k of kids) e.append(k);
  return e;
}
function showError(text) { const p = $("#error"); p.textContent = text; p.hidden = !text; }
async function api(method, path, body) {
  const r = await fetch(path, { method, credentials: "same-origin",
    headers: Object.assign({ "accept": "application/json" }, method === "GET" ? {} : { "content-type": "application/json", "x-csrf-token": CSRF }),
    body: body === undefined ? undefined : JSON.stringify(body) });
  const v = await r.json().catch(() => ({}));
  if (r.status === 401) { location.reload(); throw new Error("signed out"); }
  if (!r.ok) throw new Error((v.error && (v.error.message + " [" + v.error.code + "]")) || ("HTTP " + r.status));
  return v;
}"##;

const INBOX: &str = r##"<header><h1>hal0</h1><nav><a href="/ui/" aria-current="page">Approvals</a> <a href="/ui/conversations">Conversations</a></nav><span class="who">session {session}</span>
<button id="logout" type="button">Sign out</button></header>
<main><p id="error" class="err" role="alert" hidden></p>
<section aria-labelledby="h-pending"><h2 id="h-pending">Pending</h2><ol id="pending" aria-live="polite"></ol>
<p id="none" class="empty" hidden>Nothing is waiting for a decision.</p></section>
<section aria-labelledby="h-decided"><h2 id="h-decided">Decided</h2><ol id="decided"></ol></section></main>
<script>
{common}
function card(a) {
  const reason = el("input", { type: "text", placeholder: "Reason (for a denial)", "aria-label": "Reason for " + a.id, name: "reason" });
  const approve = el("button", { type: "button", class: "approve", "data-id": a.id }, "Approve");
  const deny = el("button", { type: "button", class: "deny", "data-id": a.id }, "Deny");
  const out = el("p", { class: "meta result", role: "status" });
  const decide = async (verb) => {
    approve.disabled = deny.disabled = true;
    try {
      const body = verb === "deny" && reason.value ? { reason: reason.value } : {};
      const v = await api("POST", "/api/agent/approvals/" + encodeURIComponent(a.id) + "/" + verb, body);
      out.textContent = verb === "approve" ? "Approved: " + v.status : "Denied.";
      setTimeout(refresh, 300);
    } catch (e) { out.textContent = String(e.message || e); approve.disabled = deny.disabled = false; }
  };
  approve.onclick = () => decide("approve");
  deny.onclick = () => decide("deny");
  return el("li", { class: "card", id: "ap-" + a.id, "data-id": a.id },
    el("h3", {}, a.tool + " "),
    el("p", { class: "meta" }, a.kind + " from " + a.client + " · " + a.created_at + " · " + a.id),
    el("p", {}, a.preview || ""),
    el("pre", { class: "args" }, JSON.stringify(a.arguments, null, 2)),
    el("div", { class: "act" }, reason, approve, deny), out);
}
function decidedRow(a) {
  return el("li", { class: "card", id: "done-" + a.id },
    el("h3", {}, a.tool + " "),
    el("p", { class: "meta" }, el("span", { class: "status-" + a.status }, a.status), " by " + (a.decided_by || "?") + " at " + (a.decided_at || "?") + (a.reason ? " · " + a.reason : "")));
}
async function refresh() {
  try {
    const pending = (await api("GET", "/api/agent/approvals?status=pending")).approvals;
    const list = $("#pending");
    const want = new Set(pending.map((a) => a.id));
    for (const li of [...list.children]) if (!want.has(li.dataset.id)) li.remove();
    const have = new Set([...list.children].map((li) => li.dataset.id));
    // Newest first; rows already shown keep what was typed into them.
    for (const a of [...pending].reverse()) if (!have.has(a.id)) list.prepend(card(a));
    $("#none").hidden = pending.length > 0;
    const all = (await api("GET", "/api/agent/approvals")).approvals.filter((a) => a.status !== "pending").slice(0, 20);
    $("#decided").replaceChildren(...all.map(decidedRow));
    showError("");
  } catch (e) { showError("Cannot reach hal0: " + (e.message || e)); }
}
$("#logout").onclick = async () => { try { await api("POST", "/ui/logout"); } finally { location.href = "/ui/"; } };
refresh();
setInterval(refresh, 2000);
</script>"##;

const CONVERSATIONS: &str = r##"<header><h1>hal0</h1><nav><a href="/ui/">Approvals</a> <a href="/ui/conversations" aria-current="page">Conversations</a></nav><span class="who">session {session}</span></header>
<main><p id="error" class="err" role="alert" hidden></p>
<section aria-labelledby="h-agents"><h2 id="h-agents">Agents</h2><div id="agents" class="badges"></div></section>
<section aria-labelledby="h-ex"><h2 id="h-ex">Exchanges</h2>
<div class="tools"><input id="search" type="search" placeholder="Search messages and answers" aria-label="Search messages and answers">
<select id="agent" aria-label="Agent"><option value="">All agents</option></select></div>
<ol id="exchanges" aria-live="polite"></ol><p id="none" class="empty" hidden>No exchange matches.</p></section></main>
<script>
{common}
const expanded = new Set();
let exchanges = [];
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
  $("#exchanges").replaceChildren(...shown.map((x) => {
    const open = expanded.has(x.request_id);
    const long = x.message.length > 180;
    const text = open || !long ? x.message : x.message.slice(0, 180) + "…";
    const more = el("button", { type: "button", class: "more", "aria-expanded": String(open) }, open ? "Show less" : "Show more");
    more.onclick = () => { if (expanded.has(x.request_id)) expanded.delete(x.request_id); else expanded.add(x.request_id); render(); };
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
    const [agents, ex] = await Promise.all([api("GET", "/api/relay/agents"), api("GET", "/api/relay/exchanges?limit=500")]);
    $("#agents").replaceChildren(...agents.map((a) =>
      el("span", { class: "badge " + (a.online ? "online" : "offline"), "data-agent": a.name, title: a.online ? "online" : "offline" },
        el("span", { class: "dot" }), a.name + (a.online ? " · online" : " · offline"))));
    const sel = $("#agent");
    const names = new Set([...sel.options].map((o) => o.value));
    for (const a of agents) if (!names.has(a.name)) sel.append(el("option", { value: a.name }, a.name));
    exchanges = ex;
    render();
    showError("");
  } catch (e) { showError("Cannot reach hal0: " + (e.message || e)); }
}
$("#search").oninput = render;
$("#agent").onchange = render;
refresh();
setInterval(refresh, 3000);
</script>"##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_by_name() {
        let mut h = HeaderMap::new();
        h.append(header::COOKIE, "a=1; hal0_session=hal0us_x".parse().unwrap());
        assert_eq!(cookie(&h, "hal0_session").as_deref(), Some("hal0us_x"));
        assert_eq!(cookie(&h, "b"), None);
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }
}
