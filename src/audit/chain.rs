//! The audit log's hash chain. Each row carries its link (`audit_log.chain`): SHA-256 of
//! the previous row's link and the row as it was stored, written in the row's own INSERT
//! (ids have no holes, so the previous row is `id - 1`). A row stored `started` takes its
//! outcome once; that outcome is a link of a second chain (`audit_outcomes`, in the order
//! outcomes were given), which the row names (`outcome_seq`). So a row edited, removed or
//! added outside hal0 (sqlite3 with the triggers dropped) no longer matches, and [`verify`]
//! names the first row that does not.
//!
//! Keeping the row's link in the row costs no page that the INSERT did not write anyway
//! (a separate table of links cost 47 % more CPU per entry: `examples/bench_audit.rs`).
//!
//! Retention cuts both chains: `audit_chain_anchor` keeps the link of the last pruned row
//! (the first kept row names it) and the hash of the last pruned outcome link. An outcome
//! link of a pruned row that came after a kept row's outcome stays until a later prune
//! passes it; its row is gone, so it is taken as it is (it is still chained). Rows older
//! than the chain (stored by a hal0 before it) are counted, not checked. `hal0 activity
//! export` carries each row's links with their previous hashes, so a copy shipped elsewhere
//! checks alone ([`verify_lines`]).
//!
//! The chain has no secret key: it proves a copy of the head hashes kept elsewhere (an
//! export, the system log) still leads to these rows; someone who can rewrite the file can
//! also recompute every hash after an edit, which the heads kept elsewhere then show.

use super::{Outcome, Prepared, Row};
use crate::base::error::{Error, Result};
use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A link's hash: 32 bytes.
type Hash = [u8; 32];

/// What starts a link's hashed content (and names the format, should it ever change).
const ROW_TAG: &[u8] = b"hal0-audit-v1 row\n";
const OUTCOME_TAG: &[u8] = b"hal0-audit-v1 outcome\n";

/// A row as a link covers it: as it was stored (a row stored `started` has no outcome yet).
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
    let parts = [
        Some(id.as_str()),
        Some(s.at),
        Some(s.surface),
        Some(s.tool),
        Some(s.identity),
        Some(s.arguments),
        Some(s.verdict),
        s.result_code,
        s.approval_id,
        s.detail,
    ];
    fields(&mut h, &parts);
    h.finalize().into()
}

/// An outcome as its link covers it.
struct Given<'a> {
    id: i64,
    verdict: &'a str,
    result_code: Option<&'a str>,
    approval_id: Option<&'a str>,
}

fn outcome_hash(prev: &Hash, g: &Given<'_>) -> Hash {
    let mut h = Sha256::new();
    h.update(prev);
    h.update(OUTCOME_TAG);
    let id = g.id.to_string();
    fields(&mut h, &[Some(&id), Some(g.verdict), g.result_code, g.approval_id]);
    h.finalize().into()
}

fn to_hash(v: Vec<u8>) -> Result<Hash> {
    v.try_into().map_err(|_| Error::internal("an audit chain hash is not 32 bytes"))
}

/// The id the next row takes and the link it follows. Read inside the writing transaction,
/// which holds the write lock: two writers never take one id or follow one link.
fn next_row(c: &Connection) -> Result<(i64, Hash)> {
    let (id, prev): (i64, Vec<u8>) = c
        .prepare_cached(
            "SELECT n, coalesce((SELECT chain FROM audit_log WHERE id = n - 1),
                                (SELECT row_hash FROM audit_chain_anchor))
             FROM (SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'), 0) + 1 AS n)",
        )?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok((id, to_hash(prev)?))
}

/// The id and link of the row `p` is stored as (the INSERT goes with them, same transaction).
pub(crate) fn link_row(c: &Connection, p: &Prepared) -> Result<(i64, Hash)> {
    let (id, prev) = next_row(c)?;
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
    Ok((id, row_hash(&prev, &s)))
}

/// The seq the next outcome link takes and the hash it follows.
pub(crate) fn next_outcome(c: &Connection) -> Result<(i64, Hash)> {
    let (seq, prev): (i64, Vec<u8>) = c
        .prepare_cached(
            "SELECT coalesce((SELECT seq + 1 FROM audit_outcomes ORDER BY seq DESC LIMIT 1), a.outcomes_below),
                    coalesce((SELECT hash FROM audit_outcomes ORDER BY seq DESC LIMIT 1), a.outcome_hash)
             FROM audit_chain_anchor a",
        )?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok((seq, to_hash(prev)?))
}

/// Append outcome `o`'s link as `seq` after `prev` (same transaction as its UPDATE).
pub(crate) fn link_outcome(c: &Connection, seq: i64, prev: &Hash, o: &Outcome) -> Result<()> {
    let g = Given {
        id: o.id,
        verdict: o.verdict.as_str(),
        result_code: o.result_code.as_deref(),
        approval_id: o.approval_id.as_deref(),
    };
    c.prepare_cached("INSERT INTO audit_outcomes (seq, row_id, hash) VALUES (?1, ?2, ?3)")?
        .execute(rusqlite::params![seq, o.id, &outcome_hash(prev, &g)[..]])?;
    Ok(())
}

/// Retention moves the prune mark from `old` to `mark` (rows below it go next): the anchor
/// takes the link of row `mark - 1` and cuts the outcome chain before the first link of a
/// kept row. The first outcome link kept; links below it go next.
pub(crate) fn cut(c: &Connection, old: i64, mark: i64) -> Result<i64> {
    let Anchor { rows_from, outcomes_below: below, .. } = anchor(c)?;
    if mark > old && mark > rows_from {
        let last: Option<Vec<u8>> =
            c.query_row("SELECT chain FROM audit_log WHERE id = ?1", [mark - 1], |r| r.get(0)).optional()?.flatten();
        if let Some(h) = last {
            c.execute("UPDATE audit_chain_anchor SET row_hash = ?1", [h])?;
        }
    }
    // Walked from the oldest link: what it reads goes now, or stays as an orphan (its row
    // pruned, after a kept row's link) until a later prune passes it.
    let first: Option<i64> = c
        .query_row(
            "SELECT seq FROM audit_outcomes WHERE seq >= ?1 AND row_id >= ?2 ORDER BY seq LIMIT 1",
            [below, mark],
            |r| r.get(0),
        )
        .optional()?;
    let end: i64 = c.query_row("SELECT coalesce(max(seq), 0) + 1 FROM audit_outcomes", [], |r| r.get(0))?;
    let keep = first.unwrap_or(end).max(below);
    if keep > below {
        let h: Option<Vec<u8>> =
            c.query_row("SELECT hash FROM audit_outcomes WHERE seq = ?1", [keep - 1], |r| r.get(0)).optional()?;
        match h {
            Some(h) => c.execute(
                "UPDATE audit_chain_anchor SET outcomes_below = ?1, outcome_hash = ?2",
                rusqlite::params![keep, h],
            )?,
            None => c.execute("UPDATE audit_chain_anchor SET outcomes_below = ?1", [keep])?,
        };
    }
    Ok(keep)
}

/// Where each chain starts.
struct Anchor {
    rows_from: i64,
    row_hash: Hash,
    outcomes_below: i64,
    outcome_hash: Hash,
}

fn anchor(c: &Connection) -> Result<Anchor> {
    let (rows_from, row_hash, outcomes_below, outcome_hash): (i64, Vec<u8>, i64, Vec<u8>) =
        c.query_row("SELECT rows_from, row_hash, outcomes_below, outcome_hash FROM audit_chain_anchor", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
    Ok(Anchor { rows_from, row_hash: to_hash(row_hash)?, outcomes_below, outcome_hash: to_hash(outcome_hash)? })
}

/// The first thing found that does not match.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Problem {
    /// The row it concerns (for removed rows: the first one missing).
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
    /// Rows checked (up to the problem, when there is one).
    pub rows: u64,
    /// Outcome links checked.
    pub outcomes: u64,
    pub first_row: Option<i64>,
    pub last_row: Option<i64>,
    /// The newest row's link (hex): keep it elsewhere to show later that nothing before it
    /// changed. With `outcome_head`, the newest outcome link's.
    pub head: String,
    pub outcome_head: String,
    /// Rows stored before the chain existed (not covered).
    pub unchained: u64,
    /// In a copy: places where rows or outcome links are missing (filtered out of the export).
    pub gaps: u64,
    pub problem: Option<Problem>,
}

/// Keeps the first problem found, by row.
#[derive(Default)]
struct Findings(Option<Problem>);

impl Findings {
    fn add(&mut self, row: i64, code: &'static str, message: String) {
        if self.0.as_ref().is_none_or(|p| row < p.row) {
            self.0 = Some(Problem { row, code, message });
        }
    }
}

fn changed(row: i64) -> (&'static str, String) {
    ("audit.row_changed", format!("row {row} was changed after it was stored (or the rows before it were)"))
}

fn outcome_changed(row: i64) -> (&'static str, String) {
    ("audit.outcome_changed", format!("the outcome of row {row} was changed after it was given"))
}

/// One row as [`verify`] reads it.
#[derive(Clone)]
struct RowNow {
    id: i64,
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

impl RowNow {
    /// The link this row should carry after `prev`: as stored, so without the outcome a
    /// row `finished` later took.
    fn link(&self, prev: &Hash, finished: bool) -> Hash {
        let (verdict, result_code, approval_id) = if finished {
            ("started", None, None)
        } else {
            (self.verdict.as_str(), self.result_code.as_deref(), self.approval_id.as_deref())
        };
        let s = Stored {
            id: self.id,
            at: &self.at,
            surface: &self.surface,
            tool: &self.tool,
            identity: &self.identity,
            arguments: &self.arguments,
            verdict,
            result_code,
            approval_id,
            detail: self.detail.as_deref(),
        };
        row_hash(prev, &s)
    }

    fn outcome_link(&self, prev: &Hash) -> Hash {
        let g = Given {
            id: self.id,
            verdict: &self.verdict,
            result_code: self.result_code.as_deref(),
            approval_id: self.approval_id.as_deref(),
        };
        outcome_hash(prev, &g)
    }
}

/// The row read from [`NOW_COLS`] starting at column `at`.
fn row_now(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<RowNow> {
    Ok(RowNow {
        id: r.get(at)?,
        at: r.get(at + 1)?,
        surface: r.get(at + 2)?,
        tool: r.get(at + 3)?,
        identity: r.get(at + 4)?,
        arguments: r.get(at + 5)?,
        verdict: r.get(at + 6)?,
        result_code: r.get(at + 7)?,
        approval_id: r.get(at + 8)?,
        detail: r.get(at + 9)?,
    })
}

const NOW_COLS: &str = "id, at, surface, tool, identity, arguments, verdict, result_code, approval_id, detail";

/// Walk both chains of the store's log (one consistent snapshot): every row from the first
/// kept chained one against its link, every outcome link against its row; stops at the
/// first problem of each chain and reports the earlier row.
pub fn verify(c: &mut Connection) -> Result<Report> {
    let tx = c.transaction()?;
    let a = anchor(&tx)?;
    let mark: i64 = tx.query_row("SELECT below FROM audit_prune_mark", [], |r| r.get(0))?;
    let start = mark.max(a.rows_from);
    let mut found = Findings::default();
    let (mut rows, mut first_row, mut last_row, mut head) = (0u64, None, None, a.row_hash);
    {
        let mut linked = tx.prepare("SELECT 1 FROM audit_outcomes WHERE seq = ?1")?;
        let mut st =
            tx.prepare(&format!("SELECT {NOW_COLS}, chain, outcome_seq FROM audit_log WHERE id >= ?1 ORDER BY id"))?;
        let mut it = st.query([start])?;
        let mut want = start;
        while let Some(r) = it.next()? {
            let row = row_now(r, 0)?;
            let (chain, outcome): (Option<Vec<u8>>, Option<i64>) = (r.get(10)?, r.get(11)?);
            if row.id != want {
                let message = format!("rows {want}–{} were removed from the log", row.id - 1);
                found.add(want, "audit.row_removed", message);
                break;
            }
            let Some(chain) = chain else {
                let message = format!("row {} was added to the log outside hal0 (it carries no chain link)", row.id);
                found.add(row.id, "audit.row_added", message);
                break;
            };
            if row.link(&head, outcome.is_some())[..] != chain[..] {
                let (code, message) = changed(row.id);
                found.add(row.id, code, message);
                break;
            }
            if let Some(seq) = outcome.filter(|s| *s >= a.outcomes_below)
                && !linked.exists([seq])?
            {
                let message = format!("the outcome link of row {} was removed", row.id);
                found.add(row.id, "audit.links_removed", message);
                break;
            }
            head = to_hash(chain)?;
            rows += 1;
            first_row.get_or_insert(row.id);
            last_row = Some(row.id);
            want = row.id + 1;
        }
    }
    let (mut outcomes, mut outcome_head) = (0u64, a.outcome_hash);
    {
        let mut st = tx.prepare(&format!(
            "SELECT o.seq, o.row_id, o.hash, a.outcome_seq, {} FROM audit_outcomes o
             LEFT JOIN audit_log a ON a.id = o.row_id WHERE o.seq >= ?1 ORDER BY o.seq",
            NOW_COLS.split(", ").map(|c| format!("a.{c}")).collect::<Vec<_>>().join(", ")
        ))?;
        let mut it = st.query([a.outcomes_below])?;
        let mut want = a.outcomes_below;
        while let Some(r) = it.next()? {
            let (seq, row_id, hash, named): (i64, i64, Vec<u8>, Option<i64>) =
                (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
            let hash = to_hash(hash)?;
            if seq != want {
                let message = format!("outcomes were removed before the one of row {row_id}");
                found.add(row_id, "audit.links_removed", message);
                break;
            }
            let present: Option<i64> = r.get(4)?;
            match present {
                // Its row was pruned (or is being): the link is taken as it is.
                None if row_id < mark => {}
                None => {
                    found.add(row_id, "audit.row_removed", format!("row {row_id} was removed from the log"));
                    break;
                }
                Some(_) => {
                    let row = row_now(r, 4)?;
                    if named != Some(seq) || row.outcome_link(&outcome_head) != hash {
                        let (code, message) = outcome_changed(row_id);
                        found.add(row_id, code, message);
                        break;
                    }
                }
            }
            outcome_head = hash;
            outcomes += 1;
            want = seq + 1;
        }
    }
    let unchained: i64 =
        tx.query_row("SELECT count(*) FROM audit_log WHERE id < ?1 AND id >= ?2", [a.rows_from, mark], |r| r.get(0))?;
    Ok(Report {
        intact: found.0.is_none(),
        rows,
        outcomes,
        first_row,
        last_row,
        head: hex::encode(head),
        outcome_head: hex::encode(outcome_head),
        unchained: unchained as u64,
        gaps: 0,
        problem: found.0,
    })
}

/// A link as `hal0 activity export` writes it beside its row.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Link {
    /// The outcome link's place in its chain (row links are in id order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    /// The previous link's hash (hex; `null` when the store lacks it).
    pub prev: Option<String>,
    pub hash: String,
}

/// The row as export writes it, with its links (`chain`, and `outcome` once it has one).
pub(crate) fn exported(c: &Connection, row: &Row) -> Result<serde_json::Value> {
    let mut v = serde_json::to_value(row).map_err(|e| Error::internal(e.to_string()))?;
    type Links = (Option<Vec<u8>>, Option<Vec<u8>>, Option<i64>, Option<Vec<u8>>, Option<Vec<u8>>);
    let (chain, prev, seq, hash, before): Links = c
        .prepare_cached(
            "SELECT a.chain,
                    coalesce((SELECT p.chain FROM audit_log p WHERE p.id = a.id - 1), x.row_hash),
                    a.outcome_seq, o.hash,
                    coalesce((SELECT q.hash FROM audit_outcomes q WHERE q.seq = o.seq - 1),
                             CASE WHEN o.seq = x.outcomes_below THEN x.outcome_hash END)
             FROM audit_log a CROSS JOIN audit_chain_anchor x LEFT JOIN audit_outcomes o ON o.seq = a.outcome_seq
             WHERE a.id = ?1",
        )?
        .query_row([row.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?;
    if let Some(chain) = chain {
        v["chain"] = serde_json::json!(Link { seq: None, prev: prev.map(hex::encode), hash: hex::encode(chain) });
    }
    if let (Some(seq), Some(hash)) = (seq, hash) {
        v["outcome"] =
            serde_json::json!(Link { seq: Some(seq), prev: before.map(hex::encode), hash: hex::encode(hash) });
    }
    Ok(v)
}

/// One line of an export: the row and its links.
#[derive(Deserialize)]
struct Line {
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
    #[serde(default)]
    chain: Option<Link>,
    #[serde(default)]
    outcome: Option<Link>,
}

fn hex_hash(s: Option<&str>) -> Option<Hash> {
    hex::decode(s?).ok()?.try_into().ok()
}

/// Check a copy written by `hal0 activity export`: every row and outcome link against its
/// row and previous hash, and each link against the one before it where both are in the
/// copy. A copy of the whole log (no filter) has every row; rows missing from a filtered
/// copy are counted (`gaps`), not failed, unless `complete` says the copy is whole.
pub fn verify_lines(text: impl std::io::BufRead, complete: bool) -> Result<Report> {
    let mut found = Findings::default();
    let (mut rows, mut gaps, mut unchained) = (0u64, 0u64, 0u64);
    let (mut first_row, mut last_row) = (None, None);
    let mut head: Option<(i64, Hash)> = None;
    let mut outcomes: Vec<(i64, RowNow, Link)> = Vec::new();
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
        let row = RowNow {
            id: l.id,
            at: l.at,
            surface: l.surface,
            tool: l.tool,
            identity: l.identity,
            // The stored text is the serialized value; the export parsed it, this writes it back.
            arguments: l.arguments.to_string(),
            verdict: l.verdict,
            result_code: l.result_code,
            approval_id: l.approval_id,
            detail: l.detail,
        };
        let Some(link) = l.chain else {
            unchained += 1;
            continue;
        };
        if let Some(o) = l.outcome {
            outcomes.push((row.id, row.clone(), o));
        }
        let (Some(hash), Some(prev)) = (hex_hash(Some(&link.hash)), hex_hash(link.prev.as_deref())) else {
            found.add(row.id, "audit.row_changed", format!("row {}'s chain link is not a hash", row.id));
            break;
        };
        match head {
            Some((id, h)) if id + 1 == row.id && h != prev => {
                // Rewritten with its link recomputed: this row still names the old one.
                let (code, message) = changed(id);
                found.add(id, code, message);
                break;
            }
            Some((id, _)) if id + 1 != row.id && complete => {
                found.add(id + 1, "audit.row_removed", format!("rows {}–{} are not in the copy", id + 1, row.id - 1));
                break;
            }
            Some((id, _)) if id + 1 != row.id => gaps += 1,
            _ => {}
        }
        if row.link(&prev, outcomes.last().is_some_and(|(id, ..)| *id == row.id)) != hash {
            let (code, message) = changed(row.id);
            found.add(row.id, code, message);
            break;
        }
        head = Some((row.id, hash));
        rows += 1;
        first_row.get_or_insert(row.id);
        last_row = Some(row.id);
    }
    outcomes.sort_by_key(|(_, _, l)| l.seq);
    let mut outcome_head: Option<(i64, Hash, i64)> = None;
    for (id, row, link) in &outcomes {
        let seq = link.seq.unwrap_or_default();
        let (Some(hash), Some(prev)) = (hex_hash(Some(&link.hash)), hex_hash(link.prev.as_deref())) else {
            found.add(*id, "audit.outcome_changed", format!("the outcome link of row {id} is not a hash"));
            break;
        };
        match outcome_head {
            // Rewritten with its link recomputed: this link still names the old one.
            Some((s, h, before)) if s + 1 == seq && h != prev => {
                let (code, message) = outcome_changed(before);
                found.add(before, code, message);
                break;
            }
            Some((s, ..)) if s + 1 != seq => gaps += 1,
            _ => {}
        }
        if row.outcome_link(&prev) != hash {
            let (code, message) = outcome_changed(*id);
            found.add(*id, code, message);
            break;
        }
        outcome_head = Some((seq, hash, *id));
    }
    Ok(Report {
        intact: found.0.is_none(),
        rows,
        outcomes: outcomes.len() as u64,
        first_row,
        last_row,
        head: head.map(|(_, h)| hex::encode(h)).unwrap_or_default(),
        outcome_head: outcome_head.map(|(_, h, _)| hex::encode(h)).unwrap_or_default(),
        unchained,
        gaps,
        problem: found.0,
    })
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
             DROP TRIGGER audit_outcomes_no_update; DROP TRIGGER audit_outcomes_no_delete;",
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
        assert_eq!((r.rows, r.outcomes, r.first_row, r.last_row), (6, 2, Some(1), Some(6)));
        assert_ne!(r.head, "0".repeat(64));
        // An outcome applies once; a second one changes nothing and links nothing.
        finish(&s, 4);
        assert_eq!(check(&s).outcomes, 2);
        assert!(check(&s).intact);
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
                "UPDATE audit_log SET verdict = 'started', result_code = NULL, approval_id = NULL, outcome_seq = NULL WHERE id = 4",
                (4, "audit.outcome_changed"),
            ),
            ("UPDATE audit_log SET verdict = 'denied' WHERE id = 1", (1, "audit.row_changed")),
            ("DELETE FROM audit_log WHERE id = 5", (5, "audit.row_removed")),
            ("DELETE FROM audit_log WHERE id = 4", (4, "audit.row_removed")),
            ("DELETE FROM audit_outcomes WHERE row_id = 4", (4, "audit.links_removed")),
            ("DELETE FROM audit_outcomes WHERE row_id = 2", (2, "audit.links_removed")),
            (
                "INSERT INTO audit_log (at, surface, tool, identity, arguments, verdict) VALUES ('2026-01-01T00:00:00Z', 'cli', 'x', 'admin', '{}', 'ok')",
                (7, "audit.row_added"),
            ),
            ("UPDATE audit_log SET chain = randomblob(32) WHERE id = 2", (2, "audit.row_changed")),
            ("UPDATE audit_outcomes SET hash = randomblob(32) WHERE row_id = 2", (2, "audit.outcome_changed")),
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
        // Keep the newest two rows: both outcome links belong to pruned rows and go too.
        let p = crate::ops::retention::Policy { audit_max_rows: 2, ..crate::ops::retention::Policy::default() };
        crate::ops::retention::prune(&s, &p).unwrap();
        let r = check(&s);
        assert!(r.intact, "{r:?}");
        assert_eq!((r.first_row, r.last_row, r.outcomes), (Some(5), Some(6), 0));
        entry(&s, "t7", Verdict::Ok);
        let p = crate::ops::retention::Policy { audit_max_rows: 1, ..p };
        crate::ops::retention::prune(&s, &p).unwrap();
        let r = check(&s);
        assert!(r.intact, "{r:?}");
        assert_eq!((r.rows, r.first_row, r.outcomes), (1, Some(7), 0));
        // A pruned row's outcome arriving late changes nothing.
        finish(&s, 4);
        assert!(check(&s).intact);
        let started = entry(&s, "t8", Verdict::Started);
        finish(&s, started);
        assert!(check(&s).intact);
        // Removing the oldest kept row is not retention: the anchor does not lead to it.
        tamper(&s, "DELETE FROM audit_log WHERE id = 7");
        assert_eq!(problem(&s), (7, "audit.row_removed"));
    }

    #[test]
    fn a_pruned_rows_outcome_after_a_kept_ones_stays_chained() {
        let (_d, s) = scratch();
        let (a, b) = (entry(&s, "a", Verdict::Started), entry(&s, "b", Verdict::Started));
        finish(&s, b);
        finish(&s, a);
        let p = crate::ops::retention::Policy { audit_max_rows: 1, ..crate::ops::retention::Policy::default() };
        crate::ops::retention::prune(&s, &p).unwrap();
        let r = check(&s);
        assert!(r.intact, "{r:?}");
        assert_eq!((r.rows, r.outcomes), (1, 2), "a's outcome link follows b's: it stays, its row gone");
        entry(&s, "c", Verdict::Ok);
        crate::ops::retention::prune(&s, &p).unwrap();
        let r = check(&s);
        assert!(r.intact && r.outcomes == 0, "{r:?}");
        let started = entry(&s, "d", Verdict::Started);
        finish(&s, started);
        assert!(check(&s).intact);
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
        assert_eq!((r.unchained, r.rows, r.outcomes), (2, 1, 1));
        let p = crate::ops::retention::Policy { audit_max_rows: 1, ..crate::ops::retention::Policy::default() };
        crate::ops::retention::prune(&s, &p).unwrap();
        let r = check(&s);
        assert!(r.intact && r.unchained == 0 && r.rows == 1, "{r:?}");
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
        let db = check(&s);
        assert_eq!((r.rows, r.outcomes, &r.head, &r.outcome_head), (6, 2, &db.head, &db.outcome_head));
        // An edited copy is caught, a copy missing a row too (when it claims to be whole).
        let edited = all.replace("/tmp/t3", "/tmp/t9");
        assert_eq!(verify_lines(edited.as_bytes(), false).unwrap().problem.unwrap().row, 3);
        let short: String = all.lines().filter(|l| !l.contains("\"id\":3,")).map(|l| format!("{l}\n")).collect();
        assert_eq!(short.lines().count(), 5);
        assert_eq!(verify_lines(short.as_bytes(), true).unwrap().problem.unwrap().code, "audit.row_removed");
        let r = verify_lines(short.as_bytes(), false).unwrap();
        assert!(r.intact && r.gaps == 1, "{r:?}");
        // An edit whose link was recomputed still shows: the next row names the old link.
        let mut lines: Vec<serde_json::Value> = all.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        lines[2]["tool"] = json!("t9");
        let prev = hex_hash(lines[2]["chain"]["prev"].as_str()).unwrap();
        let row = RowNow {
            id: 3,
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
        lines[2]["chain"]["hash"] = json!(hex::encode(row.link(&prev, false)));
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let p = verify_lines(text.as_bytes(), true).unwrap().problem.unwrap();
        assert_eq!((p.row, p.code), (3, "audit.row_changed"));
        // An outcome edited in the copy.
        let edited = all.replace(r#""result_code":"ok""#, r#""result_code":"no""#);
        assert_eq!(verify_lines(edited.as_bytes(), false).unwrap().problem.unwrap().code, "audit.outcome_changed");
        // A filtered copy checks each of its rows.
        let f = Filter { tool: Some("t4".into()), ..Filter::default() };
        let r = verify_lines(exported(&s, &f).as_bytes(), false).unwrap();
        assert!(r.intact && r.rows == 1 && r.outcomes == 1, "{r:?}");
        assert_eq!(verify_lines("not json\n".as_bytes(), false).unwrap_err().code, "audit.invalid_copy");
    }
}
