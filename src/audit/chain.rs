//! The audit log's hash chain: every write to `audit_log` appends a link to `audit_chain`
//! in the same transaction, `hash = SHA-256(previous link's hash ‖ what was written)`. A row
//! gets a `row` link when it is stored and, if it was stored `started`, an `outcome` link
//! when it takes its outcome (the only change a row ever sees). So a row edited, deleted or
//! added outside hal0 (sqlite3 with the triggers dropped) no longer matches the chain, and
//! [`verify`] names the first row that does not.
//!
//! Retention cuts the chain where it cuts the log: the links of pruned rows go, and
//! `audit_chain_anchor` keeps the hash of the last link pruned, which the first kept link
//! names as its previous; the cut is moved back to a row whose links all come after the
//! links of the rows before it (a call that started early and ended late holds it), so no
//! kept link ever follows a pruned row's. Rows older than the chain (stored by a hal0 before
//! it) are counted, not checked. `hal0 activity export` carries each row's links with their
//! previous hash, so a copy shipped elsewhere checks alone ([`verify_lines`]).
//!
//! The chain has no secret key: it proves a copy of the head hash kept elsewhere (an export,
//! the system log) still leads to these rows; someone who can rewrite the file can also
//! recompute every hash after an edit, which the head kept elsewhere then shows.

use super::{Outcome, Prepared, Row};
use crate::error::{Error, Result};
use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A link's hash: 32 bytes.
type Hash = [u8; 32];

/// What starts a link's hashed content (and names the format, should it ever change).
const ROW_TAG: &[u8] = b"hal0-audit-v1 row\n";
const OUTCOME_TAG: &[u8] = b"hal0-audit-v1 outcome\n";

/// The parts of a row a `row` link covers, as they were when the row was stored.
struct Stored<'a> {
    id: i64,
    at: &'a str,
    surface: &'a str,
    tool: &'a str,
    identity: &'a str,
    arguments: &'a str,
    verdict: &'a str,
    result_code: Option<&'a str>,
    approval_id: Option<&'a str>,
    detail: Option<&'a str>,
}

/// Each field length-prefixed (a missing one as `u64::MAX`), so no two rows hash alike.
fn fields(h: &mut Sha256, parts: &[Option<&str>]) {
    for p in parts {
        match p {
            Some(s) => {
                h.update((s.len() as u64).to_be_bytes());
                h.update(s.as_bytes());
            }
            None => h.update(u64::MAX.to_be_bytes()),
        }
    }
}

fn row_hash(prev: &Hash, s: &Stored<'_>) -> Hash {
    let mut h = Sha256::new();
    h.update(prev);
    h.update(ROW_TAG);
    let id = s.id.to_string();
    fields(
        &mut h,
        &[
            Some(&id),
            Some(s.at),
            Some(s.surface),
            Some(s.tool),
            Some(s.identity),
            Some(s.arguments),
            Some(s.verdict),
            s.result_code,
            s.approval_id,
            s.detail,
        ],
    );
    h.finalize().into()
}

fn outcome_hash(prev: &Hash, id: i64, verdict: &str, result_code: Option<&str>, approval_id: Option<&str>) -> Hash {
    let mut h = Sha256::new();
    h.update(prev);
    h.update(OUTCOME_TAG);
    let id = id.to_string();
    fields(&mut h, &[Some(&id), Some(verdict), result_code, approval_id]);
    h.finalize().into()
}

fn to_hash(v: Vec<u8>) -> Result<Hash> {
    v.try_into().map_err(|_| Error::internal("an audit chain hash is not 32 bytes"))
}

/// The newest link's hash (the anchor's when every link was pruned). Read inside the
/// writing transaction, which holds the write lock: two writers never link to one head.
fn head(c: &Connection) -> Result<Hash> {
    let h: Vec<u8> = c
        .prepare_cached(
            "SELECT coalesce((SELECT hash FROM audit_chain ORDER BY seq DESC LIMIT 1),
                             (SELECT hash FROM audit_chain_anchor))",
        )?
        .query_row([], |r| r.get(0))?;
    to_hash(h)
}

fn append(c: &Connection, row_id: i64, kind: &str, hash: &Hash) -> Result<()> {
    c.prepare_cached("INSERT INTO audit_chain (row_id, kind, hash) VALUES (?1, ?2, ?3)")?
        .execute(rusqlite::params![row_id, kind, &hash[..]])?;
    Ok(())
}

/// Link the row `id` just stored from `p` (same transaction as its INSERT).
pub(crate) fn link_row(c: &Connection, id: i64, p: &Prepared) -> Result<()> {
    let prev = head(c)?;
    let s = Stored {
        id,
        at: &p.at,
        surface: &p.surface,
        tool: &p.tool,
        identity: &p.identity,
        arguments: &p.arguments,
        verdict: p.verdict.as_str(),
        result_code: p.result_code.as_deref(),
        approval_id: p.approval_id.as_deref(),
        detail: p.detail.as_deref(),
    };
    append(c, id, "row", &row_hash(&prev, &s))
}

/// Link the outcome `o` just given to its `started` row (same transaction as its UPDATE).
pub(crate) fn link_outcome(c: &Connection, o: &Outcome) -> Result<()> {
    let prev = head(c)?;
    let h = outcome_hash(&prev, o.id, o.verdict.as_str(), o.result_code.as_deref(), o.approval_id.as_deref());
    append(c, o.id, "outcome", &h)
}

/// Where retention may cut the log: the first row id to keep (at most `keep`) and the
/// first link to keep, such that every link of a kept row comes at or after that link and
/// every link before it belongs to a row that goes. Rows from `floor` (the current prune
/// mark) up are considered.
pub(crate) fn clean_cut(c: &Connection, floor: i64, mut keep: i64) -> Result<(i64, i64)> {
    let mut first_row =
        c.prepare_cached("SELECT seq FROM audit_chain WHERE row_id >= ?1 AND kind = 'row' ORDER BY row_id LIMIT 1")?;
    // Outcome links of rows older than the chain, or of rows below `keep`, that a cut at
    // `seq` would split from the rows around them.
    let mut early_outcome =
        c.prepare_cached("SELECT min(seq) FROM audit_chain WHERE row_id >= ?1 AND row_id < ?2 AND kind = 'outcome'")?;
    let mut late_outcome = c.prepare_cached(
        "SELECT min(row_id) FROM audit_chain WHERE row_id >= ?1 AND row_id < ?2 AND kind = 'outcome' AND seq > ?3",
    )?;
    let rows_from: i64 = c.query_row("SELECT rows_from FROM audit_chain_anchor", [], |r| r.get(0))?;
    let end: i64 = c.query_row("SELECT coalesce(max(seq), 0) + 1 FROM audit_chain", [], |r| r.get(0))?;
    loop {
        let mut seq: i64 = first_row.query_row([keep], |r| r.get(0)).optional()?.unwrap_or(end);
        // A row older than the chain keeps only its outcome link, which may sit anywhere.
        if keep < rows_from {
            let early: Option<i64> = early_outcome.query_row([keep, rows_from], |r| r.get(0))?;
            seq = early.map_or(seq, |e| e.min(seq));
        }
        let held: Option<i64> = late_outcome.query_row([floor, keep, seq], |r| r.get(0))?;
        match held {
            Some(row) if row < keep => keep = row,
            _ => return Ok((keep, seq)),
        }
    }
}

/// Move the chain's anchor to `below` (links before it are pruned next): it takes the
/// hash of the last link that goes. Never moves back.
pub(crate) fn move_anchor(c: &Connection, below: i64) -> Result<()> {
    let (old, _) = anchor(c)?;
    if below <= old {
        return Ok(());
    }
    let last: Option<Vec<u8>> = c
        .prepare_cached("SELECT hash FROM audit_chain WHERE seq < ?1 ORDER BY seq DESC LIMIT 1")?
        .query_row([below], |r| r.get(0))
        .optional()?;
    match last {
        Some(h) => c.execute("UPDATE audit_chain_anchor SET below = ?1, hash = ?2", rusqlite::params![below, h])?,
        None => c.execute("UPDATE audit_chain_anchor SET below = ?1", [below])?,
    };
    Ok(())
}

fn anchor(c: &Connection) -> Result<(i64, Hash)> {
    let (below, h): (i64, Vec<u8>) =
        c.query_row("SELECT below, hash FROM audit_chain_anchor", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok((below, to_hash(h)?))
}

/// The first thing found that does not match.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Problem {
    /// The row it concerns (for removed links: the row whose link follows the gap).
    pub row: i64,
    /// `audit.row_changed`, `audit.outcome_changed`, `audit.row_removed`,
    /// `audit.links_removed`, `audit.row_added`.
    pub code: &'static str,
    pub message: String,
}

/// What [`verify`] (or [`verify_lines`]) found.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    /// Every link checked matched, and no row is missing or added.
    pub intact: bool,
    /// Links checked (up to the problem, when there is one).
    pub links: u64,
    /// Rows the checked links cover.
    pub rows: u64,
    pub first_row: Option<i64>,
    pub last_row: Option<i64>,
    /// The hash the walk started from: the last pruned link's (zeros before any prune).
    pub anchor: String,
    /// The newest link's hash: keep it elsewhere to show later that nothing before it changed.
    pub head: String,
    /// Rows stored before the chain existed (not covered).
    pub unchained: u64,
    /// In a copy: places where links are missing (rows filtered out of the export).
    pub gaps: u64,
    pub problem: Option<Problem>,
}

/// One link as [`verify`] reads it: where it sits, what it claims, and its row as stored now.
struct Walked {
    seq: i64,
    row_id: i64,
    kind: String,
    hash: Hash,
    /// The row's columns, `None` when the row is gone.
    row: Option<RowNow>,
    /// The row has an outcome link (so it was stored `started`).
    finished: bool,
}

#[derive(Clone)]
struct RowNow {
    at: String,
    surface: String,
    tool: String,
    identity: String,
    arguments: String,
    verdict: String,
    result_code: Option<String>,
    approval_id: Option<String>,
    detail: Option<String>,
}

/// The hash a link should have after `prev`, from its row as it is now (`None`: no row).
fn expected(prev: &Hash, w: &Walked) -> Option<Hash> {
    let r = w.row.as_ref()?;
    Some(if w.kind == "outcome" {
        outcome_hash(prev, w.row_id, &r.verdict, r.result_code.as_deref(), r.approval_id.as_deref())
    } else {
        let (verdict, result_code, approval_id) = if w.finished {
            ("started", None, None)
        } else {
            (r.verdict.as_str(), r.result_code.as_deref(), r.approval_id.as_deref())
        };
        row_hash(
            prev,
            &Stored {
                id: w.row_id,
                at: &r.at,
                surface: &r.surface,
                tool: &r.tool,
                identity: &r.identity,
                arguments: &r.arguments,
                verdict,
                result_code,
                approval_id,
                detail: r.detail.as_deref(),
            },
        )
    })
}

/// Walks links in order, keeping the count and the first problem.
struct Walk {
    prev: Hash,
    next_seq: Option<i64>,
    links: u64,
    rows: u64,
    first_row: Option<i64>,
    last_row: Option<i64>,
    problem: Option<Problem>,
}

impl Walk {
    fn new(prev: Hash, next_seq: Option<i64>) -> Walk {
        Walk { prev, next_seq, links: 0, rows: 0, first_row: None, last_row: None, problem: None }
    }

    fn fail(&mut self, row: i64, code: &'static str, message: String) {
        self.problem.get_or_insert(Problem { row, code, message });
    }

    /// Check one link whose previous hash should be `self.prev` and whose content hashes
    /// to `want` (`None`: its row is missing). False once a problem is found.
    fn step(&mut self, seq: i64, row_id: i64, kind: &str, stored: Hash, want: Option<Hash>) -> bool {
        if let Some(n) = self.next_seq.filter(|n| *n != seq) {
            self.fail(
                row_id,
                "audit.links_removed",
                format!("entries were removed before row {row_id}: chain links {n}–{} are missing", seq - 1),
            );
            return false;
        }
        match want {
            None => {
                self.fail(row_id, "audit.row_removed", format!("row {row_id} was removed from the log"));
                return false;
            }
            Some(h) if h != stored => {
                let (code, what) = if kind == "outcome" {
                    ("audit.outcome_changed", format!("the outcome of row {row_id} was changed after it was stored"))
                } else {
                    ("audit.row_changed", format!("row {row_id} was changed after it was stored"))
                };
                self.fail(row_id, code, format!("{what} (or entries before it were removed)"));
                return false;
            }
            Some(_) => {}
        }
        self.prev = stored;
        self.next_seq = Some(seq + 1);
        self.links += 1;
        if kind == "row" {
            self.rows += 1;
            self.first_row.get_or_insert(row_id);
            self.last_row = Some(row_id);
        }
        true
    }

    fn report(self, anchor: &Hash, unchained: u64) -> Report {
        Report {
            intact: self.problem.is_none(),
            links: self.links,
            rows: self.rows,
            first_row: self.first_row,
            last_row: self.last_row,
            anchor: hex::encode(anchor),
            head: hex::encode(self.prev),
            unchained,
            gaps: 0,
            problem: self.problem,
        }
    }
}

/// Walk the chain of the store's log (one consistent snapshot) and check every link
/// against its row as stored now, then look for rows no link covers.
pub fn verify(c: &mut Connection) -> Result<Report> {
    let tx = c.transaction()?;
    let (below, anchor_hash) = anchor(&tx)?;
    let rows_from: i64 = tx.query_row("SELECT rows_from FROM audit_chain_anchor", [], |r| r.get(0))?;
    let mark: i64 = tx.query_row("SELECT below FROM audit_prune_mark", [], |r| r.get(0))?;
    let mut walk = Walk::new(anchor_hash, Some(below.max(1)));
    {
        let mut st = tx.prepare(
            "SELECT l.seq, l.row_id, l.kind, l.hash,
                    a.id, a.at, a.surface, a.tool, a.identity, a.arguments, a.verdict, a.result_code,
                    a.approval_id, a.detail,
                    EXISTS (SELECT 1 FROM audit_chain o WHERE o.row_id = l.row_id AND o.kind = 'outcome')
             FROM audit_chain l LEFT JOIN audit_log a ON a.id = l.row_id
             WHERE l.seq >= ?1 ORDER BY l.seq",
        )?;
        let mut rows = st.query([below])?;
        while let Some(r) = rows.next()? {
            let present: Option<i64> = r.get(4)?;
            let w = Walked {
                seq: r.get(0)?,
                row_id: r.get(1)?,
                kind: r.get(2)?,
                hash: to_hash(r.get(3)?)?,
                row: match present {
                    None => None,
                    Some(_) => Some(RowNow {
                        at: r.get(5)?,
                        surface: r.get(6)?,
                        tool: r.get(7)?,
                        identity: r.get(8)?,
                        arguments: r.get(9)?,
                        verdict: r.get(10)?,
                        result_code: r.get(11)?,
                        approval_id: r.get(12)?,
                        detail: r.get(13)?,
                    }),
                },
                finished: r.get(14)?,
            };
            let prev = walk.prev;
            if !walk.step(w.seq, w.row_id, &w.kind, w.hash, expected(&prev, &w)) {
                break;
            }
        }
    }
    // A row no link covers was added behind hal0's back (rows leaving by retention, below
    // the prune mark, and rows older than the chain excepted).
    let added: Option<i64> = tx
        .query_row(
            "SELECT a.id FROM audit_log a WHERE a.id >= ?1 AND NOT EXISTS
                 (SELECT 1 FROM audit_chain l WHERE l.row_id = a.id AND l.kind = 'row')
             ORDER BY a.id LIMIT 1",
            [rows_from.max(mark)],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(row) = added
        && walk.problem.as_ref().is_none_or(|p| row < p.row)
    {
        walk.problem = None;
        walk.fail(
            row,
            "audit.row_added",
            format!("row {row} was added to the log outside hal0 (no chain link covers it)"),
        );
    }
    let unchained: i64 =
        tx.query_row("SELECT count(*) FROM audit_log WHERE id < ?1 AND id >= ?2", [rows_from, mark], |r| r.get(0))?;
    Ok(walk.report(&anchor_hash, unchained as u64))
}

/// A link as `hal0 activity export` writes it beside its row.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Link {
    pub seq: i64,
    /// `row` or `outcome`.
    pub kind: String,
    /// The previous link's hash (hex; `null` when the store lacks it).
    pub prev: Option<String>,
    pub hash: String,
}

/// The links of row `id`, in order, with their previous hashes.
pub(crate) fn links_of(c: &Connection, id: i64) -> Result<Vec<Link>> {
    let mut st = c.prepare_cached(
        "SELECT l.seq, l.kind, l.hash,
                coalesce((SELECT p.hash FROM audit_chain p WHERE p.seq = l.seq - 1),
                         (SELECT hash FROM audit_chain_anchor WHERE below = l.seq))
         FROM audit_chain l WHERE l.row_id = ?1 ORDER BY l.seq",
    )?;
    let links = st
        .query_map([id], |r| {
            Ok(Link {
                seq: r.get(0)?,
                kind: r.get(1)?,
                hash: hex::encode(r.get::<_, Vec<u8>>(2)?),
                prev: r.get::<_, Option<Vec<u8>>>(3)?.map(hex::encode),
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(links)
}

/// One line of an export: the row and its links.
#[derive(Deserialize)]
struct Line {
    #[serde(flatten)]
    row: ExportedRow,
    #[serde(default)]
    chain: Vec<Link>,
}

#[derive(Deserialize)]
struct ExportedRow {
    id: i64,
    at: String,
    surface: String,
    tool: String,
    identity: String,
    arguments: serde_json::Value,
    verdict: String,
    result_code: Option<String>,
    approval_id: Option<String>,
    detail: Option<String>,
}

fn hex_hash(s: &str) -> Option<Hash> {
    hex::decode(s).ok()?.try_into().ok()
}

/// Check a copy written by `hal0 activity export`: every link against its row and its
/// previous hash, and each link against the one before it where both are in the copy. A
/// copy of the whole log (no filter) has every link; links missing from a filtered copy
/// are counted (`gaps`), not failed, unless `complete` says the copy is whole.
pub fn verify_lines(text: impl std::io::BufRead, complete: bool) -> Result<Report> {
    let mut links: Vec<(Link, RowNow, i64, bool)> = Vec::new();
    let mut unchained = 0u64;
    for (n, line) in text.lines().enumerate() {
        let line = line.map_err(|e| Error::unavailable("audit.export_failed", format!("cannot read the copy: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let l: Line = serde_json::from_str(&line).map_err(|e| {
            Error::invalid(
                "audit.invalid_copy",
                format!("line {} is not a row of `hal0 activity export` ({e}); check the file", n + 1),
            )
        })?;
        unchained += u64::from(l.chain.is_empty());
        let finished = l.chain.iter().any(|k| k.kind == "outcome");
        let r = l.row;
        let now = RowNow {
            at: r.at,
            surface: r.surface,
            tool: r.tool,
            identity: r.identity,
            // The stored text is the serialized value; the export parsed it, this writes it back.
            arguments: r.arguments.to_string(),
            verdict: r.verdict,
            result_code: r.result_code,
            approval_id: r.approval_id,
            detail: r.detail,
        };
        links.extend(l.chain.into_iter().map(|k| (k, now.clone(), r.id, finished)));
    }
    links.sort_by_key(|(k, ..)| k.seq);
    let mut walk = Walk::new([0; 32], None);
    let mut start: Option<Hash> = None;
    let mut before: Option<i64> = None;
    let mut gaps = 0u64;
    for (k, row, row_id, finished) in links {
        let (Some(stored), Some(prev)) = (hex_hash(&k.hash), k.prev.as_deref().and_then(hex_hash)) else {
            walk.fail(row_id, "audit.row_changed", format!("row {row_id}'s chain link is not a hash"));
            break;
        };
        start.get_or_insert(prev);
        match walk.next_seq {
            Some(n) if n != k.seq && complete => {
                walk.step(k.seq, row_id, &k.kind, stored, None);
                break;
            }
            Some(n) if n != k.seq => gaps += 1,
            // Rewritten with its hash recomputed: the next link still names the old hash.
            Some(_) if prev != walk.prev => {
                let row = before.unwrap_or(row_id);
                walk.fail(row, "audit.row_changed", format!("row {row} was changed after it was stored"));
                break;
            }
            _ => {}
        }
        // The first link, or the first after a gap: its own previous hash starts the walk.
        walk.next_seq = Some(k.seq);
        walk.prev = prev;
        let w = Walked { seq: k.seq, row_id, kind: k.kind, hash: stored, row: Some(row), finished };
        if !walk.step(w.seq, w.row_id, &w.kind, w.hash, expected(&prev, &w)) {
            break;
        }
        before = Some(row_id);
    }
    let mut report = walk.report(&start.unwrap_or([0; 32]), unchained);
    report.gaps = gaps;
    Ok(report)
}

/// The row as export writes it, with its links.
pub(crate) fn exported(c: &Connection, row: &Row) -> Result<serde_json::Value> {
    let mut v = serde_json::to_value(row).map_err(|e| Error::internal(e.to_string()))?;
    let links = links_of(c, row.id)?;
    if !links.is_empty() {
        v["chain"] = serde_json::to_value(links).map_err(|e| Error::internal(e.to_string()))?;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{Entry, Filter, Outcome, Verdict, export, record};
    use crate::store::{Store, scratch};
    use serde_json::json;

    fn entry(s: &Store, tool: &str, verdict: Verdict) -> i64 {
        let args = json!({"path": format!("/tmp/{tool}"), "n": 1.5});
        let e = Entry {
            surface: "mcp:admin",
            tool,
            identity: "bridge:ci",
            arguments: &args,
            verdict,
            result_code: None,
            approval_id: None,
            detail: Some("d"),
        };
        record(s, &e).unwrap()
    }

    fn finish(s: &Store, id: i64) {
        let o = Outcome { id, verdict: Verdict::Ok, result_code: Some("ok".into()), approval_id: Some("a1".into()) };
        s.with(|c| crate::store::immediate(c, |c| o.apply(c))).unwrap();
    }

    /// Six rows: 2 and 4 started, 4 ends after 5 was stored, 2 right away.
    fn log(s: &Store) {
        entry(s, "t1", Verdict::Ok);
        let two = entry(s, "t2", Verdict::Started);
        finish(s, two);
        entry(s, "t3", Verdict::Allow);
        let four = entry(s, "t4", Verdict::Started);
        entry(s, "t5", Verdict::Error);
        finish(s, four);
        entry(s, "t6", Verdict::Ok);
    }

    fn check(s: &Store) -> Report {
        s.with(verify).unwrap()
    }

    /// Run SQL on the file behind hal0's back, with every trigger that would stop it dropped.
    fn tamper(s: &Store, sql: &str) {
        let c = Connection::open(s.path()).unwrap();
        c.execute_batch(
            "DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete;
             DROP TRIGGER audit_chain_no_update; DROP TRIGGER audit_chain_no_delete;",
        )
        .unwrap();
        c.execute_batch(sql).unwrap();
    }

    fn problem(s: &Store) -> (i64, &'static str) {
        let p = check(s).problem.expect("a problem");
        (p.row, p.code)
    }

    #[test]
    fn an_untouched_log_is_intact() {
        let (_d, s) = scratch();
        assert!(check(&s).intact, "an empty log");
        log(&s);
        let r = check(&s);
        assert!(r.intact, "{r:?}");
        assert_eq!((r.rows, r.links, r.first_row, r.last_row), (6, 8, Some(1), Some(6)));
        assert_eq!(r.anchor, "0".repeat(64));
        assert_ne!(r.head, r.anchor);
        // An outcome applies once; a second one changes nothing and links nothing.
        finish(&s, 4);
        assert_eq!(check(&s).links, 8);
    }

    #[test]
    fn edits_removals_and_additions_are_named() {
        for (sql, want) in [
            (
                "UPDATE audit_log SET arguments = '{\"path\":\"/etc/shadow\",\"n\":1.5}' WHERE id = 3",
                (3, "audit.row_changed"),
            ),
            ("UPDATE audit_log SET identity = 'admin' WHERE id = 4", (4, "audit.row_changed")),
            ("UPDATE audit_log SET result_code = 'denied' WHERE id = 2", (2, "audit.outcome_changed")),
            (
                "UPDATE audit_log SET verdict = 'started', result_code = NULL, approval_id = NULL WHERE id = 4",
                (4, "audit.outcome_changed"),
            ),
            ("DELETE FROM audit_log WHERE id = 5", (5, "audit.row_removed")),
            (
                "DELETE FROM audit_log WHERE id = 3; DELETE FROM audit_chain WHERE row_id = 3",
                (4, "audit.links_removed"),
            ),
            (
                "INSERT INTO audit_log (at, surface, tool, identity, arguments, verdict) VALUES ('2026-01-01T00:00:00Z', 'cli', 'x', 'admin', '{}', 'ok')",
                (7, "audit.row_added"),
            ),
            ("UPDATE audit_chain SET hash = randomblob(32) WHERE seq = 2", (2, "audit.row_changed")),
        ] {
            let (_d, s) = scratch();
            log(&s);
            tamper(&s, sql);
            assert_eq!(problem(&s), want, "{sql}");
            assert!(!check(&s).intact);
        }
    }

    #[test]
    fn the_chain_holds_across_retention() {
        let (_d, s) = scratch();
        log(&s);
        // Keep the newest two rows: row 4 started before 5 and ended after it, so the cut
        // moves back to it.
        let p = crate::retention::Policy { audit_max_rows: 2, ..crate::retention::Policy::default() };
        crate::retention::prune(&s, &p).unwrap();
        let r = check(&s);
        assert!(r.intact, "{r:?}");
        assert_eq!((r.first_row, r.last_row), (Some(4), Some(6)));
        assert_ne!(r.anchor, "0".repeat(64));
        entry(&s, "t7", Verdict::Ok);
        let p = crate::retention::Policy { audit_max_rows: 1, ..p };
        crate::retention::prune(&s, &p).unwrap();
        let r = check(&s);
        assert!(r.intact, "{r:?}");
        assert_eq!((r.rows, r.first_row), (1, Some(7)));
        // A pruned row's outcome arriving late changes nothing.
        finish(&s, 4);
        assert!(check(&s).intact);
        // Removing the oldest kept row is not retention: the anchor does not lead to it.
        tamper(&s, "DELETE FROM audit_log WHERE id = 7; DELETE FROM audit_chain WHERE row_id = 7");
        entry(&s, "t8", Verdict::Ok);
        assert_eq!(problem(&s), (8, "audit.links_removed"));
    }

    #[test]
    fn rows_older_than_the_chain_are_counted_not_checked() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("hal0.db");
        {
            let c = Connection::open(&path).unwrap();
            crate::store::migrations::migrate_with(&c, &crate::store::migrations::MIGRATIONS[..12]).unwrap();
            c.execute_batch(
                "INSERT INTO audit_log (at, surface, tool, identity, arguments, verdict)
                 VALUES ('2026-01-01T00:00:00Z', 'cli', 'old', 'admin', '{}', 'ok'),
                        ('2026-01-01T00:00:00Z', 'cli', 'old', 'admin', '{}', 'started');",
            )
            .unwrap();
        }
        let s = Store::open(&path).unwrap();
        entry(&s, "new", Verdict::Ok);
        finish(&s, 2);
        let r = check(&s);
        assert!(r.intact, "{r:?}");
        assert_eq!((r.unchained, r.rows, r.links), (2, 1, 2));
        let p = crate::retention::Policy { audit_max_rows: 1, ..crate::retention::Policy::default() };
        crate::retention::prune(&s, &p).unwrap();
        assert!(check(&s).intact);
    }

    fn exported(s: &Store, f: &Filter) -> String {
        let mut out = Vec::new();
        export(s, f, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn an_export_checks_alone() {
        let (_d, s) = scratch();
        log(&s);
        let all = exported(&s, &Filter::default());
        let r = verify_lines(all.as_bytes(), true).unwrap();
        assert!(r.intact, "{r:?}");
        assert_eq!((r.rows, r.links, r.head.clone()), (6, 8, check(&s).head));
        // An edited copy is caught, a copy missing a row too (when it claims to be whole).
        let edited = all.replace("/tmp/t3", "/tmp/t9");
        assert_eq!(verify_lines(edited.as_bytes(), false).unwrap().problem.unwrap().row, 3);
        let short: String = all.lines().filter(|l| !l.contains("\"id\":3,")).map(|l| format!("{l}\n")).collect();
        assert_eq!(short.lines().count(), 5);
        assert_eq!(verify_lines(short.as_bytes(), true).unwrap().problem.unwrap().code, "audit.links_removed");
        let r = verify_lines(short.as_bytes(), false).unwrap();
        assert!(r.intact && r.gaps == 1, "{r:?}");
        // An edit whose hash was recomputed still shows: the next link names the old hash.
        let mut lines: Vec<serde_json::Value> = all.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        lines[2]["tool"] = json!("t9");
        let prev = hex_hash(lines[2]["chain"][0]["prev"].as_str().unwrap()).unwrap();
        let row = RowNow {
            at: lines[2]["at"].as_str().unwrap().into(),
            surface: "mcp:admin".into(),
            tool: "t9".into(),
            identity: "bridge:ci".into(),
            arguments: lines[2]["arguments"].to_string(),
            verdict: "allow".into(),
            result_code: None,
            approval_id: None,
            detail: Some("d".into()),
        };
        let w = Walked { seq: 0, row_id: 3, kind: "row".into(), hash: [0; 32], row: Some(row), finished: false };
        lines[2]["chain"][0]["hash"] = json!(hex::encode(expected(&prev, &w).unwrap()));
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let p = verify_lines(text.as_bytes(), true).unwrap().problem.unwrap();
        assert_eq!((p.row, p.code), (3, "audit.row_changed"));
        // A filtered copy checks each of its rows.
        let f = Filter { tool: Some("t4".into()), ..Filter::default() };
        let r = verify_lines(exported(&s, &f).as_bytes(), false).unwrap();
        assert!(r.intact && r.rows == 1 && r.links == 2, "{r:?}");
        assert_eq!(verify_lines("not json\n".as_bytes(), false).unwrap_err().code, "audit.invalid_copy");
    }
}
