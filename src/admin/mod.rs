//! `hal0-admin`'s tools, generated from hal0's own REST route table through one generic
//! factory: each tool takes `{"args": {...}}`, checks its path arguments, and either runs
//! the route in-process as hal0's own service identity (autonomous tiers) or queues an
//! approvals row (gated). Approved rows run the same way with exactly the stored arguments.

pub mod args;
pub mod routes;

use crate::error::{Error, Kind, Result};
use routes::{RouteDef, Tier, path_args, route_of};
use serde_json::{Map, Value, json};
use tower::ServiceExt;

/// A request extension marking an in-process call from the admin tools; the guard trusts
/// it (it cannot come from the network) and calls the route as hal0's own identity.
#[derive(Debug, Clone)]
pub struct InternalCall {
    /// Audit identity, e.g. `bridge:<client>` or the `X-hal0-Agent` of a box key.
    pub identity: String,
}

/// Runs REST routes in-process through the application router.
#[derive(Clone)]
pub struct Dispatcher {
    router: axum::Router,
}

fn query_string(args: &Map<String, Value>) -> String {
    let pairs: Vec<String> = args
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!("{}={}", args::encode_segment(k), args::encode_segment(&s))
        })
        .collect();
    if pairs.is_empty() { String::new() } else { format!("?{}", pairs.join("&")) }
}

impl Dispatcher {
    pub fn new(router: axum::Router) -> Dispatcher {
        Dispatcher { router }
    }

    /// Run `route` with `args` (path arguments filled and checked; the rest become the
    /// query for GET/DELETE or the JSON body otherwise). Returns the REST JSON, lists wrapped.
    pub async fn call(&self, route: &RouteDef, args: &Map<String, Value>, identity: &str) -> Result<Value> {
        let path = args::fill_path(route.path, args)?;
        let names: Vec<&str> = path_args(route.path).into_iter().map(|(n, _)| n).collect();
        let rest: Map<String, Value> =
            args.iter().filter(|(k, _)| !names.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
        let (uri, body) = if matches!(route.method, "GET" | "DELETE") {
            (format!("{path}{}", query_string(&rest)), axum::body::Body::empty())
        } else {
            (path, axum::body::Body::from(Value::Object(rest).to_string()))
        };
        let req = axum::http::Request::builder()
            .method(route.method)
            .uri(uri)
            .header("content-type", "application/json")
            .header("host", "127.0.0.1")
            .extension(InternalCall { identity: identity.to_string() })
            .body(body)
            .map_err(|e| Error::internal(format!("cannot build the request: {e}")))?;
        let resp = self.router.clone().oneshot(req).await.map_err(|e| Error::internal(format!("route failed: {e}")))?;
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), 16 * 1024 * 1024)
            .await
            .map_err(|e| Error::internal(format!("cannot read the route's answer: {e}")))?;
        let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if !status.is_success() {
            let code = v["error"]["code"].as_str().unwrap_or("internal").to_string();
            let message = v["error"]["message"].as_str().unwrap_or("the route failed").to_string();
            let kind = match status.as_u16() {
                400 => Kind::Invalid,
                401 => Kind::Unauthorized,
                403 => Kind::Forbidden,
                404 => Kind::NotFound,
                409 => Kind::Conflict,
                422 => Kind::Unprocessable,
                429 => Kind::TooMany,
                501 => Kind::Unsupported,
                503 => Kind::Unavailable,
                s if s >= 500 => Kind::Internal,
                s => Kind::Upstream(s),
            };
            return Err(Error::new(leak(code), kind, message));
        }
        Ok(match (route.wrap, v) {
            (Some(key), Value::Array(items)) => json!({key: items, "count": items.len()}),
            (_, v) => v,
        })
    }
}

/// Error codes are `&'static str`; codes from routes are a small fixed set, so keep one
/// copy of each.
fn leak(code: String) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static CODES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = CODES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = set.get(code.as_str()) {
        return c;
    }
    let c: &'static str = Box::leak(code.into_boxed_str());
    set.insert(c);
    c
}

/// The advertised tools: `{"args": {...}}` with the route's path arguments (required) and
/// hand-written hints, additional properties allowed.
pub fn tools() -> Vec<rmcp::model::Tool> {
    routes::ROUTES
        .iter()
        .filter_map(|r| {
            let name = r.tool?;
            let mut props = Map::new();
            let mut required = Vec::new();
            for (arg, multi) in path_args(r.path) {
                let desc = if multi { "path argument (segments separated by /)" } else { "path argument" };
                props.insert(arg.into(), json!({"type": ["string", "integer"], "description": desc}));
                required.push(arg);
            }
            for (field, desc) in r.hints {
                props.insert((*field).into(), json!({"description": desc}));
            }
            let args =
                json!({"type": "object", "properties": props, "required": required, "additionalProperties": true});
            let mut schema = Map::new();
            schema.insert("type".into(), json!("object"));
            schema.insert("properties".into(), json!({"args": args}));
            if !required.is_empty() {
                schema.insert("required".into(), json!(["args"]));
            }
            let tier = match r.tier {
                Tier::Read => "",
                Tier::Write => "",
                Tier::Gated => " Gated: waits in the approvals inbox for a person.",
            };
            Some(rmcp::model::Tool::new(name, format!("{}{tier}", r.description), schema))
        })
        .collect()
}

/// The outcome of an admin tool call, before rendering.
pub enum Outcome {
    Done(Value),
    Pending { approval_id: String, detail: String },
}

/// Run admin tool `name` for `identity`: check the arguments, then run or queue it.
pub async fn call(
    store: &crate::store::Store,
    dispatcher: &Dispatcher,
    name: &str,
    arguments: Option<&Map<String, Value>>,
    identity: &str,
) -> Result<Outcome> {
    let route =
        route_of(name).ok_or_else(|| Error::not_found("mcp.unknown_tool", format!("no admin tool `{name}`")))?;
    let args = match arguments.and_then(|a| a.get("args")) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(Error::invalid("mcp.invalid_arg", "`args` must be an object")),
    };
    // Path arguments are checked before anything is queued or run.
    args::fill_path(route.path, &args)?;
    if route.tier == Tier::Gated {
        let mut shown = Value::Object(args.clone());
        crate::redact::redact_json(&mut shown);
        let preview = format!("{name}: {} {} {}", route.method, route.path, shown);
        let (tool, client) = (name.to_string(), identity.to_string());
        let stored = json!({"tool": name, "args": args});
        let row = store
            .call(move |s| {
                crate::approvals::create(
                    s,
                    crate::approvals::NewApproval {
                        kind: "admin_call",
                        client: &client,
                        tool: &tool,
                        arguments: stored,
                        preview,
                        run_id: None,
                    },
                )
            })
            .await?;
        return Ok(Outcome::Pending {
            approval_id: row.id,
            detail: format!("{name} waits for a person: hal0 agent approvals approve ID"),
        });
    }
    dispatcher.call(route, &args, identity).await.map(Outcome::Done)
}

/// Carry out an approved `admin_call` row: the same checks again, then exactly the stored
/// arguments.
pub async fn execute_approved(dispatcher: &Dispatcher, row: &crate::approvals::Approval) -> Result<Value> {
    let name = row.arguments["tool"].as_str().unwrap_or("");
    let route = route_of(name)
        .filter(|r| r.tier == Tier::Gated)
        .ok_or_else(|| Error::invalid("mcp.unknown_tool", format!("`{name}` is not a gated admin tool")))?;
    let args = row.arguments["args"].as_object().cloned().unwrap_or_default();
    dispatcher.call(route, &args, &row.client).await
}
