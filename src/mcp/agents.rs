//! `hal0-agents` (`/mcp/agents/mcp`): the agent bridge for remote coding agents holding a
//! bridge key. The run and teach tools arrive with the agent-bridge and teach issues; this
//! server carries the handshake, identity and tool plumbing they build on.

use crate::server::AppState;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::{ServerHandler, tool_handler, tool_router};
use std::sync::Arc;

#[derive(Clone)]
pub struct AgentsServer {
    #[allow(dead_code)]
    state: Arc<AppState>,
    tool_router: ToolRouter<AgentsServer>,
}

#[tool_router(allow_empty)]
impl AgentsServer {
    pub fn new(state: Arc<AppState>) -> Self {
        AgentsServer { state, tool_router: Self::tool_router() }
    }
}

#[tool_handler(router = self.tool_router, name = "hal0-agents", instructions = "hal0 agent bridge: delegate runs to the Hermes agent on this box and follow them.")]
impl ServerHandler for AgentsServer {}
