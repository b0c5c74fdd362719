//! The OAuth front: RFC 8414 and RFC 9728 metadata, dynamic registration (RFC 7591/7592),
//! the authorize endpoint (which sends the browser to the consent page,
//! `/ui/consent/<id>`), the consent page's reads and decisions, the token and revocation
//! endpoints, and the `401` challenge of the OAuth mounts. Each handler parses, calls one
//! op of [`crate::ops::oauth`] and answers in OAuth's own error shape
//! (`{"error", "error_description"}`); the rules live in the ops and `auth::oauth`.

use super::AppState;
use super::guard::Caller;
use crate::auth::oauth::clients::Registration;
use crate::auth::oauth::grants::{AuthorizeQuery, error_name};
use crate::base::actor::Actor;
use crate::base::error::Error;
use crate::ops::Ctx;
use crate::ops::oauth::{self as op, TokenRequest};
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine;
use serde_json::json;
use std::sync::Arc;

fn ctx(state: &Arc<AppState>, identity: impl Into<Arc<str>>) -> Ctx {
    Ctx::remote(state.ops.clone(), identity)
}

/// An error as OAuth clients read it (RFC 6749 §5.2), with hal0's code beside it.
pub fn oauth_error(e: &Error) -> Response {
    let status = match e.status() {
        401 => StatusCode::UNAUTHORIZED,
        404 => StatusCode::NOT_FOUND,
        429 => StatusCode::TOO_MANY_REQUESTS,
        500..=599 => StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        _ => StatusCode::BAD_REQUEST,
    };
    let body = json!({"error": error_name(e.code), "error_description": e.message, "code": e.code});
    let mut r = (status, axum::Json(body)).into_response();
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn json_ok(status: StatusCode, v: serde_json::Value) -> Response {
    let mut r = (status, axum::Json(v)).into_response();
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// `GET /.well-known/oauth-authorization-server/oauth`.
pub async fn metadata(State(state): State<Arc<AppState>>) -> Response {
    match op::metadata(&ctx(&state, "anonymous")) {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => oauth_error(&e),
    }
}

/// `GET /.well-known/oauth-protected-resource/oauth/{mount}/mcp`.
pub async fn resource_metadata(State(state): State<Arc<AppState>>, Path(mount): Path<String>) -> Response {
    match op::resource_metadata(&ctx(&state, "anonymous"), &mount) {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => oauth_error(&e),
    }
}

/// `POST /oauth/register` (RFC 7591), a JSON body.
pub async fn register(State(state): State<Arc<AppState>>, body: axum::body::Bytes) -> Response {
    let reg: Registration = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return oauth_error(&Error::invalid(
                "oauth.invalid_client_metadata",
                format!("the registration is not a JSON object of client metadata: {e}"),
            ));
        }
    };
    match op::register(&ctx(&state, "oauth:registration"), reg).await {
        Ok(v) => json_ok(StatusCode::CREATED, v),
        Err(e) => oauth_error(&e),
    }
}

fn bearer(headers: &HeaderMap) -> String {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(s, _)| s.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim().to_string())
        .unwrap_or_default()
}

/// `GET /oauth/register/{client_id}` (RFC 7592 read).
pub async fn registration(State(state): State<Arc<AppState>>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    match op::registration(&ctx(&state, Actor::Oauth(id.to_string())), id, bearer(&headers)).await {
        Ok(v) => json_ok(StatusCode::OK, v),
        Err(e) => oauth_error(&e),
    }
}

/// `DELETE /oauth/register/{client_id}` (RFC 7592 delete).
pub async fn unregister(State(state): State<Arc<AppState>>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    match op::unregister(&ctx(&state, Actor::Oauth(id.to_string())), id, bearer(&headers)).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => oauth_error(&e),
    }
}

/// `GET /oauth/authorize`: a well-formed request is kept and the browser goes to the
/// consent page; a refusal goes back to the client when its redirect URI is known good,
/// else a page says what is wrong.
pub async fn authorize(State(state): State<Arc<AppState>>, Query(q): Query<AuthorizeQuery>) -> Response {
    match op::begin(&ctx(&state, "anonymous"), q).await {
        Ok(id) => Redirect::to(&format!("/ui/consent/{id}")).into_response(),
        Err(r) => match r.back {
            Some(url) => Redirect::to(&url).into_response(),
            None => crate::ui::pages::refusal_page(
                StatusCode::BAD_REQUEST,
                r.error.code,
                &format!(
                    "{} (hal0 sends the browser nowhere: the client's request is not one it can trust)",
                    r.error.message
                ),
            ),
        },
    }
}

fn person(caller: &Caller) -> Option<String> {
    matches!(caller.cred, crate::auth::Credential::Person(_)).then(|| caller.identity.clone())
}

/// `GET /oauth/requests/{id}`: the request for the consent page, and whether a person is
/// signed in (with the session's CSRF token then).
pub async fn request(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Extension(caller): Extension<Caller>,
) -> Response {
    match op::request(&ctx(&state, caller.identity.clone()), id).await {
        Ok(view) => {
            let csrf = match &caller.cred {
                crate::auth::Credential::Person(p) => Some(p.csrf.clone()),
                _ => None,
            };
            json_ok(
                StatusCode::OK,
                json!({"request": view, "signed_in": csrf.is_some(), "person": person(&caller), "csrf": csrf}),
            )
        }
        Err(e) => e.into_response(),
    }
}

#[derive(serde::Deserialize)]
pub struct Decision {
    #[serde(default)]
    scopes: Vec<String>,
}

/// `POST /oauth/requests/{id}/approve` `{"scopes": [...]}`: a person only (the guard).
pub async fn approve(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Extension(caller): Extension<Caller>,
    body: axum::body::Bytes,
) -> Response {
    let d: Decision = match serde_json::from_slice(&body) {
        Ok(d) => d,
        Err(e) => {
            return Error::invalid("oauth.invalid_request", format!("the decision is not {{\"scopes\": [..]}}: {e}"))
                .into_response();
        }
    };
    match op::approve(&ctx(&state, caller.identity.clone()), id, d.scopes).await {
        Ok(url) => json_ok(StatusCode::OK, json!({"redirect": url})),
        Err(e) => e.into_response(),
    }
}

/// `POST /oauth/requests/{id}/deny`: a person only (the guard).
pub async fn deny(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Extension(caller): Extension<Caller>,
) -> Response {
    match op::deny(&ctx(&state, caller.identity.clone()), id).await {
        Ok(url) => json_ok(StatusCode::OK, json!({"redirect": url})),
        Err(e) => e.into_response(),
    }
}

/// `POST /oauth/requests/{id}/continue`: the browser that asked comes back for a request a
/// person decided in the approvals inbox (the request id is what it holds).
pub async fn resume(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response {
    match op::resume(&ctx(&state, "anonymous"), id).await {
        Ok(url) => json_ok(StatusCode::OK, json!({"redirect": url})),
        Err(e) => e.into_response(),
    }
}

/// The client id and secret of `Authorization: Basic` (RFC 6749 §2.3.1: form-encoded).
fn basic(headers: &HeaderMap) -> Option<(String, String)> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, b64) = v.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD.decode(b64.trim()).ok()?;
    let text = String::from_utf8(raw).ok()?;
    let (id, secret) = text.split_once(':')?;
    let dec = |s: &str| url::form_urlencoded::parse(format!("x={s}").as_bytes()).next().map(|(_, v)| v.into_owned());
    Some((dec(id)?, dec(secret)?))
}

fn form(body: &[u8]) -> std::collections::HashMap<String, String> {
    let mut m = std::collections::HashMap::new();
    for (k, v) in url::form_urlencoded::parse(body) {
        // A parameter sent twice is a malformed request (RFC 6749 §3.1); keep the mark.
        if m.insert(k.to_string(), v.to_string()).is_some() {
            m.insert("\u{0}dup".to_string(), k.to_string());
        }
    }
    m
}

fn form_error(headers: &HeaderMap) -> Option<Error> {
    let ct = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    (!ct.to_ascii_lowercase().starts_with("application/x-www-form-urlencoded"))
        .then(|| Error::invalid("oauth.invalid_request", "send the parameters as application/x-www-form-urlencoded"))
}

/// The client's credentials from the header or the form; `None` when both disagree.
fn client_auth(
    headers: &HeaderMap,
    f: &mut std::collections::HashMap<String, String>,
) -> Result<(String, Option<String>), Error> {
    let from_form = (f.remove("client_id").unwrap_or_default(), f.remove("client_secret"));
    match basic(headers) {
        Some((id, secret)) if from_form.0.is_empty() || from_form.0 == id => Ok((id, Some(secret))),
        Some(_) => Err(Error::invalid("oauth.invalid_request", "client_id differs between the form and HTTP Basic")),
        None => Ok(from_form),
    }
}

/// `POST /oauth/token`, a form.
pub async fn token(State(state): State<Arc<AppState>>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    if let Some(e) = form_error(&headers) {
        return oauth_error(&e);
    }
    let mut f = form(&body);
    if let Some(k) = f.get("\u{0}dup") {
        return oauth_error(&Error::invalid("oauth.invalid_request", format!("`{k}` is sent twice")));
    }
    let (client_id, client_secret) = match client_auth(&headers, &mut f) {
        Ok(x) => x,
        Err(e) => return oauth_error(&e),
    };
    let t = TokenRequest {
        grant_type: f.remove("grant_type").unwrap_or_default(),
        client_id: client_id.clone(),
        client_secret,
        code: f.remove("code"),
        redirect_uri: f.remove("redirect_uri"),
        code_verifier: f.remove("code_verifier"),
        refresh_token: f.remove("refresh_token"),
        scope: f.remove("scope"),
        resource: f.remove("resource"),
    };
    match op::token(&ctx(&state, Actor::Oauth(crate::auth::oauth::shown(&client_id, 60))), t).await {
        Ok(tokens) => json_ok(StatusCode::OK, serde_json::to_value(tokens).unwrap_or_default()),
        Err(e) => oauth_error(&e),
    }
}

/// `POST /oauth/revoke` (RFC 7009), a form: 200 whether or not the token was known.
pub async fn revoke(State(state): State<Arc<AppState>>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    if let Some(e) = form_error(&headers) {
        return oauth_error(&e);
    }
    let mut f = form(&body);
    let (client_id, secret) = match client_auth(&headers, &mut f) {
        Ok(x) => x,
        Err(e) => return oauth_error(&e),
    };
    let Some(token) = f.remove("token") else {
        return oauth_error(&Error::invalid("oauth.invalid_request", "token is missing"));
    };
    if client_id.is_empty() {
        return oauth_error(&Error::invalid("oauth.invalid_request", "client_id is missing"));
    }
    match op::revoke(&ctx(&state, Actor::Oauth(crate::auth::oauth::shown(&client_id, 60))), client_id, secret, token)
        .await
    {
        Ok(()) => json_ok(StatusCode::OK, json!({})),
        Err(e) => oauth_error(&e),
    }
}

/// The `401` of an OAuth mount: where its resource metadata is (RFC 9728 §5.1), the scope
/// it needs, and with a token that is not good here, `invalid_token` and why.
pub fn challenge(state: &AppState, mount: &str, sent: bool, why: Option<&str>) -> Response {
    let Ok(i) = crate::auth::oauth::Issuer::of(&state.config()) else {
        return oauth_error(&crate::auth::oauth::off());
    };
    let scope = crate::auth::oauth::mount_scope(mount).map(|s| s.as_str()).unwrap_or("agents");
    let mut value = format!("Bearer resource_metadata=\"{}\", scope=\"{scope}\"", i.resource_metadata(mount));
    let message = match (sent, why) {
        (_, Some(w)) => w.to_string(),
        (true, None) => "the token is unknown, expired or revoked: refresh it or authorize again".to_string(),
        (false, None) => {
            format!("this MCP server takes OAuth: authorize at {} (a person consents on the box's page)", i.issuer())
        }
    };
    if sent {
        value.push_str(&format!(
            ", error=\"invalid_token\", error_description=\"{}\"",
            message.replace(['"', '\\'], "'")
        ));
    }
    let body = json!({"error": {"code": "auth.token_required", "message": message}});
    let mut r = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    if let Ok(v) = HeaderValue::from_str(&value) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

/// `GET /upstream-oauth/callback`: an upstream authorization server sends the person's browser back
/// here after they approved (or refused) connecting an account (hal0 as the client).
pub async fn upstream_callback(
    State(state): State<Arc<AppState>>,
    Query(q): Query<crate::registry::oauth::flow::Callback>,
) -> Response {
    match crate::ops::accounts::callback(&ctx(&state, "oauth:callback"), q).await {
        Ok(server) => crate::ui::pages::account_connected(&server),
        Err(e) => {
            let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
            crate::ui::pages::refusal_page(status, e.code, &crate::base::redact::redact(&e.message))
        }
    }
}

/// `GET /upstream-oauth/start/{token}`: a consumer of a server with delegated accounts
/// opens the link its call's error carried; the connect of its own account begins and the
/// browser goes on to the upstream's authorization page (303).
pub async fn upstream_start(
    State(state): State<Arc<AppState>>,
    axum::extract::Path(token): axum::extract::Path<String>,
) -> Response {
    match crate::ops::accounts::start(&ctx(&state, "oauth:link"), &token).await {
        Ok(b) => {
            let mut r = StatusCode::SEE_OTHER.into_response();
            if let Ok(v) = HeaderValue::from_str(&b.authorize_url) {
                r.headers_mut().insert(header::LOCATION, v);
            }
            r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r.headers_mut().insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
            r
        }
        Err(e) => {
            let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
            crate::ui::pages::refusal_page(status, e.code, &crate::base::redact::redact(&e.message))
        }
    }
}

/// `GET /upstream-oauth/client.json`: hal0's Client ID Metadata Document, for authorization servers
/// that take one (served when `network.public_url` is https).
pub async fn client_document(State(state): State<Arc<AppState>>) -> Response {
    match crate::registry::oauth::client_doc(&state.ops.config()) {
        Some(v) => axum::Json(v).into_response(),
        None => oauth_error(&Error::not_found(
            "oauth.unknown_resource",
            "hal0 publishes its client metadata only at an https network.public_url",
        )),
    }
}
