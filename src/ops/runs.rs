//! The agent bridge's runs of every client, as an operator lists them.

use super::Ctx;
use crate::base::error::{Error, Result};

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ListArgs {
    /// Only this client's runs.
    #[serde(default)]
    pub client: Option<String>,
    /// Only runs with this status.
    #[serde(default)]
    pub status: Option<String>,
    /// At most this many (default 50, at most 1000).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub limit: Option<i64>,
}

/// `run_list`: newest first, the list view (redacted).
pub async fn list(ctx: &Ctx, a: ListArgs) -> Result<Vec<serde_json::Value>> {
    let limit = a.limit.unwrap_or(50);
    if !(1..=1000).contains(&limit) {
        return Err(Error::invalid("runs.invalid_limit", "limit must be 1 to 1000"));
    }
    ctx.store
        .call(move |s| {
            let runs = crate::bridge::ledger::list(s, a.client.as_deref(), a.status.as_deref(), limit)?;
            Ok(runs.iter().map(crate::bridge::view::list_view).collect())
        })
        .await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct GetArgs {
    /// The run's id (as `run_list` shows it).
    pub run_id: String,
    /// The output window's first byte (default 0; use `next_offset` from the last view).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub offset: Option<i64>,
}

/// `run_get`: one run of any client, its output in a 16 KiB window (redacted), with
/// `next_offset` while more follows.
pub async fn get(ctx: &Ctx, a: GetArgs) -> Result<serde_json::Value> {
    ctx.store
        .call(move |s| {
            let run = crate::bridge::load_any(s, &a.run_id)?;
            crate::bridge::view::run_view(&run, a.offset.unwrap_or(0))
        })
        .await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct EventsArgs {
    /// The run's id.
    pub run_id: String,
    /// Events with a sequence number above this (default 0).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub since: Option<i64>,
    /// At most this many (default 100, at most 500).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub limit: Option<i64>,
}

/// `run_events`: a page of one run's stored events, oldest first (redacted), and the last
/// sequence number to ask from next.
pub async fn events(ctx: &Ctx, a: EventsArgs) -> Result<serde_json::Value> {
    let since = a.since.unwrap_or(0);
    let limit = a.limit.unwrap_or(crate::bridge::EVENTS_DEFAULT);
    if since < 0 || !(1..=crate::bridge::EVENTS_MAX).contains(&limit) {
        return Err(Error::invalid(
            "runs.invalid_filter",
            format!("since must be 0 or more and limit 1 to {}", crate::bridge::EVENTS_MAX),
        ));
    }
    ctx.store
        .call(move |s| {
            let run = crate::bridge::load_any(s, &a.run_id)?;
            crate::bridge::view::events_page(s, &run, since, limit)
        })
        .await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct StopArgs {
    /// The run's id.
    pub run_id: String,
}

/// `run_stop`: ask the run's Hermes profile to stop it; the run is `stopping` until Hermes
/// ends it. A run that has ended is left as it is. Answers the run view.
pub async fn stop(ctx: &Ctx, a: StopArgs) -> Result<serde_json::Value> {
    if let Some(bridge) = ctx.bridge.get() {
        // In the daemon: its waiters are woken and a run Hermes forgot is followed to its end.
        return bridge.stop(&crate::bridge::Asker::admin(), &a.run_id).await;
    }
    let id = a.run_id.clone();
    let run = ctx.store.call(move |s| crate::bridge::load_any(s, &id)).await?;
    if !run.finished {
        let profile = crate::hermes::Profiles::from_config(&ctx.config()).get(&run.agent)?;
        let hermes = crate::hermes::HermesClient::new(crate::hermes::client::http_client(), &profile);
        crate::bridge::request_stop(&ctx.store, &hermes, &run.run_id).await?;
    }
    get(ctx, GetArgs { run_id: a.run_id, offset: None }).await
}

pub use crate::bridge::ledger::{Run, RunStatus};

/// One run of any client as the ledger holds it, or `bridge.run_not_found`.
pub async fn load(ctx: &Ctx, run_id: &str) -> Result<Run> {
    let id = run_id.to_string();
    ctx.store.call(move |s| crate::bridge::load_any(s, &id)).await
}

/// `hal0 runs show`: one run with its whole output, redacted, or with `raw` exactly as
/// stored with its input, error and pending question (the box's shell only: no network
/// front offers `raw`).
pub async fn shown(ctx: &Ctx, run_id: &str, raw: bool) -> Result<serde_json::Value> {
    let r = load(ctx, run_id).await?;
    let mut v = crate::bridge::view::list_view(&r);
    let output = if raw {
        r.output.clone()
    } else if r.finished {
        crate::base::redact::redact(&r.output).into_owned()
    } else {
        crate::base::redact::redact_live(&r.output)
    };
    if let Some(m) = v.as_object_mut() {
        m.remove("output_preview");
        m.insert("output".into(), serde_json::json!(output));
        if raw {
            m.insert("input_preview".into(), serde_json::json!(r.input_preview));
            m.insert("error".into(), serde_json::json!(r.error));
            m.insert("pending".into(), r.pending.clone().unwrap_or_default());
        }
    }
    Ok(v)
}
