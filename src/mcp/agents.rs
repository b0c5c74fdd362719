//! `hal0-agents` (`/mcp/agents/mcp`): the agent bridge for remote coding agents holding a
//! bridge key (or the admin key). The nine run tools with typed signatures; failures are
//! raised as `isError` with `bridge.<code>: <message>`.

use crate::base::error::{Error, Kind, Result};
use crate::ops::agents::{self as ops, Asker, RunArgs, WaitFor, Waited};
use crate::server::AppState;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::InputResponses;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use std::sync::Arc;

/// The audit surface of this server.
const SURFACE: &str = "mcp:agents";

#[derive(Clone)]
pub struct AgentsServer {
    state: Arc<AppState>,
    tool_router: ToolRouter<AgentsServer>,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct AgentArgs {
    /// `hermes` (the default profile) or `hermes/<profile>`.
    pub agent: String,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct MemoryAddArgs {
    /// `hermes`, `hermes/<profile>` (that profile's private memory) or `shared`.
    pub agent: String,
    /// What to remember.
    pub text: String,
    /// Tags (tags starting with agent:, visibility:, project: or source:bridge: are dropped).
    #[serde(default)]
    pub tags: Vec<String>,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct MemorySearchArgs {
    /// `hermes`, `hermes/<profile>` (its private memory and shared) or `shared` (shared and your own private notes).
    pub agent: String,
    /// What to look for.
    pub query: String,
    /// At most this many results (1 to 50, default 10).
    #[serde(default)]
    pub limit: Option<i64>,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct SkillNameArgs {
    /// The skill's name (1 to 64 lowercase letters, digits and hyphens).
    pub name: String,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct SkillPutArgs {
    /// The skill's name (1 to 64 lowercase letters, digits and hyphens).
    pub name: String,
    /// The whole SKILL.md, starting with YAML frontmatter holding the same name and a description.
    pub skill_md: String,
    /// Supporting files: plain file name → text (at most 16). A replacement is complete.
    #[serde(default)]
    pub files: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct RunIdArgs {
    /// The run id from agent_run.
    pub run_id: String,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct WaitArgs {
    /// The run id from agent_run.
    pub run_id: String,
    /// Seconds to wait, at most 600. Default 120 when the call carries a progress token
    /// (progress is then reported every few seconds), else 50, under the 60 s timeout of
    /// common clients; call again while timed_out is true.
    #[serde(default)]
    pub timeout_s: Option<i64>,
    /// Follow the output: also answer once the output has grown past this byte offset
    /// (output_total or next_offset of the previous view), gathering it for 2 s, or once the
    /// run starts waiting on a new approval; the output window then starts here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct StatusArgs {
    /// The run id from agent_run.
    pub run_id: String,
    /// Byte offset of the 16 KiB output window (default 0; use next_offset).
    #[serde(default)]
    pub offset: Option<i64>,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct EventsArgs {
    /// The run id from agent_run.
    pub run_id: String,
    /// Return events with seq above this (default 0).
    #[serde(default)]
    pub since_seq: Option<i64>,
    /// At most this many events (default 100, at most 500).
    #[serde(default)]
    pub limit: Option<i64>,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct AnswerArgs {
    /// The run id from agent_run.
    pub run_id: String,
    /// The `request_id` of the run's pending question.
    pub request_id: String,
    /// Your answer.
    pub answer: String,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct SteerArgs {
    /// The run id from agent_run.
    pub run_id: String,
    /// Guidance to add to the running task.
    pub input: String,
}

#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct RunsListArgs {
    /// Only runs with this status (queued, running, waiting_for_approval, completed, …).
    #[serde(default)]
    pub status: Option<String>,
    /// At most this many runs (default 20, at most 200).
    #[serde(default)]
    pub limit: Option<i64>,
}

/// A call refused before it ran (its audit entry could not be stored): `<code>: <message>`.
fn refuse(e: &Error) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("{}: {}", e.code, e.message))])
}

/// Render a failure as the spec's `bridge.<code>: <message>`; anything that is not a
/// bridge failure is `bridge.internal`, its detail only in the log.
fn fail(e: Error) -> CallToolResult {
    let e = if e.code.starts_with("bridge.") && e.kind != Kind::Internal {
        e
    } else {
        tracing::error!(code = e.code, "bridge tool failed: {}", e.message);
        Error::internal("internal error; see the hal0 log")
    };
    let code = if e.code.starts_with("bridge.") { e.code } else { "bridge.internal" };
    CallToolResult::error(vec![ContentBlock::text(format!("{code}: {}", e.message))])
}

fn done(r: Result<serde_json::Value>) -> CallToolResult {
    match r {
        Ok(v) => super::ok_json(v),
        Err(e) => fail(e),
    }
}

impl AgentsServer {
    /// The progress reporting this call asked for (a progress token in its `_meta`).
    fn progress(&self, ctx: &RequestContext<RoleServer>) -> crate::base::progress::Progress {
        super::progress::of(ctx, self.state.progress_every())
    }

    fn asker(ctx: &RequestContext<RoleServer>) -> Result<Asker> {
        super::caller(ctx)
            .and_then(crate::server::guard::Caller::bridge_asker)
            .ok_or_else(|| Error::forbidden("hal0-agents needs a bridge key or the admin key"))
    }
}

#[tool_router]
impl AgentsServer {
    pub fn new(state: Arc<AppState>) -> Self {
        static ROUTER: super::schema::RouterCell<AgentsServer> = super::schema::RouterCell::new();
        AgentsServer { state, tool_router: super::schema::cached_router(&ROUTER, Self::tool_router) }
    }

    #[tool(
        description = "The skills Hermes loads: name, source (shipped or dropin), category, description, mtime, files, broken."
    )]
    async fn agent_skills_list(&self) -> CallToolResult {
        done(ops::skills_list(&self.state).await)
    }

    #[tool(
        description = "A skill's SKILL.md (through the redactor, cut at 16 KiB) and the names of its files. Not an exact copy: do not prepare a replacement from it as it stands."
    )]
    async fn agent_skill_get(&self, Parameters(a): Parameters<SkillNameArgs>) -> CallToolResult {
        done(ops::skill_get(&self.state, a.name).await)
    }

    #[tool(
        description = "Propose creating or replacing the drop-in skill `name`. Nothing is written until a person approves it in the hal0 inbox. Returns {status: pending_approval, approval_id, name}."
    )]
    async fn agent_skill_put(
        &self,
        Parameters(a): Parameters<SkillPutArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let r = async {
            let client = Self::asker(&ctx)?.client;
            ops::skill_put(&self.state, client, a.name, a.skill_md, a.files).await
        };
        done(r.await)
    }

    #[tool(
        description = "Propose removing the drop-in skill `name`. Nothing is deleted until a person approves it. Returns {status: pending_approval, approval_id, name}."
    )]
    async fn agent_skill_delete(
        &self,
        Parameters(a): Parameters<SkillNameArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let r = async {
            let client = Self::asker(&ctx)?.client;
            ops::skill_delete(&self.state, client, a.name).await
        };
        done(r.await)
    }

    #[tool(
        description = "Remember text for a Hermes profile (its private memory) or in shared memory. Tagged source:bridge:<you>."
    )]
    async fn agent_memory_add(
        &self,
        Parameters(a): Parameters<MemoryAddArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let r = async {
            let client = Self::asker(&ctx)?.client;
            ops::memory_add(&self.state, client, a.agent, a.text, a.tags).await
        };
        done(r.await)
    }

    #[tool(
        description = "Search a Hermes profile's memory (its private memory and shared) or shared memory (and your own private notes)."
    )]
    async fn agent_memory_search(
        &self,
        Parameters(a): Parameters<MemorySearchArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let r = async {
            let client = Self::asker(&ctx)?.client;
            ops::memory_search(&self.state, client, a.agent, a.query, a.limit).await
        };
        done(r.await)
    }

    #[tool(
        description = "List the agents on this box: Hermes with each profile (name, agent_id, health, keyed, model_id), and Pi, which is not runnable."
    )]
    async fn agents_list(&self) -> CallToolResult {
        done(ops::agents_list(&self.state).await)
    }

    #[tool(
        description = "What a Hermes profile can do now (model aliases, toolsets, MCP server names, skills dirs, platforms, approvals mode, API server version), from an allow-list of its own config.yaml; never a URL, header, key or secret."
    )]
    async fn agent_capabilities(&self, Parameters(a): Parameters<AgentArgs>) -> CallToolResult {
        done(ops::capabilities(&self.state, &a.agent).await)
    }

    #[tool(
        description = "Delegate a task to a Hermes profile. Returns the run view (run_id, status, output window, …). wait_s > 0 waits like agent_run_wait."
    )]
    async fn agent_run(&self, Parameters(run): Parameters<RunArgs>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let r = async {
            let asker = Self::asker(&ctx)?;
            ops::start(&self.state, &asker, run, &self.progress(&ctx)).await
        };
        done(r.await)
    }

    #[tool(
        description = "Wait until the run ends, asks a question, or timeout_s passes (at most 600; default 120 when the call carries a progress token, which then gets progress notifications every few seconds, else 50). Returns the run view, events_tail (last 20 events) and timed_out: when true the run is still going, call again. An approval request does not end the wait (with offset, a new one answers once, so a follower can say which card waits); on protocol 2026-07-28 a run waiting on a person answers at once with input_required naming the card, and the retry waits on."
    )]
    async fn agent_run_wait(
        &self,
        Parameters(a): Parameters<WaitArgs>,
        InputResponses(answers): InputResponses,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        use crate::proxy::rounds;
        let modern = rounds::modern(&ctx);
        let r = async {
            let asker = Self::asker(&ctx)?;
            let w = WaitFor { timeout_s: a.timeout_s, offset: a.offset };
            let progress = self.progress(&ctx);
            if !modern {
                return ops::wait(&self.state, &asker, &a.run_id, w, &progress).await.map(Waited::View);
            }
            // 2026-07-28: a run waiting on a person is not waited on with a request held
            // open; the caller's person who declines to decide gets the run as it is.
            if rounds::declined(answers.as_ref()) {
                return ops::status(&self.state, &asker, &a.run_id, a.offset).await.map(Waited::View);
            }
            ops::wait_or_card(&self.state, &asker, &a.run_id, w, &progress).await
        };
        match r.await {
            Ok(Waited::View(v)) => done(Ok(v)).into(),
            Ok(Waited::Card(card)) => {
                let what = format!("Run {} waits for a person to approve a command", a.run_id);
                let elicit = rounds::Elicit::of(ctx.client_capabilities().as_ref());
                rounds::ask_for_card(&self.state.config(), &card, &what, elicit)
            }
            Err(e) => fail(e).into(),
        }
    }

    #[tool(
        description = "The run view. output comes in 16 KiB windows: pass offset (bytes) = next_offset to read the next one."
    )]
    async fn agent_run_status(
        &self,
        Parameters(a): Parameters<StatusArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let r = async { ops::status(&self.state, &Self::asker(&ctx)?, &a.run_id, a.offset).await };
        done(r.await)
    }

    #[tool(
        description = "Stored events with seq above since_seq (default 0), oldest first, at most limit (default 100, at most 500). Returns {run_id, events, last_seq}; call again with since_seq=last_seq to follow."
    )]
    async fn agent_run_events(
        &self,
        Parameters(a): Parameters<EventsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let r = async { ops::events(&self.state, &Self::asker(&ctx)?, &a.run_id, a.since_seq, a.limit).await };
        done(r.await)
    }

    #[tool(description = "Answer the clarification in the run's pending field; the run resumes.")]
    async fn agent_run_answer(
        &self,
        Parameters(a): Parameters<AnswerArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let r = async { ops::answer(&self.state, &Self::asker(&ctx)?, &a.run_id, &a.request_id, &a.answer).await };
        done(r.await)
    }

    #[tool(description = "Add guidance to a run that is running (when the profile's Hermes supports steering).")]
    async fn agent_run_steer(
        &self,
        Parameters(a): Parameters<SteerArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let r = async { ops::steer(&self.state, &Self::asker(&ctx)?, &a.run_id, &a.input).await };
        done(r.await)
    }

    #[tool(description = "Stop a run. Returns the run view, `stopping` until the run ends.")]
    async fn agent_run_stop(
        &self,
        Parameters(a): Parameters<RunIdArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let r = async { ops::stop(&self.state, &Self::asker(&ctx)?, &a.run_id).await };
        done(r.await)
    }

    #[tool(
        description = "Your runs, newest first, each with output_preview (first 200 characters). Optional status filter and limit (default 20, at most 200)."
    )]
    async fn agent_runs_list(
        &self,
        Parameters(a): Parameters<RunsListArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let r = async { ops::list(&self.state, &Self::asker(&ctx)?, a.status, a.limit).await };
        done(r.await)
    }
}

#[tool_handler(router = self.tool_router, name = "hal0-agents", instructions = "hal0 agent bridge: delegate runs to the Hermes agent on this box and follow them (wait, events, paged output, steer, answer, stop).")]
impl ServerHandler for AgentsServer {
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        super::routed_and_audited(
            self,
            &self.tool_router,
            (&self.state, super::AuditWait::ReadsOnly, refuse),
            SURFACE,
            request,
            context,
        )
        .await
    }
}
