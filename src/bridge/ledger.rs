//! The run ledger in SQLite: one row per delegated run (who, what, status, the full
//! output, usage, error, pending request) and its stored events (newest 500 per run),
//! written by the follower in one transaction per flush.

use crate::base::error::Result;
use crate::store::{Store, now};
use rusqlite::{OptionalExtension, params};
use serde_json::Value;

/// Events kept per run.
pub const EVENTS_KEPT: i64 = 500;

crate::text_enum! {
    /// Where a run stands: hal0's own states; whatever else Hermes reports is kept as it
    /// came (`Other`), so a newer Hermes's state is shown rather than lost.
    #[derive(Default)]
    pub enum RunStatus {
        /// Accepted by Hermes, no event yet.
        #[default]
        Queued = "queued",
        Running = "running",
        /// A stop was asked; the run has not ended yet.
        Stopping = "stopping",
        /// A dangerous command waits for a person in the inbox.
        WaitingForApproval = "waiting_for_approval",
        /// Hermes asked the client a question (`agent_run_answer`).
        WaitingForClarify = "waiting_for_clarify",
        Completed = "completed",
        Failed = "failed",
        Cancelled = "cancelled",
        /// hal0 lost the run (Hermes restarted or forgot it) before it ended.
        Interrupted = "interrupted",
    }
    other Other
}

impl RunStatus {
    /// Whether the run has ended (nothing more will happen to it).
    pub fn is_terminal(&self) -> bool {
        matches!(self, RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled | RunStatus::Interrupted)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub run_id: String,
    pub agent: String,
    pub profile: String,
    pub client: String,
    pub status: RunStatus,
    pub created_at: String,
    pub updated_at: String,
    pub input_preview: String,
    pub fingerprint: String,
    pub idempotency_key: Option<String>,
    pub session_key: Option<String>,
    pub output: String,
    pub error: Option<String>,
    pub usage: Option<Value>,
    pub pending: Option<Value>,
    pub last_seq: i64,
    pub finished: bool,
}

impl Run {
    /// The session key its client gave (without hal0's `<client>:` prefix).
    pub fn session(&self) -> Option<&str> {
        let k = self.session_key.as_deref()?;
        Some(k.strip_prefix(self.client.as_str()).and_then(|r| r.strip_prefix(':')).unwrap_or(k))
    }

    /// What every new run starts as: queued at `at`, nothing received from Hermes yet (no
    /// output, error, usage, pending request or event). Callers fill in the run's id, who
    /// asked and what, with struct update syntax.
    pub fn queued(at: String) -> Run {
        Run {
            run_id: String::new(),
            agent: String::new(),
            profile: String::new(),
            client: String::new(),
            status: RunStatus::Queued,
            created_at: at.clone(),
            updated_at: at,
            input_preview: String::new(),
            fingerprint: String::new(),
            idempotency_key: None,
            session_key: None,
            output: String::new(),
            error: None,
            usage: None,
            pending: None,
            last_seq: 0,
            finished: false,
        }
    }
}

/// A stored event: `seq`, name, and the payload (Hermes's JSON without `run_id`).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    pub seq: i64,
    pub event: String,
    pub payload: Value,
}

const COLS: &str = "run_id, agent, profile, client, status, created_at, updated_at, input_preview, fingerprint, \
    idempotency_key, session_key, output, error, usage, pending, last_seq, finished";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Run> {
    let json = |s: Option<String>| s.and_then(|s| serde_json::from_str(&s).ok());
    Ok(Run {
        run_id: r.get(0)?,
        agent: r.get(1)?,
        profile: r.get(2)?,
        client: r.get(3)?,
        status: r.get(4)?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
        input_preview: r.get(7)?,
        fingerprint: r.get(8)?,
        idempotency_key: r.get(9)?,
        session_key: r.get(10)?,
        output: r.get(11)?,
        error: r.get(12)?,
        usage: json(r.get(13)?),
        pending: json(r.get(14)?),
        last_seq: r.get(15)?,
        finished: r.get::<_, i64>(16)? != 0,
    })
}

pub fn insert(store: &Store, run: &Run) -> Result<()> {
    store.with(|c| {
        c.execute(
            &format!("INSERT INTO runs ({COLS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)"),
            params![
                run.run_id,
                run.agent,
                run.profile,
                run.client,
                run.status,
                run.created_at,
                run.updated_at,
                run.input_preview,
                run.fingerprint,
                run.idempotency_key,
                run.session_key,
                run.output,
                run.error,
                run.usage.as_ref().map(|v| v.to_string()),
                run.pending.as_ref().map(|v| v.to_string()),
                run.last_seq,
                run.finished as i64
            ],
        )?;
        Ok(())
    })
}

/// A run, seen by `client` (`None` = every client, for the admin key and operators).
pub fn get(store: &Store, run_id: &str, client: Option<&str>) -> Result<Option<Run>> {
    store.with(|c| {
        Ok(c.query_row(
            &format!("SELECT {COLS} FROM runs WHERE run_id = ?1 AND (?2 IS NULL OR client = ?2)"),
            params![run_id, client],
            row,
        )
        .optional()?)
    })
}

pub fn by_idempotency(store: &Store, agent: &str, key: &str) -> Result<Option<Run>> {
    store.with(|c| {
        Ok(c.query_row(
            &format!("SELECT {COLS} FROM runs WHERE agent = ?1 AND idempotency_key = ?2"),
            params![agent, key],
            row,
        )
        .optional()?)
    })
}

/// Runs of `client` that have not finished.
/// How many runs the ledger holds in each status, by status.
pub fn count_by_status(store: &Store) -> Result<Vec<(String, i64)>> {
    store.with(|c| {
        let mut st = c.prepare_cached("SELECT status, COUNT(*) FROM runs GROUP BY status ORDER BY status")?;
        let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}

pub fn count_active(store: &Store, client: &str) -> Result<i64> {
    store.with(|c| {
        Ok(c.query_row("SELECT COUNT(*) FROM runs WHERE client = ?1 AND finished = 0", [client], |r| r.get(0))?)
    })
}

/// Newest first.
pub fn list(store: &Store, client: Option<&str>, status: Option<&str>, limit: i64) -> Result<Vec<Run>> {
    store.with(|c| {
        let mut st = c.prepare(&format!(
            "SELECT {COLS} FROM runs WHERE (?1 IS NULL OR client = ?1) AND (?2 IS NULL OR status = ?2)
             ORDER BY created_at DESC, rowid DESC LIMIT ?3"
        ))?;
        let rows = st.query_map(params![client, status, limit], row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// Which runs [`query`] reads: every filter is optional; `after` is the cursor of the last
/// run of the previous page ([`Cursor`]).
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub client: Option<String>,
    pub agent: Option<String>,
    /// Runs in any of these statuses (`Some(vec![])`: none).
    pub statuses: Option<Vec<String>>,
    /// The whole stored session key (`<client>:<key>`).
    pub session_key: Option<String>,
    /// Runs changed after this stamp (in [`now`]'s form).
    pub updated_after: Option<String>,
    pub after: Option<Cursor>,
    pub limit: i64,
}

/// Where a page of runs ended: the last run's `created_at` and row number (runs are read
/// newest first, ties broken by row number).
#[derive(Debug, Clone, PartialEq)]
pub struct Cursor {
    pub created_at: String,
    pub rowid: i64,
}

/// A page of runs matching `q`, newest first, each with its [`Cursor`], and how many runs
/// match `q` in all (the cursor aside).
pub fn query(store: &Store, q: &Query) -> Result<(Vec<(Run, Cursor)>, i64)> {
    store.with(|c| {
        const WHERE: &str = "(?1 IS NULL OR client = ?1) AND (?2 IS NULL OR agent = ?2) \
             AND (?3 IS NULL OR status IN (SELECT value FROM json_each(?3))) \
             AND (?4 IS NULL OR session_key = ?4) AND (?8 IS NULL OR updated_at > ?8)";
        let statuses = q.statuses.as_ref().map(|s| serde_json::json!(s).to_string());
        let (after_at, after_row) =
            q.after.as_ref().map(|a| (Some(a.created_at.as_str()), a.rowid)).unwrap_or((None, 0));
        let mut st = c.prepare(&format!(
            "SELECT {COLS}, rowid FROM runs WHERE {WHERE} AND (?5 IS NULL OR (created_at, rowid) < (?5, ?6))
             ORDER BY created_at DESC, rowid DESC LIMIT ?7"
        ))?;
        let args = params![q.client, q.agent, statuses, q.session_key, after_at, after_row, q.limit, q.updated_after];
        let page = st
            .query_map(args, |r| {
                let run = row(r)?;
                let cursor = Cursor { created_at: run.created_at.clone(), rowid: r.get(17)? };
                Ok((run, cursor))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let total = c.query_row(
            &format!("SELECT COUNT(*) FROM runs WHERE {}", WHERE.replace("?8", "?5")),
            params![q.client, q.agent, statuses, q.session_key, q.updated_after],
            |r| r.get(0),
        )?;
        Ok((page, total))
    })
}

pub fn unfinished(store: &Store) -> Result<Vec<Run>> {
    store.with(|c| {
        let mut st = c.prepare(&format!("SELECT {COLS} FROM runs WHERE finished = 0 ORDER BY created_at"))?;
        let rows = st.query_map([], row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// One batch of changes to a run, applied in one transaction.
#[derive(Debug, Default)]
pub struct Update {
    pub append_output: String,
    pub set_output: Option<String>,
    pub status: Option<RunStatus>,
    pub error: Option<String>,
    pub usage: Option<Value>,
    /// `Some(None)` clears the pending request.
    pub pending: Option<Option<Value>>,
    pub events: Vec<(String, Value)>,
    /// Apply only while the run has not finished (checked inside the transaction), so a
    /// caller-side change never moves a settled run back.
    pub only_if_unfinished: bool,
}

impl Update {
    pub fn is_empty(&self) -> bool {
        self.append_output.is_empty()
            && self.set_output.is_none()
            && self.status.is_none()
            && self.error.is_none()
            && self.usage.is_none()
            && self.pending.is_none()
            && self.events.is_empty()
    }
}

/// Apply `u` to `run_id`; returns the run as stored afterwards.
pub fn apply(store: &Store, run_id: &str, u: &Update) -> Result<Option<Run>> {
    store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let last: Option<(i64, i64)> = tx
            .query_row("SELECT last_seq, finished FROM runs WHERE run_id = ?1", [run_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        let Some((mut seq, finished_now)) = last else { return Ok(None) };
        if u.only_if_unfinished && finished_now != 0 {
            return Ok(None);
        }
        for (name, payload) in &u.events {
            seq += 1;
            tx.execute(
                "INSERT INTO run_events (run_id, seq, event, payload) VALUES (?1, ?2, ?3, ?4)",
                params![run_id, seq, name, payload.to_string()],
            )?;
        }
        if !u.events.is_empty() {
            tx.execute("DELETE FROM run_events WHERE run_id = ?1 AND seq <= ?2", params![run_id, seq - EVENTS_KEPT])?;
        }
        let finished = u.status.as_ref().map(RunStatus::is_terminal);
        tx.execute(
            "UPDATE runs SET
                output = CASE WHEN ?2 IS NOT NULL THEN ?2 ELSE output || ?3 END,
                status = COALESCE(?4, status),
                error = COALESCE(?5, error),
                usage = COALESCE(?6, usage),
                pending = CASE WHEN ?7 THEN ?8 ELSE pending END,
                last_seq = ?9,
                finished = CASE WHEN ?10 IS NULL THEN finished ELSE ?10 END,
                updated_at = ?11
             WHERE run_id = ?1",
            params![
                run_id,
                u.set_output,
                u.append_output,
                u.status,
                u.error,
                u.usage.as_ref().map(|v| v.to_string()),
                u.pending.is_some(),
                u.pending.as_ref().and_then(|p| p.as_ref().map(|v| v.to_string())),
                seq,
                finished.map(|f| f as i64),
                now()
            ],
        )?;
        let run = tx.query_row(&format!("SELECT {COLS} FROM runs WHERE run_id = ?1"), [run_id], row)?;
        tx.commit()?;
        Ok(Some(run))
    })
}

fn event_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredEvent> {
    let p: String = r.get(2)?;
    Ok(StoredEvent { seq: r.get(0)?, event: r.get(1)?, payload: serde_json::from_str(&p).unwrap_or(Value::Null) })
}

/// Events with `seq > since`, oldest first.
pub fn events(store: &Store, run_id: &str, since: i64, limit: i64) -> Result<Vec<StoredEvent>> {
    store.with(|c| {
        let mut st = c.prepare(
            "SELECT seq, event, payload FROM run_events WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )?;
        let rows = st.query_map(params![run_id, since, limit], event_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// The newest `n` events, oldest first.
pub fn tail(store: &Store, run_id: &str, n: i64) -> Result<Vec<StoredEvent>> {
    store.with(|c| {
        let mut st = c.prepare(
            "SELECT seq, event, payload FROM (SELECT * FROM run_events WHERE run_id = ?1 ORDER BY seq DESC LIMIT ?2) ORDER BY seq",
        )?;
        let rows = st.query_map(params![run_id, n], event_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// Stored `message.text` just before `seq` (contiguous, newest last), up to `max` chars.
pub fn text_before(store: &Store, run_id: &str, seq: i64, max: usize) -> Result<String> {
    store.with(|c| {
        let mut st = c.prepare(
            "SELECT seq, event, payload FROM run_events WHERE run_id = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 64",
        )?;
        let mut parts: Vec<String> = Vec::new();
        let mut have = 0usize;
        for e in st.query_map(params![run_id, seq], event_row)? {
            let e = e?;
            if e.event != "message.text" || have >= max {
                break;
            }
            let t = e.payload["text"].as_str().unwrap_or("").to_string();
            have += t.chars().count();
            parts.push(t);
        }
        parts.reverse();
        let joined = parts.concat();
        let n = joined.chars().count();
        Ok(if n > max { joined.chars().skip(n - max).collect() } else { joined })
    })
}

/// Where the text [`text_after`] returns stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEnd {
    /// At another event: the text is complete there.
    Event,
    /// At the newest stored event: it grows while the run runs.
    Stored,
    /// At `max` characters or the row limit: more text follows.
    Cut,
}

/// Stored `message.text` just after `seq` (contiguous), up to `max` chars, and where it stops.
pub fn text_after(store: &Store, run_id: &str, seq: i64, max: usize) -> Result<(String, TextEnd)> {
    const ROWS: usize = 64;
    store.with(|c| {
        let mut st = c.prepare(
            "SELECT seq, event, payload FROM run_events WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT 64",
        )?;
        let mut out = String::new();
        let mut end = TextEnd::Stored;
        let mut rows = 0;
        for e in st.query_map(params![run_id, seq], event_row)? {
            let e = e?;
            rows += 1;
            if e.event != "message.text" {
                end = TextEnd::Event;
                break;
            }
            if out.chars().count() >= max {
                end = TextEnd::Cut;
                break;
            }
            out.push_str(e.payload["text"].as_str().unwrap_or(""));
        }
        if rows == ROWS && end == TextEnd::Stored {
            end = TextEnd::Cut;
        }
        let n = out.chars().count();
        if n > max {
            out = out.chars().take(max).collect();
            end = TextEnd::Cut;
        }
        Ok((out, end))
    })
}

/// Delete finished runs (and their events) older than `days`.
pub fn prune(store: &Store, days: u32) -> Result<usize> {
    let cutoff = time::OffsetDateTime::now_utc() - time::Duration::days(days as i64);
    let cutoff = cutoff.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
    store.with(|c| Ok(c.execute("DELETE FROM runs WHERE finished = 1 AND created_at < ?1", [cutoff])?))
}

/// A queued run of `client` for tests of the ledger and its users.
#[cfg(test)]
pub(crate) fn sample(id: &str, client: &str) -> Run {
    tests::run(id, client)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn run(id: &str, client: &str) -> Run {
        Run {
            run_id: id.into(),
            agent: "hermes".into(),
            profile: "default".into(),
            client: client.into(),
            input_preview: "hi".into(),
            fingerprint: "f".into(),
            ..Run::queued(now())
        }
    }

    #[test]
    fn apply_keeps_newest_500_and_contexts() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("h.db")).unwrap();
        insert(&s, &run("r1", "a")).unwrap();
        for i in 0..60 {
            let events = (0..10)
                .map(|j| ("message.text".to_string(), serde_json::json!({"text": format!("{}", i * 10 + j % 10)})))
                .collect();
            apply(&s, "r1", &Update { append_output: "x".repeat(10), events, ..Default::default() }).unwrap();
        }
        let r = get(&s, "r1", Some("a")).unwrap().unwrap();
        assert_eq!(r.last_seq, 600);
        assert_eq!(r.output.len(), 600);
        let all = events(&s, "r1", 0, 1000).unwrap();
        assert_eq!(all.len(), 500);
        assert_eq!(all[0].seq, 101);
        assert!(get(&s, "r1", Some("b")).unwrap().is_none(), "another client sees nothing");
        let (after, end) = text_after(&s, "r1", 598, 100).unwrap();
        assert_eq!(end, TextEnd::Stored);
        assert_eq!(after, "598599");
        assert_eq!(text_after(&s, "r1", 500, 30).unwrap(), ("500501502503504505506507508509".into(), TextEnd::Cut));
        assert_eq!(text_after(&s, "r1", 300, 10_000).unwrap().1, TextEnd::Cut, "64 rows and more stored");
        assert_eq!(text_before(&s, "r1", 103, 100).unwrap(), "100101", "context stops at the oldest kept event");
        let u = Update { status: Some(RunStatus::Completed), pending: Some(None), ..Default::default() };
        let r = apply(&s, "r1", &u).unwrap().unwrap();
        assert!(r.finished);
        assert_eq!(count_active(&s, "a").unwrap(), 0);
    }
}
