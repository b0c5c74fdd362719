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

/// Dashboard page `path` for the request's person (the header, its `{csrf}` and
/// `{session}` filled in, the shared script first), never cached; for anyone else, how to
/// sign in.
fn for_person(req: &Request, path: &str) -> Response {
    let Some(p) = person(req) else { return sign_in_first() };
    let Some((_, title, template)) = PAGES.iter().find(|(at, _, _)| *at == path) else {
        return refusal(StatusCode::NOT_FOUND, "not_found", "no such page");
    };
    let body = template
        .replace("{nav}", &header(path, &p.id))
        .replace("{common}", COMMON_JS)
        .replace("{csrf}", &escape(&p.csrf))
        .replace("{session}", &escape(&p.id));
    let mut r = Html(page(title, &body)).into_response();
    r.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    r
}

/// `GET /ui/` and every other dashboard page (`/ui/runs`, `/ui/conversations`,
/// `/ui/servers`, `/ui/clients`, `/ui/activity`, `/ui/health`).
pub async fn show(req: Request) -> Response {
    let path = req.uri().path().to_string();
    for_person(&req, &path)
}

/// The paths of the dashboard's pages (the router mounts [`show`] at each).
pub fn paths() -> impl Iterator<Item = &'static str> {
    PAGES.iter().map(|(path, _, _)| *path)
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

const CSS: &str = include_str!("assets/style.css");
const LOGIN_FORM: &str = include_str!("assets/login.html");
/// What every page's script starts with: `$`, `el` (an element with attributes and
/// children), `showError`, `api` (a same-origin JSON call that carries the CSRF token on a
/// change and reloads to the sign-in page on a 401), a few table and form helpers, and
/// the sign-out button.
const COMMON_JS: &str = include_str!("assets/common.js");

/// The dashboard's pages: path, menu label, title, template.
const PAGES: &[(&str, &str, &str)] = &[
    ("/ui/", "Approvals", include_str!("assets/inbox.html")),
    ("/ui/runs", "Runs", include_str!("assets/runs.html")),
    ("/ui/conversations", "Conversations", include_str!("assets/conversations.html")),
    ("/ui/servers", "MCP servers", include_str!("assets/servers.html")),
    ("/ui/clients", "Clients", include_str!("assets/clients.html")),
    ("/ui/activity", "Activity", include_str!("assets/activity.html")),
    ("/ui/health", "Health", include_str!("assets/health.html")),
];

/// The header every signed-in page has: the menu (`current` marked), the session, sign out.
fn header(current: &str, session: &str) -> String {
    let links: Vec<String> = PAGES
        .iter()
        .map(|(path, label, _)| {
            let here = if *path == current { " aria-current=\"page\"" } else { "" };
            format!("<a href=\"{path}\"{here}>{label}</a>")
        })
        .collect();
    format!(
        "<header><h1>hal0</h1><nav aria-label=\"Pages\">{}</nav><span class=\"who\">session {}</span>\
         <button id=\"logout\" type=\"button\">Sign out</button></header>",
        links.join(" "),
        escape(session)
    )
}

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
