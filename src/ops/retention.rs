//! Retention: what each log of the store keeps, and the pruner that removes the rest. The
//! windows come from `hal0.toml` ([`Policy::from_config`]); [`prune`] deletes in small
//! batches (each its own short write transaction, with a pause between them, so a call
//! waiting for the write lock never waits long), gives the space back to the disk
//! (incremental vacuum) and reports what it removed. `hal0 serve` prunes every
//! `[store].prune_every_mins`; `hal0 store prune` (and `POST /api/store/prune`) prunes now.
//!
//! The audit log leaves oldest first: the pruner moves the table's prune mark (which only
//! moves forward) and only rows below it may be deleted (see migration 7).

use crate::base::error::Result;
use crate::config::Config;
use crate::store::Store;
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;
use std::time::{Duration, Instant};

/// Rows deleted per transaction.
const BATCH: i64 = 2000;
/// Pause between two batches: the write lock is free for others meanwhile.
const PAUSE: Duration = Duration::from_millis(5);

/// What each log keeps; a window of 0 days keeps everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Policy {
    pub audit_days: u32,
    /// The newest audit rows kept at most (0: no cap).
    pub audit_max_rows: u64,
    pub approvals_days: u32,
    pub memory_operations_days: u32,
    pub memory_history_days: u32,
    pub relay_days: u32,
    pub runs_days: u32,
}

impl Policy {
    pub fn from_config(c: &Config) -> Policy {
        Policy {
            audit_days: c.audit.retention_days,
            audit_max_rows: c.audit.max_rows,
            approvals_days: c.approvals.retention_days,
            memory_operations_days: c.memory.operations_retention_days,
            memory_history_days: c.memory.history_retention_days,
            relay_days: c.relay.history_retention_days,
            runs_days: c.bridge.run_retention_days,
        }
    }
}

impl Default for Policy {
    /// What a `hal0.toml` without retention settings keeps.
    fn default() -> Policy {
        Policy::from_config(&Config::default())
    }
}

/// Rows removed from one table.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Pruned {
    pub table: &'static str,
    pub rows: u64,
}

/// What one pruning did.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Report {
    /// Tables rows were removed from (tables with nothing to remove are left out).
    pub pruned: Vec<Pruned>,
    /// Bytes given back to the disk by the incremental vacuum.
    pub reclaimed_bytes: u64,
    pub took_ms: u64,
}

impl Report {
    pub fn rows(&self) -> u64 {
        self.pruned.iter().map(|p| p.rows).sum()
    }
}

/// RFC 3339 time `days` before now.
fn cutoff(days: u32) -> String {
    let t = time::OffsetDateTime::now_utc() - time::Duration::days(i64::from(days));
    t.replace_nanosecond(0).unwrap_or(t).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// Delete the rows `select` names (a `SELECT rowid … LIMIT ?2` over `table` with the
/// cutoff as `?1`), one batch per transaction, until none is left.
fn in_batches(store: &Store, table: &'static str, select: &str, arg: &str) -> Result<u64> {
    let sql = format!("DELETE FROM {table} WHERE rowid IN ({select})");
    let mut total = 0u64;
    loop {
        let n = store.with(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let n = tx.prepare_cached(&sql)?.execute(rusqlite::params![arg, BATCH])?;
            tx.commit()?;
            Ok(n as u64)
        })?;
        total += n;
        if n < BATCH as u64 {
            return Ok(total);
        }
        std::thread::sleep(PAUSE);
    }
}

/// The first audit id to keep: past both the age window and the row cap.
fn audit_keep_from(c: &Connection, p: &Policy) -> Result<i64> {
    let last: i64 = c.query_row("SELECT coalesce(max(id), 0) FROM audit_log", [], |r| r.get(0))?;
    let mut keep = 0i64;
    if p.audit_days > 0 {
        // The first row (by id) young enough starts what is kept: every row below it is
        // past the window. Found walking up from the oldest row (`+at`: not through the
        // `at` index, whose `min(id)` over the window read all of it, 5 M entries at the
        // default cap), so the walk costs the rows that go, plus one.
        let first: Option<i64> = c
            .query_row("SELECT id FROM audit_log WHERE +at >= ?1 ORDER BY id LIMIT 1", [cutoff(p.audit_days)], |r| {
                r.get(0)
            })
            .optional()?;
        keep = first.unwrap_or(last + 1);
    }
    if p.audit_max_rows > 0 {
        keep = keep.max(last - p.audit_max_rows as i64 + 1);
    }
    Ok(keep)
}

fn prune_audit(store: &Store, p: &Policy) -> Result<u64> {
    if p.audit_days == 0 && p.audit_max_rows == 0 {
        return Ok(0);
    }
    // The mark and the chain's anchor move together.
    let (below, links_below) = store.with(|c| {
        crate::store::immediate(c, |c| {
            let old: i64 = c.query_row("SELECT below FROM audit_prune_mark", [], |r| r.get(0))?;
            let mark = old.max(audit_keep_from(c, p)?);
            c.execute("UPDATE audit_prune_mark SET below = ?1", [mark])?;
            Ok((mark, crate::audit::chain::cut(c, old, mark)?))
        })
    })?;
    let outcomes = "SELECT seq FROM audit_outcomes WHERE seq < ?1 ORDER BY seq LIMIT ?2";
    in_batches(store, "audit_outcomes", outcomes, &links_below.to_string())?;
    in_batches(store, "audit_log", "SELECT id FROM audit_log WHERE id < ?1 ORDER BY id LIMIT ?2", &below.to_string())
}

/// Prune every log by `policy`, then give the space back. Reads and writes of other callers
/// go on meanwhile; each batch holds the write lock for one short transaction.
pub fn prune(store: &Store, policy: &Policy) -> Result<Report> {
    let started = Instant::now();
    crate::audit::writer::flush_blocking(store);
    let mut pruned = Vec::new();
    let mut add = |table: &'static str, rows: u64| {
        if rows > 0 {
            pruned.push(Pruned { table, rows });
        }
    };
    add("audit_log", prune_audit(store, policy)?);
    let windows: [(&'static str, u32, &str); 6] = [
        (
            "approvals",
            policy.approvals_days,
            "SELECT rowid FROM approvals WHERE decided_at < ?1
               AND status IN ('denied', 'withdrawn', 'expired', 'executed', 'failed') LIMIT ?2",
        ),
        (
            "memory_operations",
            policy.memory_operations_days,
            "SELECT rowid FROM memory_operations WHERE created_at < ?1 AND updated_at < ?1
               AND status IN ('completed', 'failed', 'cancelled') LIMIT ?2",
        ),
        (
            "memory_history",
            policy.memory_history_days,
            "SELECT hid FROM memory_history h WHERE at < ?1
               AND EXISTS (SELECT 1 FROM memory_history n WHERE n.seq = h.seq AND n.hid > h.hid)
             ORDER BY hid LIMIT ?2",
        ),
        (
            "relay_exchanges",
            policy.relay_days,
            "SELECT rowid FROM relay_exchanges WHERE started_at < ?1 AND ended_at IS NOT NULL LIMIT ?2",
        ),
        (
            "relay_conversations",
            policy.relay_days,
            "SELECT rowid FROM relay_conversations c WHERE created_at < ?1
               AND NOT EXISTS (SELECT 1 FROM relay_exchanges e WHERE e.conversation_id = c.id) LIMIT ?2",
        ),
        ("runs", policy.runs_days, "SELECT rowid FROM runs WHERE finished = 1 AND created_at < ?1 LIMIT ?2"),
    ];
    for (table, days, select) in windows {
        if days > 0 {
            add(table, in_batches(store, table, select, &cutoff(days))?);
        }
    }
    let reclaimed_bytes = if pruned.is_empty() { 0 } else { crate::store::vacuum::reclaim(store)? };
    // The write-ahead log grew with the deletes: give it back too (skipped while readers
    // hold it; the next checkpoint does it then).
    let _ = store.with(|c| Ok(c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?));
    Ok(Report { pruned, reclaimed_bytes, took_ms: started.elapsed().as_millis() as u64 })
}

/// Rows of each table with a retention window, and the store's size: what doctor and
/// `hal0 store status` show.
#[derive(Debug, Clone, Serialize)]
pub struct Sizes {
    pub tables: Vec<(String, u64)>,
    /// `hal0.db` plus its write-ahead log, in bytes.
    pub store_bytes: u64,
    /// Bytes inside the store that a pruning freed and the disk has not got back yet.
    pub free_bytes: u64,
}

/// The tables [`prune`] keeps bounded, in the order they are reported.
pub const TABLES: [&str; 9] = [
    "audit_log",
    "approvals",
    "memory_operations",
    "memory_history",
    "relay_exchanges",
    "relay_conversations",
    "runs",
    "run_events",
    "memory_notes",
];

pub fn sizes(store: &Store) -> Result<Sizes> {
    let path = store.path().to_path_buf();
    store.with(|c| sizes_of(c, &path))
}

/// [`sizes`] on any connection to the store at `path` (doctor reads it without opening a
/// [`Store`], which would migrate it); a table the store does not have yet is left out.
pub fn sizes_of(c: &Connection, path: &std::path::Path) -> Result<Sizes> {
    let mut tables = Vec::new();
    for t in TABLES {
        let exists: i64 =
            c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", [t], |r| r.get(0))?;
        if exists > 0 {
            // The audit log loses rows only from its oldest end (its triggers allow nothing
            // else), so its ids have no holes: two steps down the primary key, not a scan.
            let count = if t == "audit_log" {
                "SELECT coalesce((SELECT max(id) FROM audit_log) - (SELECT min(id) FROM audit_log) + 1, 0)".to_string()
            } else {
                format!("SELECT count(*) FROM {t}")
            };
            let n: i64 = c.query_row(&count, [], |r| r.get(0))?;
            tables.push((t.to_string(), n as u64));
        }
    }
    let page: i64 = c.pragma_query_value(None, "page_size", |r| r.get(0))?;
    let free = crate::store::vacuum::free_pages(c)?;
    let len = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    Ok(Sizes { tables, store_bytes: len(path) + len(std::path::Path::new(&wal)), free_bytes: (free * page) as u64 })
}
