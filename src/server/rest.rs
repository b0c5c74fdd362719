//! REST handlers of `hal0 serve`: thin translations from HTTP to the domain modules.

use super::AppState;
use super::guard::{Caller, json_error};
use crate::auth::Credential;
use crate::error::Error;
use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;

pub async fn health() -> impl IntoResponse {
    axum::Json(json!({"status": "ok", "name": "hal0", "version": env!("CARGO_PKG_VERSION")}))
}

/// `GET /api/bridge/me`: the calling bridge client.
pub async fn bridge_me(Extension(caller): Extension<Caller>) -> Response {
    match caller.cred {
        Credential::Bridge(c) => axum::Json(json!({
            "client": c.name,
            "scopes": c.scopes,
            "note": c.note,
            "created_at": c.created_at,
            "last_seen": c.last_seen,
        }))
        .into_response(),
        _ => json_error(&Error::forbidden("this route answers bridge keys only")),
    }
}

/// The `GET /api/status` body (also the `version_info` admin tool).
pub fn status_json(state: &AppState) -> Value {
    json!({
        "name": "hal0",
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_s": state.started.elapsed().as_secs(),
        "auth_armed": state.keys.get().map(|k| k.armed()).unwrap_or(true),
        "bridge_enabled": state.config.bridge.enabled,
        "memory_enabled": state.config.memory.enabled,
        "mcp_servers": mounted_servers(state),
    })
}

pub fn mounted_servers(state: &AppState) -> Vec<&'static str> {
    let mut v = Vec::new();
    if state.config.bridge.enabled {
        v.push("hal0-agents");
    }
    if state.config.memory.enabled {
        v.push("hal0-memory");
    }
    v.push("hal0-admin");
    v
}

pub async fn status(State(state): State<Arc<AppState>>) -> Response {
    axum::Json(status_json(&state)).into_response()
}

/// `GET /api/bridge/clients`: every bridge client (never a key).
pub async fn bridge_clients(State(state): State<Arc<AppState>>) -> Response {
    match state.store.call(crate::auth::bridge::list).await {
        Ok(list) => axum::Json(json!(list)).into_response(),
        Err(e) => json_error(&e),
    }
}

/// A mount root answers 405 (never a redirect): the endpoint ends in `/mcp`.
pub async fn mount_root() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        axum::Json(
            json!({"error": {"code": "mcp.mount_root", "message": "the MCP endpoint is this path followed by /mcp"}}),
        ),
    )
        .into_response()
}

pub async fn not_found() -> Response {
    json_error(&Error::not_found("not_found", "no such route"))
}

#[derive(Debug, serde::Deserialize)]
pub struct ApprovalsQuery {
    pub status: Option<String>,
}

/// `GET /api/agent/approvals[?status=S]`.
pub async fn approvals_list(
    State(state): State<Arc<AppState>>,
    axum::extract::Query(q): axum::extract::Query<ApprovalsQuery>,
) -> Response {
    match state.store.call(move |s| crate::approvals::list(s, q.status.as_deref())).await {
        Ok(rows) => axum::Json(json!({"count": rows.len(), "approvals": rows})).into_response(),
        Err(e) => json_error(&e),
    }
}

/// `GET /api/agent/approvals/{id}`: the whole card.
pub async fn approvals_get(
    State(state): State<Arc<AppState>>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    match state.store.call(move |s| crate::approvals::get(s, &id)).await {
        Ok(row) => axum::Json(json!(row)).into_response(),
        Err(e) => json_error(&e),
    }
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct DecisionBody {
    pub reason: Option<String>,
}

async fn decide(
    state: Arc<AppState>,
    caller: Caller,
    id: String,
    approve: bool,
    body: Option<DecisionBody>,
) -> Response {
    let by = format!("api:{}", caller.identity);
    let reason = body.and_then(|b| b.reason);
    match crate::approvals::decide(&state.store, &state.config, &id, approve, &by, reason.as_deref()).await {
        Ok(row) => axum::Json(json!(row)).into_response(),
        Err(e) => json_error(&e),
    }
}

/// `POST /api/agent/approvals/{id}/approve`.
pub async fn approvals_approve(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    decide(state, caller, id, true, None).await
}

/// `POST /api/agent/approvals/{id}/deny` with an optional `{"reason"}`.
pub async fn approvals_deny(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    axum::extract::Path(id): axum::extract::Path<String>,
    body: Option<axum::Json<DecisionBody>>,
) -> Response {
    decide(state, caller, id, false, body.map(|b| b.0)).await
}
