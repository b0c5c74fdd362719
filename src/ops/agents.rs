//! The agent bridge as operations, for the fronts that serve it (`hal0-agents`' tools; the
//! A2A face runs the same runs): the agents on this box, runs delegated to a Hermes profile
//! and followed (wait, status, events, answer, steer, stop, list), memory notes, and
//! drop-in skills proposed for a person to approve. The caller is the bridge client asking
//! ([`Asker`]); each op holds the rules a front used to: the run service and memory must be
//! on, waits are 0 seconds or more. The rules of runs live in [`crate::bridge`].

use super::Services;
use crate::base::error::{Error, Kind, Result};
use crate::base::progress::Progress;
use crate::bridge::{Bridge, StartRequest};
use serde_json::Value;
use std::collections::BTreeMap;

pub use crate::bridge::{Asker, Waited};

/// The run service, or `bridge.unavailable` (it starts with the daemon).
pub fn bridge(svc: &Services) -> Result<&Bridge> {
    svc.bridge.get().ok_or_else(|| Error::unavailable("bridge.unavailable", "the run service is not running"))
}

/// Seconds from a caller: none, or 0 and more (`code` names the argument's refusal).
fn seconds(v: Option<i64>, code: &'static str, what: &str) -> Result<Option<u64>> {
    match v {
        Some(n) if n < 0 => Err(Error::new(code, Kind::Unprocessable, format!("{what} must be 0 or more (got {n})"))),
        Some(n) => Ok(Some(n as u64)),
        None => Ok(None),
    }
}

/// `agents_list`: Hermes with each profile, and the agents that are not runnable.
pub async fn agents_list(svc: &Services) -> Result<Value> {
    Ok(bridge(svc)?.agents_list().await)
}

/// `agent_capabilities`: what profile `agent` can do now, from an allow-list of its config.
pub async fn capabilities(svc: &Services, agent: &str) -> Result<Value> {
    bridge(svc)?.capabilities_view(agent).await
}

/// `agent_run`'s arguments, as hal0-agents' tool takes them.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct RunArgs {
    /// `hermes` (the default profile) or `hermes/<profile>`.
    pub agent: String,
    /// The task for the agent.
    pub input: String,
    /// A stable key for the agent's long-term memory scope (private to you).
    #[serde(default)]
    pub session_key: Option<String>,
    /// Extra system instructions layered on top of the profile's own.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Reasoning effort hint passed to the agent.
    #[serde(default)]
    pub reasoning_effort: Option<String>,
    /// Repeat-safe start: the same key and request returns the same run.
    #[serde(default)]
    pub idempotency_key: Option<String>,
    /// Wait up to this many seconds (0 to 600, default 0) like agent_run_wait, with progress
    /// notifications while it waits when the call carries a progress token.
    #[serde(default)]
    pub wait_s: Option<i64>,
}

/// `agent_run`: delegate a task; the run view (after waiting `wait_s`, when given).
pub async fn start(svc: &Services, asker: &Asker, a: RunArgs, progress: &Progress) -> Result<Value> {
    let wait_s = seconds(a.wait_s, "bridge.invalid_wait", "wait_s")?;
    let req = StartRequest {
        agent: a.agent,
        input: a.input,
        instructions: a.instructions,
        session_key: a.session_key,
        reasoning_effort: a.reasoning_effort,
        idempotency_key: a.idempotency_key,
        wait_s,
    };
    bridge(svc)?.start(asker, req, progress).await
}

/// How a wait ends besides the run's: after `timeout_s`, or once the output grows past
/// `offset`.
#[derive(Debug, Default, Clone, Copy)]
pub struct WaitFor {
    pub timeout_s: Option<i64>,
    pub offset: Option<i64>,
}

/// `agent_run_wait`: until the run ends, asks a question, or the wait is over; the run view.
pub async fn wait(svc: &Services, asker: &Asker, run_id: &str, w: WaitFor, progress: &Progress) -> Result<Value> {
    let t = seconds(w.timeout_s, "bridge.invalid_timeout", "timeout_s")?;
    bridge(svc)?.wait_until(asker, run_id, t, w.offset, progress).await
}

/// [`wait`] for a caller that takes a decision in rounds (protocol 2026-07-28): a run
/// waiting on a person answers at once with the card to decide.
pub async fn wait_or_card(
    svc: &Services,
    asker: &Asker,
    run_id: &str,
    w: WaitFor,
    progress: &Progress,
) -> Result<Waited> {
    let t = seconds(w.timeout_s, "bridge.invalid_timeout", "timeout_s")?;
    bridge(svc)?.wait_or_card(asker, run_id, t, w.offset, progress).await
}

/// `agent_run_status`: the run view, its output window at `offset`.
pub async fn status(svc: &Services, asker: &Asker, run_id: &str, offset: Option<i64>) -> Result<Value> {
    bridge(svc)?.status(asker, run_id, offset).await
}

/// `agent_run_events`: stored events after `since`, at most `limit`.
pub async fn events(
    svc: &Services,
    asker: &Asker,
    run_id: &str,
    since: Option<i64>,
    limit: Option<i64>,
) -> Result<Value> {
    bridge(svc)?.events(asker, run_id, since, limit).await
}

/// `agent_run_answer`: answer the run's pending question.
pub async fn answer(svc: &Services, asker: &Asker, run_id: &str, request_id: &str, text: &str) -> Result<Value> {
    bridge(svc)?.answer(asker, run_id, request_id, text).await
}

/// `agent_run_steer`: guidance for a running run.
pub async fn steer(svc: &Services, asker: &Asker, run_id: &str, input: &str) -> Result<Value> {
    bridge(svc)?.steer(asker, run_id, input).await
}

/// `agent_run_stop`: stop a run.
pub async fn stop(svc: &Services, asker: &Asker, run_id: &str) -> Result<Value> {
    bridge(svc)?.stop(asker, run_id).await
}

/// `agent_runs_list`: the asker's runs, newest first.
pub async fn list(svc: &Services, asker: &Asker, status: Option<String>, limit: Option<i64>) -> Result<Value> {
    bridge(svc)?.list(asker, status, limit).await
}

/// Run `f` on this box's memory and Hermes profiles, off the async runtime; memory must be
/// on (`bridge.memory_disabled`).
async fn teach<T: Send + 'static>(
    svc: &Services,
    f: impl FnOnce(&crate::memory::MemoryEngine, &crate::hermes::Profiles) -> Result<T> + Send + 'static,
) -> Result<T> {
    memory_on(&svc.config())?;
    let engine = crate::memory::MemoryEngine::new(svc.store.clone());
    let profiles = bridge(svc)?.profiles().clone();
    super::blocking(move || f(&engine, &profiles)).await
}

/// Memory must be on for a note to be added or searched, from any front.
pub(crate) fn memory_on(cfg: &crate::config::Config) -> Result<()> {
    if cfg.memory.enabled {
        return Ok(());
    }
    Err(Error::unavailable("bridge.memory_disabled", "this box runs no memory ([memory].enabled is false)"))
}

/// `agent_memory_add`: a note in `agent`'s memory (`shared`: every profile's), tagged with
/// the asker.
pub async fn memory_add(
    svc: &Services,
    client: String,
    agent: String,
    text: String,
    tags: Vec<String>,
) -> Result<Value> {
    teach(svc, move |e, p| crate::bridge::teach::add(e, p, &client, &agent, &text, &tags)).await
}

/// `agent_memory_search`: what `agent`'s memory (and shared memory) holds about `query`.
pub async fn memory_search(
    svc: &Services,
    client: String,
    agent: String,
    query: String,
    limit: Option<i64>,
) -> Result<Value> {
    teach(svc, move |e, p| crate::bridge::teach::search(e, p, &client, &agent, &query, limit)).await
}

/// `agent_skills_list`: the skills Hermes loads.
pub async fn skills_list(svc: &Services) -> Result<Value> {
    let cfg = svc.config();
    svc.store.call(move |s| Ok(crate::bridge::skills::list(s, &cfg))).await
}

/// `agent_skill_get`: one skill's SKILL.md (redacted, cut) and file names.
pub async fn skill_get(svc: &Services, name: String) -> Result<Value> {
    let cfg = svc.config();
    svc.store.call(move |s| crate::bridge::skills::get(s, &cfg, &name)).await
}

/// `agent_skill_put`: propose creating or replacing drop-in skill `name` (a card for a
/// person; nothing is written before it is approved).
pub async fn skill_put(
    svc: &Services,
    client: String,
    name: String,
    skill_md: String,
    files: BTreeMap<String, String>,
) -> Result<Value> {
    let cfg = svc.config();
    svc.store.call(move |s| crate::bridge::skills::propose_put(s, &cfg, &client, &name, &skill_md, &files)).await
}

/// `agent_skill_delete`: propose removing drop-in skill `name`.
pub async fn skill_delete(svc: &Services, client: String, name: String) -> Result<Value> {
    let cfg = svc.config();
    svc.store.call(move |s| crate::bridge::skills::propose_delete(s, &cfg, &client, &name)).await
}
