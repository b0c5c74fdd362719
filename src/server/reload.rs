//! `systemctl reload hal0` (SIGHUP): read hal0.toml again and apply what a running daemon
//! can ([`crate::config::live`]); the log names what was applied and what still waits for a
//! restart. A file that does not parse changes nothing and the daemon keeps serving.

use super::AppState;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Reload on each SIGHUP until `cancel` fires.
pub fn spawn(state: Arc<AppState>, cancel: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hup = match signal(SignalKind::hangup()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("no SIGHUP handler (systemctl reload hal0 will not work): {e}");
            return;
        }
    };
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                got = hup.recv() => if got.is_none() { return },
            }
            let ops = state.ops.clone();
            match tokio::task::spawn_blocking(move || ops.reload()).await {
                Ok(Ok(r)) => tracing::info!(
                    applied = ?r.applied,
                    needs_restart = ?r.restart,
                    "hal0.toml reloaded: {}",
                    summary(&r)
                ),
                Ok(Err(e)) => tracing::error!(
                    code = e.code,
                    "hal0.toml not reloaded, the running settings are unchanged: {}",
                    e.message
                ),
                Err(e) => tracing::error!("hal0.toml not reloaded: {e}"),
            }
        }
    });
}

/// One line for people: what changed now, what waits.
fn summary(r: &crate::config::live::Reloaded) -> String {
    let now = if r.applied.is_empty() {
        "nothing changed to apply".to_string()
    } else {
        format!("applied {}", r.applied.join(", "))
    };
    if r.restart.is_empty() {
        now
    } else {
        format!("{now}; waiting for a restart (systemctl restart hal0): {}", r.restart.join(", "))
    }
}
