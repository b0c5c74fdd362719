//! The MCP face of hal0's proxy (`/mcp/proxy/<id>/mcp`): a consumer speaks MCP to hal0 and
//! the policy in `crate::registry::proxy` decides what reaches the installed server. The
//! guard has already checked the consumer's key against `<id>` and attached the target.

use super::caller;
use crate::auth::Credential;
use crate::registry::proxy::{Served, Who, error_result};
use crate::server::AppState;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::sync::Arc;

/// The installed server a proxy request is for, as the guard resolved it from the path.
#[derive(Clone)]
pub struct ProxyTarget(pub Arc<Served>);

#[derive(Clone)]
pub struct ProxyServer {
    state: Arc<AppState>,
}

impl ProxyServer {
    pub fn new(state: Arc<AppState>) -> Self {
        ProxyServer { state }
    }
}

fn target(ctx: &RequestContext<RoleServer>) -> Result<Arc<Served>, ErrorData> {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<ProxyTarget>())
        .map(|t| t.0.clone())
        .ok_or_else(|| ErrorData::internal_error("the proxy target is missing from the request", None))
}

fn who(ctx: &RequestContext<RoleServer>) -> Who {
    match caller(ctx) {
        Some(c) => match c.cred {
            Credential::Consumer(k) => Who { identity: format!("consumer:{}", k.name), client: k.name },
            _ => Who { identity: format!("admin:{}", c.identity), client: format!("admin:{}", c.identity) },
        },
        None => Who { identity: "anonymous".into(), client: "anonymous".into() },
    }
}

impl ServerHandler for ProxyServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("hal0-proxy", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "hal0's policy proxy for an installed MCP server: only tools the operator allowed or gated are \
                 listed; gated calls wait for a person's approval."
                    .to_string(),
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let served = target(&context)?;
        match self.state.proxy.list_tools(&served).await {
            Ok(tools) => Ok(ListToolsResult::with_all_items(tools)),
            Err(e) => {
                Err(ErrorData::internal_error(format!("{}: {}", e.code, crate::redact::redact(&e.message)), None))
            }
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let served = match target(&context) {
            Ok(s) => s,
            Err(e) => {
                return Ok(error_result(&crate::error::Error::internal(e.message.to_string())).into());
            }
        };
        let who = who(&context);
        let progress = super::progress::of(&context, &self.state.config);
        let started = std::time::Instant::now();
        let surface = format!("proxy/{}", served.record.id);
        let span = crate::telemetry::tool_call_span(&surface, &request.name, &crate::telemetry::Incoming::of(&context));
        let call = self.state.proxy.call(&served, &request.name, request.arguments, &who, &progress);
        let out = match crate::telemetry::within(span.as_ref().map(|s| s.ctx), call).await {
            Ok(r) => Ok(r.into()),
            Err(e) => Err(super::unknown_tool(&request.name, &e)),
        };
        crate::metrics::tool_call(&surface, &request.name, crate::metrics::outcome_of(&out), started.elapsed());
        crate::telemetry::end_tool_call(span, &out);
        out
    }
}
