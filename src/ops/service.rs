//! The daemon's background work, started once by `hal0 serve` and stopped by its
//! cancellation token: Hermes wiring re-converged every 120 s, the exposure join once at
//! start, unfinished bridge runs followed again after a restart, the store pruned by its
//! retention windows every `[store].prune_every_mins`, and upstream OAuth accounts
//! refreshed before their tokens expire (checked every 30 s, refreshed within 5 minutes of
//! expiry).

use crate::ops::Services;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often named Hermes profiles are re-converged to hal0's servers.
const CONVERGE_EVERY: Duration = Duration::from_secs(120);

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

/// How often upstream OAuth accounts are checked, and how close to expiry one is refreshed.
const REFRESH_CHECK: Duration = Duration::from_secs(30);
const REFRESH_MARGIN_SECS: i64 = 300;

/// Why the daemon cannot listen on `bind` (`e`), with what to do: a port below 1024 needs
/// the unit's capability (which `hal0 config set network.bind` writes), else another hal0
/// may be running.
pub fn bind_failed(bind: std::net::SocketAddr, e: &std::io::Error) -> crate::base::error::Error {
    let hint = if e.kind() == std::io::ErrorKind::PermissionDenied && bind.port() < 1024 {
        format!(
            "a port below 1024 needs CAP_NET_BIND_SERVICE: under systemd, run `sudo hal0 config set network.bind \
             {bind}` so hal0 writes the unit's drop-in ({}), then systemctl daemon-reload && systemctl restart hal0",
            crate::config::unit::dropin().display()
        )
    } else {
        "is another hal0 running? choose another address with --bind".to_string()
    };
    crate::base::error::Error::unavailable("serve.bind_failed", format!("cannot listen on {bind}: {e} ({hint})"))
}

/// Start every background loop of the daemon, after what a start refreshes: the clients
/// file, and (with memory on) the memory search index, built now so no search waits for it.
pub fn start(svc: &Arc<Services>, cancel: &CancellationToken) {
    crate::connect::clients::refresh(&svc.paths, &svc.config());
    if svc.config().memory.enabled {
        // A search before it is ready builds or waits for it itself.
        let store = svc.store.clone();
        tokio::task::spawn_blocking(move || {
            let t = std::time::Instant::now();
            match crate::memory::MemoryEngine::new(store).warm_index() {
                Ok(n) => tracing::info!(notes = n, ms = t.elapsed().as_millis() as u64, "memory index built"),
                Err(e) => tracing::warn!("memory index not built at start: {}", e.message),
            }
        });
    }
    let s = svc.clone();
    tokio::spawn(repeat(cancel.clone(), REFRESH_CHECK, move || {
        let ctx = crate::ops::Ctx::remote(s.clone(), "service");
        async move { crate::ops::accounts::refresh_due(&ctx, REFRESH_MARGIN_SECS).await }
    }));
    // A person hears of cards queued and withdrawn (hal0 notify).
    tokio::spawn(crate::ops::inbox_watch::run(svc.clone(), cancel.clone()));
    // Named Hermes profiles are re-converged (the default profile only on
    // `hal0 agent reprovision hermes`).
    let s = svc.clone();
    tokio::spawn(repeat(cancel.clone(), CONVERGE_EVERY, move || {
        let s = s.clone();
        async move {
            let rows = tokio::task::spawn_blocking(move || {
                let _lock = crate::registry::expose::lock(&s.paths);
                crate::hermes::wiring::converge(&s.store, &s.config(), false, false)
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
            tokio::task::spawn_blocking(move || crate::registry::expose::join(&s.paths, &s.config(), &s.store)).await;
        if let Ok(sync) = sync {
            for e in &sync.errors {
                tracing::warn!("mcp exposure: {e}");
            }
            if !sync.changed.is_empty() {
                tracing::info!(changed = ?sync.changed, restart = %sync.restart, "mcp exposure reconciled at start");
            }
        }
    });
    // The store is pruned by its retention windows on a schedule; the first pruning waits
    // for the bridge's recovery, so a run being followed again is never pruned under it.
    let recovered = std::sync::Arc::new(tokio::sync::Notify::new());
    let s = svc.clone();
    let (every, ready) = (Duration::from_secs(svc.config().store.prune_every_mins * 60), recovered.clone());
    let c = cancel.clone();
    tokio::spawn(async move {
        if s.config().bridge.enabled {
            tokio::select! {
                _ = ready.notified() => {}
                _ = c.cancelled() => return,
            }
        }
        repeat(c, every, || {
            let s = s.clone();
            async move {
                if let Err(e) = crate::ops::store::prune_now(&s, "service", "hal0 serve").await {
                    tracing::warn!(code = e.code, "cannot prune the store: {}", e.message);
                }
            }
        })
        .await
    });
    let Some(b) = svc.bridge.get().cloned() else { return };
    tokio::spawn(async move {
        match b.recover().await {
            Ok(0) => {}
            Ok(n) => tracing::info!("following {n} unfinished run(s) again after the restart"),
            Err(e) => tracing::error!("cannot recover unfinished runs: {}", e.message),
        }
        recovered.notify_one();
    });
}
