//! Bounds on open MCP sessions: at most `[limits].max_sessions` across every mount and
//! `[limits].max_sessions_per_key` per credential (every anonymous caller shares one
//! count), so opening sessions in a loop cannot grow the daemon without bound. A session
//! unused for `[limits].session_idle_secs` is closed (rmcp's own keep-alive is set to the
//! same span) and its slot freed.
//!
//! The guard asks [`Sessions::admit`] before a request that would open a session (a POST to
//! a mount without `Mcp-Session-Id`), records the id the answer carries, and touches the
//! session on every later request.

use crate::base::error::{Error, Kind, Result};
use crate::config::Limits;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Open {
    owner: String,
    last_used: Instant,
}

#[derive(Default)]
struct Table {
    open: HashMap<String, Open>,
    /// Admitted requests whose session is not yet known, per owner.
    pending: HashMap<String, usize>,
}

impl Table {
    fn held_by(&self, owner: &str) -> usize {
        self.open.values().filter(|o| o.owner == owner).count() + self.pending.get(owner).copied().unwrap_or(0)
    }
    fn total(&self) -> usize {
        self.open.len() + self.pending.values().sum::<usize>()
    }
}

/// The session table shared by every MCP mount of one daemon.
/// How long the answers of a finished request stay in its session for a client that lost
/// the stream to resume it (`Last-Event-ID`). rmcp keeps them 60 s, which under a thousand
/// calls a second holds tens of thousands of answers in memory; clients retry after the
/// 3 s `retry` hint, so 10 s covers three attempts.
const RESUME_WINDOW: std::time::Duration = std::time::Duration::from_secs(10);

pub struct Sessions {
    table: Mutex<Table>,
    managers: Mutex<Vec<Arc<LocalSessionManager>>>,
    max_total: usize,
    max_per_key: usize,
    idle: Duration,
}

/// A slot held for a request that may open a session; released when dropped unless the
/// session it opened was recorded.
pub struct Admission {
    sessions: Arc<Sessions>,
    owner: String,
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut t = self.sessions.lock();
        if let Some(n) = t.pending.get_mut(&self.owner) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                t.pending.remove(&self.owner);
            }
        }
    }
}

impl Admission {
    /// The request opened session `id`: it now counts as open (the slot moves to it).
    pub fn opened(self, id: &str) {
        let mut t = self.sessions.lock();
        t.open.insert(id.to_string(), Open { owner: self.owner.clone(), last_used: Instant::now() });
    }
}

impl Sessions {
    pub fn new(limits: &Limits) -> Sessions {
        Sessions {
            table: Mutex::default(),
            managers: Mutex::default(),
            max_total: limits.max_sessions,
            max_per_key: limits.max_sessions_per_key,
            idle: Duration::from_secs(limits.session_idle_secs),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A session manager for one mount, whose idle sessions end when this table's do.
    pub fn manager(&self) -> Arc<LocalSessionManager> {
        let mut m = LocalSessionManager::default();
        m.session_config.keep_alive = Some(self.idle);
        m.session_config.completed_cache_ttl = RESUME_WINDOW;
        let m = Arc::new(m);
        self.managers.lock().unwrap_or_else(|p| p.into_inner()).push(m.clone());
        m
    }

    /// Hold a slot for a request of `owner` that may open a session, or say why not.
    pub fn admit(self: &Arc<Self>, owner: &str) -> Result<Admission> {
        self.sweep();
        let mut t = self.lock();
        let held = t.held_by(owner);
        if held >= self.max_per_key {
            return Err(too_many(format!(
                "this credential already holds {held} open MCP sessions, the most one may hold \
                 ([limits].max_sessions_per_key = {}); end sessions you no longer use (HTTP DELETE with their \
                 Mcp-Session-Id) or wait until they have been idle {} s",
                self.max_per_key,
                self.idle.as_secs()
            )));
        }
        let total = t.total();
        if total >= self.max_total {
            return Err(too_many(format!(
                "hal0 holds {total} open MCP sessions, the most it keeps ([limits].max_sessions = {}); try again \
                 when idle sessions have ended ({} s unused)",
                self.max_total,
                self.idle.as_secs()
            )));
        }
        *t.pending.entry(owner.to_string()).or_default() += 1;
        Ok(Admission { sessions: self.clone(), owner: owner.to_string() })
    }

    /// A request of `owner` used session `id`. `false` when the session was opened by
    /// another credential: a session id is no bearer token, so it opens nothing for a key
    /// that did not open it (the caller answers as for an unknown session).
    pub fn touch(&self, id: &str, owner: &str) -> bool {
        match self.lock().open.get_mut(id) {
            Some(o) if o.owner != owner => false,
            Some(o) => {
                o.last_used = Instant::now();
                true
            }
            None => true,
        }
    }

    /// Session `id` was ended by its client.
    pub fn closed(&self, id: &str) {
        self.lock().open.remove(id);
    }

    /// Open sessions (and admitted requests still opening one).
    pub fn count(&self) -> usize {
        self.lock().total()
    }

    /// Close every open session (hal0 is stopping): their streams end now rather than
    /// holding the drain until the grace period runs out.
    pub async fn close_all(&self) {
        use rmcp::transport::streamable_http_server::session::SessionManager;
        let managers = self.managers.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for m in &managers {
            let ids: Vec<_> = m.sessions.read().await.keys().cloned().collect();
            for id in ids {
                let _ = m.close_session(&id).await;
            }
        }
    }

    /// Forget sessions idle past the bound and close them in their manager (rmcp's worker
    /// has already stopped; this frees the handle it leaves in the manager's map).
    fn sweep(&self) {
        let expired: Vec<String> = {
            let mut t = self.lock();
            let idle = self.idle;
            let gone: Vec<String> =
                t.open.iter().filter(|(_, o)| o.last_used.elapsed() >= idle).map(|(k, _)| k.clone()).collect();
            for k in &gone {
                t.open.remove(k);
            }
            gone
        };
        if expired.is_empty() {
            return;
        }
        let managers = self.managers.lock().unwrap_or_else(|p| p.into_inner()).clone();
        tokio::spawn(async move {
            use rmcp::transport::streamable_http_server::session::SessionManager;
            for id in expired {
                let sid: rmcp::transport::streamable_http_server::session::SessionId = id.into();
                for m in &managers {
                    if m.sessions.read().await.contains_key(&sid) {
                        let _ = m.close_session(&sid).await;
                    }
                }
            }
        });
    }
}

fn too_many(msg: String) -> Error {
    Error::new("mcp.too_many_sessions", Kind::TooMany, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(total: usize, per_key: usize) -> Arc<Sessions> {
        let limits = Limits { max_sessions: total, max_sessions_per_key: per_key, ..Limits::default() };
        Arc::new(Sessions::new(&limits))
    }

    #[tokio::test]
    async fn caps_per_key_and_in_total() {
        let s = table(5, 2);
        s.admit("a").unwrap().opened("a1");
        s.admit("a").unwrap().opened("a2");
        let e = s.admit("a").err().unwrap();
        assert_eq!((e.code, e.status()), ("mcp.too_many_sessions", 429));
        assert!(e.message.contains("max_sessions_per_key = 2"), "{}", e.message);
        // An admission that opened nothing gives its slot back.
        s.closed("a1");
        drop(s.admit("a").unwrap());
        s.admit("a").unwrap().opened("a3");
        s.admit("b").unwrap().opened("b1");
        s.admit("b").unwrap().opened("b2");
        let _held = s.admit("c").unwrap();
        assert_eq!(s.count(), 5);
        let e = s.admit("d").err().unwrap();
        assert!(e.message.contains("max_sessions = 5"), "{}", e.message);
        s.closed("b1");
        assert!(s.admit("d").is_ok());
    }

    #[tokio::test]
    async fn idle_sessions_free_their_slot() {
        let limits = Limits { max_sessions: 10, max_sessions_per_key: 1, ..Limits::default() };
        let s = Arc::new(Sessions { idle: Duration::from_millis(30), ..Sessions::new(&limits) });
        s.admit("a").unwrap().opened("a1");
        assert!(s.admit("a").is_err());
        assert!(s.touch("a1", "a"));
        tokio::time::sleep(Duration::from_millis(60)).await;
        s.admit("a").unwrap().opened("a2");
        assert_eq!(s.count(), 1);
    }

    #[tokio::test]
    async fn a_session_answers_only_the_credential_that_opened_it() {
        let s = table(10, 10);
        s.admit("bridge:alice").unwrap().opened("sid-1");
        assert!(s.touch("sid-1", "bridge:alice"));
        assert!(!s.touch("sid-1", "bridge:mallory"), "another key holding the id");
        assert!(!s.touch("sid-1", "none"), "an anonymous caller holding the id");
        // An id hal0 does not know is rmcp's to answer (404).
        assert!(s.touch("sid-unknown", "bridge:mallory"));
    }
}
