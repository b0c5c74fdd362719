//! The store as operators look after it: how big each bounded log is, what the retention
//! windows are, how much room the disk has, and pruning now (`hal0 store status|prune`,
//! `GET /api/store`, `POST /api/store/prune`, the `store_status` and `store_prune` tools);
//! `hal0 serve` prunes on its own every `[store].prune_every_mins` through [`prune_now`].
//! Backing the box up and restoring it (`hal0 backup|restore`), both on record.

use super::{Ctx, NoArgs, Services};
use crate::base::error::Result;
use crate::ops::retention::{self, Policy, Report};
use serde::Serialize;
use serde_json::json;
use std::path::Path;

pub use crate::store::backup::{Action, Applied, Made, Staged, daemon_guard, daemon_running, stage};

/// `store_status`'s answer.
#[derive(Debug, Serialize)]
pub struct Status {
    pub path: String,
    /// `hal0.db` with its write-ahead log, in bytes.
    pub store_bytes: u64,
    /// Space inside the store freed by pruning and not yet given back.
    pub free_in_store_bytes: u64,
    /// `[store].max_size_mb`, if set.
    pub max_size_mb: Option<u64>,
    /// Free space for the state directory, in bytes (what a non-root writer may use).
    pub disk_free_bytes: Option<u64>,
    pub disk_total_bytes: Option<u64>,
    /// Rows of each bounded table.
    pub rows: serde_json::Map<String, serde_json::Value>,
    pub retention: Policy,
}

/// The status of `svc`'s store (blocking).
pub fn status_of(svc: &Services) -> Result<Status> {
    let sizes = retention::sizes(&svc.store)?;
    let disk = crate::base::paths::disk_space(svc.store.path());
    Ok(Status {
        path: svc.store.path().display().to_string(),
        store_bytes: sizes.store_bytes,
        free_in_store_bytes: sizes.free_bytes,
        max_size_mb: svc.config().store.max_size_mb,
        disk_free_bytes: disk.map(|d| d.0),
        disk_total_bytes: disk.map(|d| d.1),
        rows: sizes.tables.into_iter().map(|(t, n)| (t, json!(n))).collect(),
        retention: Policy::from_config(&svc.config()),
    })
}

/// `store_status`.
pub async fn status(ctx: &Ctx, _: NoArgs) -> Result<Status> {
    crate::audit::flush(&ctx.store).await;
    let svc = ctx.svc.clone();
    super::blocking(move || status_of(&svc)).await
}

/// `store_prune`: prune by the configured windows now. Over the network the front audits
/// the call (`ops::call`, hal0-admin's tools), once. At the shell the pruning runs first and
/// is recorded after: it is how a full store gets room again, and a full store has no room
/// for an entry written before it.
pub async fn prune(ctx: &Ctx, _: NoArgs) -> Result<Report> {
    if ctx.from_shell { prune_now(&ctx.svc, "cli", &ctx.identity).await } else { prune_store(&ctx.svc).await }
}

/// Prune ([`prune_store`]) and record it in the audit log as `identity` on `surface`, with
/// the report: the shell's pruning, and the daemon's scheduled one (`service`, recorded only
/// when it removed anything: one an hour would be noise).
pub async fn prune_now(svc: &std::sync::Arc<Services>, surface: &'static str, identity: &str) -> Result<Report> {
    let report = prune_store(svc).await?;
    if report.rows() == 0 && surface == "service" {
        return Ok(report);
    }
    let detail = serde_json::to_string(&report).unwrap_or_default();
    let entry = crate::audit::Entry {
        surface,
        tool: "store_prune",
        identity,
        arguments: &json!({}),
        verdict: crate::audit::Verdict::Ok,
        result_code: None,
        approval_id: None,
        detail: Some(&detail),
    };
    if let Err(e) = crate::audit::record_async(&svc.store, &entry).await {
        tracing::warn!("cannot record the pruning: {}", e.message);
    }
    Ok(report)
}

/// Prune `svc`'s store by its configured windows and log what went.
async fn prune_store(svc: &std::sync::Arc<Services>) -> Result<Report> {
    let s = svc.clone();
    let policy = Policy::from_config(&svc.config());
    let mut report = super::blocking(move || retention::prune(&s.store, &policy)).await?;
    // The relay's history in a shared PostgreSQL, when it has one: a database that cannot
    // be reached is a warning, the store's pruning stands.
    match svc.relay.prune_shared(policy.relay_days).await {
        Ok(shared) => report.pruned.extend(shared.into_iter().map(|(table, rows)| retention::Pruned { table, rows })),
        Err(e) => tracing::warn!(code = e.code, "cannot prune the relay's shared database: {}", e.message),
    }
    if report.rows() > 0 {
        let what: Vec<String> = report.pruned.iter().map(|p| format!("{} {}", p.rows, p.table)).collect();
        tracing::info!(
            took_ms = report.took_ms,
            reclaimed_bytes = report.reclaimed_bytes,
            "pruned the store: {}",
            what.join(", ")
        );
    }
    Ok(report)
}

/// `store_backup`: write the box's configuration and store to `file`, then record it as
/// `identity` (the archive holds the box's keys, so who made one, and where, is on
/// record). It needs no loadable configuration and no store this hal0 can use: a box is
/// backed up before it is repaired or downgraded.
pub fn backup(paths: &crate::base::paths::Paths, file: &Path, force: bool, identity: &str) -> Result<Made> {
    let out = crate::store::backup::create(paths, file, force);
    let args = json!({"file": file.to_string_lossy(), "force": force});
    super::call::record_after(paths, "store_backup", identity, &args, &out);
    out
}

/// `store_restore`: swap what `staged` holds in (see [`crate::store::backup::apply`]), then
/// record it in the restored store as `identity` (the daemon is stopped: this opens the
/// store itself).
pub fn restore(paths: &crate::base::paths::Paths, staged: Staged, file: &Path, identity: &str) -> Result<Applied> {
    let out = crate::store::backup::apply(paths, staged);
    super::call::record_after(paths, "store_restore", identity, &json!({"file": file.to_string_lossy()}), &out);
    out
}
