//! The MCP face of hal0's proxy (`/mcp/proxy/<id>/mcp`): a consumer speaks MCP to hal0 and
//! the policy in `crate::proxy` decides what reaches the installed server. The
//! guard has already checked the consumer's key against `<id>` and attached the target.

// The proxy relays what upstream servers still speak: logging, roots, sampling and
// subscriptions are deprecated in the newest protocol (SEP-2577), not gone.
#![allow(deprecated)]

use super::caller;
use crate::auth::Credential;
use crate::base::actor::Actor;
use crate::proxy::wire_path::Registration;
use crate::proxy::{Consumer, Link, Served, Who, error_result};
use crate::server::AppState;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::sync::{Arc, OnceLock};

/// The installed server a proxy request is for, as the guard resolved it from the path.
#[derive(Clone)]
pub struct ProxyTarget(pub Arc<Served>);

/// One consumer session of the proxy (rmcp makes one per session).
#[derive(Clone)]
pub struct ProxyServer {
    state: Arc<AppState>,
    /// This session's own upstream sessions (http servers).
    link: Arc<Link>,
    /// The session's place in the wire path's table, from its first message that names
    /// the session (dropped with the session).
    registered: Arc<OnceLock<Registration>>,
}

impl ProxyServer {
    pub fn new(state: Arc<AppState>) -> Self {
        ProxyServer { state, link: Arc::default(), registered: Arc::default() }
    }

    /// Let the wire path serve this session's next calls, once its id is known.
    fn register(&self, parts: Option<&axum::http::request::Parts>, peer: &rmcp::service::Peer<RoleServer>) {
        if self.registered.get().is_some() {
            return;
        }
        let Some(parts) = parts else { return };
        let sid = parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok());
        let (Some(sid), Some(t)) = (sid, parts.extensions.get::<ProxyTarget>()) else { return };
        let who = who_of(parts.extensions.get::<crate::server::guard::Caller>());
        let reg = self.state.proxy.register_session(sid, &t.0.record.id, who, self.link.clone(), peer.clone());
        let _ = self.registered.set(reg);
    }

    fn consumer(&self, ctx: &RequestContext<RoleServer>) -> Consumer {
        Consumer {
            peer: ctx.peer.clone(),
            token: ctx.meta.get_progress_token(),
            ct: ctx.ct.clone(),
            link: self.link.clone(),
        }
    }
}

use crate::proxy::error_data as mcp_error;

fn target(ctx: &RequestContext<RoleServer>) -> Result<Arc<Served>, ErrorData> {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<ProxyTarget>())
        .map(|t| t.0.clone())
        .ok_or_else(|| ErrorData::internal_error("the proxy target is missing from the request", None))
}

fn who(ctx: &RequestContext<RoleServer>) -> Who {
    who_of(caller(ctx))
}

/// Who a proxy request comes from, by the guard's caller.
pub fn who_of(caller: Option<&crate::server::guard::Caller>) -> Who {
    match caller {
        Some(c) => match &c.cred {
            Credential::Consumer(k) => {
                Who { identity: Actor::Consumer(k.name.clone()).to_string(), client: k.name.clone() }
            }
            _ => {
                let admin = Actor::Admin(c.identity.clone()).to_string();
                Who { identity: admin.clone(), client: admin }
            }
        },
        None => Who { identity: "anonymous".into(), client: "anonymous".into() },
    }
}

impl ServerHandler for ProxyServer {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_logging()
            .enable_completions()
            .build();
        ServerConfig::new(caps)
            .with_server_info(Implementation::new("hal0-proxy", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "hal0's policy proxy for an installed MCP server: only tools the operator allowed or gated are \
                 listed; gated calls wait for a person's approval. Resources and prompts are listed only where the \
                 operator allowed them."
                    .to_string(),
            )
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.register(context.extensions.get::<axum::http::request::Parts>(), &context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.register(context.extensions.get::<axum::http::request::Parts>(), &context.peer);
        let served = target(&context)?;
        match self.state.proxy.list_tools(&served, &self.consumer(&context)).await {
            Ok(tools) => Ok(ListToolsResult::with_all_items(tools)),
            Err(e) => Err(mcp_error(&e)),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let served = target(&context)?;
        let all =
            self.state.proxy.list_resources(&served, &self.consumer(&context)).await.map_err(|e| mcp_error(&e))?;
        Ok(ListResourcesResult::with_all_items(all))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let served = target(&context)?;
        let all = self
            .state
            .proxy
            .list_resource_templates(&served, &self.consumer(&context))
            .await
            .map_err(|e| mcp_error(&e))?;
        Ok(ListResourceTemplatesResult::with_all_items(all))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let served = target(&context)?;
        let (who, consumer) = (who(&context), self.consumer(&context));
        let out = self.state.proxy.read_resource(&served, &consumer, &who, request).await;
        out.map(Into::into).map_err(|e| mcp_error(&e))
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let served = target(&context)?;
        let (who, consumer) = (who(&context), self.consumer(&context));
        self.state.proxy.subscribe(&served, &consumer, &who, request.uri, true).await.map_err(|e| mcp_error(&e))
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let served = target(&context)?;
        let (who, consumer) = (who(&context), self.consumer(&context));
        self.state.proxy.subscribe(&served, &consumer, &who, request.uri, false).await.map_err(|e| mcp_error(&e))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let served = target(&context)?;
        let all = self.state.proxy.list_prompts(&served, &self.consumer(&context)).await.map_err(|e| mcp_error(&e))?;
        Ok(ListPromptsResult::with_all_items(all))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let served = target(&context)?;
        let (who, consumer) = (who(&context), self.consumer(&context));
        let out = self.state.proxy.get_prompt(&served, &consumer, &who, request).await;
        out.map(Into::into).map_err(|e| mcp_error(&e))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let served = target(&context)?;
        let (who, consumer) = (who(&context), self.consumer(&context));
        self.state.proxy.complete(&served, &consumer, &who, request).await.map_err(|e| mcp_error(&e))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let served = target(&context)?;
        self.state.proxy.set_level(&served, &self.consumer(&context), request).await.map_err(|e| mcp_error(&e))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let served = match target(&context) {
            Ok(s) => s,
            Err(e) => {
                return Ok(error_result(&crate::base::error::Error::internal(e.message.to_string())).into());
            }
        };
        let who = who(&context);
        let progress = super::progress::of(&context, self.state.progress_every());
        let started = std::time::Instant::now();
        let surface = format!("proxy/{}", served.record.id);
        let span = crate::base::observe::telemetry::tool_call_span(
            &surface,
            &request.name,
            &crate::base::observe::telemetry::Incoming::of(&context),
        );
        let consumer = self.consumer(&context);
        // On 2026-07-28 a gated call is not held open: it is answered round by round.
        use crate::proxy::{Rounds, Waiting};
        let waiting = if crate::proxy::rounds::modern(&context) {
            Waiting::Rounds(Rounds::of(&request, context.client_capabilities().as_ref()))
        } else {
            Waiting::Hold(&progress)
        };
        let call = self.state.proxy.call(&served, &request.name, request.arguments, &who, waiting, &consumer);
        let out = match crate::base::observe::telemetry::within(span.as_ref().map(|s| s.ctx.clone()), call).await {
            Ok(r) => Ok(r),
            Err(e) => Err(super::unknown_tool(&request.name, &e)),
        };
        crate::base::observe::metrics::tool_call(
            &surface,
            &request.name,
            crate::base::observe::metrics::outcome_of(&out),
            started.elapsed(),
        );
        crate::base::observe::telemetry::end_tool_call(span, &out);
        out
    }
}
