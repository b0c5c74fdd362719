//! The `/api/mcp/*` management routes (ADMIN tier): clients, catalogue, the `mcp.tool.*`
//! event stream, per-server logs, manifest resolution, install/uninstall, config, test,
//! tool policy and exposure. Each translates to `crate::registry::manage`; bodies are parsed
//! here so a malformed one gets a stable error code.

use super::AppState;
use super::guard::json_error;
use super::rest::blocking;
use crate::error::{Error, Result};
use crate::registry::{self, Registry, manage};
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use std::sync::Arc;

fn reply(r: Result<Value>) -> Response {
    match r {
        Ok(mut v) => {
            crate::redact::redact_json(&mut v);
            axum::Json(v).into_response()
        }
        Err(e) => json_error(&e),
    }
}

fn body_object(b: &Bytes, code: &'static str) -> Result<Map<String, Value>> {
    if b.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(b) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Error::invalid(code, "the body must be a JSON object")),
        Err(e) => Err(Error::invalid(code, format!("the body is not valid JSON: {e}"))),
    }
}

fn server_json(r: &registry::Record) -> Value {
    let mut v = json!(r);
    v["bundled"] = json!(false);
    v
}

/// `GET /api/mcp/clients`: MCP callers as the audit log saw them.
pub async fn clients(State(state): State<Arc<AppState>>) -> Response {
    reply(
        state
            .store
            .call(|s| {
                let rows = crate::audit::mcp_callers(s)?;
                let mut by: std::collections::BTreeMap<String, Value> = Default::default();
                for crate::audit::CallerUse { identity, surface, first, last, calls } in rows {
                    let (role, name) = identity.split_once(':').unwrap_or(("box", identity.as_str()));
                    let e = by.entry(identity.clone()).or_insert_with(|| {
                        json!({"id": identity, "name": name, "role": role, "host": null, "since": first,
                               "last_seen": last, "calls": 0, "connected_to": []})
                    });
                    let server = surface.strip_prefix("mcp:").unwrap_or(&surface);
                    let server = match server {
                        "agents" | "memory" | "admin" => format!("hal0-{server}"),
                        s => s.strip_prefix("proxy/").unwrap_or(s).to_string(),
                    };
                    e["connected_to"].as_array_mut().expect("array").push(json!(server));
                    e["calls"] = json!(e["calls"].as_i64().unwrap_or(0) + calls);
                    if e["since"].as_str().unwrap_or("") > first.as_str() {
                        e["since"] = json!(first);
                    }
                    if e["last_seen"].as_str().unwrap_or("") < last.as_str() {
                        e["last_seen"] = json!(last);
                    }
                }
                let list: Vec<Value> = by.into_values().collect();
                Ok(json!({"count": list.len(), "clients": list}))
            })
            .await,
    )
}

#[derive(Debug, serde::Deserialize)]
pub struct CatalogQuery {
    category: Option<String>,
}

/// `GET /api/mcp/catalog`: the curated catalogue (shipped, or the refreshed copy).
pub async fn catalog(State(state): State<Arc<AppState>>, Query(q): Query<CatalogQuery>) -> Response {
    let paths = state.paths.clone();
    reply(
        blocking(move || {
            let c = registry::catalog::load(&paths);
            let items = match &q.category {
                Some(cat) => c.in_category(cat)?,
                None => c.items.clone(),
            };
            Ok(json!({"items": items, "categories": c.categories, "source": c.source}))
        })
        .await,
    )
}

#[derive(Debug, serde::Deserialize)]
pub struct LogsQuery {
    limit: Option<String>,
}

fn surface_of(id: &str) -> Option<String> {
    match id {
        "hal0-admin" => Some("mcp:admin".into()),
        "hal0-memory" => Some("mcp:memory".into()),
        "hal0-agents" => Some("mcp:agents".into()),
        _ => None,
    }
}

/// `GET /api/mcp/{id}/logs?limit=`: the server's audit events, newest first.
pub async fn logs(State(state): State<Arc<AppState>>, Path(id): Path<String>, Query(q): Query<LogsQuery>) -> Response {
    let (paths, store) = (state.paths.clone(), state.store.clone());
    reply(
        blocking(move || {
            let limit = match q.limit.as_deref() {
                None => 100,
                Some(l) => l.parse::<i64>().ok().filter(|n| (1..=500).contains(n)).ok_or_else(|| {
                    Error::invalid("mcp.invalid_limit", format!("limit `{l}` must be a number from 1 to 500"))
                })?,
            };
            let surface = match surface_of(&id) {
                Some(s) => s,
                None => {
                    Registry::new(&paths).get(&id)?;
                    format!("mcp:proxy/{id}")
                }
            };
            // `mcp:proxy/a` must not match `mcp:proxy/ab`: filter the prefix match exactly.
            let events: Vec<_> = crate::audit::by_surface(&store, &surface, None, limit)?
                .into_iter()
                .filter(|r| r.surface == surface)
                .collect();
            Ok(json!({"server": id, "count": events.len(), "events": events}))
        })
        .await,
    )
}

#[derive(Debug, serde::Deserialize)]
pub struct ResolveQuery {
    url: Option<String>,
}

fn resolved_json(r: &registry::Record) -> Value {
    json!({
        "id": r.id, "name": r.name, "description": r.description, "spec": r.spec,
        "transport": r.transport.as_str(), "url": r.url, "tools": r.tools_count, "resources": r.resources,
        "prompts": r.prompts, "env_required": r.env.keys().collect::<Vec<_>>(), "source_kind": r.source_kind,
        "source_url": r.source_url, "author": r.author, "verified": r.verified,
    })
}

/// `GET /api/mcp/resolve?url=`: what installing `url` would record (nothing is written).
pub async fn resolve(Query(q): Query<ResolveQuery>) -> Response {
    let url = q.url.unwrap_or_default();
    if url.is_empty() || url.len() > 2048 {
        return json_error(&Error::invalid("mcp.invalid_spec", "give ?url= with 1 to 2048 characters"));
    }
    let r = manage::resolve(&manage::Source::Spec(url), None, &registry::ssrf::Guard::system()).await;
    reply(r.map(|r| resolved_json(&r)))
}

/// A registry change arriving over the API, and whether auth is armed right now.
fn api_via(state: &AppState) -> Result<registry::program::Via> {
    Ok(registry::program::Via::Api { auth_armed: state.keys.get()?.armed() })
}

/// `POST /api/mcp/install` `{"url"}` or `{"manifest"}`, optional `id`, `name`: 201.
pub async fn install(State(state): State<Arc<AppState>>, body: Bytes) -> Response {
    let run = async {
        let b = body_object(&body, "mcp.install_invalid")?;
        for k in b.keys() {
            if !["url", "manifest", "id", "name"].contains(&k.as_str()) {
                return Err(Error::invalid(
                    "mcp.install_invalid",
                    format!("unknown field `{k}`: give url or manifest, and optionally id and name"),
                ));
            }
        }
        let src = match (b.get("url"), b.get("manifest")) {
            (Some(Value::String(u)), None) => manage::Source::Spec(u.clone()),
            (None, Some(m @ Value::Object(_))) => manage::Source::Manifest(m.clone()),
            _ => {
                return Err(Error::invalid(
                    "mcp.install_invalid",
                    "give exactly one of `url` (a string) or `manifest` (an object)",
                ));
            }
        };
        let text = |k: &str| -> Result<Option<String>> {
            match b.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(Error::invalid("mcp.install_invalid", format!("`{k}` must be a string"))),
            }
        };
        let (id, name) = (text("id")?, text("name")?);
        let (r, sync) = manage::install(
            &state.paths,
            &state.config,
            &state.store,
            src,
            manage::InstallOptions { id, name, ca_file: None },
            api_via(&state)?,
        )
        .await?;
        Ok(json!({"installed": server_json(&r), "hermes_sync": sync}))
    };
    match run.await {
        Ok(mut v) => {
            crate::redact::redact_json(&mut v);
            (StatusCode::CREATED, axum::Json(v)).into_response()
        }
        Err(e) => json_error(&e),
    }
}

#[derive(Debug, serde::Deserialize)]
pub struct UninstallQuery {
    force: Option<bool>,
}

/// `DELETE /api/mcp/{id}[?force=true]`.
pub async fn uninstall(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<UninstallQuery>,
) -> Response {
    let st = state.clone();
    let r = blocking(move || {
        let (revoked, sync) = manage::uninstall(&st.paths, &st.config, &st.store, &id, q.force.unwrap_or(false))?;
        st.proxy.evict(&id);
        Ok(json!({"uninstalled": id, "keys_revoked": revoked, "hermes_sync": sync}))
    })
    .await;
    reply(r)
}

/// `PATCH /api/mcp/{id}/config` `{"env"?: {name: value}, "enabled"?: bool}`.
pub async fn config(State(state): State<Arc<AppState>>, Path(id): Path<String>, body: Bytes) -> Response {
    let st = state.clone();
    reply(
        blocking(move || {
            let b = body_object(&body, "mcp.config_invalid")?;
            let mut env = None;
            let mut enabled = None;
            for (k, v) in &b {
                match (k.as_str(), v) {
                    ("enabled", Value::Bool(on)) => enabled = Some(*on),
                    ("env", Value::Object(m)) => {
                        let mut e = std::collections::BTreeMap::new();
                        for (name, val) in m {
                            let val = match val {
                                Value::String(s) => s.clone(),
                                Value::Null => String::new(),
                                _ => {
                                    return Err(Error::invalid(
                                        "mcp.config_invalid",
                                        format!("env `{name}` must be a string (null or \"\" removes it)"),
                                    ));
                                }
                            };
                            e.insert(name.clone(), val);
                        }
                        env = Some(e);
                    }
                    _ => {
                        return Err(Error::invalid(
                            "mcp.config_invalid",
                            format!(
                                "`{k}` is not a config field here: give env (an object) and/or enabled (a boolean)"
                            ),
                        ));
                    }
                }
            }
            if env.is_none() && enabled.is_none() {
                return Err(Error::invalid("mcp.config_invalid", "give env and/or enabled"));
            }
            let (r, sync) = manage::configure(&st.paths, &st.config, &st.store, &id, env, enabled, api_via(&st)?)?;
            st.proxy.evict(&id);
            let mut out = json!({"server": server_json(&r)});
            if let Some(s) = sync {
                out["hermes_sync"] = json!(s);
            }
            Ok(out)
        })
        .await,
    )
}

/// `POST /api/mcp/{id}/test`: probe with the record's own URL and headers.
pub async fn test(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Response {
    let run = async {
        let reg = Registry::new(&state.paths);
        let r = reg.get(&id)?;
        let p = if r.transport == registry::record::Transport::Stdio {
            // A probe never starts a program: only a running child is probed.
            let Some(up) = state.proxy.running(&id) else {
                return Err(Error::new(
                    "mcp.supervisor_unavailable",
                    crate::error::Kind::Unsupported,
                    format!(
                        "`{id}` is a stdio server that is not running, and a test does not start it: start it with \
                         POST /api/mcp/{id}/start (the gated mcp_server_control tool), or run `hal0 mcp test {id}` \
                         on the box"
                    ),
                ));
            };
            let (_, missing) = registry::upstream::headers(&r, &state.paths.api_env())?;
            registry::probe::probe_with(&r, &up.client, missing).await?
        } else {
            registry::probe::probe(&r, &state.paths).await?
        };
        let verdicts: Map<String, Value> = p.tools.iter().map(|t| (t.tool.clone(), json!(t.verdict))).collect();
        let exposure = json!({"available": true, "hermes": r.exposure.hermes, "brain": r.exposure.brain,
                              "proxy_url": registry::expose::proxy_url(&state.config, &id)});
        Ok(json!({"server_id": id, "probe": p, "verdicts": verdicts, "agent_exposure": exposure}))
    };
    reply(run.await)
}

/// `PATCH /api/mcp/{id}/tools` `{"allow", "gated", "blocked"}`: the whole policy.
pub async fn tools(State(state): State<Arc<AppState>>, Path(id): Path<String>, body: Bytes) -> Response {
    let st = state.clone();
    reply(
        blocking(move || {
            let b = body_object(&body, "mcp.tools_invalid")?;
            let p = manage::parse_tools(&b)?;
            let (r, sync) = manage::set_tools(&st.paths, &st.config, &st.store, &id, p)?;
            Ok(json!({"server": server_json(&r), "hermes_sync": sync}))
        })
        .await,
    )
}

/// `PATCH /api/mcp/{id}/exposure` `{"hermes"?, "brain"?, "openwebui"?, "opencode"?: bool}`.
pub async fn exposure(State(state): State<Arc<AppState>>, Path(id): Path<String>, body: Bytes) -> Response {
    let run = async {
        let b = body_object(&body, "mcp.exposure_invalid")?;
        let flags = manage::parse_exposure(&b)?;
        let (r, sync) = manage::set_exposure(&state.paths, &state.config, &state.store, &id, flags).await?;
        Ok(json!({"server": server_json(&r), "hermes_sync": sync}))
    };
    reply(run.await)
}

/// `POST /api/mcp/{id}/{start|stop|restart}`: a stdio server's child process.
pub async fn action(State(state): State<Arc<AppState>>, Path((id, action)): Path<(String, String)>) -> Response {
    reply(state.proxy.action(&id, &action).await)
}

/// How often the event stream looks for new audit rows.
const STREAM_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// `GET /api/mcp/stream`: SSE of `mcp.tool.<verdict>` events, one per new MCP audit row.
pub async fn stream(State(state): State<Arc<AppState>>) -> Response {
    use axum::response::sse::{Event, KeepAlive, Sse};
    let store = state.store.clone();
    let start = match store.call(crate::audit::last_id).await {
        Ok(n) => n,
        Err(e) => return json_error(&e),
    };
    let s = futures::stream::unfold(
        (store, start, std::collections::VecDeque::new()),
        |(store, mut last, mut q)| async move {
            loop {
                if let Some(row) = q.pop_front() {
                    return Some((Ok::<Event, std::convert::Infallible>(row), (store, last, q)));
                }
                tokio::time::sleep(STREAM_POLL).await;
                let after = last;
                let rows = store
                    .call(move |s| crate::audit::by_surface(s, "mcp:", Some(after), 200))
                    .await
                    .unwrap_or_default();
                for r in rows {
                    last = last.max(r.id);
                    let mut v = json!(r);
                    crate::redact::redact_json(&mut v);
                    let ev = Event::default()
                        .event(format!("mcp.tool.{}", r.verdict))
                        .id(r.id.to_string())
                        .data(v.to_string());
                    q.push_back(ev);
                }
            }
        },
    );
    Sse::new(s).keep_alive(KeepAlive::default()).into_response()
}
