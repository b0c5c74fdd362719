//! The JSON-RPC binding of A2A 1.0 at `/a2a/hermes[/<profile>]`: the envelope, the
//! `A2A-Version` check, A2A's error codes, the audit entry of each call, and the dispatch
//! of each method to [`super::methods`] (or [`super::stream`] for the two streaming ones).

use super::methods::{self, Face};
use crate::base::error::{Error, Kind};
use crate::ops::call::{Came, Recorded};
use crate::server::AppState;
use crate::server::guard::Caller;
use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;

/// The audit surface of the A2A face.
const SURFACE: &str = "a2a";

/// An A2A error as JSON-RPC carries it: the code A2A assigns, its `ErrorInfo` reason, and
/// the message (which starts with hal0's own stable code, as hal0-agents' errors do).
#[derive(Debug)]
pub struct RpcError {
    pub code: i64,
    pub reason: &'static str,
    pub message: String,
    /// hal0's code, for the audit row.
    pub hal0: String,
    /// The HTTP status the HTTP+JSON binding answers with.
    pub http: u16,
}

impl RpcError {
    fn new(code: i64, reason: &'static str, hal0: impl Into<String>, message: impl Into<String>) -> RpcError {
        let hal0 = hal0.into();
        let http = match reason {
            "TASK_NOT_FOUND" | "METHOD_NOT_FOUND" => 404,
            "INTERNAL" | "HAL0_ERROR" => 500,
            _ => 400,
        };
        RpcError { code, reason, message: format!("{hal0}: {}", message.into()), hal0, http }
    }
    pub fn invalid(hal0: &'static str, message: impl Into<String>) -> RpcError {
        RpcError::new(-32602, "INVALID_PARAMS", hal0, message)
    }
    /// Invalid params under a code made at run time (a relay failure's).
    pub fn invalid_owned(hal0: String, message: impl Into<String>) -> RpcError {
        RpcError::new(-32602, "INVALID_PARAMS", hal0, message)
    }
    /// A hal0 failure A2A has no code for: JSON-RPC's server error, hal0's code first.
    pub fn server(hal0: impl Into<String>, message: impl Into<String>) -> RpcError {
        RpcError::new(-32000, "HAL0_ERROR", hal0, message)
    }
    pub fn task_not_found() -> RpcError {
        RpcError::new(
            -32001,
            "TASK_NOT_FOUND",
            "bridge.run_not_found",
            "no such task (it may belong to another client)",
        )
    }
    pub fn not_cancelable(message: impl Into<String>) -> RpcError {
        RpcError::new(-32002, "TASK_NOT_CANCELABLE", "a2a.task_not_cancelable", message)
    }
    pub fn unsupported(hal0: &'static str, message: impl Into<String>) -> RpcError {
        RpcError::new(-32004, "UNSUPPORTED_OPERATION", hal0, message)
    }
    pub fn method_not_found(method: &str) -> RpcError {
        RpcError::new(
            -32601,
            "METHOD_NOT_FOUND",
            "a2a.method_not_found",
            format!(
                "no method `{method}`: hal0 offers SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask and SubscribeToTask"
            ),
        )
    }
    pub fn content_type(message: impl Into<String>) -> RpcError {
        RpcError::new(-32005, "CONTENT_TYPE_NOT_SUPPORTED", "a2a.content_type", message)
    }

    /// The HTTP+JSON binding's error body (a `google.rpc.Status`).
    pub fn status_body(&self) -> Value {
        let status = match self.http {
            404 => "NOT_FOUND",
            400 if self.reason == "INVALID_PARAMS" || self.reason == "INVALID_REQUEST" => "INVALID_ARGUMENT",
            400 if self.reason == "CONTENT_TYPE_NOT_SUPPORTED" => "INVALID_ARGUMENT",
            400 => "FAILED_PRECONDITION",
            401 => "UNAUTHENTICATED",
            403 => "PERMISSION_DENIED",
            409 => "ABORTED",
            429 => "RESOURCE_EXHAUSTED",
            503 => "UNAVAILABLE",
            _ => "INTERNAL",
        };
        let mut b = self.body();
        let details = b["data"].take();
        json!({"error": {"code": self.http, "status": status, "message": self.message, "details": details}})
    }

    /// The JSON-RPC `error` member.
    fn body(&self) -> Value {
        json!({
            "code": self.code,
            "message": self.message,
            "data": [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": self.reason,
                "domain": "a2a-protocol.org",
                "metadata": {"hal0_code": self.hal0},
            }],
        })
    }
}

impl From<Error> for RpcError {
    /// A hal0 failure in A2A's terms: a run this caller cannot see is a task not found, bad
    /// input is invalid params, an internal failure says only where to look; anything else
    /// keeps hal0's code and message under JSON-RPC's server-error code.
    fn from(e: Error) -> RpcError {
        match (e.code, &e.kind) {
            ("bridge.run_not_found" | "bridge.invalid_run_id", _) => RpcError::task_not_found(),
            // A message the task cannot take now: A2A's "unsupported operation".
            ("bridge.run_ended" | "bridge.run_waits_for_person", _) => RpcError::unsupported(e.code, e.message),
            (_, Kind::Internal) => {
                tracing::error!(code = e.code, "A2A call failed: {}", e.message);
                RpcError::new(-32603, "INTERNAL", "a2a.internal", "internal error; see the hal0 log")
            }
            (_, Kind::Invalid | Kind::Unprocessable) => RpcError::invalid(e.code, e.message),
            _ => RpcError { http: e.status(), ..RpcError::server(e.code, e.message) },
        }
    }
}

pub type RpcResult<T> = std::result::Result<T, RpcError>;

/// A JSON-RPC response (a result or an error) for request `id`.
pub fn envelope(id: &Value, out: RpcResult<Value>) -> Value {
    match out {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e.body()}),
    }
}

fn answer(id: &Value, out: RpcResult<Value>) -> Response {
    axum::Json(envelope(id, out)).into_response()
}

/// `A2A-Version`: hal0 speaks 1.0 (any 1.0.x). A request without the header is a 0.3
/// client, as the specification says to assume.
pub(super) fn check_version(headers: &HeaderMap) -> RpcResult<()> {
    let sent = headers.get("a2a-version").and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty());
    let v = sent.unwrap_or("0.3");
    let mut parts = v.split('.');
    if parts.next() == Some("1") && parts.next() == Some("0") {
        return Ok(());
    }
    Err(RpcError::new(
        -32009,
        "VERSION_NOT_SUPPORTED",
        "a2a.version_not_supported",
        format!("hal0 speaks A2A 1.0; this request is for {v} (send the header A2A-Version: 1.0)"),
    ))
}

/// Methods that change something: their audit entry is stored before they run.
fn changes(method: &str) -> bool {
    matches!(method, "SendMessage" | "SendStreamingMessage" | "CancelTask")
}

/// Whom a request is for: a Hermes profile (`hermes` or `hermes/<profile>`), or a relay bot.
pub enum Target {
    Hermes(String),
    Relay(String),
}

impl Target {
    /// As the audit row names it.
    fn name(&self) -> String {
        match self {
            Target::Hermes(agent) => agent.clone(),
            Target::Relay(bot) => format!("relay/{bot}"),
        }
    }
}

/// `POST /a2a/…`: one JSON-RPC request to `target`.
pub async fn handle(state: Arc<AppState>, caller: Caller, target: Target, headers: HeaderMap, body: Bytes) -> Response {
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        let e = RpcError::new(-32700, "PARSE_ERROR", "a2a.parse_error", "the body is not JSON");
        return answer(&Value::Null, Err(e));
    };
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    let method = req.get("method").and_then(Value::as_str).map(str::to_string);
    let (Some(method), Some("2.0")) = (method, req.get("jsonrpc").and_then(Value::as_str)) else {
        let e = RpcError::new(
            -32600,
            "INVALID_REQUEST",
            "a2a.invalid_request",
            "send one JSON-RPC 2.0 request object with `jsonrpc: \"2.0\"`, `method`, `params` and `id`",
        );
        return answer(&id, Err(e));
    };
    if let Err(e) = check_version(&headers) {
        return answer(&id, Err(e));
    }
    let params = req.get("params").cloned().unwrap_or_else(|| json!({}));
    let out = execute(&state, &caller, &target, &method, params, Some(id.clone())).await;
    match out {
        Ok(Reply::Json(v)) => answer(&id, Ok(v)),
        Ok(Reply::Stream(r)) => r,
        Err(e) => answer(&id, Err(e)),
    }
}

/// Run `method` with `params` for `target`, audited (a change is stored `started` before
/// it runs): the one road of both bindings. `stream_id`: the JSON-RPC id a stream's
/// events answer (`None`: the HTTP+JSON binding's bare events).
pub async fn execute(
    state: &AppState,
    caller: &Caller,
    target: &Target,
    method: &str,
    params: Value,
    stream_id: Option<Value>,
) -> RpcResult<Reply> {
    let identity = caller.audit_identity();
    let entry_args = json!({"agent": target.name(), "params": params});
    // A change has its row stored before it runs; a client that goes away mid-call (a
    // blocking send, a relay ask) leaves it `rpc.cancelled`, never `started`.
    let call = Recorded {
        store: &state.store,
        surface: SURFACE,
        tool: method,
        identity: &identity,
        arguments: &entry_args,
        read_only: !changes(method),
    };
    let run = async {
        match target {
            Target::Hermes(agent) => hermes(state, caller, agent, method, params, stream_id).await,
            Target::Relay(bot) => relay(state, caller, bot, method, params).await,
        }
    };
    let came = |out: &RpcResult<Reply>| match out {
        Ok(_) => Came::ok(),
        Err(e) => Came::error(e.hal0.clone()),
    };
    call.run(run, came).await?
}

/// What a method answers: one JSON-RPC result, or a stream of them.
pub enum Reply {
    Json(Value),
    Stream(Response),
}

/// A request to a Hermes profile, as the bridge's caller `caller`.
async fn hermes(
    state: &AppState,
    caller: &Caller,
    agent: &str,
    method: &str,
    params: Value,
    stream_id: Option<Value>,
) -> RpcResult<Reply> {
    let Some(bridge) = state.bridge.get() else {
        return Err(Error::unavailable("bridge.unavailable", "the run service is not running").into());
    };
    let asker = caller
        .bridge_asker()
        .ok_or_else(|| RpcError::from(Error::forbidden("the A2A face needs a bridge key or the admin key")))?;
    let face = Face { bridge: bridge.clone(), asker, agent: agent.to_string() };
    let face = &face;
    let json = |v: RpcResult<Value>| v.map(Reply::Json);
    match method {
        "SendMessage" => json(methods::send(face, params).await),
        "GetTask" => json(methods::get(face, params).await),
        "ListTasks" => json(methods::list(face, params).await),
        "CancelTask" => json(methods::cancel(face, params).await),
        "SendStreamingMessage" => {
            let run = methods::send_for_stream(face, params).await?;
            Ok(Reply::Stream(super::stream::stream(face, run, stream_id, state.cancel.clone())))
        }
        "SubscribeToTask" => {
            let run = methods::subscribable(face, params).await?;
            Ok(Reply::Stream(super::stream::stream(face, run, stream_id, state.cancel.clone())))
        }
        other => Err(common(other)),
    }
}

/// A request to relay bot `bot`: only `SendMessage` (an ask); there are no tasks.
async fn relay(state: &AppState, caller: &Caller, bot: &str, method: &str, params: Value) -> RpcResult<Reply> {
    let Some(asker) = caller.relay_asker() else {
        return Err(Error::forbidden("a relay bot is asked with a bridge key holding the relay scope").into());
    };
    match method {
        "SendMessage" => super::relay::send(state, &asker, bot, params).await.map(Reply::Json),
        "SendStreamingMessage" | "GetTask" | "ListTasks" | "CancelTask" | "SubscribeToTask" => {
            Err(RpcError::unsupported(
                "a2a.no_tasks",
                "a relay bot answers each message with a message and keeps no tasks: use SendMessage",
            ))
        }
        other => Err(common(other)),
    }
}

/// The answer to a method neither face serves.
fn common(method: &str) -> RpcError {
    match method {
        "GetExtendedAgentCard" => RpcError::new(
            -32007,
            "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            "a2a.no_extended_card",
            "hal0 serves only the public card",
        ),
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => RpcError::new(
            -32003,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
            "a2a.push_not_supported",
            "hal0 sends no push notifications: stream the task (SendStreamingMessage, SubscribeToTask) or poll GetTask",
        ),
        other => RpcError::method_not_found(other),
    }
}
