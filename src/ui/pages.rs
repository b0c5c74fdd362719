//! The dashboard's pages, served by `hal0 serve` under `/ui` with no build step and no
//! external fonts, scripts or CDNs (the box may be offline): `GET /ui/login?token=…`
//! answers a page that spends the one-time link with its own same-origin request
//! (`POST /ui/login {"token"}`), which sets the session cookie; `GET /ui/` is the approvals
//! inbox (pending rows appear without a reload, each with what will run; approve, or deny
//! with a reason; decided rows with who and when); `POST /ui/logout` ends the session. The
//! page reads and decides through the same REST routes as every other front, with its
//! session cookie and CSRF token. Scripts and the style sheet are files under
//! `/ui/assets/` (no inline script or style), so the pages run under a strict
//! Content-Security-Policy ([`super::headers`]).

use crate::auth::password;
use crate::auth::session::{self, COOKIE, Session};
use crate::server::AppState;
use crate::server::guard::Caller;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use std::sync::Arc;

/// Every value of cookie `name` in a request's headers, in the order sent.
fn cookies(headers: &HeaderMap, name: &str) -> Vec<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .filter(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
        .collect()
}

/// The session cookie's name on this daemon: `__Host-` prefixed when hal0 serves https
/// itself (`https`; [`session::HOST_COOKIE`]), else [`COOKIE`].
pub fn cookie_name(https: bool) -> &'static str {
    if https { session::HOST_COOKIE } else { COOKIE }
}

/// Whether hal0 serves https itself.
fn https(state: &AppState) -> bool {
    state.config().network.tls_cert.is_some()
}

/// The session token a request's cookie carries, if any. More than one session cookie is
/// refused (`ui.session_ambiguous`): another page of this host (a sibling port, which
/// cookies do not tell apart) set one of the same name, with a longer path, to be sent
/// alongside ours, and hal0 acts in neither.
pub fn session_token(https: bool, headers: &HeaderMap) -> crate::base::error::Result<Option<String>> {
    let mut found = cookies(headers, cookie_name(https));
    if found.len() > 1 {
        return Err(crate::base::error::Error::unauthorized(
            "ui.session_ambiguous",
            "this request carries two hal0 session cookies (another page on this host set one): clear this \
             site's cookies in the browser, then sign in again with `hal0 ui login`",
        ));
    }
    Ok(found.pop())
}

/// The person whose live dashboard session the request's cookie names, if any (the guard
/// asks this for a request without a key).
pub async fn person_of(state: &Arc<AppState>, headers: &HeaderMap) -> crate::base::error::Result<Option<Session>> {
    let Some(token) = session_token(https(state), headers)? else { return Ok(None) };
    state.store.call(move |s| session::resolve(s, &token)).await
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// A page in the dashboard's frame: the style sheet, `head` (already escaped), then `body`
/// and the `scripts` (files under `/ui/assets/`, in order).
fn page(title: &str, head: &str, body: &str, scripts: &[&str]) -> String {
    let scripts: String = scripts.iter().map(|s| format!("<script src=\"/ui/assets/{s}\"></script>")).collect();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · hal0</title><link rel=\"stylesheet\" href=\"/ui/assets/style.css\">{head}</head>\
         <body>{body}{scripts}</body></html>",
        title = escape(title)
    )
}

/// How to sign in, for anyone without a session.
const SIGN_IN: &str = "Sign in with a one-time link: run `hal0 ui login` on the box and open the link it prints \
     (or at /ui/login with a password or a passkey, once a person has one: `hal0 ui user add`).";

/// Whether the sign-in form has a use: the box-wide password is set, or a person has a
/// password or a passkey.
fn form_offered(state: &AppState) -> bool {
    password::is_set(&state.paths) || crate::auth::people::anyone_signs_in(&state.store).unwrap_or(false)
}

/// The 401 page for someone without a session: the sign-in form when it has a use (it
/// names the one-time link too), else how to get a link.
fn sign_in_first(state: &AppState) -> Response {
    if form_offered(state) {
        return (StatusCode::UNAUTHORIZED, Html(page("Sign in", "", LOGIN_FORM, &["login.js"]))).into_response();
    }
    refusal(StatusCode::UNAUTHORIZED, "ui.session_required", SIGN_IN)
}

/// Escaped text with its `code` spans as `<code>` (messages name commands that way).
fn with_code(text: &str) -> String {
    let escaped = escape(text);
    let mut out = String::new();
    for (i, part) in escaped.split('`').enumerate() {
        match i % 2 {
            1 => out.push_str(&format!("<code>{part}</code>")),
            _ => out.push_str(part),
        }
    }
    // An unmatched backtick stays as it was.
    if escaped.matches('`').count() % 2 == 1 { escaped.to_string() } else { out }
}

/// A page that says what went wrong and what to do, with its code (the OAuth front's
/// refusals too).
pub fn refusal_page(status: StatusCode, code: &str, message: &str) -> Response {
    refusal(status, code, message)
}

/// `GET /ui/consent/{id}`: the page where a person reads an OAuth client's request and
/// approves or denies it. The request is read by the page's own same-origin request (the
/// browser arrived from the client's site, so the strict session cookie was not sent with
/// this navigation); without a session it says how to sign in and carries on by itself once
/// the person has.
pub async fn consent(axum::extract::Path(id): axum::extract::Path<String>) -> Response {
    let id_ok = id.starts_with("oar_") && id.len() <= 40 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !id_ok {
        return refusal(StatusCode::NOT_FOUND, "oauth.request_unknown", "no such authorization request");
    }
    let body = format!(
        "<main class=\"narrow\" id=\"consent\" data-request=\"{id}\"><h1>Connect an app to hal0?</h1>\
         <p id=\"error\" class=\"err\" role=\"alert\" hidden></p>\
         <section id=\"signin\" hidden><p>{}</p><p class=\"meta\">This page goes on by itself once you are signed in \
         (open the link in this browser), or once a person decides card <code id=\"card\"></code> in the approvals \
         inbox (the dashboard, or hal0 agent approvals on the box).</p></section>\
         <section id=\"ask\" hidden><p><strong id=\"client\"></strong> <span class=\"meta\">(the name the app gave \
         itself; hal0 cannot check it)</span> asks to use <strong id=\"server\"></strong> on this box as you.</p>\
         <dl><dt>Sends you back to</dt><dd><code id=\"to\"></code></dd><dt>Client id</dt><dd><code id=\"cid\"></code></dd>\
         <dt>Resource</dt><dd><code id=\"resource\"></code></dd><dt>Request expires</dt><dd id=\"expires\"></dd></dl>\
         <fieldset id=\"scopes\"><legend>What it may do</legend></fieldset>\
         <p class=\"meta\">Approving makes a bridge client for this app (hal0 bridge list shows it; \
         hal0 bridge revoke ends every token it holds).</p>\
         <p><button id=\"approve\" type=\"button\">Approve</button> <button id=\"deny\" type=\"button\">Deny</button></p>\
         </section><p id=\"done\" hidden></p></main>",
        with_code(SIGN_IN)
    );
    Html(page("Connect an app", "", &body, &["consent.js"])).into_response()
}

/// The page an upstream authorization server's callback ends on: the account of `server`
/// is connected.
pub fn account_connected(server: &str) -> Response {
    let body = format!(
        "<main class=\"narrow\"><h1>Connected</h1><p id=\"done\">hal0 holds an account for <strong>{}</strong> now: \
         calls through its proxy go upstream as that account. You can close this tab.</p>\
         <p><a href=\"/ui/servers\">MCP servers</a></p></main>",
        escape(server)
    );
    Html(page("Account connected", "", &body, &[])).into_response()
}

/// A page that says what went wrong and what to do, with its code.
fn refusal(status: StatusCode, code: &str, message: &str) -> Response {
    let body = format!(
        "<main class=\"narrow\"><h1>hal0</h1><p class=\"err\" role=\"alert\">{}</p><p><code>{}</code></p></main>",
        with_code(message),
        escape(code)
    );
    (status, Html(page("Not signed in", "", &body, &[]))).into_response()
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
    // The cookie is Strict: every request that needs it comes from hal0's own pages (the
    // link's page spends the link with a same-origin request), so no cross-site navigation
    // or form ever carries the session.
    let secure = if state.config().network.tls_cert.is_some() { "; Secure" } else { "" };
    let cookie = format!(
        "{}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
        cookie_name(https(state)),
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

/// `GET /ui/login?token=…`: a one-time link's page, which spends the link with its own
/// same-origin request (so the cookie is set and then sent on same-site requests, even when
/// the link was clicked on another site or opened by a mail scanner, which runs no script);
/// an unknown, used or expired link is refused here. Without a token: the password form
/// when a password is set, else how to get a link.
pub async fn login(State(state): State<Arc<AppState>>, Query(q): Query<LoginQuery>) -> Response {
    if q.token.is_empty() {
        if form_offered(&state) {
            return Html(page("Sign in", "", LOGIN_FORM, &["login.js"])).into_response();
        }
        return sign_in_first(&state);
    }
    let checked = state.store.call(move |s| session::check_link(s, &q.token)).await;
    match checked {
        Ok(link) => {
            // The page says whom the link signs in and who made it.
            let whom = match &link.person {
                Some(p) => format!("as <strong>{}</strong> ", escape(p)),
                None => String::new(),
            };
            let body = LINK_PAGE.replace("{whom}", &whom).replace("{by}", &escape(&link.created_by));
            let mut r = Html(page("Signing in", "", &body, &["link.js"])).into_response();
            r.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
            r
        }
        Err(e) => refusal(StatusCode::FORBIDDEN, e.code, &e.message),
    }
}

/// What the link's page shows while its script signs in (or why it could not).
const LINK_PAGE: &str = "<main class=\"narrow\"><h1>hal0</h1><p id=\"wait\" role=\"status\">Signing in {whom}…</p>\
     <p class=\"meta\" id=\"minted\">Link made by <code>{by}</code>.</p>\
     <p id=\"error\" class=\"err\" role=\"alert\" hidden></p><noscript><p class=\"err\">Signing in needs \
     JavaScript on for this page.</p></noscript></main>";

/// `POST /ui/login` (JSON: a cross-site form cannot send it): `{"token": …}` from a link's
/// page, `{"password": …}` (the box-wide one) or `{"name": …, "password": …}` (a
/// person's) from the form, or `{"passkey": {"request": …, "credential": …}}` answering
/// `POST /ui/login/passkey`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignIn {
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    passkey: Option<PasskeyAnswer>,
}

/// A passkey's answer to the challenge `request` named.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PasskeyAnswer {
    request: String,
    credential: crate::auth::passkey::Assertion,
}

/// Wrong passwords of this daemon, for [`password::Throttle`].
static FAILURES: std::sync::LazyLock<password::Throttle> = std::sync::LazyLock::new(Default::default);

/// `POST /ui/login`: a session (its cookie) for a one-time link's token or the right
/// password; sign-ins are audited, and password guesses throttled ([`password::attempt`]).
pub async fn password_login(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<axum::Json<SignIn>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let invalid = || {
        crate::base::error::Error::invalid(
            "ui.invalid_request",
            "send {\"token\": \"…\"}, {\"name\": \"…\", \"password\": \"…\"} or {\"passkey\": {…}} as application/json",
        )
        .into_response()
    };
    let Ok(axum::Json(body)) = body else { return invalid() };
    let ua = user_agent(&headers);
    let outcome = match body {
        SignIn { token: Some(token), password: None, name: None, passkey: None } => {
            state.store.call(move |s| session::redeem(s, &token, &ua)).await
        }
        SignIn { password: Some(pw), token: None, name, passkey: None } => {
            let name = name.filter(|n| !n.trim().is_empty()).map(|n| n.trim().to_string());
            let refused = match &name {
                None => password::attempt_box(&FAILURES, &state.paths, pw).await.err(),
                Some(n) => {
                    let (store, n) = (state.store.clone(), n.clone());
                    password::attempt(&FAILURES, move || password::verify_person(&store, &n, &pw)).await.err()
                }
            };
            let person = name.unwrap_or_else(|| crate::auth::people::OWNER.to_string());
            state
                .store
                .call(move |s| {
                    let o = session::Opening { person: Some(&person), via: "password", user_agent: &ua };
                    session::proven(s, &o, refused)
                })
                .await
        }
        SignIn { passkey: Some(answer), token: None, password: None, name: None } => {
            let rp = crate::auth::passkey::Relying::of(&state.config(), host(&headers));
            let ops = state.ops.clone();
            state
                .store
                .call(move |s| {
                    let ctx = crate::ops::Ctx::remote(ops, "ui:anonymous");
                    let proven =
                        rp.and_then(|rp| crate::ops::people::sign_in(&ctx, &rp, &answer.request, &answer.credential));
                    let (person, refused) = match proven {
                        Ok(p) => (Some(p), None),
                        Err(e) => (None, Some(e)),
                    };
                    let o = session::Opening { person: person.as_deref(), via: "passkey", user_agent: &ua };
                    session::proven(s, &o, refused)
                })
                .await
        }
        _ => return invalid(),
    };
    match outcome {
        Ok((_, token)) => signed_in(&state, &token, axum::Json(serde_json::json!({"signed_in": true})).into_response()),
        Err(e) => e.into_response(),
    }
}

/// The request's `Host` (the guard let only allowed hosts in).
pub(super) fn host(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::HOST).and_then(|v| v.to_str().ok())
}

/// `POST /ui/login/passkey`: the options a browser signs in with a passkey by (a challenge
/// for one sign-in, a few minutes long).
pub async fn passkey_options(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let ctx = crate::ops::Ctx::remote(state.ops.clone(), "ui:anonymous");
    let options = crate::auth::passkey::Relying::of(&state.config(), host(&headers))
        .and_then(|rp| crate::ops::people::sign_in_options(&ctx, &rp));
    match options {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

fn person(req: &Request) -> Option<Session> {
    match req.extensions().get::<Caller>().map(|c| &c.cred) {
        Some(crate::auth::Credential::Person(p)) => Some(p.clone()),
        _ => None,
    }
}

/// Dashboard page `path` for the request's person (the header and `{session}` filled in,
/// the CSRF token in `<meta name="csrf-token">`, the shared script before the page's own),
/// never cached; for anyone else, how to sign in.
fn for_person(state: &AppState, req: &Request, path: &str) -> Response {
    let Some(p) = person(req) else { return sign_in_first(state) };
    let Some((_, title, template, script)) = PAGES.iter().chain([&ACCOUNT]).find(|(at, ..)| *at == path) else {
        return refusal(StatusCode::NOT_FOUND, "not_found", "no such page");
    };
    let body = template.replace("{nav}", &header(path, &p)).replace("{session}", &escape(&p.id));
    let head = format!("<meta name=\"csrf-token\" content=\"{}\">", escape(&p.csrf));
    let mut r = Html(page(title, &head, &body, &["common.js", script])).into_response();
    r.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    r
}

/// `GET /ui/` and every other dashboard page (`/ui/runs`, `/ui/conversations`,
/// `/ui/servers`, `/ui/clients`, `/ui/activity`, `/ui/health`).
pub async fn show(State(state): State<Arc<AppState>>, req: Request) -> Response {
    let path = req.uri().path().to_string();
    for_person(&state, &req, &path)
}

/// The paths of the dashboard's pages (the router mounts [`show`] at each).
pub fn paths() -> impl Iterator<Item = &'static str> {
    PAGES.iter().chain([&ACCOUNT]).map(|(path, ..)| *path)
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
    let secure = if state.config().network.tls_cert.is_some() { "; Secure" } else { "" };
    let gone = format!("{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}", cookie_name(https(&state)));
    (StatusCode::NO_CONTENT, [(header::SET_COOKIE, gone)]).into_response()
}

const LOGIN_FORM: &str = include_str!("assets/login.html");

/// The files under `/ui/assets/`: name, media type, content. `common.js` is what every
/// page's script starts with: `$`, `el` (an element with attributes and children),
/// `showError`, `api` (a same-origin JSON call that carries the CSRF token on a change and
/// reloads to the sign-in page on a 401), a few table and form helpers, and the sign-out
/// button.
const ASSETS: &[(&str, &str, &str)] = &[
    ("style.css", "text/css; charset=utf-8", include_str!("assets/style.css")),
    ("common.js", JS, include_str!("assets/common.js")),
    ("login.js", JS, include_str!("assets/login.js")),
    ("link.js", JS, include_str!("assets/link.js")),
    ("inbox.js", JS, include_str!("assets/inbox.js")),
    ("runs.js", JS, include_str!("assets/runs.js")),
    ("conversations.js", JS, include_str!("assets/conversations.js")),
    ("servers.js", JS, include_str!("assets/servers.js")),
    ("clients.js", JS, include_str!("assets/clients.js")),
    ("activity.js", JS, include_str!("assets/activity.js")),
    ("health.js", JS, include_str!("assets/health.js")),
    ("consent.js", JS, include_str!("assets/consent.js")),
    ("account.js", JS, include_str!("assets/account.js")),
];
const JS: &str = "text/javascript; charset=utf-8";

/// `GET /ui/assets/{name}`: a dashboard script or the style sheet (no secrets: served to
/// anyone; revalidated on each use, so an upgrade's files are the ones run).
pub async fn asset(axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    match ASSETS.iter().find(|(n, ..)| *n == name) {
        Some((_, media, body)) => {
            ([(header::CONTENT_TYPE, *media), (header::CACHE_CONTROL, "no-cache")], *body).into_response()
        }
        None => refusal(StatusCode::NOT_FOUND, "not_found", "no such file"),
    }
}

/// The dashboard's pages: path, menu label, template, script (under `/ui/assets/`).
const PAGES: &[(&str, &str, &str, &str)] = &[
    ("/ui/", "Approvals", include_str!("assets/inbox.html"), "inbox.js"),
    ("/ui/runs", "Runs", include_str!("assets/runs.html"), "runs.js"),
    ("/ui/conversations", "Conversations", include_str!("assets/conversations.html"), "conversations.js"),
    ("/ui/servers", "MCP servers", include_str!("assets/servers.html"), "servers.js"),
    ("/ui/clients", "Clients", include_str!("assets/clients.html"), "clients.js"),
    ("/ui/activity", "Activity", include_str!("assets/activity.html"), "activity.js"),
    ("/ui/health", "Health", include_str!("assets/health.html"), "health.js"),
];

/// The person's own page: who they are, how they signed in, their passkeys (reached from
/// the name in the header, not the menu).
const ACCOUNT: (&str, &str, &str, &str) = ("/ui/account", "You", include_str!("assets/account.html"), "account.js");

/// The header every signed-in page has: the menu (`current` marked), who is signed in (a
/// link to their page), sign out.
fn header(current: &str, p: &Session) -> String {
    let links: Vec<String> = PAGES
        .iter()
        .map(|(path, label, ..)| {
            let here = if *path == current { " aria-current=\"page\"" } else { "" };
            // The inbox's link carries the count of waiting cards (common.js keeps it live).
            let badge = if *path == "/ui/" {
                " <span id=\"pending-count\" class=\"count\" aria-label=\"waiting\" hidden></span>"
            } else {
                ""
            };
            format!("<a href=\"{path}\"{here}>{label}{badge}</a>")
        })
        .collect();
    format!(
        "<header><h1>hal0</h1><nav aria-label=\"Pages\">{}</nav><a class=\"who\" href=\"/ui/account\" \
         title=\"session {}\">{}</a><button id=\"logout\" type=\"button\">Sign out</button></header>",
        links.join(" "),
        escape(&p.id),
        escape(&p.person.clone().unwrap_or_else(|| format!("session {}", p.id)))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_by_name() {
        let mut h = HeaderMap::new();
        h.append(header::COOKIE, "a=1; hal0_session=hal0us_x".parse().unwrap());
        assert_eq!(cookies(&h, "hal0_session"), ["hal0us_x"]);
        assert!(cookies(&h, "b").is_empty());
        // A second session cookie (one set by another page of this host) is refused.
        assert_eq!(session_token(false, &h).unwrap().as_deref(), Some("hal0us_x"));
        h.append(header::COOKIE, "hal0_session=hal0us_tossed".parse().unwrap());
        assert_eq!(session_token(false, &h).unwrap_err().code, "ui.session_ambiguous");
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }

    /// Every page's script is served, and no page or refusal has inline script or style
    /// (the CSP would block it: `script-src 'self'`, `style-src 'self'`).
    #[test]
    fn pages_hold_no_inline_script_or_style() {
        for (path, _, template, script) in PAGES {
            assert!(ASSETS.iter().any(|(n, ..)| n == script), "{path}: {script} is not served");
            let html = page("t", "", template, &["common.js", script]);
            for inline in ["<script>", "<style", "style=", " onclick=", " onload=", "javascript:"] {
                assert!(!html.contains(inline), "{path} has {inline}");
            }
        }
        for html in [page("t", "", LOGIN_FORM, &["login.js"]), page("t", "", LINK_PAGE, &["link.js"])] {
            assert!(!html.contains("<script>") && !html.contains("<style") && !html.contains("style="), "{html}");
        }
        for (name, ..) in ASSETS {
            assert!(!name.contains('/'), "{name}");
        }
    }
}
