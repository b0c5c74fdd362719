//! Several relays on one PostgreSQL (`[relay].database_url` or `DATABASE_URL`): the history
//! (exchanges, conversations) lives in the database, and so does where each bot is
//! connected (`hal0_relay_bots`) and which relays are alive (`hal0_relay_nodes`, refreshed
//! every few seconds). Relays talk through the database only: a relay that must reach a bot
//! connected elsewhere writes a row to `hal0_relay_mail` addressed to that relay and
//! `NOTIFY`s it; each relay `LISTEN`s and takes its mail (wakes, heartbeats, answers,
//! failures, ends). This module owns the SQL, the three connections (reads and mail, the
//! history writer, the listener) and their reconnection; `relay` owns what mail means.

use super::history::{Exchange, Filter, Write};
use crate::base::error::{Error, Result};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::{Client, Config, NoTls, Statement};

/// The channel every relay listens on; a notification's payload names the relay it is for.
const CHANNEL: &str = "hal0_relay";
/// How often a relay marks itself alive; one unseen for [`NODE_TTL_SECS`] is gone.
pub const NODE_BEAT: Duration = Duration::from_secs(3);
const NODE_TTL_SECS: i32 = 15;
/// Most history writes committed in one transaction.
const BATCH: usize = 512;

/// The tables, made once per database (under an advisory lock: relays may start together).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS hal0_relay_exchanges (
    request_id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    from_agent TEXT NOT NULL,
    to_agent TEXT NOT NULL,
    message TEXT NOT NULL,
    status TEXT NOT NULL,
    answer TEXT,
    error TEXT,
    started_at TIMESTAMPTZ NOT NULL,
    ended_at TIMESTAMPTZ,
    node TEXT NOT NULL,
    seq BIGSERIAL
);
CREATE INDEX IF NOT EXISTS hal0_relay_exchanges_started ON hal0_relay_exchanges (started_at DESC);
CREATE INDEX IF NOT EXISTS hal0_relay_exchanges_pending ON hal0_relay_exchanges (node) WHERE status = 'pending';
CREATE TABLE IF NOT EXISTS hal0_relay_conversations (
    id TEXT PRIMARY KEY,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS hal0_relay_nodes (
    node TEXT PRIMARY KEY,
    seen_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS hal0_relay_bots (
    name TEXT PRIMARY KEY,
    node TEXT,
    generation BIGINT NOT NULL DEFAULT 0,
    connected_at TIMESTAMPTZ
);
CREATE UNLOGGED TABLE IF NOT EXISTS hal0_relay_mail (
    id BIGSERIAL PRIMARY KEY,
    node TEXT NOT NULL,
    sender TEXT NOT NULL,
    kind TEXT NOT NULL,
    request_id TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS hal0_relay_mail_node ON hal0_relay_mail (node, id);
";

/// RFC 3339 (seconds, UTC) as hal0 writes times everywhere.
const TS: &str = r#"'YYYY-MM-DD"T"HH24:MI:SS"Z"'"#;

crate::text_enum! {
    /// What a piece of mail asks of the relay it is addressed to.
    pub enum Kind {
        /// Send this wake frame (`body`) to your bot; its answer comes back as `Answer`.
        Wake = "wake",
        /// The bot sent a heartbeat for this ask: re-arm its window.
        Heartbeat = "heartbeat",
        /// The bot answered (`body`).
        Answer = "answer",
        /// The ask failed where the bot is (`body` names the failure).
        Fail = "fail",
        /// The asker's side ended the ask (timeout, asker gone): forget it.
        Ended = "ended",
        /// The bot named in `body` connected to the sender since: its wakes go there now.
        Moved = "moved",
    }
}

/// One piece of mail taken from the database.
#[derive(Debug, Clone)]
pub struct Mail {
    pub sender: String,
    pub kind: Kind,
    pub request_id: String,
    pub body: String,
}

enum Cmd {
    Write(Write),
    Flush(oneshot::Sender<()>),
}

/// The connection for reads and mail, with its prepared statements.
struct Shared {
    client: Client,
    prepared: Mutex<std::collections::HashMap<&'static str, Statement>>,
}

impl Shared {
    /// `sql` prepared once on this connection.
    async fn prep(&self, sql: &'static str) -> std::result::Result<Statement, tokio_postgres::Error> {
        if let Some(s) = self.prepared.lock().unwrap_or_else(|p| p.into_inner()).get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).await?;
        self.prepared.lock().unwrap_or_else(|p| p.into_inner()).insert(sql, s.clone());
        Ok(s)
    }
}

impl std::ops::Deref for Shared {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

/// One relay's handle on the shared database.
pub struct Cluster {
    config: Config,
    /// Where the database is, without credentials (for messages).
    shown: String,
    /// This relay's name among the others (`[relay].node`, else `host:port`).
    pub node: String,
    reads: tokio::sync::Mutex<Option<Arc<Shared>>>,
    writes: Mutex<Option<mpsc::UnboundedSender<Cmd>>>,
    /// Database failures are logged one line a minute at most.
    warned: crate::base::logfmt::throttle::Throttle,
}

impl Cluster {
    /// A handle on the database at `url` for relay `node`; nothing connects yet.
    pub fn new(url: &str, node: String) -> Result<Cluster> {
        let config: Config = url.parse().map_err(|e| {
            Error::invalid(
                "relay.invalid_database_url",
                format!("the relay's database URL is not a PostgreSQL URL or key=value string: {e}"),
            )
        })?;
        let shown = describe(&config);
        Ok(Cluster {
            config,
            shown,
            node,
            reads: tokio::sync::Mutex::new(None),
            writes: Mutex::new(None),
            warned: Default::default(),
        })
    }

    /// Where the database is (host, port, database; never the password).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    fn unavailable(&self, e: impl std::fmt::Display) -> Error {
        Error::unavailable(
            "relay.database_unavailable",
            format!(
                "the relay's PostgreSQL at {} cannot be used: {e} (check [relay].database_url and that the server runs)",
                self.shown
            ),
        )
    }

    /// Log a database failure, once a minute at most.
    pub fn warn(&self, what: &str, e: &Error) {
        if let Some(held) = self.warned.pass() {
            tracing::warn!("relay: {what}: {}{}", e.message, crate::base::logfmt::throttle::held_back(held));
        }
    }

    /// A new connection, its driver spawned (notifications, if any, go to `notices`).
    async fn connect(&self, notices: Option<mpsc::UnboundedSender<String>>) -> Result<Client> {
        let (client, mut conn) = tokio::time::timeout(Duration::from_secs(10), self.config.connect(NoTls))
            .await
            .map_err(|_| self.unavailable("no answer within 10 s"))?
            .map_err(|e| self.unavailable(e))?;
        tokio::spawn(async move {
            let mut messages = futures::stream::poll_fn(move |cx| conn.poll_message(cx));
            while let Some(m) = futures::StreamExt::next(&mut messages).await {
                match m {
                    Ok(tokio_postgres::AsyncMessage::Notification(n)) => {
                        if let Some(tx) = &notices {
                            let _ = tx.send(n.payload().to_string());
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::debug!("relay: a PostgreSQL connection ended: {e}");
                        break;
                    }
                }
            }
        });
        Ok(client)
    }

    /// The shared connection for reads and mail (made, and the schema with it, on first use
    /// and again after it broke).
    async fn client(&self) -> Result<Arc<Shared>> {
        let mut slot = self.reads.lock().await;
        if let Some(c) = slot.as_ref().filter(|c| !c.is_closed()) {
            return Ok(c.clone());
        }
        let c = self.connect(None).await?;
        migrate(&c).await.map_err(|e| self.unavailable(e))?;
        // Mail and presence need no wait for the disk: a crash of the database loses at
        // most the last moments of mail, which the asks' windows cover.
        c.batch_execute("SET synchronous_commit = off").await.map_err(|e| self.db(e))?;
        let c = Arc::new(Shared { client: c, prepared: Mutex::default() });
        *slot = Some(c.clone());
        Ok(c)
    }

    fn db(&self, e: tokio_postgres::Error) -> Error {
        self.unavailable(e)
    }

    /// Queue a history change for the writer (committed within milliseconds, batched).
    pub fn queue(self: &Arc<Self>, w: Write) {
        self.sender().send(Cmd::Write(w)).ok();
    }

    /// Wait until every change queued so far is committed (or given up on).
    pub async fn flush(self: &Arc<Self>) {
        let (tx, rx) = oneshot::channel();
        if self.sender().send(Cmd::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    fn sender(self: &Arc<Self>) -> mpsc::UnboundedSender<Cmd> {
        let mut w = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = w.as_ref().filter(|t| !t.is_closed()) {
            return tx.clone();
        }
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(writer(self.clone(), rx));
        *w = Some(tx.clone());
        tx
    }

    /// The daemon starts: this relay is alive, holds no bot, has no mail, and the asks a
    /// previous run of it left pending end as `why`. Returns how many did.
    pub async fn reset(&self, why: &str) -> Result<u64> {
        let c = self.client().await?;
        self.beat_with(&c).await?;
        c.execute("UPDATE hal0_relay_bots SET node = NULL WHERE node = $1", &[&self.node])
            .await
            .map_err(|e| self.db(e))?;
        c.execute("DELETE FROM hal0_relay_mail WHERE node = $1", &[&self.node]).await.map_err(|e| self.db(e))?;
        c.execute(
            "UPDATE hal0_relay_exchanges SET status = $2, error = $2, ended_at = now()
             WHERE node = $1 AND status = 'pending'",
            &[&self.node, &why],
        )
        .await
        .map_err(|e| self.db(e))
    }

    /// Mark this relay alive now.
    pub async fn beat(&self) -> Result<()> {
        let c = self.client().await?;
        self.beat_with(&c).await
    }

    async fn beat_with(&self, c: &Client) -> Result<()> {
        c.execute(
            "INSERT INTO hal0_relay_nodes (node, seen_at) VALUES ($1, now())
             ON CONFLICT (node) DO UPDATE SET seen_at = now()",
            &[&self.node],
        )
        .await
        .map_err(|e| self.db(e))?;
        Ok(())
    }

    /// This relay stops: its bots are offline and the others stop counting it alive.
    pub async fn leave(&self) -> Result<()> {
        let c = self.client().await?;
        c.execute("UPDATE hal0_relay_bots SET node = NULL WHERE node = $1", &[&self.node])
            .await
            .map_err(|e| self.db(e))?;
        c.execute("DELETE FROM hal0_relay_nodes WHERE node = $1", &[&self.node]).await.map_err(|e| self.db(e))?;
        Ok(())
    }

    /// Retention in the shared database: ended exchanges started more than `days` ago
    /// (none when 0) and the conversations left without any, in batches; mail addressed to
    /// relays that are gone (a relay that comes back starts by dropping its mail anyway),
    /// and relays unseen for a week. Returns the rows removed per table.
    pub async fn prune(&self, days: u32) -> Result<Vec<(&'static str, u64)>> {
        let c = self.client().await?;
        let mut out = Vec::new();
        let batched = [
            (
                "hal0_relay_exchanges",
                "DELETE FROM hal0_relay_exchanges WHERE request_id IN (SELECT request_id FROM hal0_relay_exchanges
                   WHERE started_at < now() - make_interval(days => $1) AND ended_at IS NOT NULL LIMIT 2000)",
            ),
            (
                "hal0_relay_conversations",
                "DELETE FROM hal0_relay_conversations WHERE id IN (SELECT id FROM hal0_relay_conversations v
                   WHERE created_at < now() - make_interval(days => $1)
                     AND NOT EXISTS (SELECT 1 FROM hal0_relay_exchanges e WHERE e.conversation_id = v.id) LIMIT 2000)",
            ),
        ];
        if days > 0 {
            let days = days as i32;
            for (table, sql) in batched {
                let mut total = 0u64;
                loop {
                    let n = c.execute(sql, &[&days]).await.map_err(|e| self.db(e))?;
                    total += n;
                    if n < 2000 {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                out.push((table, total));
            }
        }
        let ttl = NODE_TTL_SECS as f64;
        let mail = c
            .execute(
                "DELETE FROM hal0_relay_mail WHERE node NOT IN
                   (SELECT node FROM hal0_relay_nodes WHERE seen_at > now() - make_interval(secs => $1))",
                &[&ttl],
            )
            .await
            .map_err(|e| self.db(e))?;
        out.push(("hal0_relay_mail", mail));
        let nodes = c
            .execute("DELETE FROM hal0_relay_nodes WHERE seen_at < now() - make_interval(days => 7)", &[])
            .await
            .map_err(|e| self.db(e))?;
        out.push(("hal0_relay_nodes", nodes));
        Ok(out.into_iter().filter(|(_, n)| *n > 0).collect())
    }

    /// The relays alive now, by name (`None` when no relay made the tables yet); reads
    /// only, on a connection of its own (for `hal0 doctor`).
    pub async fn alive(&self) -> Result<Option<Vec<String>>> {
        let c = self.connect(None).await?;
        let made: bool = c
            .query_one("SELECT to_regclass('hal0_relay_nodes') IS NOT NULL", &[])
            .await
            .map_err(|e| self.db(e))?
            .get(0);
        if !made {
            return Ok(None);
        }
        let rows = c
            .query(
                "SELECT node FROM hal0_relay_nodes WHERE seen_at > now() - make_interval(secs => $1) ORDER BY node",
                &[&(NODE_TTL_SECS as f64)],
            )
            .await
            .map_err(|e| self.db(e))?;
        Ok(Some(rows.iter().map(|r| r.get(0)).collect()))
    }

    /// Bot `name` connected here under `generation` (the newest connection anywhere wins).
    /// Returns the relay that held it before, if any.
    pub async fn connected(&self, name: &str, generation: u64) -> Result<Option<String>> {
        let c = self.client().await?;
        let st = c
            .prep(
                "WITH before AS (SELECT node FROM hal0_relay_bots WHERE name = $1)
                 INSERT INTO hal0_relay_bots (name, node, generation, connected_at) VALUES ($1, $2, $3, now())
                 ON CONFLICT (name) DO UPDATE SET node = excluded.node, generation = excluded.generation,
                                                  connected_at = excluded.connected_at
                 RETURNING (SELECT node FROM before)",
            )
            .await
            .map_err(|e| self.db(e))?;
        let row = c.query_one(&st, &[&name, &self.node, &(generation as i64)]).await.map_err(|e| self.db(e))?;
        Ok(row.get(0))
    }

    /// Connection `generation` of `name` here closed (a newer one, here or elsewhere, keeps
    /// the bot where it is).
    pub async fn disconnected(&self, name: &str, generation: u64) -> Result<()> {
        let c = self.client().await?;
        c.execute(
            "UPDATE hal0_relay_bots SET node = NULL WHERE name = $1 AND node = $2 AND generation = $3",
            &[&name, &self.node, &(generation as i64)],
        )
        .await
        .map_err(|e| self.db(e))?;
        Ok(())
    }

    /// The live relay each of `names` is registered to now (`None`: none, or a dead one);
    /// names no relay ever had are absent.
    pub async fn holders(&self, names: &[String]) -> Result<std::collections::HashMap<String, Option<String>>> {
        let c = self.client().await?;
        let st = c
            .prep(
                "SELECT b.name, n.node FROM hal0_relay_bots b
                 LEFT JOIN hal0_relay_nodes n ON n.node = b.node AND n.seen_at > now() - make_interval(secs => $2)
                 WHERE b.name = ANY($1)",
            )
            .await
            .map_err(|e| self.db(e))?;
        let rows = c.query(&st, &[&names, &(NODE_TTL_SECS as f64)]).await.map_err(|e| self.db(e))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Where bot `name` is: `None` if no relay of the cluster ever had it, `Some(None)` if
    /// it is not connected to a live relay now, else that relay.
    pub async fn locate(&self, name: &str) -> Result<Option<Option<String>>> {
        Ok(self.holders(&[name.to_string()]).await?.remove(name))
    }

    /// Every bot ever connected to a relay of the cluster: name, the live relay holding it
    /// now (if any) and since when.
    pub async fn bots(&self) -> Result<Vec<(String, Option<String>, Option<String>)>> {
        let c = self.client().await?;
        let rows = c
            .query(
                &format!(
                    "SELECT b.name, n.node, CASE WHEN n.node IS NULL THEN NULL
                                                ELSE to_char(b.connected_at AT TIME ZONE 'UTC', {TS}) END
                     FROM hal0_relay_bots b
                     LEFT JOIN hal0_relay_nodes n ON n.node = b.node AND n.seen_at > now() - make_interval(secs => $1)
                     ORDER BY b.name"
                ),
                &[&(NODE_TTL_SECS as f64)],
            )
            .await
            .map_err(|e| self.db(e))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect())
    }

    /// The pair conversation `id` belongs to.
    pub async fn conversation(&self, id: &str) -> Result<Option<(String, String)>> {
        let c = self.client().await?;
        let row = c
            .query_opt("SELECT a, b FROM hal0_relay_conversations WHERE id = $1", &[&id])
            .await
            .map_err(|e| self.db(e))?;
        Ok(row.map(|r| (r.get(0), r.get(1))))
    }

    /// Exchanges of every relay, newest first.
    pub async fn list(&self, f: &Filter) -> Result<Vec<Exchange>> {
        let c = self.client().await?;
        let rows = c
            .query(
                &format!(
                    "SELECT request_id, conversation_id, from_agent, to_agent, message, status, answer, error,
                            to_char(started_at AT TIME ZONE 'UTC', {TS}), to_char(ended_at AT TIME ZONE 'UTC', {TS})
                     FROM hal0_relay_exchanges
                     WHERE ($1::text IS NULL OR from_agent = $1 OR to_agent = $1)
                       AND ($2::text IS NULL OR started_at >= $2::text::timestamptz)
                     AND ($4::text IS NULL OR request_id = $4)
                     ORDER BY started_at DESC, seq DESC LIMIT $3"
                ),
                &[&f.agent, &f.since, &f.limit, &f.request_id],
            )
            .await
            .map_err(|e| self.db(e))?;
        Ok(rows
            .iter()
            .map(|r| {
                Exchange {
                    request_id: r.get(0),
                    conversation_id: r.get(1),
                    from: r.get(2),
                    to: r.get(3),
                    message: r.get(4),
                    status: r.get(5),
                    answer: r.get(6),
                    error: r.get(7),
                    started_at: r.get(8),
                    ended_at: r.get(9),
                }
                .cut(f.text_max)
            })
            .collect())
    }

    /// Send `kind` about `request_id` to relay `node` (written, then notified, in one
    /// statement: the notification goes out when the row is committed).
    pub async fn mail(&self, node: &str, kind: Kind, request_id: &str, body: &str) -> Result<()> {
        let c = self.client().await?;
        let st = c
            .prep(
                "WITH m AS (INSERT INTO hal0_relay_mail (node, sender, kind, request_id, body)
                            VALUES ($1, $2, $3, $4, $5))
                 SELECT pg_notify('hal0_relay', $1)",
            )
            .await
            .map_err(|e| self.db(e))?;
        c.execute(&st, &[&node, &self.node, &kind.as_str(), &request_id, &body]).await.map_err(|e| self.db(e))?;
        Ok(())
    }

    /// Send mail without waiting for it; a failure is logged (throttled).
    pub fn mail_later(self: &Arc<Self>, node: String, kind: Kind, request_id: String, body: String) {
        let me = self.clone();
        tokio::spawn(async move {
            if let Err(e) = me.mail(&node, kind, &request_id, &body).await {
                me.warn(&format!("cannot send {} mail to relay {node}", kind.as_str()), &e);
            }
        });
    }

    /// Take this relay's mail, oldest first.
    async fn take_mail(&self, c: &Client, take: &Statement) -> Result<Vec<Mail>> {
        let rows = c.query(take, &[&self.node]).await.map_err(|e| self.db(e))?;
        let mut mail: Vec<(i64, Mail)> = rows
            .iter()
            .filter_map(|r| {
                let kind: String = r.get(2);
                Some((
                    r.get(0),
                    Mail { sender: r.get(1), kind: Kind::from_text(&kind)?, request_id: r.get(3), body: r.get(4) },
                ))
            })
            .collect();
        mail.sort_by_key(|(id, _)| *id);
        Ok(mail.into_iter().map(|(_, m)| m).collect())
    }

    /// Listen for this relay's mail and hand each piece to `deliver`, until `cancel`;
    /// reconnects after a failure and then reads what arrived meanwhile. Also marks this
    /// relay alive every [`NODE_BEAT`].
    pub async fn listen(
        self: Arc<Self>,
        deliver: impl Fn(Mail) + Send + 'static,
        cancel: tokio_util::sync::CancellationToken,
    ) {
        let mut backoff = Duration::from_millis(200);
        while !cancel.is_cancelled() {
            let (tx, mut notices) = mpsc::unbounded_channel();
            let round = async {
                let c = self.connect(Some(tx)).await?;
                c.batch_execute(&format!("SET synchronous_commit = off; LISTEN {CHANNEL}"))
                    .await
                    .map_err(|e| self.db(e))?;
                let take = c
                    .prepare("DELETE FROM hal0_relay_mail WHERE node = $1 RETURNING id, sender, kind, request_id, body")
                    .await
                    .map_err(|e| self.db(e))?;
                let mut beat = tokio::time::interval(NODE_BEAT);
                loop {
                    for m in self.take_mail(&c, &take).await? {
                        deliver(m);
                    }
                    // Wait for a notification for us (or beat meanwhile).
                    loop {
                        tokio::select! {
                            n = notices.recv() => match n {
                                Some(node) if node == self.node => break,
                                Some(_) => continue,
                                None => return Err(self.unavailable("the listening connection closed")),
                            },
                            _ = beat.tick() => self.beat_with(&c).await?,
                        }
                    }
                }
                #[allow(unreachable_code)]
                Ok::<(), Error>(())
            };
            tokio::select! {
                r = round => if let Err(e) = r {
                    self.warn("listening for other relays' mail failed; reconnecting", &e);
                },
                _ = cancel.cancelled() => return,
            }
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {},
                _ = cancel.cancelled() => return,
            }
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    }
}

/// Host, port and database of `c`, for messages.
fn describe(c: &Config) -> String {
    let host = c
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = c.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", c.get_dbname().unwrap_or("(default database)"))
}

async fn migrate(c: &Client) -> std::result::Result<(), tokio_postgres::Error> {
    c.batch_execute(&format!("BEGIN; SELECT pg_advisory_xact_lock(7260104211); {SCHEMA} COMMIT;")).await
}

/// The writer's connection and its statements.
struct Writer {
    client: Client,
    conversation: Statement,
    start: Statement,
    end: Statement,
}

impl Writer {
    async fn open(cluster: &Cluster) -> Result<Writer> {
        // The reads connection makes the schema first.
        cluster.client().await?;
        let client = cluster.connect(None).await?;
        let prep = |sql: &'static str| {
            let c = &client;
            async move { c.prepare(sql).await }
        };
        let db = |e| cluster.db(e);
        let conversation = prep(
            "INSERT INTO hal0_relay_conversations (id, a, b, created_at) VALUES ($1, $2, $3, $4::text::timestamptz)
             ON CONFLICT (id) DO NOTHING",
        )
        .await
        .map_err(db)?;
        let start = prep(
            "INSERT INTO hal0_relay_exchanges (request_id, conversation_id, from_agent, to_agent, message, status,
                                               answer, error, started_at, ended_at, node)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text::timestamptz, $10::text::timestamptz, $11)
             ON CONFLICT (request_id) DO NOTHING",
        )
        .await
        .map_err(db)?;
        let end = prep(
            "UPDATE hal0_relay_exchanges SET status = $2, answer = $3, error = $4, ended_at = $5::text::timestamptz
             WHERE request_id = $1",
        )
        .await
        .map_err(db)?;
        Ok(Writer { client, conversation, start, end })
    }

    /// Commit `batch` in one transaction, its statements pipelined.
    async fn commit(&mut self, batch: &[Write], node: &str) -> std::result::Result<(), tokio_postgres::Error> {
        type Param<'a> = &'a (dyn tokio_postgres::types::ToSql + Sync);
        // What the statements bind, worked out first so that every parameter outlives them.
        let ends: Vec<(&str, Option<&str>, Option<&str>)> =
            batch.iter().map(|w| w.end_columns().unwrap_or_default()).collect();
        let mut calls: Vec<(&Statement, Vec<Param<'_>>)> = Vec::with_capacity(batch.len() * 2);
        for (i, w) in batch.iter().enumerate() {
            match w {
                Write::Start(e, _) => {
                    if let Some((a, b)) = w.pair() {
                        calls.push((&self.conversation, vec![&e.conversation_id, a, b, &e.started_at]));
                    }
                    calls.push((
                        &self.start,
                        vec![
                            &e.request_id,
                            &e.conversation_id,
                            &e.from,
                            &e.to,
                            &e.message,
                            &e.status,
                            &e.answer,
                            &e.error,
                            &e.started_at,
                            &e.ended_at,
                            &node,
                        ],
                    ));
                }
                Write::End { request_id, at, .. } => {
                    let (status, answer, error) = &ends[i];
                    calls.push((&self.end, vec![request_id, status, answer, error, at]));
                }
            }
        }
        let tx = self.client.transaction().await?;
        futures::future::try_join_all(calls.iter().map(|(st, p)| tx.execute(*st, p))).await?;
        tx.commit().await
    }
}

/// Commit queued history changes in batches; a batch that fails is tried once more on a
/// new connection, then dropped (and logged): the relay never waits for its history.
async fn writer(cluster: Arc<Cluster>, mut rx: mpsc::UnboundedReceiver<Cmd>) {
    let mut w: Option<Writer> = None;
    let mut batch = Vec::new();
    let mut flushes = Vec::new();
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some(cmd) = next.take() {
            match cmd {
                Cmd::Write(x) => batch.push(x),
                Cmd::Flush(f) => flushes.push(f),
            }
            if batch.len() < BATCH {
                next = rx.try_recv().ok();
            }
        }
        if !batch.is_empty() {
            let mut failed = None;
            for _ in 0..2 {
                match commit_once(&cluster, &mut w, &batch).await {
                    Ok(()) => {
                        failed = None;
                        break;
                    }
                    Err(e) => {
                        failed = Some(e);
                        w = None;
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
            if let Some(e) = failed {
                cluster.warn(&format!("{} history write(s) lost", batch.len()), &e);
            }
            batch.clear();
        }
        for f in flushes.drain(..) {
            let _ = f.send(());
        }
    }
}

/// Commit `batch` on the writer's connection, opening it first if needed.
async fn commit_once(cluster: &Cluster, w: &mut Option<Writer>, batch: &[Write]) -> Result<()> {
    if w.is_none() {
        *w = Some(Writer::open(cluster).await?);
    }
    match w.as_mut() {
        Some(wr) => wr.commit(batch, &cluster.node).await.map_err(|e| cluster.db(e)),
        None => Err(cluster.unavailable("no connection")),
    }
}
