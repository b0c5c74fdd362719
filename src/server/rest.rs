//! REST front of `hal0 serve`: one generic handler that turns a request into an operation
//! call (path arguments, query and JSON body merged into the op's arguments), plus the few
//! routes that are not operations (the calling bridge client, mount roots, 404).

use super::AppState;
use super::guard::Caller;
use crate::auth::Credential;
use crate::base::actor::Actor;
use crate::base::error::Error;
use crate::ops::{Ctx, OpDef};
use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;

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
        _ => Error::forbidden("this route answers bridge keys only").into_response(),
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
    Error::not_found("not_found", "no such route").into_response()
}

/// The arguments of a REST call: the JSON body's fields (a body must be an object), then
/// the query's, then the path arguments, which always win.
fn arguments(
    def: &OpDef,
    path: HashMap<String, String>,
    query: Option<String>,
    body: &Bytes,
) -> crate::base::error::Result<Map<String, Value>> {
    let mut args = if body.iter().all(u8::is_ascii_whitespace) {
        Map::new()
    } else {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(m)) => m,
            Ok(_) => {
                return Err(Error::invalid(
                    def.invalid_code,
                    format!("the body of {} {} must be a JSON object", def.method, def.path),
                ));
            }
            Err(e) => return Err(Error::invalid(def.invalid_code, format!("the body is not valid JSON: {e}"))),
        }
    };
    if let Some(q) = query {
        for (k, v) in url::form_urlencoded::parse(q.as_bytes()) {
            args.insert(k.into_owned(), Value::String(v.into_owned()));
        }
    }
    for (k, v) in path {
        args.insert(k, Value::String(v));
    }
    Ok(args)
}

/// The handler of operation `def`: the caller's identity becomes `api:<identity>`.
pub fn op_handler(def: &'static OpDef) -> axum::routing::MethodRouter<Arc<AppState>> {
    assert!(def.run.is_some(), "op_handler is only used for routes with an operation");
    let handler = move |State(state): State<Arc<AppState>>,
                        caller: Option<Extension<Caller>>,
                        path: Result<Path<HashMap<String, String>>, axum::extract::rejection::PathRejection>,
                        RawQuery(query): RawQuery,
                        body: Bytes| async move {
        let path = match path {
            Ok(Path(p)) => p,
            Err(e) => {
                return Error::invalid("request.invalid_path", format!("a path argument is malformed: {e}"))
                    .into_response();
            }
        };
        let args = match arguments(def, path, query, &body) {
            Ok(a) => a,
            Err(e) => return e.into_response(),
        };
        // A person (a dashboard session) is `person:NAME`; a key's caller `api:<identity>`.
        let (identity, passkey) = match caller {
            Some(Extension(c)) => match &c.cred {
                crate::auth::Credential::Person(p) => (c.identity.clone(), p.by_passkey()),
                _ => (Actor::Api(c.identity.clone()).to_string(), false),
            },
            None => (Actor::Api("anonymous".into()).to_string(), false),
        };
        // A change is audited (`api`, the tool's name) as from every front (`ops::call`).
        let ctx = Ctx::remote(state.ops.clone(), identity).with_passkey(passkey);
        let out = crate::ops::call::run(def, "api", ctx, args).await;
        match out {
            Ok(v) => {
                let status = StatusCode::from_u16(def.status).unwrap_or(StatusCode::OK);
                (status, axum::Json(v)).into_response()
            }
            Err(e) => e.into_response(),
        }
    };
    let method: axum::routing::MethodFilter = match def.method {
        "GET" => axum::routing::MethodFilter::GET,
        "POST" => axum::routing::MethodFilter::POST,
        "PUT" => axum::routing::MethodFilter::PUT,
        "PATCH" => axum::routing::MethodFilter::PATCH,
        "DELETE" => axum::routing::MethodFilter::DELETE,
        m => panic!("route table method {m} has no filter"),
    };
    axum::routing::on(method, handler)
}

/// The handler of a route in the table: its operation, or one of the routes above.
pub fn handler(def: &'static OpDef) -> axum::routing::MethodRouter<Arc<AppState>> {
    use axum::routing::get;
    match (def.run, def.method, def.path) {
        (Some(_), _, _) => op_handler(def),
        (None, "GET", "/api/bridge/me") => get(bridge_me),
        (None, "GET", "/api/mcp/stream") => get(super::rest_mcp::stream),
        (None, "GET", "/api/runs/{run_id}/stream") => get(super::rest_runs::stream),
        _ => panic!("no handler for {} {}: give it an operation in ops/routes.rs", def.method, def.path),
    }
}
