//! The A2A 1.0 face (issue 38): each Hermes profile hal0 serves is an A2A agent. Its Agent
//! Card is public; its JSON-RPC interface takes the same keys as hal0-agents (a bridge
//! key, whose `agents` scope every bridge client holds, or the admin key) and the same
//! rules, because an A2A task *is* a hal0 run: the same ledger, idempotency, per-client
//! cap, isolation between clients, redaction, approvals inbox and audit log.
//!
//! Routes (the guard classes `/a2a/…` as the agents mount, the cards as open):
//!
//! - `GET /.well-known/agent-card.json`: the default profile's card;
//! - `GET /a2a/hermes[/<profile>]/.well-known/agent-card.json`: a profile's card;
//! - `POST /a2a/hermes[/<profile>]`: the JSON-RPC binding ([`rpc`]);
//! - `/a2a/rest/hermes[.<profile>]/…`: the HTTP+JSON binding ([`rest`]);
//! - `GET /a2a/relay/<bot>/.well-known/agent-card.json`, `POST /a2a/relay/<bot>`: a relay
//!   bot an operator listed in `[relay].a2a_bots` ([`relay`]), asked with a relay key;
//! - `GET /a2a/agents`: every card this box publishes.
//!
//! Like hal0-agents, the profiles' face is served while `[bridge].enabled` is on, the bots'
//! while `[relay].enabled` is. A front: it translates, and the rules stay in
//! [`crate::bridge`] and [`crate::relay`].

pub mod card;
pub mod methods;
pub mod relay;
pub mod rest;
pub mod rpc;
pub mod stream;
pub mod task;

use crate::server::AppState;
use crate::server::guard::Caller;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::sync::Arc;

/// The A2A protocol version hal0 speaks.
pub const VERSION: &str = "1.0";
/// Where a card is, under an agent's base URL.
pub const CARD_PATH: &str = crate::ops::relay::CARD_PATH;

/// The index of every card, on `app` (served whichever faces are on).
pub fn index_route(app: Router<Arc<AppState>>) -> Router<Arc<AppState>> {
    app.route("/a2a/agents", get(index))
}

/// The relay bots' routes, on `app`.
pub fn relay_routes(app: Router<Arc<AppState>>) -> Router<Arc<AppState>> {
    app.route(&format!("/a2a/relay/{{bot}}{CARD_PATH}"), get(bot_card)).route("/a2a/relay/{bot}", post(bot_rpc))
}

/// The Hermes profiles' routes, on `app`.
pub fn routes(app: Router<Arc<AppState>>) -> Router<Arc<AppState>> {
    rest::routes(app)
        .route(CARD_PATH, get(default_card))
        .route(&format!("/a2a/hermes{CARD_PATH}"), get(default_card))
        .route(&format!("/a2a/hermes/{{profile}}{CARD_PATH}"), get(profile_card))
        .route("/a2a/hermes", post(default_rpc))
        .route("/a2a/hermes/{profile}", post(profile_rpc))
}

/// `hermes` or `hermes/<profile>`.
fn agent(profile: Option<&str>) -> String {
    match profile {
        Some(p) => format!("hermes/{p}"),
        None => "hermes".into(),
    }
}

/// The URL this box is reached at, for the card: `[network].public_url`, else the scheme
/// and the `Host` the request came with (the host allowlist has passed it).
fn base(state: &AppState, headers: &HeaderMap) -> String {
    let cfg = state.config();
    if let Some(u) = &cfg.network.public_url {
        return u.trim_end_matches('/').to_string();
    }
    let scheme = if cfg.network.tls_cert.is_some() { "https" } else { "http" };
    let host = headers.get(axum::http::header::HOST).and_then(|v| v.to_str().ok());
    match host {
        Some(h) => format!("{scheme}://{h}"),
        None => crate::connect::base_url(&cfg).0,
    }
}

async fn card_of(state: Arc<AppState>, headers: HeaderMap, profile: Option<String>) -> Response {
    let agent = agent(profile.as_deref());
    let found = state.bridge.get().map(|b| b.profiles().get(&agent));
    match found {
        Some(Ok(p)) => no_cache(axum::Json(card::card(&p, &base(&state, &headers))).into_response()),
        Some(Err(e)) => e.into_response(),
        None => crate::server::rest::not_found().await.into_response(),
    }
}

async fn default_card(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    card_of(state, headers, None).await
}

async fn profile_card(State(state): State<Arc<AppState>>, Path(profile): Path<String>, headers: HeaderMap) -> Response {
    card_of(state, headers, Some(profile)).await
}

async fn rpc_of(
    state: Arc<AppState>,
    caller: Caller,
    profile: Option<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let agent = agent(profile.as_deref());
    if let Some(Err(e)) = state.bridge.get().map(|b| b.profiles().get(&agent)) {
        return e.into_response();
    }
    rpc::handle(state, caller, rpc::Target::Hermes(agent), headers, body).await
}

async fn bot_card(State(state): State<Arc<AppState>>, Path(bot): Path<String>, headers: HeaderMap) -> Response {
    match crate::ops::relay::published(&state, &bot).await {
        Ok(true) => no_cache(axum::Json(relay::card(&bot, &base(&state, &headers))).into_response()),
        Ok(false) => crate::server::rest::not_found().await.into_response(),
        Err(e) => e.into_response(),
    }
}

async fn bot_rpc(
    State(state): State<Arc<AppState>>,
    axum::Extension(caller): axum::Extension<Caller>,
    Path(bot): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    // Only a bot the operator listed is an A2A agent (any other name, a profile's or a
    // peer's included, is not found here).
    match crate::ops::relay::published(&state, &bot).await {
        Ok(true) => rpc::handle(state, caller, rpc::Target::Relay(bot), headers, body).await,
        Ok(false) => crate::server::rest::not_found().await.into_response(),
        Err(e) => e.into_response(),
    }
}

/// `GET /a2a/agents`: `{agents: [card, …]}`, the profiles' (while the bridge is served)
/// and the listed bots' (while the relay is).
async fn index(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let cfg = state.config();
    let base = base(&state, &headers);
    let mut cards = Vec::new();
    if cfg.bridge.enabled
        && let Some(b) = state.bridge.get()
    {
        cards.extend(b.profiles().list().iter().map(|p| card::card(p, &base)));
    }
    if cfg.relay.enabled {
        for bot in &cfg.relay.a2a_bots {
            match crate::ops::relay::published(&state, bot).await {
                Ok(true) => cards.push(relay::card(bot, &base)),
                Ok(false) => {}
                Err(e) => return e.into_response(),
            }
        }
    }
    no_cache(axum::Json(serde_json::json!({"agents": cards})).into_response())
}

fn no_cache(mut r: Response) -> Response {
    r.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-cache"));
    r
}

async fn default_rpc(
    State(state): State<Arc<AppState>>,
    axum::Extension(caller): axum::Extension<Caller>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rpc_of(state, caller, None, headers, body).await
}

async fn profile_rpc(
    State(state): State<Arc<AppState>>,
    axum::Extension(caller): axum::Extension<Caller>,
    Path(profile): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rpc_of(state, caller, Some(profile), headers, body).await
}
