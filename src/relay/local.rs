//! Local Hermes profiles as relay agents. `hermes` and `hermes/<profile>` are not woken over
//! a WebSocket (no adapter runs on this box): an ask to one starts a run of that profile
//! through the agent bridge's run machinery, and the run's output is the answer. A profile's
//! own bridge client (`hermes` / `hermes__<profile>`, minted by `hal0 agent reprovision
//! hermes`) asks under its agent name, so conversations of a profile are the same whichever
//! side opened them.
//!
//! The window works as for bots: the run's events play the heartbeats' part (a run that
//! keeps producing events stays open; one silent for a whole window is stopped and the ask
//! times out).

use super::{Agent, Failure, Refusal};
use crate::base::progress::Progress;
use crate::bridge::ledger::{self, RunStatus};
use crate::bridge::{Asker, Bridge, StartRequest};
use std::time::Duration;
use tokio::time::Instant;

/// Whether `name` is a local profile's agent name (`hermes`, `hermes/<profile>`).
pub fn is_local(name: &str) -> bool {
    name == "hermes" || name.starts_with("hermes/")
}

/// The relay name a bridge client asks under: a profile's client (`hermes`,
/// `hermes__<profile>`) is its profile's agent; every other client is itself.
pub fn agent_of_client(client: &str) -> String {
    match client.strip_prefix("hermes__") {
        Some(p) => format!("hermes/{p}"),
        None => client.to_string(),
    }
}

/// Whether a bridge client is a profile's own (listed as its profile, never as a bot).
pub fn is_profile_client(client: &str) -> bool {
    client == "hermes" || client.starts_with("hermes__")
}

/// Every local profile; online when hal0 holds its key and its gateway answers.
pub async fn agents(bridge: &Bridge) -> Vec<Agent> {
    let profiles = bridge.profiles().list();
    let up = futures::future::join_all(profiles.iter().map(|p| bridge.answering(p))).await;
    profiles.iter().zip(up).map(|(p, online)| Agent { name: p.agent_id.clone(), online }).collect()
}

/// Whether `to` names a profile that exists.
pub fn exists(bridge: &Bridge, to: &str) -> bool {
    bridge.profiles().get(to).is_ok()
}

/// Ask profile `to` as bridge client `client`: start a run in the conversation's Hermes
/// session and wait for its output while it makes progress. The answer, like every detail
/// of a failure, passes the redactor: it leaves the box for another bot.
pub async fn ask(
    bridge: &Bridge,
    client: &str,
    to: &str,
    message: &str,
    conversation_id: &str,
    window: Duration,
    progress: &Progress,
) -> Result<String, Refusal> {
    let asker = Asker { client: client.to_string(), admin: false };
    let req = StartRequest {
        agent: to.to_string(),
        input: message.to_string(),
        session_key: Some(conversation_id.to_string()),
        ..Default::default()
    };
    let started = bridge.start(&asker, req, &Progress::none()).await.map_err(|e| {
        let failure = match e.code {
            "bridge.unknown_agent" => Failure::UnknownAgent,
            "bridge.too_many_runs" => Failure::AgentBusy,
            _ => Failure::AgentOffline,
        };
        Refusal::new(failure, format!("{to}: {}", crate::base::redact::redact(&e.message)))
    })?;
    let run_id = started["run_id"].as_str().unwrap_or_default().to_string();
    let mut seen = -1;
    let mut deadline = Instant::now() + window;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let _ = bridge.stop(&asker, &run_id).await;
            return Err(Refusal::new(
                Failure::Timeout,
                format!("{to}'s run {run_id} made no progress for {} s; hal0 stopped it", window.as_secs()),
            ));
        }
        let secs = left.as_secs_f64().ceil() as u64;
        let failed = |e: crate::base::error::Error| {
            Refusal::new(Failure::AgentFailed, format!("{to}: {}", crate::base::redact::redact(&e.message)))
        };
        bridge.wait(&asker, &run_id, Some(secs.max(1)), progress).await.map_err(failed)?;
        let (store, id) = (bridge.store().clone(), run_id.clone());
        let run = store.call(move |s| ledger::get(s, &id, None)).await.map_err(failed)?;
        let Some(run) = run else {
            return Err(Refusal::new(Failure::AgentFailed, format!("{to}'s run {run_id} is gone from the ledger")));
        };
        if run.finished {
            return match run.status {
                RunStatus::Completed => Ok(crate::base::redact::redact(&run.output).into_owned()),
                s => Err(Refusal::new(
                    Failure::AgentFailed,
                    format!(
                        "{to}'s run {run_id} ended {s} without an answer{}",
                        run.error.map(|e| format!(": {}", crate::base::redact::redact(&e))).unwrap_or_default()
                    ),
                )),
            };
        }
        if run.pending.as_ref().is_some_and(|p| p["kind"] == "clarify") {
            return Err(Refusal::new(
                Failure::AgentFailed,
                format!(
                    "{to}'s run {run_id} stopped to ask a question; answer it with agent_run_answer (hal0-agents) and follow the run there"
                ),
            ));
        }
        if run.last_seq != seen {
            seen = run.last_seq;
            deadline = Instant::now() + window;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_clients_ask_as_their_profile() {
        assert_eq!(agent_of_client("hermes"), "hermes");
        assert_eq!(agent_of_client("hermes__coder"), "hermes/coder");
        assert_eq!(agent_of_client("bot-a"), "bot-a");
        assert!(is_local("hermes") && is_local("hermes/coder") && !is_local("hermesbot") && !is_local("bot-a"));
        assert!(is_profile_client("hermes__coder") && !is_profile_client("hermes-bot"));
    }
}
