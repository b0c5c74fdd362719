//! The agent relay (spec 002, wire-compatible with hermes-bridge): bots — bridge clients
//! holding the `relay` scope — ask each other questions (`ask_agent`) and answer (`reply`);
//! the asked bot is woken over its WebSocket (`server::relay_ws`). This module owns the
//! rules: who is connected (the newest connection gets the wakes; an older one closing never
//! takes a live bot offline), which asks wait and until when (a heartbeat from the asked bot
//! re-arms the whole window), who may answer (only the asked bot), conversations (scoped to
//! the pair that opened them, kept in the store) and the history (`history`). With a
//! database shared by several relays (`cluster`), an ask for a bot connected to another
//! relay travels as mail: the wake there, the heartbeats and the answer back.

pub mod cluster;
pub mod history;
pub mod langfuse;
pub mod local;
pub mod peers;
mod remote;

use crate::base::error::Result;
use crate::base::progress::Progress;
use crate::base::token::uuid4;
use crate::store::{Store, now};
use cluster::Cluster;
use history::Exchange;
use remote::{REMOTE_SLACK, Remote};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::time::Instant;

/// The largest wake frame sent: the hermes-bridge adapter closes its socket (1009) on a
/// frame over 1 MiB, so such an ask is refused before anything is sent.
pub const MAX_WAKE_BYTES: usize = 1 << 20;

/// The largest `message` of an ask and `answer` of a reply: no wake could carry more, so a
/// longer one is refused (`message_too_large`) before anything is stored or sent.
pub const MAX_MESSAGE_BYTES: usize = MAX_WAKE_BYTES;

/// How much of the message a refused ask keeps in the history: the head, then its size and
/// SHA-256 (a refusal never stores what it refused whole).
pub const REFUSED_MESSAGE_BYTES: usize = 4 * 1024;

/// The most [`bounded`] adds after the head it keeps (the size and the digest).
const CUT_NOTE_BYTES: usize = 160;

/// Who asks: a bridge client's name and whether its key may start runs (the `agents`
/// scope), which an ask to a local Hermes profile does.
#[derive(Debug, Clone)]
pub struct Asker {
    pub client: String,
    pub runs: bool,
}

crate::text_enum! {
    /// Why an ask or a reply did not go through (the `error` of a failed result).
    pub enum Failure {
        /// No bot of that name (a bridge client holding the `relay` scope).
        UnknownAgent = "unknown_agent",
        /// The bot exists but has no open WebSocket.
        AgentOffline = "agent_offline",
        /// No such conversation between these two bots.
        UnknownConversation = "unknown_conversation",
        /// No answer (and no heartbeat) within the window.
        Timeout = "timeout",
        /// The asked bot's connection closed before it answered.
        AgentDisconnected = "agent_disconnected",
        /// No pending ask of that id addressed to the replying bot.
        UnknownRequest = "unknown_request",
        /// An argument is empty or malformed (the result's `detail` says which).
        InvalidArgument = "invalid_argument",
        /// The message (or answer) is over [`MAX_MESSAGE_BYTES`], or its wake would exceed
        /// 1 MiB, the bots' frame limit.
        MessageTooLarge = "message_too_large",
        /// hal0 is stopping: the ask ended unanswered.
        RelayStopping = "relay_stopping",
        /// The asker went away (cancelled its call or closed the connection) before the answer.
        AskerGone = "asker_gone",
        /// A local profile has the most runs going it may have for this asker.
        AgentBusy = "agent_busy",
        /// A local profile's run ended without an answer (failed, stopped, or asking a
        /// question); the `detail` names the run.
        AgentFailed = "agent_failed",
        /// Asking a local Hermes profile starts a run: the asker's key needs the `agents`
        /// scope as well as `relay`.
        ScopeRequired = "scope_required",
    }
}

/// A failure with what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub error: Failure,
    pub detail: String,
}

impl Refusal {
    fn new(error: Failure, detail: impl Into<String>) -> Refusal {
        Refusal { error, detail: detail.into() }
    }
}

/// A successful ask.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Answered {
    pub ok: bool,
    pub conversation_id: String,
    pub answer: String,
}

/// A bot as `list_agents` shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Agent {
    pub name: String,
    pub online: bool,
}

/// The wake frame, keys in the order the hermes-bridge relay sends them.
#[derive(Serialize)]
struct Wake<'a> {
    request_id: &'a str,
    conversation_id: &'a str,
    from: &'a str,
    message: &'a str,
}

/// What a connection's socket task is told to send.
#[derive(Debug)]
pub enum Outbound {
    /// A wake frame (JSON text).
    Text(String),
}

/// The most bytes of wakes one bot connection may have waiting to be sent. A bot that
/// stops reading its socket would otherwise hold every ask sent to it in memory; past this
/// the connection is dropped (`kick`) and its asks fail `agent_disconnected`.
pub const MAX_QUEUED_BYTES: usize = 4 << 20;

/// The relay's side of a connection's send queue: bounded in bytes ([`MAX_QUEUED_BYTES`]).
struct Wire {
    tx: mpsc::UnboundedSender<Outbound>,
    queued: Arc<std::sync::atomic::AtomicUsize>,
    kick: tokio_util::sync::CancellationToken,
}

impl Wire {
    /// Queue `text`; false (and the connection kicked) when it would pass the bound, or
    /// when the socket task is gone.
    fn send(&self, text: String) -> bool {
        let n = text.len();
        let before = self.queued.fetch_add(n, Ordering::AcqRel);
        if before + n > MAX_QUEUED_BYTES {
            self.queued.fetch_sub(n, Ordering::AcqRel);
            self.kick.cancel();
            return false;
        }
        self.tx.send(Outbound::Text(text)).is_ok()
    }
}

/// The socket task's side of a connection's send queue.
pub struct Outgoing {
    rx: mpsc::UnboundedReceiver<Outbound>,
    queued: Arc<std::sync::atomic::AtomicUsize>,
    /// Cancelled when the bot fell behind by more than [`MAX_QUEUED_BYTES`].
    pub kick: tokio_util::sync::CancellationToken,
}

impl Outgoing {
    /// The next frame to send; `None` when the relay dropped the connection.
    pub async fn recv(&mut self) -> Option<Outbound> {
        let out = self.rx.recv().await?;
        let Outbound::Text(t) = &out;
        self.queued.fetch_sub(t.len(), Ordering::AcqRel);
        Some(out)
    }
}

struct Conn {
    generation: u64,
    tx: Wire,
    /// A newer connection of the bot opened on another relay: that one gets the wakes.
    superseded: bool,
    opened: Instant,
}

struct Pending {
    to: String,
    /// The connection the wake went to: its closing fails the ask.
    generation: u64,
    /// The relay the bot is connected to, when it is another one (the wake went as mail).
    node: Option<String>,
    deadline: Instant,
    done: oneshot::Sender<std::result::Result<String, Failure>>,
}

#[derive(Default)]
struct State {
    /// Open connections per bot, oldest first; wakes go to the last.
    bots: HashMap<String, Vec<Conn>>,
    pending: HashMap<String, Pending>,
    /// Conversations seen lately: id → the pair (the store holds them all).
    conversations: HashMap<String, (String, String)>,
    /// Asks made on another relay to a bot connected here: their answer goes back as mail.
    remote: HashMap<String, Remote>,
}

impl State {
    /// The connection of `name` that gets its wakes: the newest, unless the bot connected
    /// to another relay since.
    fn live(&self, name: &str) -> Option<&Conn> {
        self.bots.get(name)?.last().filter(|c| !c.superseded)
    }
}

/// Most conversations kept in memory; past it the map starts again from the store.
const CONVERSATIONS_CACHED: usize = 65_536;

/// The relay of one daemon.
pub struct Relay {
    store: Store,
    /// How long an ask waits (re-armed by each heartbeat), in milliseconds: a reload may
    /// change it for the asks that start after.
    window: AtomicU64,
    state: Mutex<State>,
    next_generation: AtomicU64,
    stopping: AtomicBool,
    /// Asks between their checks and their recorded end, and open sockets; `drained` waits
    /// for none.
    active: AtomicUsize,
    idle: Notify,
    /// Wakes the asks to local profiles when hal0 stops.
    stopped: tokio_util::sync::CancellationToken,
    /// The agent bridge, through which local profiles answer (set by the daemon).
    local: std::sync::OnceLock<crate::bridge::Bridge>,
    /// The database shared with other relays, when `[relay].database_url` is set: the
    /// history and where bots are connected live there instead of the store.
    cluster: Option<Arc<Cluster>>,
    /// Where ended exchanges go to Langfuse, when `[relay.langfuse]` is on (set by the daemon).
    export: std::sync::OnceLock<langfuse::Exporter>,
    /// api.env, where the secrets sent to A2A peers are (set by the daemon).
    peer_secrets: std::sync::OnceLock<std::path::PathBuf>,
}

/// Counts one ask as active while it lives.
struct Active<'a>(&'a Relay);

impl Drop for Active<'_> {
    fn drop(&mut self) {
        if self.0.active.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// While armed, dropping it (the asker's call was cancelled mid-wait) ends the ask: the bot's
/// late reply gets `unknown_request` and the exchange is recorded `asker_gone`.
struct AskerGone<'a> {
    relay: &'a Relay,
    request_id: &'a str,
    ex: &'a Exchange,
    armed: bool,
}

impl Drop for AskerGone<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let p = self.relay.lock().pending.remove(self.request_id);
        if let Some(p) = p {
            self.relay.forget_remote(&p, self.request_id);
        }
        // hal0 stopping cancels every call too: that is the relay stopping, not the asker.
        let why = if self.relay.stopping.load(Ordering::SeqCst) { Failure::RelayStopping } else { Failure::AskerGone };
        let end = history::Write::End {
            request_id: self.request_id.to_string(),
            outcome: Err(why.as_str().to_string()),
            at: now(),
        };
        self.relay.finish(self.ex, end);
    }
}

impl Relay {
    /// A relay over `store` whose asks wait `window` (re-armed by each heartbeat), sharing
    /// `cluster`'s database with other relays when given.
    pub fn new(store: Store, window: Duration, cluster: Option<Cluster>) -> Relay {
        Relay {
            store,
            window: AtomicU64::new(window.as_millis() as u64),
            state: Mutex::new(State::default()),
            next_generation: AtomicU64::new(1),
            stopping: AtomicBool::new(false),
            active: AtomicUsize::new(0),
            idle: Notify::new(),
            stopped: tokio_util::sync::CancellationToken::new(),
            local: std::sync::OnceLock::new(),
            cluster: cluster.map(Arc::new),
            export: std::sync::OnceLock::new(),
            peer_secrets: std::sync::OnceLock::new(),
        }
    }

    /// How long an ask waits for its answer (re-armed by each heartbeat).
    pub(super) fn window(&self) -> Duration {
        Duration::from_millis(self.window.load(Ordering::Relaxed))
    }

    /// A new `[relay].ask_timeout_secs` (a reload): asks that start from now wait this long.
    pub fn set_window(&self, window: Duration) {
        self.window.store(window.as_millis() as u64, Ordering::Relaxed);
    }

    /// Retention in the shared database, when the relay uses one (the store's relay
    /// tables are pruned with the store): rows removed per table.
    pub async fn prune_shared(&self, days: u32) -> Result<Vec<(&'static str, u64)>> {
        match &self.cluster {
            Some(c) => c.prune(days).await,
            None => Ok(Vec::new()),
        }
    }

    /// The ask `start` ended as `end` says: export it (Langfuse, when on) and record it.
    fn finish(&self, start: &Exchange, end: history::Write) {
        if let Some(x) = self.export.get() {
            x.end(start, &end);
        }
        self.record(end);
    }

    /// Queue a history change (to the shared database, else the store); never waits.
    fn record(&self, w: history::Write) {
        match &w {
            history::Write::End { .. } => {
                crate::base::observe::metrics::relay_ask(w.end_columns().map_or("?", |c| c.0))
            }
            history::Write::Start(x, _) if x.status != "pending" => crate::base::observe::metrics::relay_ask(&x.status),
            history::Write::Start(..) => {}
        }
        match &self.cluster {
            Some(c) => c.queue(w),
            None => {
                if let Err(e) = w.queue(&self.store) {
                    tracing::warn!("relay: cannot record an exchange: {}", e.message);
                }
            }
        }
    }

    /// Wait until the history changes queued so far are stored.
    pub async fn flush(&self) {
        match &self.cluster {
            Some(c) => c.flush().await,
            None => crate::audit::flush(&self.store).await,
        }
    }

    /// Exchanges, newest first (including those still queued).
    pub async fn exchanges(&self, f: history::Filter) -> Result<Vec<Exchange>> {
        history::check_limit(f.limit)?;
        self.flush().await;
        match &self.cluster {
            Some(c) => c.list(&f).await,
            None => self.store.call(move |s| history::list(s, &f)).await,
        }
    }

    /// The bots connected now (name → when), wherever in the cluster; each with the relay
    /// holding it when there are several.
    pub async fn presence(&self) -> Result<HashMap<String, (String, Option<String>)>> {
        match &self.cluster {
            Some(c) => Ok(c
                .bots()
                .await?
                .into_iter()
                .filter_map(|(name, node, at)| Some((name, (at?, Some(node?)))))
                .collect()),
            None => Ok(self.store.call(history::present).await?.into_iter().map(|(n, at)| (n, (at, None))).collect()),
        }
    }

    /// Let local Hermes profiles answer asks through `bridge` (the daemon's).
    pub fn attach_local(&self, bridge: crate::bridge::Bridge) {
        let _ = self.local.set(bridge);
    }

    /// Export ended exchanges to Langfuse through `exporter` (the daemon's).
    /// Where the secrets sent to A2A peers are (api.env): asks to `a2a/<name>` go out.
    pub fn attach_peers(&self, api_env: std::path::PathBuf) {
        let _ = self.peer_secrets.set(api_env);
    }

    pub fn attach_export(&self, exporter: langfuse::Exporter) {
        let _ = self.export.set(exporter);
    }

    /// The Langfuse exporter, when attached (the daemon flushes it when it stops).
    pub fn export(&self) -> Option<&langfuse::Exporter> {
        self.export.get()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The daemon starts: forget connections and end asks a previous run left waiting (with
    /// a cluster, [`Relay::join`] does that in the shared database).
    pub fn reset(&self) -> Result<()> {
        if self.cluster.is_some() {
            return Ok(());
        }
        history::clear_presence(&self.store)?;
        let n = history::end_stale(&self.store, Failure::RelayStopping.as_str())?;
        if n > 0 {
            tracing::warn!("relay: {n} exchange(s) left pending by an earlier run ended as relay_stopping");
        }
        Ok(())
    }

    /// Whether `name` is a bot: a live bridge client holding the `relay` scope.
    fn is_bot(store: &Store, name: &str) -> Result<bool> {
        match crate::auth::bridge::get(store, name) {
            Ok(c) => Ok(holds_relay(&c)),
            // Not a client name at all, or no such client.
            Err(e) if e.code == "bridge.unknown_client" || e.code == "bridge.invalid_name" => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Every bot, by name, with whether it is connected to this relay.
    /// Local profiles come first when the bridge is attached (online when they answer).
    pub async fn agents(&self) -> Result<Vec<Agent>> {
        let clients = self.store.call(crate::auth::bridge::list).await?;
        let mut out = match self.local.get() {
            Some(b) => local::agents(b).await,
            None => Vec::new(),
        };
        // With a cluster: the bots of every relay, and which are connected somewhere.
        let elsewhere = match &self.cluster {
            Some(c) => c.bots().await?,
            None => Vec::new(),
        };
        let a2a_peers = self.store.call(peers::list).await?;
        let st = self.lock();
        // Name → connected to another relay; sorted by name.
        let mut bots: std::collections::BTreeMap<String, bool> =
            clients.into_iter().filter(is_listed_bot).map(|c| (c.name, false)).collect();
        for (name, node, _) in elsewhere {
            *bots.entry(name).or_default() |= node.is_some();
        }
        out.extend(bots.into_iter().map(|(name, there)| Agent { online: there || st.live(&name).is_some(), name }));
        // A2A agents elsewhere: listed as reachable (whether they answer shows when asked).
        out.extend(a2a_peers.into_iter().map(|p| Agent { name: format!("{}{}", peers::PREFIX, p.name), online: true }));
        Ok(out)
    }

    /// A bot's WebSocket opened: it gets the wakes from now on. Returns the connection's
    /// generation (to pass to [`Relay::disconnected`]) and what to send on it.
    pub async fn connected(&self, name: &str) -> Result<(u64, Outgoing)> {
        let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        let (queued, kick) =
            (Arc::new(std::sync::atomic::AtomicUsize::new(0)), tokio_util::sync::CancellationToken::new());
        let rx = Outgoing { rx, queued: queued.clone(), kick: kick.clone() };
        self.lock().bots.entry(name.to_string()).or_default().push(Conn {
            generation,
            tx: Wire { tx, queued, kick },
            superseded: false,
            opened: Instant::now(),
        });
        match &self.cluster {
            Some(c) => {
                // The newest connection wins across relays too: the one it replaces hears so.
                if let Some(before) = c.connected(name, generation).await?.filter(|n| *n != c.node) {
                    c.mail_later(before, cluster::Kind::Moved, String::new(), name.to_string());
                }
            }
            None => {
                let (store, n) = (self.store.clone(), name.to_string());
                store.call(move |s| history::connected(s, &n, generation)).await?;
            }
        }
        Ok((generation, rx))
    }

    /// Connection `generation` of `name` closed: asks whose wake went to it fail with
    /// `agent_disconnected`; the bot stays online while another of its connections is open.
    pub async fn disconnected(&self, name: &str, generation: u64) {
        let (failed, newest, remote) = {
            let mut st = self.lock();
            let newest = match st.bots.get_mut(name) {
                Some(conns) => {
                    conns.retain(|c| c.generation != generation);
                    let newest = conns.last().filter(|c| !c.superseded).map(|c| c.generation);
                    if conns.is_empty() {
                        st.bots.remove(name);
                    }
                    newest
                }
                None => None,
            };
            let failed: Vec<Pending> =
                st.pending.extract_if(|_, p| p.to == name && p.generation == generation).map(|(_, p)| p).collect();
            let remote: Vec<(String, Remote)> =
                st.remote.extract_if(|_, r| r.to == name && r.generation == generation).collect();
            (failed, newest, remote)
        };
        for p in failed {
            let _ = p.done.send(Err(Failure::AgentDisconnected));
        }
        let r = match &self.cluster {
            Some(c) => {
                for (id, r) in remote {
                    c.mail_later(r.origin, cluster::Kind::Fail, id, Failure::AgentDisconnected.as_str().into());
                }
                match newest {
                    Some(g) => c.connected(name, g).await.map(|_| ()),
                    None => c.disconnected(name, generation).await,
                }
            }
            None => {
                let (store, n) = (self.store.clone(), name.to_string());
                store
                    .call(move |s| match newest {
                        Some(g) => history::connected(s, &n, g),
                        None => history::disconnected(s, &n, generation),
                    })
                    .await
            }
        };
        if let Err(e) = r {
            tracing::warn!("relay: cannot record that {name} disconnected: {}", e.message);
        }
    }

    /// A heartbeat from `from` for `request_id`: re-arm the whole window, if that ask waits
    /// for `from`. Anything else is ignored (and says so).
    pub fn heartbeat(&self, from: &str, request_id: &str) -> bool {
        let mut st = self.lock();
        if let Some(p) = st.pending.get_mut(request_id) {
            if p.to == from {
                p.deadline = Instant::now() + self.window();
                return true;
            }
            return false;
        }
        // An ask made on another relay: the window is kept there.
        match (st.remote.get_mut(request_id), &self.cluster) {
            (Some(r), Some(c)) if r.to == from => {
                r.deadline = Instant::now() + self.window() + REMOTE_SLACK;
                c.mail_later(r.origin.clone(), cluster::Kind::Heartbeat, request_id.to_string(), String::new());
                true
            }
            _ => false,
        }
    }

    /// `reply`: `from` answers the ask `request_id`, which must be addressed to it.
    pub fn reply(&self, from: &str, request_id: &str, answer: String) -> std::result::Result<(), Refusal> {
        if answer.len() > MAX_MESSAGE_BYTES {
            return Err(Refusal::new(Failure::MessageTooLarge, too_large("answer", answer.len())));
        }
        let (p, remote) = {
            let mut st = self.lock();
            match st.pending.get(request_id) {
                Some(p) if p.to == from => (st.pending.remove(request_id), None),
                Some(_) => (None, None),
                None => match st.remote.get(request_id) {
                    Some(r) if r.to == from => (None, st.remote.remove(request_id)),
                    _ => (None, None),
                },
            }
        };
        match (p, remote, &self.cluster) {
            (Some(p), _, _) => {
                let _ = p.done.send(Ok(answer));
                Ok(())
            }
            (None, Some(r), Some(c)) => {
                c.mail_later(r.origin, cluster::Kind::Answer, request_id.to_string(), answer);
                Ok(())
            }
            _ => Err(Refusal::new(
                Failure::UnknownRequest,
                format!(
                    "no ask `{request_id}` waits for an answer from {from} (answered, ended, or addressed to another bot)"
                ),
            )),
        }
    }

    /// `ask_agent`: wake `to` with `message` and wait for its answer (progress reported
    /// while it waits). `client` is the asking bridge client (a profile's own client asks
    /// as its profile, see [`local`]). Every ask past the argument checks is recorded,
    /// refusals included; nothing on the way waits for the store when `to` is connected.
    pub async fn ask(
        &self,
        asker: &Asker,
        to: &str,
        message: &str,
        conversation_id: Option<&str>,
        progress: &Progress,
    ) -> Result<std::result::Result<Answered, Refusal>> {
        if to.trim().is_empty() {
            return Ok(Err(Refusal::new(Failure::InvalidArgument, "`to` must name a bot (list_agents shows them)")));
        }
        if message.is_empty() {
            return Ok(Err(Refusal::new(Failure::InvalidArgument, "`message` must not be empty")));
        }
        let client = asker.client.as_str();
        if conversation_id.is_some_and(str::is_empty) {
            return Ok(Err(Refusal::new(
                Failure::InvalidArgument,
                "`conversation_id` must not be empty: leave it out to start a conversation",
            )));
        }
        self.active.fetch_add(1, Ordering::SeqCst);
        let _active = Active(self);
        let from = local::agent_of_client(client);
        let request_id = uuid4()?;
        let mut ex = Exchange {
            request_id: request_id.clone(),
            conversation_id: conversation_id.unwrap_or_default().to_string(),
            from: from.clone(),
            to: to.to_string(),
            // A message over the limit is never copied whole: the refusal keeps its head.
            message: match message.len() > MAX_MESSAGE_BYTES {
                true => bounded(message, REFUSED_MESSAGE_BYTES),
                false => message.to_string(),
            },
            status: "pending".into(),
            answer: None,
            error: None,
            started_at: now(),
            ended_at: None,
        };
        if message.len() > MAX_MESSAGE_BYTES {
            return self.refused(ex, Refusal::new(Failure::MessageTooLarge, too_large("message", message.len())));
        }
        if local::is_local(to) && !asker.runs {
            let detail = format!(
                "asking {to} starts a run of that Hermes profile: {client}'s key needs the agents scope as well as relay \
                 (on the box: hal0 bridge scopes {client} relay agents)"
            );
            return self.refused(ex, Refusal::new(Failure::ScopeRequired, detail));
        }
        let route = match self.admit(&from, to, conversation_id).await? {
            Ok(route) => route,
            Err(r) => return self.refused(ex, r),
        };
        let opened = conversation_id.is_none();
        if opened {
            ex.conversation_id = uuid4()?;
        }
        // A bot gets a wake frame, refused before anything is sent when over its limit.
        let wake = match local::is_local(to) || peers::is_peer(to) {
            true => None,
            false => {
                let frame = Wake {
                    request_id: &ex.request_id,
                    conversation_id: &ex.conversation_id,
                    from: &ex.from,
                    message: &ex.message,
                };
                let wake =
                    serde_json::to_string(&frame).map_err(|e| crate::base::error::Error::internal(e.to_string()))?;
                if wake.len() > MAX_WAKE_BYTES {
                    let detail = format!("the wake would be {} bytes; bots take at most {MAX_WAKE_BYTES}", wake.len());
                    return self.refused(ex, Refusal::new(Failure::MessageTooLarge, detail));
                }
                Some(wake)
            }
        };
        if opened {
            self.remember(&ex.conversation_id, &from, to);
        }
        // Queue the start (and the conversation) before the bot can see the wake.
        self.record(history::Write::Start(Box::new(ex.clone()), opened.then(|| (from.clone(), to.to_string()))));
        // Ends the ask if the asker goes away while it waits (its call future is dropped).
        let mut gone = AskerGone { relay: self, request_id: &request_id, ex: &ex, armed: true };
        let outcome = match wake {
            None if peers::is_peer(to) => {
                let asked = self.ask_peer(to, message, &ex.conversation_id, &request_id);
                tokio::select! {
                    out = asked => out,
                    _ = self.stopped.cancelled() => Err(Refusal::new(Failure::RelayStopping, describe(&Failure::RelayStopping, to, self.window()))),
                }
            }
            None => {
                let bridge = self.local.get().expect("admitted only with the bridge attached");
                let run = local::ask(bridge, client, to, message, &ex.conversation_id, self.window(), progress);
                tokio::select! {
                    out = run => out,
                    _ = self.stopped.cancelled() => Err(Refusal::new(Failure::RelayStopping, describe(&Failure::RelayStopping, to, self.window()))),
                }
            }
            Some(wake) => self.wake(to, &request_id, wake, route, progress).await,
        };
        gone.armed = false;
        let end = history::Write::End {
            request_id: request_id.clone(),
            outcome: outcome.clone().map_err(|r| r.error.as_str().to_string()),
            at: now(),
        };
        self.finish(&ex, end);
        Ok(outcome.map(|answer| Answered { ok: true, conversation_id: ex.conversation_id.clone(), answer }))
    }

    /// Ask A2A peer `to` (`a2a/<name>`), within the ask window.
    async fn ask_peer(
        &self,
        to: &str,
        message: &str,
        conversation_id: &str,
        request_id: &str,
    ) -> std::result::Result<String, Refusal> {
        let name = to[peers::PREFIX.len()..].to_string();
        let peer = match self.store.call(move |s| peers::get(s, &name)).await {
            Ok(Some(p)) => p,
            Ok(None) => return Err(Refusal::new(Failure::UnknownAgent, format!("the A2A peer {to} was removed"))),
            Err(e) => return Err(Refusal::new(Failure::AgentFailed, format!("cannot read the peer: {}", e.message))),
        };
        let api_env = self.peer_secrets.get().map(std::path::PathBuf::as_path);
        peers::ask(&peer, api_env, message, conversation_id, request_id, self.window()).await
    }

    /// Record an ask refused before anything was sent (one row, already ended, its message
    /// bounded to [`REFUSED_MESSAGE_BYTES`]) and answer it.
    fn refused(&self, mut ex: Exchange, r: Refusal) -> Result<std::result::Result<Answered, Refusal>> {
        // Past the head and its note (`bounded` already cut an oversized message in `ask`).
        if ex.message.len() > REFUSED_MESSAGE_BYTES + CUT_NOTE_BYTES {
            ex.message = bounded(&ex.message, REFUSED_MESSAGE_BYTES);
        }
        ex.status = r.error.as_str().to_string();
        ex.error = Some(ex.status.clone());
        ex.ended_at = Some(ex.started_at.clone());
        self.finish(&ex, history::Write::Start(Box::new(ex.clone()), None));
        Ok(Err(r))
    }

    /// Whether `from` may ask `to` now, in `conversation_id` when given; `Some(relay)` when
    /// `to` is connected to another relay of the cluster.
    async fn admit(
        &self,
        from: &str,
        to: &str,
        conversation_id: Option<&str>,
    ) -> Result<std::result::Result<Option<String>, Refusal>> {
        let mut route = None;
        if self.stopping.load(Ordering::SeqCst) {
            return Ok(Err(Refusal::new(Failure::RelayStopping, "hal0 is stopping; ask again once it is back")));
        }
        let unknown = || Refusal::new(Failure::UnknownAgent, format!("no bot named `{to}` (list_agents shows them)"));
        if peers::is_peer(to) {
            let name = to[peers::PREFIX.len()..].to_string();
            if self.store.call(move |s| peers::get(s, &name)).await?.is_none() {
                return Ok(Err(Refusal::new(
                    Failure::UnknownAgent,
                    format!(
                        "no A2A peer named `{to}` (list_agents shows them; the operator adds one: hal0 relay peer add URL)"
                    ),
                )));
            }
        } else if local::is_local(to) {
            match self.local.get() {
                Some(b) if local::exists(b, to) => {}
                Some(_) => return Ok(Err(unknown())),
                None => {
                    return Ok(Err(Refusal::new(
                        Failure::UnknownAgent,
                        format!(
                            "`{to}` is a local Hermes profile, reached through the agent bridge, which is off here"
                        ),
                    )));
                }
            }
        } else {
            // A connected bot is a bot: its socket opened with a relay key and closes when
            // the key is revoked. Only for one that is not does the store say which it is.
            let online = self.lock().live(to).is_some();
            let mut known = false;
            if !online && let Some(c) = &self.cluster {
                match c.locate(to).await? {
                    Some(Some(node)) if node != c.node => route = Some(node),
                    Some(_) => known = true,
                    None => {}
                }
            }
            if !online && route.is_none() {
                let t = to.to_string();
                let bot = known || self.store.call(move |s| Relay::is_bot(s, &t)).await?;
                return Ok(Err(if bot {
                    Refusal::new(Failure::AgentOffline, format!("{to} is not connected to the relay now"))
                } else {
                    unknown()
                }));
            }
        }
        if let Some(id) = conversation_id {
            let pair = self.pair(id).await?;
            let ours = pair.is_some_and(|(a, b)| (a == from && b == to) || (a == to && b == from));
            if !ours {
                return Ok(Err(Refusal::new(
                    Failure::UnknownConversation,
                    format!("no conversation `{id}` between {from} and {to}"),
                )));
            }
        }
        Ok(Ok(route))
    }

    /// The pair conversation `id` belongs to: from memory, else from the store.
    async fn pair(&self, id: &str) -> Result<Option<(String, String)>> {
        if let Some(p) = self.lock().conversations.get(id) {
            return Ok(Some(p.clone()));
        }
        let i = id.to_string();
        let pair = self.store.call(move |s| history::conversation(s, &i)).await?;
        if let Some((a, b)) = &pair {
            self.remember(id, a, b);
        }
        Ok(pair)
    }

    /// Keep conversation `id` of `a` and `b` in memory (the store keeps them all).
    fn remember(&self, id: &str, a: &str, b: &str) {
        let mut st = self.lock();
        if st.conversations.len() >= CONVERSATIONS_CACHED {
            st.conversations.clear();
        }
        st.conversations.insert(id.to_string(), (a.to_string(), b.to_string()));
    }

    /// Send `wake` to bot `to` (through relay `node` when it is connected there) and wait
    /// for its answer to `request_id`.
    async fn wake(
        &self,
        to: &str,
        request_id: &str,
        wake: String,
        node: Option<String>,
        progress: &Progress,
    ) -> std::result::Result<String, Refusal> {
        let (done, answer) = oneshot::channel();
        let sent = if let (Some(node), Some(c)) = (node, &self.cluster) {
            let p = Pending {
                to: to.to_string(),
                generation: 0,
                node: Some(node.clone()),
                deadline: Instant::now() + self.window(),
                done,
            };
            self.lock().pending.insert(request_id.to_string(), p);
            match c.mail(&node, cluster::Kind::Wake, request_id, &format!("{to}\n{wake}")).await {
                Ok(()) => true,
                Err(e) => {
                    c.warn(&format!("cannot reach relay {node} for {to}"), &e);
                    self.lock().pending.remove(request_id);
                    false
                }
            }
        } else {
            let mut st = self.lock();
            match st.live(to) {
                Some(conn) if conn.tx.send(wake) => {
                    let generation = conn.generation;
                    st.pending.insert(
                        request_id.to_string(),
                        Pending {
                            to: to.to_string(),
                            generation,
                            node: None,
                            deadline: Instant::now() + self.window(),
                            done,
                        },
                    );
                    true
                }
                _ => false,
            }
        };
        let out = if sent {
            let what = format!("waiting for {to}'s answer");
            progress.during(self.window(), &what, self.wait(request_id, answer)).await
        } else {
            Err(Failure::AgentOffline)
        };
        out.map_err(|f| Refusal::new(f, describe(&f, to, self.window())))
    }

    /// Wait for the answer of `request_id` until its deadline, which heartbeats move.
    async fn wait(
        &self,
        request_id: &str,
        mut answer: oneshot::Receiver<std::result::Result<String, Failure>>,
    ) -> std::result::Result<String, Failure> {
        loop {
            let deadline = self.lock().pending.get(request_id).map(|p| p.deadline);
            let Some(deadline) = deadline else {
                // Settled while we looked: the answer is in the channel.
                return answer.await.unwrap_or(Err(Failure::RelayStopping));
            };
            tokio::select! {
                out = &mut answer => return out.unwrap_or(Err(Failure::RelayStopping)),
                _ = tokio::time::sleep_until(deadline) => {
                    let expired = {
                        let mut st = self.lock();
                        match st.pending.get(request_id) {
                            Some(p) if p.deadline <= Instant::now() => st.pending.remove(request_id),
                            _ => None,
                        }
                    };
                    if let Some(p) = expired {
                        self.forget_remote(&p, request_id);
                        return Err(Failure::Timeout);
                    }
                }
            }
        }
    }

    /// hal0 stops: no new asks; every waiting ask ends `relay_stopping` (and is recorded by
    /// its own task); connections are dropped, which closes their sockets.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let pending: Vec<(String, Pending)> = {
            let mut st = self.lock();
            st.bots.clear();
            st.pending.drain().collect()
        };
        for (id, p) in pending {
            self.forget_remote(&p, &id);
            let _ = p.done.send(Err(Failure::RelayStopping));
        }
        self.stopped.cancel();
    }

    /// Count a bot's socket as active while the returned guard lives: the daemon's
    /// [`Relay::drained`] then waits for it to send its close frame.
    pub fn hold(&self) -> impl Drop + '_ {
        self.active.fetch_add(1, Ordering::SeqCst);
        Active(self)
    }

    /// Whether hal0 is stopping (every ask ends `relay_stopping`).
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Asks waiting now.
    pub fn waiting(&self) -> usize {
        self.lock().pending.len()
    }

    /// Resolve once no ask is between its checks and its recorded end, or after `bound`.
    pub async fn drained(&self, bound: Duration) {
        let _ = tokio::time::timeout(bound, async {
            loop {
                let idle = self.idle.notified();
                if self.active.load(Ordering::SeqCst) == 0 {
                    return;
                }
                idle.await;
            }
        })
        .await;
    }
}

/// Whether bridge client `c` is a bot: live, holding the `relay` scope.
fn holds_relay(c: &crate::auth::bridge::Client) -> bool {
    !c.revoked && c.scopes.contains(&crate::auth::bridge::Scope::Relay)
}

/// Whether `c` is listed among the bots: a bot, and not a profile's own client (which asks
/// as its profile, answered by runs: it has no socket).
pub fn is_listed_bot(c: &crate::auth::bridge::Client) -> bool {
    holds_relay(c) && !local::is_profile_client(&c.name)
}

/// What to say of a `what` (message, answer) of `len` bytes, over [`MAX_MESSAGE_BYTES`].
fn too_large(what: &str, len: usize) -> String {
    format!(
        "the {what} is {len} bytes; the relay takes at most {MAX_MESSAGE_BYTES} (1 MiB): send a shorter one, or a \
         reference to where the content is"
    )
}

/// `text` cut to its first `max` bytes (on a character boundary), followed by its whole
/// size and SHA-256, so a row stays small yet names what it stood for.
pub fn bounded(text: &str, max: usize) -> String {
    use sha2::Digest;
    match crate::base::redact::cut(text, max) {
        (whole, false) => whole.to_string(),
        (head, true) => {
            let digest = hex::encode(sha2::Sha256::digest(text.as_bytes()));
            format!("{head}… [cut: {} bytes in all, sha256 {digest}]", text.len())
        }
    }
}

fn describe(f: &Failure, to: &str, window: Duration) -> String {
    match f {
        Failure::Timeout => format!("{to} did not answer within {} s (nor sent a heartbeat)", window.as_secs()),
        Failure::AgentDisconnected => format!("{to}'s connection closed before it answered"),
        Failure::AgentOffline => format!("{to} is not connected to the relay now"),
        Failure::RelayStopping => "hal0 is stopping; ask again once it is back".into(),
        other => other.as_str().to_string(),
    }
}
