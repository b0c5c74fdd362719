//! The relay's side of a cluster (several relays on one database, `cluster`): joining and
//! leaving it, the mail other relays send (wakes for our bots, heartbeats, answers and
//! failures for asks made here, ends, moves), and the asks made elsewhere that wait for a
//! bot connected here.

use super::cluster;
use super::{Failure, Pending, Relay};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How much longer than the asker's relay the bot's relay remembers an ask (the asker's
/// side keeps the window; a reply just inside it must still find the ask here).
pub(super) const REMOTE_SLACK: Duration = Duration::from_secs(5);

/// An ask made on another relay (`origin`) whose wake went to our connection of `to`.
pub(super) struct Remote {
    pub(super) to: String,
    pub(super) generation: u64,
    pub(super) origin: String,
    /// Past it (re-armed by heartbeats) the asker's relay has given up: forget the ask.
    pub(super) deadline: Instant,
}

impl Relay {
    /// An ask made here for a bot on another relay ended without its answer: tell that
    /// relay to forget it.
    pub(super) fn forget_remote(&self, p: &Pending, request_id: &str) {
        if let (Some(node), Some(c)) = (&p.node, &self.cluster) {
            c.mail_later(node.clone(), cluster::Kind::Ended, request_id.to_string(), String::new());
        }
    }

    /// Take part in the cluster (the daemon, when a database is set), before it serves:
    /// end what a previous run of this relay left (its bots, its mail, its pending asks),
    /// then take mail from the other relays until `cancel`. A database that cannot be
    /// reached now is logged and tried again in the background (a late start does not end
    /// a previous run's leftovers: bots connected meanwhile must not be taken offline).
    pub async fn join(self: &Arc<Self>, cancel: tokio_util::sync::CancellationToken) {
        let Some(c) = self.cluster.clone() else { return };
        match c.reset(Failure::RelayStopping.as_str()).await {
            Ok(n) => {
                if n > 0 {
                    tracing::warn!("relay: {n} exchange(s) left pending by an earlier run ended as relay_stopping");
                }
                tracing::info!(node = c.node, database = c.shown(), "relay: joined the cluster");
            }
            Err(e) => c.warn("cannot join the cluster now (asks to other relays' bots fail until it can)", &e),
        }
        let relay = Arc::downgrade(self);
        let deliver = move |m| {
            if let Some(r) = relay.upgrade() {
                r.on_mail(m);
            }
        };
        tokio::spawn(c.clone().listen(deliver, cancel.clone()));
        let relay = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(cluster::NODE_BEAT);
            loop {
                tokio::select! {
                    _ = every.tick() => match relay.upgrade() {
                        Some(r) => r.reconcile().await,
                        None => return,
                    },
                    _ = cancel.cancelled() => return,
                }
            }
        });
    }

    /// Make where our bots are registered agree with the sockets we hold: a bot registered
    /// to another live relay gets its wakes there (our connections step back, as on a
    /// `moved` mail, which two connections opening at the same instant may both miss); a
    /// bot no live relay holds, while we hold a connection of it, is ours again (its newer
    /// connection elsewhere closed: an older one keeps it online, as on one relay).
    async fn reconcile(&self) {
        let Some(c) = &self.cluster else { return };
        // A connection opened within the last beat may not be registered yet: next time.
        let settled = Instant::now() - cluster::NODE_BEAT;
        let held: Vec<(String, u64)> = self
            .lock()
            .bots
            .iter()
            .filter_map(|(name, conns)| {
                conns.last().filter(|c| c.opened < settled).map(|c| (name.clone(), c.generation))
            })
            .collect();
        if held.is_empty() {
            return;
        }
        let names: Vec<String> = held.iter().map(|(n, _)| n.clone()).collect();
        let holders = match c.holders(&names).await {
            Ok(h) => h,
            Err(e) => return c.warn("cannot check where our bots are registered", &e),
        };
        for (name, generation) in held {
            let there = holders.get(&name).cloned().flatten();
            let ours = there.as_ref().is_none_or(|n| *n == c.node);
            for conn in self.lock().bots.get_mut(&name).into_iter().flatten() {
                conn.superseded = !ours;
            }
            if there.is_none()
                && let Err(e) = c.connected(&name, generation).await
            {
                c.warn(&format!("cannot register {name} again"), &e);
            }
        }
    }

    /// hal0 stops: asks made elsewhere to our bots fail there (`agent_disconnected`) and the
    /// other relays stop counting this one (its bots go offline at once).
    pub async fn leave(&self) {
        let Some(c) = &self.cluster else { return };
        let remote: Vec<(String, Remote)> = self.lock().remote.drain().collect();
        for (id, r) in remote {
            let _ = c.mail(&r.origin, cluster::Kind::Fail, &id, Failure::AgentDisconnected.as_str()).await;
        }
        if let Err(e) = c.leave().await {
            c.warn("cannot leave the cluster", &e);
        }
        c.flush().await;
    }

    /// Mail from another relay.
    fn on_mail(&self, m: cluster::Mail) {
        use cluster::Kind;
        let Some(c) = &self.cluster else { return };
        match m.kind {
            Kind::Wake => {
                #[derive(serde::Deserialize)]
                struct Head {
                    conversation_id: String,
                    from: String,
                }
                let to = m.body.split_once('\n').map(|(to, _)| to.to_string()).unwrap_or_default();
                let frame = m.body.split_once('\n').map(|(_, f)| f.to_string()).unwrap_or_default();
                // The bot may continue this conversation through us.
                if let Ok(h) = serde_json::from_str::<Head>(&frame) {
                    self.remember(&h.conversation_id, &h.from, &to);
                }
                let sent = {
                    let mut st = self.lock();
                    let now = Instant::now();
                    st.remote.retain(|_, r| r.deadline > now);
                    match st.live(&to) {
                        Some(conn) if conn.tx.send(frame) => {
                            let generation = conn.generation;
                            st.remote.insert(
                                m.request_id.clone(),
                                Remote {
                                    to,
                                    generation,
                                    origin: m.sender.clone(),
                                    deadline: now + self.window() + REMOTE_SLACK,
                                },
                            );
                            true
                        }
                        _ => false,
                    }
                };
                if !sent {
                    c.mail_later(m.sender, Kind::Fail, m.request_id, Failure::AgentOffline.as_str().into());
                }
            }
            Kind::Ended => {
                self.lock().remote.remove(&m.request_id);
            }
            Kind::Moved => {
                for conn in self.lock().bots.get_mut(&m.body).into_iter().flatten() {
                    conn.superseded = true;
                }
            }
            Kind::Heartbeat => {
                let mut st = self.lock();
                if let Some(p) = st.pending.get_mut(&m.request_id).filter(|p| p.node.as_ref() == Some(&m.sender)) {
                    p.deadline = Instant::now() + self.window();
                }
            }
            Kind::Answer | Kind::Fail => {
                let p = {
                    let mut st = self.lock();
                    match st.pending.get(&m.request_id) {
                        Some(p) if p.node.as_ref() == Some(&m.sender) => st.pending.remove(&m.request_id),
                        _ => None,
                    }
                };
                if let Some(p) = p {
                    let out = match m.kind {
                        Kind::Answer => Ok(m.body),
                        _ => Err(Failure::from_text(&m.body).unwrap_or(Failure::AgentDisconnected)),
                    };
                    let _ = p.done.send(out);
                }
            }
        }
    }
}
