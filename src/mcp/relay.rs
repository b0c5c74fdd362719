//! `hal0-relay` (`/mcp/relay/mcp`): the bots' MCP tools `ask_agent`, `reply` and
//! `list_agents`, with the hermes-bridge relay's results (JSON, 2-space indented, in one
//! text block; failures `{"ok":false,"error":…}` as `isError`) plus a `detail` saying what
//! to do. The caller is the bot its bridge key names; the rules are in `crate::relay`.

use crate::ops::relay::{self as ops, Asker, Failure, Refusal};
use crate::server::AppState;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::Arc;

/// The audit surface of this server.
const SURFACE: &str = "mcp:relay";

#[derive(Clone)]
pub struct RelayServer {
    state: Arc<AppState>,
    tool_router: ToolRouter<RelayServer>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AskArgs {
    /// The bot to ask (list_agents shows them).
    pub to: String,
    /// The question or message; not empty.
    pub message: String,
    /// Continue a conversation you and this bot already have (from an earlier answer or
    /// wake); leave it out to start one.
    #[serde(default)]
    pub conversation_id: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReplyArgs {
    /// The request_id of the wake you answer.
    pub request_id: String,
    /// Your answer.
    pub answer: String,
}

/// A result as the hermes-bridge relay writes it: the JSON, indented, in one text block.
fn text<T: Serialize>(v: &T, is_error: bool) -> CallToolResult {
    let body = serde_json::to_string_pretty(v).unwrap_or_else(|_| "{}".into());
    if is_error {
        CallToolResult::error(vec![ContentBlock::text(body)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(body)])
    }
}

fn refused(r: &Refusal) -> CallToolResult {
    text(&json!({"ok": false, "error": r.error.as_str(), "detail": r.detail}), true)
}

fn internal(e: &crate::base::error::Error) -> CallToolResult {
    let msg = crate::base::redact::redact(&e.message).into_owned();
    text(&json!({"ok": false, "error": e.code, "detail": msg}), true)
}

impl RelayServer {
    /// The bot calling: the name of its bridge key (the guard let only relay keys in).
    fn bot(ctx: &RequestContext<RoleServer>) -> Option<String> {
        Self::asker(ctx).map(|a| a.client)
    }

    /// The bot calling and whether its key may also start runs (the `agents` scope), which
    /// an ask to a local Hermes profile does.
    fn asker(ctx: &RequestContext<RoleServer>) -> Option<Asker> {
        super::caller(ctx).and_then(crate::server::guard::Caller::relay_asker)
    }

    fn no_bot() -> CallToolResult {
        refused(&Refusal {
            error: Failure::InvalidArgument,
            detail: "the relay answers bots: call it with a bridge key holding the relay scope".into(),
        })
    }
}

#[tool_router]
impl RelayServer {
    pub fn new(state: Arc<AppState>) -> Self {
        static ROUTER: super::schema::RouterCell<RelayServer> = super::schema::RouterCell::new();
        RelayServer { state, tool_router: super::schema::cached_router(&ROUTER, Self::tool_router) }
    }

    #[tool(
        description = "Ask another bot a question and wait for its answer (it is woken over its connection and answers with reply). Returns {ok, conversation_id, answer}; pass conversation_id back to continue the conversation. Failures: unknown_agent, agent_offline, unknown_conversation, timeout, agent_disconnected, invalid_argument, message_too_large (over 1 MiB), scope_required (asking a local Hermes profile needs the agents scope too)."
    )]
    async fn ask_agent(&self, Parameters(a): Parameters<AskArgs>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let Some(from) = Self::asker(&ctx) else { return Self::no_bot() };
        let progress = super::progress::of(&ctx, self.state.progress_every());
        let ask = ops::ask(&self.state, &from, &a.to, &a.message, a.conversation_id.as_deref(), &progress);
        tokio::select! {
            // The ask first: when hal0 stops, it has ended `relay_stopping` already.
            biased;
            out = ask => match out {
                Ok(Ok(answered)) => text(&answered, false),
                Ok(Err(r)) => refused(&r),
                Err(e) => internal(&e),
            },
            // The asker cancelled the call (`notifications/cancelled`, as the TypeScript SDK
            // sends on its timeout): dropping the ask ends it as `asker_gone`.
            _ = ctx.ct.cancelled() => refused(&ops::cut_short(&self.state)),
        }
    }

    #[tool(
        description = "Answer a question another bot asked you: request_id from the wake, and your answer. Returns {ok: true}, or unknown_request when no ask of that id waits for you."
    )]
    async fn reply(&self, Parameters(a): Parameters<ReplyArgs>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let Some(from) = Self::bot(&ctx) else { return Self::no_bot() };
        match ops::reply(&self.state, &from, &a.request_id, a.answer) {
            Ok(()) => text(&json!({"ok": true}), false),
            Err(r) => refused(&r),
        }
    }

    #[tool(description = "The bots you can ask: [{name, online}] by name.", annotations(read_only_hint = true))]
    async fn list_agents(&self) -> CallToolResult {
        match ops::list_agents(&self.state).await {
            Ok(list) => text(&list, false),
            Err(e) => internal(&e),
        }
    }
}

#[tool_handler(router = self.tool_router, name = "hal0-relay", instructions = "hal0 agent relay: ask other bots questions (ask_agent), answer the ones you are asked (reply, with the request_id of the wake), and see who is there (list_agents).")]
impl ServerHandler for RelayServer {
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        super::routed_and_audited(
            self,
            &self.tool_router,
            (&self.state, super::AuditWait::Never, internal),
            SURFACE,
            request,
            context,
        )
        .await
    }
}
