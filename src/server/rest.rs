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
        Ok(rows) => {
            let rows: Vec<_> = rows.into_iter().map(crate::approvals::Approval::redacted).collect();
            axum::Json(json!({"count": rows.len(), "approvals": rows})).into_response()
        }
        Err(e) => json_error(&e),
    }
}

/// `GET /api/agent/approvals/{id}`: the whole card.
pub async fn approvals_get(
    State(state): State<Arc<AppState>>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    match state.store.call(move |s| crate::approvals::get(s, &id)).await {
        Ok(row) => axum::Json(json!(row.redacted())).into_response(),
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
    let decider = crate::approvals::Decider {
        paths: &state.paths,
        store: &state.store,
        config: &state.config,
        admin: state.admin.get(),
    };
    match decider.decide(&id, approve, &by, reason.as_deref()).await {
        Ok(d) => {
            let mut v = json!(d.row.redacted());
            if let Some(mut out) = d.output {
                crate::redact::redact_json(&mut out);
                v["output"] = out;
            }
            axum::Json(v).into_response()
        }
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

/// The handler of a route in the admin route table. Every table entry must be served here.
pub fn handler(method: &str, path: &str) -> axum::routing::MethodRouter<Arc<AppState>> {
    use super::rest_mcp as m;
    use axum::routing::{delete, get, patch, post, put};
    match (method, path) {
        ("GET", "/api/health") => get(health),
        ("GET", "/api/status") => get(status),
        ("GET", "/api/bridge/me") => get(bridge_me),
        ("GET", "/api/bridge/clients") => get(bridge_clients),
        ("POST", "/api/bridge/clients") => post(bridge_add),
        ("PUT", "/api/bridge/clients/{name}/scopes") => put(bridge_scopes),
        ("POST", "/api/bridge/clients/{name}/rotate") => post(bridge_rotate),
        ("DELETE", "/api/bridge/clients/{name}") => delete(bridge_revoke),
        ("GET", "/api/agent/approvals") => get(approvals_list),
        ("GET", "/api/agent/approvals/{id}") => get(approvals_get),
        ("POST", "/api/agent/approvals/{id}/approve") => post(approvals_approve),
        ("POST", "/api/agent/approvals/{id}/deny") => post(approvals_deny),
        ("GET", "/api/settings") => get(settings_get),
        ("GET", "/api/settings/schema") => get(settings_schema),
        ("PUT", "/api/settings") => put(settings_put),
        ("GET", "/api/logs") => get(logs),
        ("GET", "/api/runs") => get(runs_list),
        ("GET", "/api/doctor") => get(doctor),
        ("GET", "/api/mcp/servers") => get(mcp_servers),
        ("GET", "/api/mcp/servers/{id}") => get(mcp_server),
        ("GET", "/api/mcp/clients") => get(m::clients),
        ("GET", "/api/mcp/catalog") => get(m::catalog),
        ("GET", "/api/mcp/stream") => get(m::stream),
        ("GET", "/api/mcp/{id}/logs") => get(m::logs),
        ("GET", "/api/mcp/resolve") => get(m::resolve),
        ("POST", "/api/mcp/install") => post(m::install),
        ("DELETE", "/api/mcp/{id}") => delete(m::uninstall),
        ("PATCH", "/api/mcp/{id}/config") => patch(m::config),
        ("POST", "/api/mcp/{id}/test") => post(m::test),
        ("PATCH", "/api/mcp/{id}/tools") => patch(m::tools),
        ("PATCH", "/api/mcp/{id}/exposure") => patch(m::exposure),
        ("POST", "/api/mcp/{id}/{action}") => post(m::action),
        ("GET", "/api/activity") => get(activity_list),
        ("GET", "/api/activity/export") => get(activity_export),
        _ => panic!("no handler for {method} {path}: add one in server/rest.rs"),
    }
}

/// Run blocking domain code (files, the store) off the async runtime.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> crate::error::Result<T> + Send + 'static,
) -> crate::error::Result<T> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| Err(Error::internal(e.to_string())))
}

fn reply<T: serde::Serialize>(r: crate::error::Result<T>) -> Response {
    match r {
        Ok(v) => axum::Json(json!(v)).into_response(),
        Err(e) => json_error(&e),
    }
}

#[derive(Debug, serde::Deserialize)]
pub struct AddClient {
    pub name: String,
    #[serde(default)]
    pub note: String,
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// `POST /api/bridge/clients`: the key is in this answer only.
pub async fn bridge_add(State(state): State<Arc<AppState>>, axum::Json(b): axum::Json<AddClient>) -> Response {
    let cfg = state.config.clone();
    reply(
        state
            .store
            .call(move |s| {
                let scopes = if b.scopes.is_empty() {
                    crate::auth::bridge::parse_scopes(&["agents", "memory"])?
                } else {
                    crate::auth::bridge::parse_scopes(&b.scopes)?
                };
                let (c, key) = crate::auth::bridge::add(s, &b.name, &b.note, scopes)?;
                let (base, _) = crate::connect::base_url(&cfg);
                let lines = crate::connect::claude_lines(&base, &cfg, &c.scopes, &key);
                Ok(json!({"name": c.name, "key": key, "scopes": c.scopes, "claude_mcp_add": lines}))
            })
            .await,
    )
}

#[derive(Debug, serde::Deserialize)]
pub struct Scopes {
    pub scopes: Vec<String>,
}

pub async fn bridge_scopes(
    State(state): State<Arc<AppState>>,
    axum::extract::Path(name): axum::extract::Path<String>,
    axum::Json(b): axum::Json<Scopes>,
) -> Response {
    reply(
        state
            .store
            .call(move |s| crate::auth::bridge::set_scopes(s, &name, crate::auth::bridge::parse_scopes(&b.scopes)?))
            .await,
    )
}

pub async fn bridge_rotate(
    State(state): State<Arc<AppState>>,
    axum::extract::Path(name): axum::extract::Path<String>,
) -> Response {
    reply(
        state
            .store
            .call(move |s| {
                let (c, key) = crate::auth::bridge::rotate(s, &name)?;
                Ok(json!({"name": c.name, "key": key, "scopes": c.scopes}))
            })
            .await,
    )
}

pub async fn bridge_revoke(
    State(state): State<Arc<AppState>>,
    axum::extract::Path(name): axum::extract::Path<String>,
) -> Response {
    reply(state.store.call(move |s| crate::auth::bridge::revoke(s, &name)).await)
}

/// `GET /api/settings`: the effective configuration as it is on disk now.
pub async fn settings_get(State(state): State<Arc<AppState>>) -> Response {
    let mut v = match crate::config::Config::load(&state.paths) {
        Ok(c) => json!(c),
        Err(e) => return json_error(&e),
    };
    crate::redact::redact_json(&mut v);
    let mut running = json!(state.config);
    crate::redact::redact_json(&mut running);
    axum::Json(json!({"path": state.paths.hal0_toml(), "settings": v, "running": running})).into_response()
}

/// `GET /api/settings/schema`.
pub async fn settings_schema() -> Response {
    axum::Json(crate::config::schema()).into_response()
}

#[derive(Debug, serde::Deserialize)]
pub struct SettingWrite {
    pub key: String,
    pub value: Option<serde_json::Value>,
}

/// `PUT /api/settings {key, value}` (null removes the key).
pub async fn settings_put(State(state): State<Arc<AppState>>, axum::Json(b): axum::Json<SettingWrite>) -> Response {
    let paths = state.paths.clone();
    reply(
        blocking(move || {
            let cfg = match b.value {
                None | Some(serde_json::Value::Null) => crate::config::unset_value(&paths, &b.key)?,
                Some(serde_json::Value::String(s)) => crate::config::set_value(&paths, &b.key, &s)?,
                Some(other) => crate::config::set_value(&paths, &b.key, &other.to_string())?,
            };
            let mut settings = json!(cfg);
            crate::redact::redact_json(&mut settings);
            Ok(json!({"key": b.key, "settings": settings, "note": "takes effect when hal0 serve restarts"}))
        })
        .await,
    )
}

#[derive(Debug, serde::Deserialize)]
pub struct LogsQuery {
    pub lines: Option<usize>,
}

/// `GET /api/logs?lines=N`: hal0's newest log lines, redacted.
pub async fn logs(axum::extract::Query(q): axum::extract::Query<LogsQuery>) -> Response {
    let n = q.lines.unwrap_or(200);
    if !(1..=1000).contains(&n) {
        return json_error(&Error::invalid("logs.invalid_lines", "lines must be 1 to 1000"));
    }
    let lines = crate::logbuf::tail(n);
    axum::Json(json!({"count": lines.len(), "lines": lines})).into_response()
}

#[derive(Debug, serde::Deserialize)]
pub struct RunsQuery {
    pub client: Option<String>,
    pub status: Option<String>,
    pub limit: Option<i64>,
}

/// `GET /api/runs`: every client's runs (list view, redacted).
pub async fn runs_list(
    State(state): State<Arc<AppState>>,
    axum::extract::Query(q): axum::extract::Query<RunsQuery>,
) -> Response {
    let limit = q.limit.unwrap_or(50);
    if !(1..=1000).contains(&limit) {
        return json_error(&Error::invalid("runs.invalid_limit", "limit must be 1 to 1000"));
    }
    reply(
        state
            .store
            .call(move |s| {
                let runs = crate::bridge::ledger::list(s, q.client.as_deref(), q.status.as_deref(), limit)?;
                Ok(runs.iter().map(crate::bridge::view::list_view).collect::<Vec<_>>())
            })
            .await,
    )
}

/// `GET /api/doctor`.
pub async fn doctor(State(state): State<Arc<AppState>>) -> Response {
    axum::Json(crate::doctor::run(&state.paths).await.to_json()).into_response()
}

#[derive(Debug, serde::Deserialize)]
pub struct ActivityQuery {
    pub since: Option<String>,
    pub client: Option<String>,
    pub tool: Option<String>,
    pub limit: Option<i64>,
}

impl ActivityQuery {
    fn filter(self, default_limit: i64) -> crate::audit::Filter {
        crate::audit::Filter {
            since: self.since,
            client: self.client,
            tool: self.tool,
            limit: self.limit.unwrap_or(default_limit),
        }
    }
}

/// `GET /api/activity`: newest first.
pub async fn activity_list(
    State(state): State<Arc<AppState>>,
    axum::extract::Query(q): axum::extract::Query<ActivityQuery>,
) -> Response {
    let f = q.filter(100);
    reply(state.store.call(move |s| crate::audit::list(s, &f)).await)
}

/// `GET /api/activity/export`: every matching entry, oldest first.
pub async fn activity_export(
    State(state): State<Arc<AppState>>,
    axum::extract::Query(q): axum::extract::Query<ActivityQuery>,
) -> Response {
    let f = q.filter(0);
    reply(
        state
            .store
            .call(move |s| {
                let mut buf = Vec::new();
                crate::audit::export(s, &f, &mut buf)?;
                Ok(String::from_utf8_lossy(&buf)
                    .lines()
                    .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                    .collect::<Vec<_>>())
            })
            .await,
    )
}

/// `GET /api/mcp/servers`: bundled servers, installed records with their state, broken files.
pub async fn mcp_servers(State(state): State<Arc<AppState>>) -> Response {
    let paths = state.paths.clone();
    let st = state.clone();
    reply(
        blocking(move || {
            let listing = crate::registry::Registry::new(&paths).list()?;
            let mut servers: Vec<serde_json::Value> = crate::registry::bundled()
                .into_iter()
                .map(|b| json!({"id": b.id, "bundled": true, "mount": b.mount, "description": b.description, "state": "running"}))
                .collect();
            let states = crate::registry::states(&listing.records);
            for (r, state) in listing.records.iter().zip(states) {
                let mut v = json!(r);
                v["bundled"] = json!(false);
                if r.transport == crate::registry::Transport::Stdio {
                    // The daemon supervises stdio servers: say whether the child is up.
                    let (s, pid) = st.proxy.child_state(&r.id);
                    v["state"] = json!(s);
                    v["pid"] = json!(pid);
                } else {
                    v["state"] = json!(state);
                }
                servers.push(v);
            }
            let mut out = json!({"count": servers.len(), "servers": servers, "broken": listing.broken});
            crate::redact::redact_json(&mut out);
            Ok(out)
        })
        .await,
    )
}

/// `GET /api/mcp/servers/{id}`.
pub async fn mcp_server(
    State(state): State<Arc<AppState>>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    let paths = state.paths.clone();
    reply(
        blocking(move || {
            let mut v = json!(crate::registry::Registry::new(&paths).get(&id)?);
            crate::redact::redact_json(&mut v);
            Ok(v)
        })
        .await,
    )
}
