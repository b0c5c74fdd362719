//! The follower: one task per run reads Hermes's event stream exactly once (Hermes allows
//! one reader), stores every event with a `seq` (streamed text coalesced into
//! `message.text` events cut where hal0 flushed), keeps output, usage, error, status and
//! the pending request current, turns approval requests into inbox rows, and reconciles
//! with `GET /v1/runs/{id}` when the stream ends or breaks (polling until the run settles).

use super::Bridge;
use super::ledger::{self, RunStatus, Update};
use crate::approvals::{self, NewApproval};
use crate::base::error::Result;
use crate::hermes::HermesEvent;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

/// Streamed text is flushed to the store at least this often…
const FLUSH_EVERY: Duration = Duration::from_millis(200);
/// …or when this much is buffered.
const FLUSH_BYTES: usize = 4096;
/// How long to wait for the event stream's headers.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);
/// After this long without an event, the follower checks the run's status.
const SILENCE_CHECK: Duration = Duration::from_secs(5);

pub async fn follow(bridge: Bridge, run_id: String) {
    if let Err(e) = follow_inner(&bridge, &run_id).await {
        tracing::error!(run_id, code = e.code, "following the run failed: {}", e.message);
    }
}

async fn follow_inner(bridge: &Bridge, run_id: &str) -> Result<()> {
    let id = run_id.to_string();
    let Some(run) = bridge.store().call(move |s| ledger::get(s, &id, None)).await? else { return Ok(()) };
    if run.finished {
        return Ok(());
    }
    let profile = match bridge.profiles().get(&run.agent) {
        Ok(p) => p,
        Err(_) => {
            let error = format!("the agent `{}` no longer exists on this box; the run cannot be followed", run.agent);
            let u = Update {
                status: Some(RunStatus::Interrupted),
                events: vec![settled_end("interrupted", Some(&error))],
                error: Some(error),
                pending: Some(None),
                ..Default::default()
            };
            return apply(bridge, run_id, u).await;
        }
    };
    let hermes = bridge.client_for(&profile);
    let mut state = State { status: run.status.clone(), approval_row: None };
    // A stream whose headers never come (a reader that died left Hermes's queue attached)
    // must not hold the follower: fall back to reconciling by status.
    let opened = match tokio::time::timeout(OPEN_TIMEOUT, hermes.events(run_id)).await {
        Ok(r) => r,
        Err(_) => {
            tracing::info!(run_id, "the event stream did not open; reconciling by status");
            Ok(None)
        }
    };
    match opened {
        Ok(Some(stream)) => {
            let mut stream = Box::pin(stream);
            let mut text = String::new();
            let mut pending = Update::default();
            let mut deadline: Option<tokio::time::Instant> = None;
            let mut last_event = tokio::time::Instant::now();
            let mut check = tokio::time::interval(SILENCE_CHECK);
            check.tick().await;
            loop {
                let sleep = async {
                    match deadline {
                        Some(d) => tokio::time::sleep_until(d).await,
                        None => futures::future::pending().await,
                    }
                };
                tokio::select! {
                    ev = stream.next() => match ev {
                        Some(Ok(ev)) => {
                            last_event = tokio::time::Instant::now();
                            if ev.event == "message.delta" {
                                let d = ev.payload["delta"].as_str().unwrap_or("");
                                text.push_str(d);
                                pending.append_output.push_str(d);
                                state.mark_running(&mut pending);
                                deadline.get_or_insert_with(|| tokio::time::Instant::now() + FLUSH_EVERY);
                                if text.len() >= FLUSH_BYTES {
                                    flush(bridge, run_id, &mut text, &mut pending).await?;
                                    deadline = None;
                                }
                            } else {
                                flush_text(&mut text, &mut pending);
                                state.handle(bridge, run_id, &run.agent, &run.client, ev, &mut pending).await?;
                                flush(bridge, run_id, &mut text, &mut pending).await?;
                                deadline = None;
                            }
                        }
                        Some(Err(_)) | None => break,
                    },
                    _ = sleep => {
                        flush(bridge, run_id, &mut text, &mut pending).await?;
                        deadline = None;
                    }
                    _ = check.tick() => {
                        // A silent stream may be one that will never speak again (events
                        // split with a dead reader): ask for the status; an ended run is
                        // settled from it.
                        if last_event.elapsed() >= SILENCE_CHECK
                            && let Ok(Some(v)) = hermes.run(run_id).await
                            && RunStatus::parse(v["status"].as_str().unwrap_or("")).is_terminal()
                        {
                            tracing::info!(run_id, "the run ended but its stream went silent; reconciling by status");
                            break;
                        }
                    }
                }
            }
            flush(bridge, run_id, &mut text, &mut pending).await?;
        }
        Ok(None) => tracing::info!(run_id, "event stream already read or expired; reconciling by status"),
        Err(e) => tracing::warn!(run_id, "cannot open the event stream: {}", e.message),
    }
    reconcile(bridge, run_id, &hermes, &mut state).await
}

/// Poll `GET /v1/runs/{id}` until the run settles (or Hermes no longer knows it).
async fn reconcile(
    bridge: &Bridge,
    run_id: &str,
    hermes: &crate::hermes::HermesClient,
    state: &mut State,
) -> Result<()> {
    let mut backoff = Duration::from_millis(500);
    loop {
        let id = run_id.to_string();
        let Some(run) = bridge.store().call(move |s| ledger::get(s, &id, None)).await? else { return Ok(()) };
        if run.finished {
            return Ok(());
        }
        match hermes.run(run_id).await {
            Ok(Some(v)) => {
                let status = RunStatus::parse(v["status"].as_str().unwrap_or("running"));
                let mut u = Update::default();
                // A `stopping` run only moves on to an end state.
                let settles = status.is_terminal();
                if status != run.status && (run.status != RunStatus::Stopping || settles) {
                    u.status = Some(status.clone());
                }
                if settles {
                    if let Some(o) = v["output"].as_str() {
                        // Text Hermes streamed while hal0 was not reading is stored as one
                        // more `message.text`, so the run's texts still add up to its output.
                        if let Some(tail) = o.strip_prefix(run.output.as_str()).filter(|t| !t.is_empty()) {
                            u.events.push(("message.text".into(), json!({"text": tail, "timestamp": now_epoch()})));
                        }
                        u.set_output = Some(o.to_string());
                    }
                    if let Some(e) = v["error"].as_str() {
                        u.error = Some(e.to_string());
                    }
                    if v["usage"].is_object() {
                        u.usage = Some(v["usage"].clone());
                    }
                    u.events.push(settled_end(status.as_str(), v["error"].as_str()));
                    u.pending = Some(None);
                    u.status = Some(status);
                    state.withdraw(bridge, "the run ended").await;
                    return apply(bridge, run_id, u).await;
                }
                if !u.is_empty() {
                    apply(bridge, run_id, u).await?;
                }
                backoff = Duration::from_millis(1000);
            }
            Ok(None) => {
                state.withdraw(bridge, "Hermes no longer knows the run").await;
                let error = "Hermes no longer knows this run (it restarted, or the run expired before hal0 could read its end); what was stored is kept";
                let u = Update {
                    status: Some(RunStatus::Interrupted),
                    error: Some(error.into()),
                    events: vec![settled_end("interrupted", Some(error))],
                    pending: Some(None),
                    ..Default::default()
                };
                return apply(bridge, run_id, u).await;
            }
            Err(e) => {
                tracing::debug!(run_id, "reconcile: {}", e.message);
                backoff = (backoff * 2).min(Duration::from_secs(15));
            }
        }
        tokio::time::sleep(backoff).await;
    }
}

struct State {
    status: RunStatus,
    approval_row: Option<String>,
}

impl State {
    fn mark_running(&mut self, u: &mut Update) {
        if self.status == RunStatus::Queued {
            self.set(u, RunStatus::Running);
        }
    }

    fn set(&mut self, u: &mut Update, status: RunStatus) {
        self.status = status.clone();
        u.status = Some(status);
    }

    async fn withdraw(&mut self, bridge: &Bridge, why: &'static str) {
        if let Some(id) = self.approval_row.take() {
            let _ = bridge.store().call(move |s| approvals::withdraw(s, &id, why)).await;
        }
    }

    async fn handle(
        &mut self,
        bridge: &Bridge,
        run_id: &str,
        agent: &str,
        client: &str,
        ev: HermesEvent,
        u: &mut Update,
    ) -> Result<()> {
        let mut payload = ev.payload;
        if let Value::Object(m) = &mut payload {
            m.remove("run_id");
            m.remove("event");
        }
        match ev.event.as_str() {
            "approval.request" => {
                let command = payload["command"].as_str().unwrap_or("").to_string();
                let description = payload["description"].as_str().unwrap_or("").to_string();
                let args = json!({
                    "run_id": run_id, "agent": agent, "command": command, "description": description,
                    "pattern_key": payload["pattern_key"], "choices": payload["choices"],
                });
                let preview = format!("{agent} (run {run_id}, for {client}) wants to run: {command}");
                let (rid, cl) = (run_id.to_string(), client.to_string());
                let row = bridge
                    .store()
                    .call(move |s| {
                        approvals::create(
                            s,
                            NewApproval {
                                kind: crate::approvals::ApprovalKind::HermesCommand,
                                client: &cl,
                                tool: "hermes.approval",
                                arguments: args,
                                preview,
                                run_id: Some(&rid),
                            },
                        )
                    })
                    .await?;
                payload["approval_id"] = json!(row.id);
                u.pending = Some(Some(json!({
                    "kind": "approval", "approval_id": row.id, "command": command, "description": description,
                    "note": "a person decides this in the hal0 inbox (on the box: hal0 approvals approve|deny ID)",
                })));
                self.approval_row = Some(row.id);
                self.set(u, RunStatus::WaitingForApproval);
            }
            "approval.responded" => {
                self.withdraw(bridge, "answered at Hermes").await;
                u.pending = Some(None);
                self.set(u, RunStatus::Running);
            }
            "clarify.request" => {
                let request_id =
                    payload["clarify_id"].as_str().or(payload["request_id"].as_str()).unwrap_or("").to_string();
                u.pending = Some(Some(json!({
                    "kind": "clarify", "request_id": request_id, "question": payload["question"],
                    "choices": payload["choices"],
                })));
                self.set(u, RunStatus::WaitingForClarify);
            }
            "clarify.responded" => {
                u.pending = Some(None);
                self.set(u, RunStatus::Running);
            }
            "run.completed" => {
                if let Some(o) = payload["output"].as_str() {
                    u.set_output = Some(o.to_string());
                    u.append_output.clear();
                }
                if payload["usage"].is_object() {
                    u.usage = Some(payload["usage"].clone());
                }
                u.pending = Some(None);
                self.withdraw(bridge, "the run ended").await;
                self.set(u, RunStatus::Completed);
            }
            "run.failed" => {
                u.error = Some(payload["error"].as_str().unwrap_or("the run failed").to_string());
                u.pending = Some(None);
                self.withdraw(bridge, "the run ended").await;
                self.set(u, RunStatus::Failed);
            }
            "run.cancelled" => {
                u.pending = Some(None);
                self.withdraw(bridge, "the run ended").await;
                self.set(u, RunStatus::Cancelled);
            }
            "run.interrupted" => {
                u.pending = Some(None);
                self.withdraw(bridge, "the run ended").await;
                self.set(u, RunStatus::Interrupted);
            }
            _ => self.mark_running(u),
        }
        u.events.push((ev.event, payload));
        Ok(())
    }
}

/// The end event of a run hal0 settled without reading Hermes's own end event (it was not
/// reading when the run ended: hal0 restarted, the stream broke or went silent, or the
/// agent is gone): `run.<status>` marked `reconciled`, so a finished run's events always
/// end with its end. Events Hermes sent meanwhile are not invented; only the missed text
/// is stored, just before this one.
fn settled_end(status: &str, error: Option<&str>) -> (String, Value) {
    let mut payload = json!({
        "reconciled": true,
        "detail": "hal0 settled this run from the agent's run status, not from its event stream",
        "timestamp": now_epoch(),
    });
    if let Some(e) = error {
        payload["error"] = json!(e);
    }
    (format!("run.{status}"), payload)
}

fn flush_text(text: &mut String, u: &mut Update) {
    if !text.is_empty() {
        let t = std::mem::take(text);
        u.events.push(("message.text".into(), json!({"text": t, "timestamp": now_epoch()})));
    }
}

fn now_epoch() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

async fn flush(bridge: &Bridge, run_id: &str, text: &mut String, u: &mut Update) -> Result<()> {
    flush_text(text, u);
    if u.is_empty() {
        return Ok(());
    }
    let batch = std::mem::take(u);
    apply(bridge, run_id, batch).await
}

async fn apply(bridge: &Bridge, run_id: &str, u: Update) -> Result<()> {
    let id = run_id.to_string();
    bridge.store().call(move |s| ledger::apply(s, &id, &u).map(|_| ())).await?;
    bridge.notify(run_id);
    Ok(())
}
