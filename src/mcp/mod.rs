//! The three MCP servers hal0 mounts (`hal0-agents`, `hal0-memory`, `hal0-admin`) and the
//! glue they share: reading the guard's caller from the request, and rendering hal0
//! errors as tool results.

pub mod admin;
pub mod agents;
pub mod memory;
pub mod progress;
pub mod proxy;
pub mod relay;
pub mod schema;

use crate::base::error::Error;
use crate::ops::call::{Came, Recorded, Verdict};
use crate::server::guard::Caller;
use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;

/// The caller the guard attached to the HTTP request behind this MCP request.
pub fn caller(ctx: &RequestContext<RoleServer>) -> Option<&Caller> {
    ctx.extensions.get::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<Caller>())
}

/// A successful tool result carrying JSON both as structured content and as text.
pub fn ok_json(v: serde_json::Value) -> CallToolResult {
    CallToolResult::structured(v)
}

/// The answer to a call of a tool a mount does not offer, the same on every mount:
/// JSON-RPC `-32602` (invalid params, as the MCP spec says for an unknown tool), with
/// hal0's code, the tool and what to do in `data`.
pub fn unknown_tool(name: &str, e: &Error) -> rmcp::ErrorData {
    let message = crate::base::redact::redact(&e.message).to_string();
    rmcp::ErrorData::invalid_params(
        message.clone(),
        Some(serde_json::json!({"code": "mcp.unknown_tool", "tool": name, "message": message})),
    )
}

/// [`unknown_tool`] for a tool `mount` has no route for.
pub fn no_such_tool(mount: &str, name: &str) -> rmcp::ErrorData {
    unknown_tool(
        name,
        &Error::not_found("mcp.unknown_tool", format!("{mount} has no tool `{name}` (tools/list names its tools)")),
    )
}

/// The admin envelope: `{"status":"error","error":{"code","message"}}` reported as `isError`.
pub fn admin_error(e: &Error) -> CallToolResult {
    CallToolResult::structured_error(serde_json::json!({
        "status": "error",
        "error": {"code": e.code, "message": e.message},
    }))
}

/// Audit identity of an MCP caller: `bridge:<client>` for a bridge key or an OAuth grant, else the box key's
/// tier and agent header.
pub fn audit_identity(ctx: &RequestContext<RoleServer>) -> String {
    caller(ctx).map(Caller::audit_identity).unwrap_or_else(|| "anonymous".into())
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
/// `call_tool` of hal0-agents, hal0-memory and hal0-relay); `refuse` renders the refusal of
/// a call whose entry cannot be stored.
pub async fn routed_and_audited<S: Send + Sync + 'static>(
    service: &S,
    router: &rmcp::handler::server::router::tool::ToolRouter<S>,
    (svc, wait, refuse): (&crate::ops::Services, AuditWait, fn(&Error) -> CallToolResult),
    surface: &'static str,
    request: rmcp::model::CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
    let (name, args) = (request.name.to_string(), request.arguments.clone());
    let identity = audit_identity(&context);
    let tool = router.get(&name);
    // An unknown tool changes nothing: its entry gathers with the reads.
    let read_only = wait == AuditWait::Never
        || tool.is_none_or(|t| t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true));
    let known = tool.is_some();
    let trace = crate::base::observe::telemetry::Incoming::of(&context);
    let tcc = rmcp::handler::server::tool::ToolCallContext::new(service, request, context);
    let call = Audited { svc, surface, tool: &name, identity: &identity, read_only, refuse, trace };
    call.run(args, async { if known { router.call(tcc).await } else { Err(no_such_tool(surface, &name)) } }).await
}

/// One tool call, its metrics and span, and its audit entry ([`Recorded`]: a call that may
/// change state is refused when its entry cannot be stored; a `read_only` one runs at once).
pub struct Audited<'a> {
    pub svc: &'a crate::ops::Services,
    pub surface: &'static str,
    pub tool: &'a str,
    pub identity: &'a str,
    pub read_only: bool,
    /// Renders the refusal in the server's own error shape.
    pub refuse: fn(&Error) -> CallToolResult,
    /// The caller's trace context, for the call's span.
    pub trace: crate::base::observe::telemetry::Incoming,
}

type Response = Result<rmcp::model::CallToolResponse, rmcp::ErrorData>;

impl Audited<'_> {
    pub async fn run(
        &self,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        call: impl std::future::Future<Output = Response>,
    ) -> Response {
        let args = serde_json::Value::Object(arguments.unwrap_or_default());
        let started = std::time::Instant::now();
        let server = self.surface.strip_prefix("mcp:").unwrap_or(self.surface);
        let span = crate::base::observe::telemetry::tool_call_span(server, self.tool, &self.trace);
        let timed = async {
            let out = crate::base::observe::telemetry::within(span.as_ref().map(|s| s.ctx.clone()), call).await;
            crate::base::observe::metrics::tool_call(
                self.surface,
                self.tool,
                crate::base::observe::metrics::outcome_of(&out),
                started.elapsed(),
            );
            crate::base::observe::telemetry::end_tool_call(span, &out);
            out
        };
        let call = Recorded {
            store: &self.svc.store,
            surface: self.surface,
            tool: self.tool,
            identity: self.identity,
            arguments: &args,
            read_only: self.read_only,
        };
        call.run(timed, outcome).await.unwrap_or_else(|e| Ok((self.refuse)(&e).into()))
    }
}

/// What a tool call came to, read off its result.
fn outcome(out: &Response) -> Came {
    match out {
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
                Came { verdict: Verdict::Error, code, approval_id: None }
            } else if s["status"] == "pending_approval" {
                Came::gated(s["approval_id"].as_str().map(str::to_string))
            } else {
                Came::ok()
            }
        }
        Ok(_) => Came::ok(),
        Err(e) => {
            let code = e.data.as_ref().and_then(|d| d["code"].as_str()).map(str::to_string);
            Came::error(code.unwrap_or_else(|| format!("rpc.{}", e.code.0)))
        }
    }
}
