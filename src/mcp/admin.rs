//! `hal0-admin` (`/mcp/admin/mcp`): operate hal0. Its tools are generated from hal0's REST
//! route table ([`crate::ops::ROUTES`]): every tool takes `{"args": {...}}` (schema from the
//! op's argument type; path arguments also take integers) and answers with the route's
//! JSON, `{"status":"pending_approval",…}` when gated (see [`crate::ops::gate`]), or the
//! error envelope.

use super::{admin_error, caller, ok_json};
use crate::ops::Access;
use crate::ops::Ctx;
use crate::ops::gate::{self, Outcome};
use crate::ops::routes::path_args;
use crate::server::AppState;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Map;
use serde_json::json;
use std::sync::Arc;

/// The advertised tools: `{"args": {...}}` with the op's argument schema; path arguments
/// also take integers.
fn tools() -> Vec<rmcp::model::Tool> {
    crate::ops::ROUTES
        .iter()
        .filter_map(|r| {
            let name = r.tool?;
            let mut args = (r.schema)().to_value();
            if let Some(o) = args.as_object_mut() {
                o.remove("$schema");
                o.remove("title");
                // Serde ignores a field it does not know unless the op denies them.
                o.entry("additionalProperties").or_insert(json!(true));
                if o.get("required").is_some_and(|v| v.as_array().is_some_and(|a| a.is_empty())) {
                    o.remove("required");
                }
                for (arg, multi) in path_args(r.path) {
                    let desc = if multi { "path argument (segments separated by /)" } else { "path argument" };
                    if let Some(p) = o.get_mut("properties").and_then(|p| p.get_mut(arg)) {
                        p["type"] = json!(["string", "integer"]);
                        if p.get("description").is_none() {
                            p["description"] = json!(desc);
                        }
                    }
                }
            }
            let required = args.get("required").is_some_and(|v| v.as_array().is_some_and(|a| !a.is_empty()));
            let mut schema = Map::new();
            schema.insert("type".into(), json!("object"));
            schema.insert("properties".into(), json!({"args": args}));
            if required {
                schema.insert("required".into(), json!(["args"]));
            }
            super::schema::portable(&mut schema);
            let gated =
                if r.access == Access::Gated { " Gated: waits in the approvals inbox for a person." } else { "" };
            let tool = rmcp::model::Tool::new(name, format!("{}{gated}", r.description), schema);
            let read_only = r.access == Access::AutonomousRead;
            Some(tool.annotate(rmcp::model::ToolAnnotations::new().read_only(read_only)))
        })
        .collect()
}

#[derive(Clone)]
pub struct AdminServer {
    state: Arc<AppState>,
    tools: Arc<Vec<rmcp::model::Tool>>,
    /// hal0-memory's handlers for the delegated memory_* tools (built once per session).
    memory: Option<super::memory::MemoryServer>,
}

impl AdminServer {
    pub fn new(state: Arc<AppState>) -> Self {
        static TOOLS: std::sync::OnceLock<Arc<Vec<rmcp::model::Tool>>> = std::sync::OnceLock::new();
        let memory = state.config().memory.enabled.then(|| super::memory::MemoryServer::new(state.clone()));
        AdminServer { state, tools: TOOLS.get_or_init(|| Arc::new(tools())).clone(), memory }
    }

    /// Audit identity: `bridge:<client>` for a bridge key, else the agent header's identity.
    fn identity(ctx: &RequestContext<RoleServer>) -> String {
        match caller(ctx) {
            Some(c) => match c.cred.as_bridge() {
                Some(b) => crate::base::actor::Actor::Bridge(b.name.clone()).to_string(),
                None => c.identity.clone(),
            },
            None => "anonymous".into(),
        }
    }
}

impl ServerHandler for AdminServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("hal0-admin", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Operate hal0. Each tool takes {\"args\": {...}}. Gated tools wait in the approvals inbox for a person."
                    .to_string(),
            )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = self.tools.as_ref().clone();
        // The memory_* tools delegate in-process to hal0-memory's own handlers.
        if let Some(mem) = &self.memory {
            tools.extend(mem.list_tools(request, context).await?.tools);
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let identity = Self::identity(&context);
        let audit_id = super::audit_identity(&context);
        let name = request.name.to_string();
        if name.starts_with("memory_")
            && let Some(mem) = &self.memory
        {
            // Same handlers, no HTTP hop; hal0-memory audits the call itself.
            return mem.call_tool(request, context).await;
        }
        let op = crate::ops::op_named(&name);
        // An unknown tool changes nothing: its entry gathers with the reads.
        let read_only = op.is_none_or(|o| o.access == crate::ops::Access::AutonomousRead);
        let call = super::Audited {
            svc: &self.state,
            surface: "mcp:admin",
            tool: &name,
            identity: &audit_id,
            read_only,
            refuse: admin_error,
            trace: crate::base::observe::telemetry::Incoming::of(&context),
        };
        let ctx = Ctx::remote(self.state.ops.clone(), identity);
        // On 2026-07-28 a gated call is answered round by round (its card in the
        // `requestState`), not with a card id to poll.
        use crate::proxy::rounds;
        // (Read only when it matters: most calls are reads that are never gated.)
        let gated = op.is_some_and(|o| o.access == crate::ops::Access::Gated);
        let modern = gated && rounds::modern(&context);
        let elicit =
            if modern { rounds::Elicit::of(context.client_capabilities().as_ref()) } else { rounds::Elicit::Nothing };
        let card = request.request_state.as_deref().filter(|_| modern).map(rounds::card_of);
        call.run(request.arguments.clone(), async {
            if op.is_none() {
                return Err(super::no_such_tool("mcp:admin", &name));
            }
            let retry = match &card {
                Some(Some(card)) => {
                    Some(gate::Retry { card, declined: rounds::declined(request.input_responses.as_ref()) })
                }
                Some(None) => {
                    let e = crate::base::error::Error::invalid(
                        "mcp.request_state_invalid",
                        "this retry's requestState is not one hal0 gave; call the tool again without it",
                    );
                    return Ok(admin_error(&e).into());
                }
                None => None,
            };
            Ok(match gate::call(ctx, &name, request.arguments.as_ref(), retry).await {
                Ok(Outcome::Done(v)) => ok_json(v).into(),
                // A client that cannot bring its person to the card polls `approval_get`.
                Ok(Outcome::Pending { approval_id, .. }) if modern && elicit != rounds::Elicit::Nothing => {
                    let what = format!("A person must approve the admin call `{name}` before it runs");
                    rounds::ask_for_card(&self.state.config(), &approval_id, &what, elicit)
                }
                Ok(Outcome::Pending { approval_id, detail }) => {
                    ok_json(json!({"status": "pending_approval", "approval_id": approval_id, "detail": detail})).into()
                }
                Err(e) => admin_error(&e).into(),
            })
        })
        .await
    }
}
