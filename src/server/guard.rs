//! The one middleware every request passes: request hygiene (host and origin allowlists,
//! JSON-only writes, the bounded body read: `hygiene`), mount availability, credential resolution and the tier decision, the caller extension
//! handlers read, and revocation of open SSE streams.

use super::AppState;
use crate::auth::{Credential, Decision, RouteClass, decide};
use crate::base::actor::Actor;
use crate::base::error::Error;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Who is calling, as the guard resolved it; handlers and MCP tools read this.
#[derive(Debug, Clone)]
pub struct Caller {
    pub cred: Credential,
    /// Client name for a bridge key, `X-hal0-Agent` (or `anonymous`) for box keys.
    pub identity: String,
    /// `X-hal0-Private: 1|true`.
    pub private: bool,
    /// The key-change count `cred` was resolved under ([`super::revoke::seen`]).
    pub seen: u64,
}

impl Caller {
    /// The caller as the audit log names it: `bridge:<client>` for a bridge key or an OAuth
    /// grant, else the box key's tier and agent header (`admin:<agent>`, `client:<agent>`),
    /// else the resolved identity.
    pub fn audit_identity(&self) -> String {
        match (&self.cred, self.cred.as_bridge()) {
            (_, Some(b)) => Actor::Bridge(b.name.clone()).to_string(),
            (Credential::Admin, _) => Actor::Admin(self.identity.clone()).to_string(),
            (Credential::Client, _) => Actor::Client(self.identity.clone()).to_string(),
            _ => self.identity.clone(),
        }
    }

    /// The caller as the agent bridge sees it: a bridge client (runs of its own), or the
    /// admin key (every client's runs); `None` for any other credential.
    pub fn bridge_asker(&self) -> Option<crate::bridge::Asker> {
        match (self.cred.as_bridge(), &self.cred) {
            (Some(b), _) => Some(crate::bridge::Asker { client: b.name.clone(), admin: false }),
            (None, Credential::Admin) => Some(crate::bridge::Asker::admin()),
            _ => None,
        }
    }

    /// The caller as the relay sees it: a bridge client, and whether its key may also start
    /// runs (the `agents` scope, which asking a local Hermes profile takes).
    pub fn relay_asker(&self) -> Option<crate::relay::Asker> {
        self.cred.as_bridge().map(|c| crate::relay::Asker {
            client: c.name.clone(),
            runs: c.scopes.contains(&crate::auth::bridge::Scope::Agents),
        })
    }
}

/// The key a route class takes, in words, and how to make one on the box.
fn key_advice(class: RouteClass) -> &'static str {
    match class {
        RouteClass::Agents => "a bridge key (on the box: hal0 bridge add NAME --scope agents)",
        RouteClass::Memory => "a bridge key with the memory scope (on the box: hal0 bridge add NAME --scope memory)",
        RouteClass::AdminMcp => "a bridge key with the admin scope (on the box: hal0 bridge add NAME --scope admin)",
        RouteClass::Relay => "a bot's bridge key (on the box: hal0 bridge add NAME --scope relay)",
        RouteClass::Proxy => "a consumer key of this server (on the box: hal0 mcp keys add SERVER NAME)",
        RouteClass::BridgeSelf => "a bridge key",
        RouteClass::Admin | RouteClass::Open => "the admin key (HAL0_ADMIN_KEY in api.env)",
        RouteClass::Decide | RouteClass::Page => "a dashboard session (hal0 ui login on the box)",
    }
}

/// 401 for an MCP request without a valid key: the `WWW-Authenticate` challenge (RFC 6750,
/// with what to do in `error_description`) and a JSON body saying the same, so a person
/// reading a client's error learns which key to send and where to get one. hal0 takes
/// bearer keys only; it serves no OAuth metadata.
fn unauthorized(class: RouteClass, sent: bool) -> Response {
    let what = if sent { "the key sent is not valid here" } else { "no key was sent" };
    let message = format!(
        "{what}: send `Authorization: Bearer <key>` with {}; with Claude Code: \
         claude mcp add --transport http NAME URL --header \"Authorization: Bearer <key>\" \
         (hal0 takes bearer keys, not OAuth)",
        key_advice(class)
    );
    let challenge = format!(
        "Bearer realm=\"hal0\", error=\"invalid_token\", error_description=\"{}\"",
        message.replace(['"', '\\'], "'")
    );
    let body = serde_json::json!({"error": {"code": "auth.key_required", "message": message}});
    let mut r = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    if let Ok(v) = challenge.parse() {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

pub async fn guard(State(state): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let class = RouteClass::of(&path);
    let oauth_mount = crate::auth::oauth::mount_of_path(&path);
    let is_mcp = path == "/mcp" || path.starts_with("/mcp/") || oauth_mount.is_some();

    match super::hygiene::check_origin(&state, &req) {
        Ok(()) => {}
        Err(super::hygiene::Refusal::Host) => {
            return (StatusCode::MISDIRECTED_REQUEST, "Invalid Host header").into_response();
        }
        Err(super::hygiene::Refusal::Error(e)) => return e.into_response(),
    }
    let oauth_on = state.config().oauth.enabled;
    if (path == "/oauth" || path.starts_with("/oauth/")) && !oauth_on {
        return crate::auth::oauth::off().into_response();
    }
    if !(oauth_on && crate::auth::oauth::is_own_metadata(&path))
        && let Some(r) = super::hygiene::no_oauth(&path)
    {
        return r;
    }
    if let Err(e) = super::hygiene::check_media_type(&req) {
        return e.into_response();
    }
    let mount = match class {
        RouteClass::Agents => Some("agents"),
        RouteClass::Memory => Some("memory"),
        RouteClass::Relay => Some("relay"),
        _ => None,
    };
    let disabled = mount.and_then(crate::connect::Mount::named).is_some_and(|m| !m.enabled(&state.config()));
    if disabled {
        return super::rest::not_found().await.into_response();
    }
    if is_mcp
        && (is_mount_root(&path) || oauth_mount.is_some_and(|m| path.trim_end_matches('/') == format!("/oauth/{m}")))
    {
        return super::rest::mount_root().await;
    }

    let auth = req.headers().get(header::AUTHORIZATION).map(|v| v.to_str().unwrap_or("\u{0}").to_string());
    let agent = req.headers().get("x-hal0-agent").and_then(|v| v.to_str().ok()).map(str::to_string);
    let private = req
        .headers()
        .get("x-hal0-private")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));

    let seen = super::revoke::seen(&state);
    let (cred, armed) = if class == RouteClass::Open {
        (Credential::None, false)
    } else {
        match resolve(&state, auth.clone()).await {
            Ok(x) => x,
            Err(e) => {
                tracing::error!(code = e.code, "credential check failed: {}", e.message);
                return e.into_response();
            }
        }
    };
    // No key: a dashboard session's cookie may name a person.
    let cred = match cred {
        Credential::None => match crate::ui::pages::person_of(&state, req.headers()).await {
            Ok(Some(p)) => Credential::Person(p),
            Ok(None) => Credential::None,
            Err(e) => return e.into_response(),
        },
        other => other,
    };
    if let Credential::Person(p) = &cred
        && !req.method().is_safe()
        && !req
            .headers()
            .get(crate::auth::session::CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| crate::base::token::ct_eq(t, &p.csrf))
    {
        tracing::info!(path, cred = cred.label(), "refused: no CSRF token");
        return Error::forbidden_code(
            "ui.csrf_required",
            "a dashboard request that changes something carries its page's CSRF token (X-CSRF-Token); reload the page",
        )
        .into_response();
    }
    // An OAuth mount always wants a credential, auth armed or not (behind a tunnel on the
    // box, the whole internet is a loopback peer): the challenge starts OAuth discovery.
    if let Some(m) = oauth_mount
        && cred == Credential::None
    {
        return super::oauth::challenge(&state, m, false, None);
    }
    // Auth off: anonymous callers are the box itself, or (reads only) whoever the operator
    // let in with allow_unauthenticated.
    if class != RouteClass::Open {
        let peer = req.extensions().get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0.ip());
        let allow = state.config().network.allow_unauthenticated;
        let write = !req.method().is_safe();
        if let Some(e) = crate::auth::exposure::refusal(peer, armed, allow, &cred, class, write) {
            tracing::info!(path, peer = ?peer, "refused: {}", e.message);
            return e.into_response();
        }
    }
    // An OAuth token opens only the resource it was issued for (RFC 8707): never a key URL,
    // never another mount.
    if let Credential::Grant(g) = &cred
        && oauth_mount != Some(g.mount.as_str())
    {
        let why = format!(
            "this OAuth token was issued for hal0-{} at /oauth/{}/mcp and opens nothing else",
            g.mount, g.mount
        );
        tracing::info!(path, cred = cred.label(), "refused: a token for another resource");
        return match oauth_mount {
            Some(m) => super::oauth::challenge(&state, m, true, Some(&why)),
            None => Error::unauthorized("auth.token_required", why).into_response(),
        };
    }
    let decision = decide(class, &cred, armed);
    if class == RouteClass::Decide && decision != Decision::Allow && path.starts_with("/oauth/") {
        tracing::info!(path, cred = cred.label(), "refused: a person consents");
        let msg = "a person consents, on this consent page signed in to the dashboard (hal0 ui login on the box); \
                   no key, token or tool can";
        return if decision == Decision::Unauthorized {
            Error::unauthorized("oauth.person_required", msg).into_response()
        } else {
            Error::forbidden_code("oauth.person_required", msg).into_response()
        };
    }
    if class == RouteClass::Decide && decision != Decision::Allow {
        tracing::info!(path, cred = cred.label(), "refused: a person decides");
        let e = if decision == Decision::Unauthorized {
            Error::unauthorized("approvals.person_required", crate::auth::principal::PERSON_DECIDES)
        } else {
            Error::forbidden_code("approvals.person_required", crate::auth::principal::PERSON_DECIDES)
        };
        return e.into_response();
    }
    if decision == Decision::Unauthorized {
        // Failed logins are what an operator greps the journal for (and what fail2ban reads).
        tracing::info!(path, key_sent = auth.is_some(), "refused: no valid key (401)");
    }
    match decision {
        Decision::Allow => {}
        // Spec 001: a REST 401 is bare. An MCP client shows its user what the server said,
        // so an MCP mount says which key to send (issue 15).
        Decision::Unauthorized if !is_mcp => {
            let mut r = StatusCode::UNAUTHORIZED.into_response();
            r.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
            return r;
        }
        Decision::Unauthorized if oauth_mount.is_some() => {
            return super::oauth::challenge(&state, oauth_mount.unwrap_or_default(), auth.is_some(), None);
        }
        Decision::Unauthorized => return unauthorized(class, auth.is_some()),
        Decision::Forbidden(msg) => {
            tracing::info!(path, cred = cred.label(), "refused: {msg}");
            return Error::forbidden(msg).into_response();
        }
    }
    if class == RouteClass::Proxy {
        match proxy_target(&state, &path, &cred, agent.as_deref()) {
            Ok(served) => {
                req.extensions_mut().insert(crate::mcp::proxy::ProxyTarget(served));
            }
            Err(e) => {
                tracing::info!(path, cred = cred.label(), "refused: {}", e.message);
                return e.into_response();
            }
        }
    }
    if let Credential::Consumer(c) = &cred
        && state.should_touch(&format!("consumer:{}/{}", c.server, c.name))
    {
        let (store, server, name) = (state.store.clone(), c.server.clone(), c.name.clone());
        tokio::spawn(async move {
            if let Err(e) = store.call(move |s| crate::auth::consumers::touch(s, &server, &name)).await {
                tracing::warn!("cannot record last_used: {}", e.message);
            }
        });
    }
    if let Some(c) = cred.as_bridge()
        && state.should_touch(&c.name)
    {
        // Off the request path: a slow store must not delay the call.
        let (store, name) = (state.store.clone(), c.name.clone());
        tokio::spawn(async move {
            if let Err(e) = store.call(move |s| crate::auth::bridge::touch(s, &name)).await {
                tracing::warn!("cannot record last_seen: {}", e.message);
            }
        });
    }
    let (mut req, body) =
        match super::hygiene::buffer_body(req, std::time::Duration::from_secs(state.config().limits.body_timeout_secs))
            .await
        {
            Ok(r) => r,
            Err(e) => return e.into_response(),
        };
    // MCP sessions: a POST without a session id may open one, within the bounds.
    let session_id = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    let admission = match (&session_id, is_mcp && req.method() == axum::http::Method::POST) {
        (None, true) => match state.sessions.admit(&cred.label()) {
            Ok(a) => Some(a),
            Err(e) => {
                tracing::info!(path, cred = cred.label(), "refused: {}", e.message);
                return e.into_response();
            }
        },
        _ => None,
    };
    if let Some(id) = &session_id
        && let owner = cred.label()
        && !state.sessions.touch(id, &owner)
    {
        tracing::info!(path, cred = owner, "refused: a session another credential opened");
        return Error::not_found(
            "mcp.session_unknown",
            "no MCP session with this id was opened with this credential: start one (initialize without \
             Mcp-Session-Id)",
        )
        .into_response();
    }
    let ends_session = req.method() == axum::http::Method::DELETE;
    let identity = cred.identity(agent.as_deref());
    // A key is checked again during a stream; a session's page streams nothing yet.
    let watch = !matches!(cred, Credential::None | Credential::Person(_)) && class != RouteClass::Open;
    req.extensions_mut().insert(Caller { cred: cred.clone(), identity, private, seen });
    let is_post = req.method() == axum::http::Method::POST;
    let mut resp = next.run(req).await;
    if is_mcp && is_post {
        resp = super::hygiene::jsonrpc_refusal(resp, &body).await;
    }
    if ends_session && resp.status() == axum::http::StatusCode::ACCEPTED {
        // rmcp answers a session DELETE with 202; the Python SDK (so Hermes's MCP client)
        // takes only 200 or 204 and logs "Session termination failed" on every close.
        *resp.status_mut() = axum::http::StatusCode::NO_CONTENT;
    }
    if resp.status().is_success() {
        if let Some(a) = admission
            && let Some(id) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok())
        {
            a.opened(id);
        }
        if ends_session && let Some(id) = &session_id {
            state.sessions.closed(id);
        }
    }
    let is_sse = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if watch && is_sse {
        return super::revoke::wrap_stream(state, auth, cred, seen, resp);
    }
    resp
}

/// The installed server of a `/mcp/proxy/<id>/…` request, once the key is known to be for
/// it (a consumer key opens only its own server) and hal0 serves it.
fn proxy_target(
    state: &AppState,
    path: &str,
    cred: &Credential,
    agent: Option<&str>,
) -> crate::base::error::Result<Arc<crate::proxy::Served>> {
    let id = path.strip_prefix("/mcp/proxy/").and_then(|r| r.split('/').next()).unwrap_or("");
    if id.is_empty() {
        return Err(Error::not_found("mcp.not_found", "no server id in the proxy path (use /mcp/proxy/<id>/mcp)"));
    }
    if let Decision::Forbidden(why) = crate::auth::principal::decide_proxy(id, cred) {
        return Err(Error::forbidden(why));
    }
    // Whose delegated account the calls use, if the server has them: the same name the
    // proxy's approvals and audit give the caller.
    let holder = match cred {
        Credential::Consumer(k) => k.name.clone(),
        c => Actor::Admin(c.identity(agent)).to_string(),
    };
    state.proxy.record_as(id, Some(&holder))
}

/// `/mcp/<mount>` or `/mcp/<mount>/`: answered 405 before any credential check.
fn is_mount_root(path: &str) -> bool {
    let p = path.trim_end_matches('/');
    crate::connect::MOUNTS.iter().any(|m| p == m.root())
}

/// Check the credential against the current keys (re-read when `api.env` changed) and
/// the bridge table. Returns the credential and whether auth is armed.
pub async fn resolve(state: &Arc<AppState>, auth: Option<String>) -> crate::base::error::Result<(Credential, bool)> {
    let keys = state.keys.get()?;
    let armed = keys.armed();
    // Keys kept in the store are resolved off the async threads (an OAuth token too, though
    // the cache keeps only keys: a token expires on its own).
    let stored_key = |a: &str| {
        a.contains(crate::auth::bridge::KEY_PREFIX)
            || a.contains(crate::auth::consumers::KEY_PREFIX)
            || a.contains(crate::auth::oauth::ACCESS_PREFIX)
    };
    let cred = if auth.as_deref().is_some_and(stored_key) {
        let header = auth.unwrap_or_default();
        if let Some(c) = state.key_cache.get(&header) {
            return Ok((c, armed));
        }
        let stamp = state.key_cache.stamp();
        let h = header.clone();
        let c = state.store.call(move |s| Credential::resolve(Some(&h), &keys, s)).await?;
        state.key_cache.put(&header, &c, stamp);
        c
    } else {
        Credential::resolve(auth.as_deref(), &keys, &state.store)?
    };
    Ok((cred, armed))
}
