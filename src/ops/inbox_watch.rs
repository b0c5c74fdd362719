//! The daemon's watch on the approvals inbox: every second it expires the cards past their
//! `expires_at`, then compares the pending cards with those it saw last; a new one raises
//! `approval.queued`, one that left the inbox as `withdrawn` raises `approval.withdrawn`,
//! as `expired` `approval.expired` (an approved or denied card needs no notification: a
//! person just decided it). Cards already waiting when the daemon starts
//! are not announced again. Each event goes to every target in its own task, with retries.
//! Cards are seen wherever they were made (the daemon, a shell command, another front),
//! since the store is the one place they all land.

use super::Services;
use crate::approvals::{self, Approval, Status};
use crate::notify::{Event, What, send, targets};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the inbox is looked at.
const EVERY: Duration = Duration::from_secs(1);

fn pending(svc: &Services) -> Option<Vec<Approval>> {
    approvals::list(&svc.store, Some(Status::Pending.as_str())).ok()
}

/// Send `what` about `a` to every target.
pub fn announce(svc: &Arc<Services>, what: What, a: &Approval) {
    let targets = match targets::load(&svc.paths) {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(code = e.code, "notifications: {}", e.message);
            return;
        }
    };
    if targets.is_empty() {
        return;
    }
    let event = Event::of(&svc.config(), what, a);
    for t in targets {
        let (svc, event) = (svc.clone(), event.clone());
        tokio::spawn(async move {
            match send::deliver(&svc.paths, &t, &event, true).await {
                Ok(how) => tracing::info!(target_id = %t.id, event = event.event, "notification delivered: {how}"),
                Err(e) => {
                    tracing::warn!(target_id = %t.id, event = event.event, code = e.code, "notification failed: {}", e.message)
                }
            }
        });
    }
}

/// Watch the inbox until `cancel`.
pub async fn run(svc: Arc<Services>, cancel: CancellationToken) {
    let s = svc.clone();
    let first = tokio::task::spawn_blocking(move || pending(&s)).await.ok().flatten().unwrap_or_default();
    let mut seen: HashSet<String> = first.into_iter().map(|a| a.id).collect();
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(EVERY) => {}
        }
        let s = svc.clone();
        let gone_of = seen.clone();
        let Ok(Some((now, gone))) = tokio::task::spawn_blocking(move || {
            if let Err(e) = approvals::expire_due(&s.store) {
                tracing::warn!(code = e.code, "cannot expire approvals: {}", e.message);
            }
            let now = pending(&s)?;
            let ids: HashSet<&str> = now.iter().map(|a| a.id.as_str()).collect();
            let gone: Vec<Approval> = gone_of
                .iter()
                .filter(|id| !ids.contains(id.as_str()))
                .filter_map(|id| approvals::get(&s.store, id).ok())
                .collect();
            Some((now, gone))
        })
        .await
        else {
            continue;
        };
        for a in now.iter().filter(|a| !seen.contains(&a.id)) {
            announce(&svc, What::Queued, a);
        }
        for a in &gone {
            match a.status {
                Status::Withdrawn => announce(&svc, What::Withdrawn, a),
                Status::Expired => announce(&svc, What::Expired, a),
                _ => {}
            }
        }
        seen = now.into_iter().map(|a| a.id).collect();
    }
}
