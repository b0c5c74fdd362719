//! The daemon's background work, started once by `hal0 serve` and stopped by its
//! cancellation token: Hermes wiring re-converged every 120 s, the exposure join once at
//! start, unfinished bridge runs followed again after a restart, and old runs pruned hourly.

use crate::bridge::Bridge;
use crate::ops::Services;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often named Hermes profiles are re-converged to hal0's servers.
const CONVERGE_EVERY: Duration = Duration::from_secs(120);
/// How often runs past `[bridge].run_retention_days` are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// Run `work` now and then every `period` until `cancel`.
async fn repeat<F, Fut>(cancel: CancellationToken, period: Duration, mut work: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    loop {
        work().await;
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(period) => {}
        }
    }
}

/// Start every background loop of the daemon.
pub fn start(svc: &Arc<Services>, bridge: Option<Bridge>, cancel: &CancellationToken) {
    // Named Hermes profiles are re-converged (the default profile only on
    // `hal0 agent reprovision hermes`).
    let s = svc.clone();
    tokio::spawn(repeat(cancel.clone(), CONVERGE_EVERY, move || {
        let s = s.clone();
        async move {
            let rows = tokio::task::spawn_blocking(move || {
                let _lock = crate::registry::expose::lock(&s.paths);
                crate::hermes::wiring::converge(&s.store, &s.config, false, false)
            })
            .await
            .unwrap_or_default();
            for r in rows.iter().filter(|r| r.outcome != "unchanged" && r.outcome != "skipped") {
                tracing::info!(agent = %r.agent, outcome = %r.outcome, "hermes wiring: {}", r.detail);
            }
        }
    }));
    // The exposure join once at start: a record edited by hand, or a server disabled while
    // hal0 was down, is reconciled with Hermes's config.
    let s = svc.clone();
    tokio::spawn(async move {
        let sync =
            tokio::task::spawn_blocking(move || crate::registry::expose::join(&s.paths, &s.config, &s.store)).await;
        if let Ok(sync) = sync {
            for e in &sync.errors {
                tracing::warn!("mcp exposure: {e}");
            }
            if !sync.changed.is_empty() {
                tracing::info!(changed = ?sync.changed, restart = %sync.restart, "mcp exposure reconciled at start");
            }
        }
    });
    let Some(b) = bridge else { return };
    let days = svc.config.bridge.run_retention_days;
    let cancel = cancel.clone();
    tokio::spawn(async move {
        // Recovery first, then pruning: a run being followed again is never pruned under it.
        match b.recover().await {
            Ok(0) => {}
            Ok(n) => tracing::info!("following {n} unfinished run(s) again after the restart"),
            Err(e) => tracing::error!("cannot recover unfinished runs: {}", e.message),
        }
        repeat(cancel, PRUNE_EVERY, || async {
            match b.store().call(move |s| crate::bridge::ledger::prune(s, days)).await {
                Ok(0) => {}
                Ok(n) => tracing::info!("pruned {n} run(s) older than {days} days"),
                Err(e) => tracing::warn!("cannot prune old runs: {}", e.message),
            }
        })
        .await
    });
}
