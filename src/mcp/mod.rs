//! The three MCP servers hal0 mounts (`hal0-agents`, `hal0-memory`, `hal0-admin`) and the
//! glue they share: reading the guard's caller from the request, and rendering hal0
//! errors as tool results.

pub mod admin;
pub mod agents;
pub mod memory;
pub mod progress;
pub mod proxy;
pub mod relay;

use crate::audit::Verdict;
use crate::error::Error;
use crate::server::guard::Caller;
use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;

/// The caller the guard attached to the HTTP request behind this MCP request.
pub fn caller(ctx: &RequestContext<RoleServer>) -> Option<Caller> {
    ctx.extensions.get::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<Caller>()).cloned()
}

/// A successful tool result carrying JSON both as structured content and as text.
pub fn ok_json(v: serde_json::Value) -> CallToolResult {
    CallToolResult::structured(v)
}

/// The admin envelope: `{"status":"error","error":{"code","message"}}` reported as `isError`.
pub fn admin_error(e: &Error) -> CallToolResult {
    CallToolResult::structured_error(serde_json::json!({
        "status": "error",
        "error": {"code": e.code, "message": e.message},
    }))
}

/// Audit identity of an MCP caller: `bridge:<client>` for a bridge key, else the box key's
/// tier and agent header.
pub fn audit_identity(ctx: &RequestContext<RoleServer>) -> String {
    use crate::auth::Credential;
    match caller(ctx) {
        Some(c) => match c.cred {
            Credential::Bridge(b) => format!("bridge:{}", b.name),
            Credential::Admin => format!("admin:{}", c.identity),
            Credential::Client => format!("client:{}", c.identity),
            _ => c.identity,
        },
        None => "anonymous".into(),
    }
}

/// How a server's tool calls wait for their audit entry.
#[derive(Clone, Copy, PartialEq)]
pub enum AuditWait {
    /// Calls to read-only tools answer at once; every other call once its entry is stored.
    ReadsOnly,
    /// No call waits: the server keeps its own durable record of what its calls change
    /// (the relay's history), and the audit entries gather like reads'.
    Never,
}

/// Run a tool through a generated tool router and record the call in the audit log (the
/// `call_tool` of hal0-agents, hal0-memory and hal0-relay).
pub async fn routed_and_audited<S: Send + Sync + 'static>(
    service: &S,
    router: &rmcp::handler::server::router::tool::ToolRouter<S>,
    (store, wait): (&crate::store::Store, AuditWait),
    surface: &'static str,
    request: rmcp::model::CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
    let (name, args) = (request.name.to_string(), request.arguments.clone());
    let identity = audit_identity(&context);
    let read_only = wait == AuditWait::Never
        || router.get(&name).and_then(|t| t.annotations.as_ref()).and_then(|a| a.read_only_hint) == Some(true);
    let tcc = rmcp::handler::server::tool::ToolCallContext::new(service, request, context);
    let out = router.call(tcc).await;
    audit_call(store, surface, &name, &identity, args, &out, read_only).await;
    out
}

/// Record one tool call in the audit log: the verdict, result code and approval id are read
/// off the result. A failure to record is logged, never turned into a failed call. A call to
/// a `read_only` tool does not wait for its entry's commit (see `audit::record_soon`); any
/// other call answers only once its entry is stored.
pub async fn audit_call(
    store: &crate::store::Store,
    surface: &'static str,
    tool: &str,
    identity: &str,
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
    out: &Result<rmcp::model::CallToolResponse, rmcp::ErrorData>,
    read_only: bool,
) {
    let (verdict, code, approval) = match out {
        Ok(rmcp::model::CallToolResponse::Complete(r)) => {
            let none = serde_json::Value::Null;
            let s = r.structured_content.as_ref().unwrap_or(&none);
            if r.is_error == Some(true) {
                let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
                let code = s["error"]["code"]
                    .as_str()
                    .map(str::to_string)
                    .or_else(|| text.split_once(':').map(|(c, _)| c.trim().to_string()))
                    .filter(|c| !c.contains(' '));
                (Verdict::Error, code, None)
            } else if s["status"] == "pending_approval" {
                (Verdict::Gated, None, s["approval_id"].as_str().map(str::to_string))
            } else {
                (Verdict::Ok, None, None)
            }
        }
        Ok(_) => (Verdict::Ok, None, None),
        Err(e) => (Verdict::Error, Some(format!("rpc.{}", e.code.0)), None),
    };
    let args = serde_json::Value::Object(arguments.unwrap_or_default());
    let entry = crate::audit::Entry {
        surface,
        tool,
        identity,
        arguments: &args,
        verdict,
        result_code: code.as_deref(),
        approval_id: approval.as_deref(),
        detail: None,
    };
    let r = if read_only && verdict != Verdict::Gated {
        crate::audit::record_soon(store, &entry)
    } else {
        crate::audit::record_async(store, &entry).await.map(drop)
    };
    if let Err(e) = r {
        tracing::warn!("cannot record the audit entry: {}", e.message);
    }
}
