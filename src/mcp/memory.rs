//! `hal0-memory` (`/mcp/memory/mcp`): long-term memory tools. The memory engine and its
//! tools arrive with the memory issue; this server carries the handshake and tier.

use crate::server::AppState;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::{ServerHandler, tool_handler, tool_router};
use std::sync::Arc;

#[derive(Clone)]
pub struct MemoryServer {
    #[allow(dead_code)]
    state: Arc<AppState>,
    tool_router: ToolRouter<MemoryServer>,
}

#[tool_router(allow_empty)]
impl MemoryServer {
    pub fn new(state: Arc<AppState>) -> Self {
        MemoryServer { state, tool_router: Self::tool_router() }
    }
}

#[tool_handler(router = self.tool_router, name = "hal0-memory", instructions = "hal0 long-term memory.")]
impl ServerHandler for MemoryServer {}
