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

use crate::audit::Verdict;
use crate::base::error::Error;
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
    (store, wait, refuse): (&crate::store::Store, AuditWait, fn(&Error) -> CallToolResult),
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
    let call = Audited { store, surface, tool: &name, identity: &identity, read_only, refuse, trace };
    call.run(args, async { if known { router.call(tcc).await } else { Err(no_such_tool(surface, &name)) } }).await
}

/// One tool call and its audit entry. A call that may change state has its entry stored
/// (`started`) before it runs and is refused when that fails, so no change is ever made
/// without its entry; the outcome is written onto the entry when the call ends. A call to
/// a `read_only` tool runs at once and its entry gathers with others (see
/// `audit::record_soon`); a failure to record it is logged, never turned into a failed call.
pub struct Audited<'a> {
    pub store: &'a crate::store::Store,
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
        let entry = crate::audit::Entry {
            surface: self.surface,
            tool: self.tool,
            identity: self.identity,
            arguments: &args,
            verdict: Verdict::Ok,
            result_code: None,
            approval_id: None,
            detail: None,
        };
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
        if self.read_only {
            let out = timed.await;
            let (verdict, code, approval) = outcome(&out);
            let e = crate::audit::Entry {
                verdict,
                result_code: code.as_deref(),
                approval_id: approval.as_deref(),
                ..entry
            };
            let r = if verdict == Verdict::Gated {
                crate::audit::record_async(self.store, &e).await.map(drop)
            } else {
                crate::audit::record_soon(self.store, &e)
            };
            if let Err(e) = r {
                tracing::warn!("cannot record the audit entry: {}", e.message);
            }
            return out;
        }
        let id = match crate::audit::begin(self.store, &entry).await {
            Ok(id) => id,
            Err(e) => {
                tracing::error!(code = e.code, tool = self.tool, "refused a call: {}", e.message);
                return Ok((self.refuse)(&e).into());
            }
        };
        // A call dropped before it answers (its client cancelled it or went away) still
        // gets an outcome on its `started` row.
        let unanswered = crate::audit::Unanswered::new(self.store, id);
        let out = timed.await;
        let id = unanswered.answered();
        let (verdict, result_code, approval_id) = outcome(&out);
        crate::audit::finish(self.store, crate::audit::Outcome { id, verdict, result_code, approval_id });
        out
    }
}

/// The verdict, result code and approval id of a tool call, read off its result.
fn outcome(out: &Response) -> (Verdict, Option<String>, Option<String>) {
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
                (Verdict::Error, code, None)
            } else if s["status"] == "pending_approval" {
                (Verdict::Gated, None, s["approval_id"].as_str().map(str::to_string))
            } else {
                (Verdict::Ok, None, None)
            }
        }
        Ok(_) => (Verdict::Ok, None, None),
        Err(e) => {
            let code = e.data.as_ref().and_then(|d| d["code"].as_str()).map(str::to_string);
            (Verdict::Error, Some(code.unwrap_or_else(|| format!("rpc.{}", e.code.0))), None)
        }
    }
}

#[cfg(test)]
mod cancel_tests {
    use super::*;

    #[tokio::test]
    async fn a_write_call_dropped_midway_is_recorded_as_cancelled() {
        let (_dir, store) = crate::store::scratch();
        let call = Audited {
            store: &store,
            surface: "mcp:admin",
            tool: "config_write",
            identity: "bridge:ops",
            read_only: false,
            refuse: |e| CallToolResult::error(vec![rmcp::model::ContentBlock::text(e.message.clone())]),
            trace: crate::base::observe::telemetry::Incoming::default(),
        };
        let never = std::future::pending::<Response>();
        let cut = tokio::time::timeout(std::time::Duration::from_millis(200), call.run(None, never)).await;
        assert!(cut.is_err(), "the call was still running when it was dropped");
        crate::audit::flush(&store).await;
        let f = crate::audit::Filter { limit: 10, ..Default::default() };
        let rows = crate::audit::list(&store, &f).unwrap();
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!((rows[0].verdict, rows[0].result_code.as_deref()), (Verdict::Error, Some("rpc.cancelled")));
    }
}
