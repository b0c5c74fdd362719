//! `hal0-admin` (`/mcp/admin/mcp`): operate hal0. Every tool takes `{"args": {...}}` and
//! answers with the REST JSON of its route; lists are wrapped `{"<key>": [...], "count"}`.

use super::{admin_error, caller, ok_json};
use crate::server::AppState;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde_json::json;
use std::sync::Arc;

/// The admin call signature: route arguments under `args` (none for these tools).
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct AdminArgs {
    /// Arguments of the REST route this tool passes through.
    #[serde(default)]
    pub args: serde_json::Map<String, serde_json::Value>,
}

#[derive(Clone)]
pub struct AdminServer {
    state: Arc<AppState>,
    tool_router: ToolRouter<AdminServer>,
}

#[tool_router]
impl AdminServer {
    pub fn new(state: Arc<AppState>) -> Self {
        AdminServer { state, tool_router: Self::tool_router() }
    }

    /// `GET /api/status`.
    #[tool(description = "hal0's name, version, uptime and which MCP servers are mounted (GET /api/status).")]
    async fn version_info(
        &self,
        Parameters(_a): Parameters<AdminArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        tracing::debug!(caller = ?caller(&ctx).map(|c| c.identity), "version_info");
        ok_json(crate::server::rest::status_json(&self.state))
    }

    /// `GET /api/bridge/clients`.
    #[tool(
        description = "Bridge clients with their scopes, notes, created and last-seen times; never a key (GET /api/bridge/clients)."
    )]
    async fn bridge_client_list(&self, Parameters(_a): Parameters<AdminArgs>) -> CallToolResult {
        match self.state.store.call(crate::auth::bridge::list).await {
            Ok(list) => ok_json(json!({"count": list.len(), "clients": list})),
            Err(e) => admin_error(&e),
        }
    }
}

#[tool_handler(router = self.tool_router, name = "hal0-admin", instructions = "Operate hal0. Gated tools wait in the approvals inbox for a person.")]
impl ServerHandler for AdminServer {}
