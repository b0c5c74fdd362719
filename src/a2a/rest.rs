//! The HTTP+JSON binding of A2A 1.0 for the Hermes profiles, under
//! `/a2a/rest/<agent>` where `<agent>` is `hermes` or `hermes.<profile>` (a dot: no
//! profile name has one, so no path is ambiguous):
//!
//! - `POST …/message:send`, `POST …/message:stream` (SSE);
//! - `GET …/tasks` (the `ListTasks` fields as query parameters), `GET …/tasks/<id>`;
//! - `POST …/tasks/<id>:cancel`, `POST …/tasks/<id>:subscribe` (SSE);
//! - `GET …/extendedAgentCard`.
//!
//! Each builds the same method and parameters as the JSON-RPC binding and runs them
//! through [`super::rpc::execute`] (the same audit entry, the same rules); a result is the
//! bare JSON, a failure a `google.rpc.Status` with A2A's `ErrorInfo` and the HTTP status A2A
//! assigns.

use super::rpc::{self, Reply, RpcError, Target};
use crate::server::AppState;
use crate::server::guard::Caller;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// The binding's base path for `agent` (`hermes`, `hermes/<profile>`).
pub fn base_path(agent: &str) -> String {
    format!("/a2a/rest/{}", agent.replace('/', "."))
}

/// The routes, on `app`.
pub fn routes(app: Router<Arc<AppState>>) -> Router<Arc<AppState>> {
    app.route("/a2a/rest/{agent}/message:send", post(send))
        .route("/a2a/rest/{agent}/message:stream", post(stream))
        .route("/a2a/rest/{agent}/tasks", get(list))
        .route("/a2a/rest/{agent}/tasks/{task}", get(task).post(task_action))
        .route("/a2a/rest/{agent}/extendedAgentCard", get(extended_card))
}

fn failure(e: RpcError) -> Response {
    let status = StatusCode::from_u16(e.http).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(e.status_body())).into_response()
}

/// `hermes.<profile>` → the agent, checked to be a profile hal0 serves.
fn agent_of(state: &AppState, slug: &str) -> crate::base::error::Result<String> {
    let agent = slug.replacen('.', "/", 1);
    match state.bridge.get().map(|b| b.profiles().get(&agent)) {
        Some(Ok(_)) => Ok(agent),
        Some(Err(e)) => Err(e),
        None => Err(crate::base::error::Error::unavailable("bridge.unavailable", "the run service is not running")),
    }
}

/// Run `method` for the agent at `slug` and answer in this binding's shape.
async fn run(
    state: Arc<AppState>,
    caller: Caller,
    slug: &str,
    headers: &HeaderMap,
    method: &str,
    params: Value,
) -> Response {
    let agent = match agent_of(&state, slug) {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    if let Err(e) = rpc::check_version(headers) {
        return failure(e);
    }
    match rpc::execute(&state, &caller, &Target::Hermes(agent), method, params, None).await {
        Ok(Reply::Json(v)) => axum::Json(v).into_response(),
        Ok(Reply::Stream(r)) => r,
        Err(e) => failure(e),
    }
}

/// A JSON body (a request message), or the binding's invalid-request failure.
fn body_json(body: &Bytes) -> Result<Value, RpcError> {
    if body.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(body)
        .map_err(|e| RpcError::invalid("a2a.invalid_params", format!("the body is not JSON: {e}")))
}

type Ctx = (State<Arc<AppState>>, axum::Extension<Caller>, HeaderMap);

async fn send(
    State(state): State<Arc<AppState>>,
    axum::Extension(caller): axum::Extension<Caller>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match body_json(&body) {
        Ok(p) => run(state, caller, &agent, &headers, "SendMessage", p).await,
        Err(e) => failure(e),
    }
}

async fn stream(
    State(state): State<Arc<AppState>>,
    axum::Extension(caller): axum::Extension<Caller>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match body_json(&body) {
        Ok(p) => run(state, caller, &agent, &headers, "SendStreamingMessage", p).await,
        Err(e) => failure(e),
    }
}

/// Query parameters as `ListTasks`/`GetTask` fields: numbers and booleans as JSON's.
fn fields(q: HashMap<String, String>) -> Value {
    let mut m = Map::new();
    for (k, v) in q {
        let value = match k.as_str() {
            "pageSize" | "historyLength" => v.parse::<i64>().map(Value::from).unwrap_or(Value::String(v)),
            "includeArtifacts" => Value::Bool(v == "true" || v == "1"),
            _ => Value::String(v),
        };
        m.insert(k, value);
    }
    Value::Object(m)
}

async fn list(
    (State(state), axum::Extension(caller), headers): Ctx,
    Path(agent): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    run(state, caller, &agent, &headers, "ListTasks", fields(q)).await
}

async fn task(
    (State(state), axum::Extension(caller), headers): Ctx,
    Path((agent, task)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let mut p = fields(q);
    p["id"] = json!(task);
    run(state, caller, &agent, &headers, "GetTask", p).await
}

/// `POST …/tasks/<id>:cancel` and `…/tasks/<id>:subscribe`.
async fn task_action(
    (State(state), axum::Extension(caller), headers): Ctx,
    Path((agent, task)): Path<(String, String)>,
) -> Response {
    let (method, id) = match task.rsplit_once(':') {
        Some((id, "cancel")) => ("CancelTask", id),
        Some((id, "subscribe")) => ("SubscribeToTask", id),
        _ => {
            let e = RpcError::method_not_found(&format!("POST tasks/{task}"));
            return failure(e);
        }
    };
    run(state, caller, &agent, &headers, method, json!({"id": id})).await
}

async fn extended_card((State(state), axum::Extension(caller), headers): Ctx, Path(agent): Path<String>) -> Response {
    run(state, caller, &agent, &headers, "GetExtendedAgentCard", json!({})).await
}
