//! The three MCP servers hal0 mounts (`hal0-agents`, `hal0-memory`, `hal0-admin`) and the
//! glue they share: reading the guard's caller from the request, and rendering hal0
//! errors as tool results.

pub mod admin;
pub mod agents;
pub mod memory;

use crate::error::Error;
use crate::server::guard::Caller;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;

/// The caller the guard attached to the HTTP request behind this MCP request.
pub fn caller(ctx: &RequestContext<RoleServer>) -> Option<Caller> {
    ctx.extensions.get::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<Caller>()).cloned()
}

/// A successful tool result carrying JSON both as structured content and as text.
pub fn ok_json(v: serde_json::Value) -> CallToolResult {
    CallToolResult::structured(v)
}

/// The bridge failure shape: `isError` with `bridge.<code>: <message>` text.
pub fn bridge_error(e: &Error) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("{}: {}", e.code, e.message))])
}

/// The admin envelope: `{"status":"error","error":{"code","message"}}` reported as `isError`.
pub fn admin_error(e: &Error) -> CallToolResult {
    CallToolResult::structured_error(serde_json::json!({
        "status": "error",
        "error": {"code": e.code, "message": e.message},
    }))
}
