//! The soak's checks of the ledger against the SQLite store (opened read-only while no
//! daemon runs): every acknowledged run, note, approval and audited call is there, deletes
//! and decisions that were answered stayed done, and what clients saw of finished runs
//! (status, output length, events) is what the store holds.

use super::ledger::{Decision, Delete, Ledger};
use rusqlite::{Connection, OpenFlags};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// Counts per check, with the first few examples of each.
#[derive(Default)]
pub struct Findings {
    /// name → (count, examples). Every entry counts as lost or wrong unless `info`.
    pub lost: BTreeMap<&'static str, (u64, Vec<String>)>,
    /// Observations that are not losses (e.g. runs still unfinished).
    pub info: BTreeMap<&'static str, (u64, Vec<String>)>,
    /// What was checked: name → how many items.
    pub checked: BTreeMap<&'static str, u64>,
}

impl Findings {
    fn add(map: &mut BTreeMap<&'static str, (u64, Vec<String>)>, what: &'static str, example: String) {
        let e = map.entry(what).or_default();
        e.0 += 1;
        if e.1.len() < 5 {
            e.1.push(example);
        }
    }
    pub fn lose(&mut self, what: &'static str, example: String) {
        Self::add(&mut self.lost, what, example);
    }
    pub fn note(&mut self, what: &'static str, example: String) {
        Self::add(&mut self.info, what, example);
    }
    fn checked(&mut self, what: &'static str, n: u64) {
        *self.checked.entry(what).or_default() += n;
    }
    pub fn lost_total(&self) -> u64 {
        self.lost.values().map(|(n, _)| n).sum()
    }
}

pub fn open(db: &Path) -> Connection {
    Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .unwrap_or_else(|e| panic!("open {} read-only: {e}", db.display()))
}

/// A run as stored.
pub struct StoredRun {
    pub status: String,
    pub finished: bool,
    pub output_bytes: u64,
    pub last_seq: i64,
    /// (count, max seq) of its stored events.
    pub events: (i64, i64),
}

pub fn runs(c: &Connection) -> HashMap<String, StoredRun> {
    let mut events: HashMap<String, (i64, i64)> = HashMap::new();
    let mut q = c.prepare("SELECT run_id, count(*), max(seq) FROM run_events GROUP BY run_id").unwrap();
    for r in q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?))).unwrap() {
        let (id, n, max) = r.unwrap();
        events.insert(id, (n, max));
    }
    let mut q = c.prepare("SELECT run_id, status, finished, length(CAST(output AS BLOB)), last_seq FROM runs").unwrap();
    q.query_map([], |r| {
        let id: String = r.get(0)?;
        Ok((
            id.clone(),
            StoredRun {
                status: r.get(1)?,
                finished: r.get::<_, i64>(2)? != 0,
                output_bytes: r.get::<_, i64>(3)? as u64,
                last_seq: r.get(4)?,
                events: events.get(&id).copied().unwrap_or((0, 0)),
            },
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Every marker (`soak[rme]<w>n<n>`) in a text.
fn markers_in(text: &str, out: &mut HashSet<String>) {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"soak[rme][0-9]+n[0-9]+").unwrap());
    for m in re.find_iter(text) {
        out.insert(m.as_str().to_string());
    }
}

/// Presence checks: nothing acknowledged is missing, nothing answered came undone.
pub fn presence(c: &Connection, l: &Ledger, f: &mut Findings) {
    let runs = runs(c);
    f.checked("runs", l.runs.len() as u64);
    for (id, ack) in &l.runs {
        let Some(r) = runs.get(id) else {
            f.lose("run missing", id.clone());
            continue;
        };
        if let Some(seen) = &ack.finished {
            f.checked("finished runs seen by a client", 1);
            if !r.finished
                || r.status != seen.status
                || r.output_bytes != seen.output_total
                || r.last_seq != seen.last_seq
            {
                f.lose(
                    "finished run changed",
                    format!(
                        "{id}: client saw {} / {} bytes / last_seq {}; store has {} (finished {}) / {} bytes / last_seq {}",
                        seen.status, seen.output_total, seen.last_seq, r.status, r.finished, r.output_bytes, r.last_seq
                    ),
                );
            }
            if r.events != (r.last_seq, r.last_seq) {
                f.lose(
                    "events missing",
                    format!("{id}: last_seq {} but {} events stored up to seq {}", r.last_seq, r.events.0, r.events.1),
                );
            }
        }
        if let Some((_, last)) = ack.events_read
            && r.events.1 < last
        {
            f.lose(
                "events missing",
                format!("{id}: a client read events up to seq {last}; the store ends at {}", r.events.1),
            );
        }
    }

    let mut notes = HashSet::new();
    let mut q = c.prepare("SELECT id FROM memory_notes").unwrap();
    for r in q.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        notes.insert(r.unwrap());
    }
    f.checked("notes", l.notes.len() as u64);
    for (id, n) in &l.notes {
        match n.delete {
            Delete::None if !notes.contains(id) => f.lose("note missing", format!("{id} ({})", n.marker)),
            Delete::Acked if notes.contains(id) => f.lose("acknowledged delete undone", format!("{id} ({})", n.marker)),
            _ => {}
        }
    }
    f.checked("acknowledged deletes", l.notes.values().filter(|n| n.delete == Delete::Acked).count() as u64);

    let mut rows: HashMap<String, String> = HashMap::new();
    let mut q = c.prepare("SELECT id, status FROM approvals").unwrap();
    for r in q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).unwrap() {
        let (id, s) = r.unwrap();
        rows.insert(id, s);
    }
    f.checked("approvals", l.approvals.len() as u64);
    for (id, a) in &l.approvals {
        let Some(status) = rows.get(id) else {
            f.lose("approval missing", format!("{id} ({})", a.kind));
            continue;
        };
        match &a.decision {
            Decision::Decided(want) if status != want => {
                f.lose("acknowledged decision undone", format!("{id} ({}): decided {want}, store has {status}", a.kind))
            }
            Decision::Pending if status != "pending" => {
                f.lose("undecided approval changed", format!("{id} ({}): store has {status}", a.kind))
            }
            _ => {}
        }
    }
    f.checked(
        "acknowledged decisions",
        l.approvals.values().filter(|a| matches!(a.decision, Decision::Decided(_))).count() as u64,
    );

    let mut per_surface: BTreeMap<String, u64> = BTreeMap::new();
    let mut marks: HashMap<String, HashSet<String>> = HashMap::new();
    let mut gated: HashSet<String> = HashSet::new();
    let mut q = c.prepare("SELECT surface, arguments, verdict, approval_id FROM audit_log").unwrap();
    let it = q
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, Option<String>>(3)?))
        })
        .unwrap();
    for r in it {
        let (surface, args, verdict, approval) = r.unwrap();
        *per_surface.entry(surface.clone()).or_default() += 1;
        markers_in(&args, marks.entry(surface).or_default());
        if verdict == "gated"
            && let Some(a) = approval
        {
            gated.insert(a);
        }
    }
    for (surface, acked) in &l.audited {
        let rows = per_surface.get(*surface).copied().unwrap_or(0);
        f.checked("audited calls", *acked);
        if rows < *acked {
            f.lose("audit rows missing", format!("{surface}: {acked} answered calls, {rows} audit rows"));
        }
    }
    for (surface, ms) in &l.markers {
        let have = marks.get(*surface);
        f.checked("audited calls matched by marker", ms.len() as u64);
        for m in ms {
            if !have.is_some_and(|h| h.contains(m)) {
                f.lose("audit row of an answered call missing", format!("{surface}: {m}"));
            }
        }
    }
    for (id, a) in &l.approvals {
        if a.kind == "mcp_call" && !gated.contains(id) {
            f.lose("audit row of a gated call missing", id.clone());
        }
    }
    for m in &l.read_misses {
        f.note("memory_search missed a note just added", m.clone());
    }
}

/// After recovery: every acknowledged run has settled (unless it waits for a Hermes
/// approval still pending) and each finished run's events are 1..=last_seq.
pub fn settled(c: &Connection, l: &Ledger, f: &mut Findings) -> usize {
    let runs = runs(c);
    let rows: HashMap<String, String> = {
        let mut q = c.prepare("SELECT id, status FROM approvals").unwrap();
        q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).unwrap().map(Result::unwrap).collect()
    };
    let mut unsettled = 0;
    for (id, ack) in &l.runs {
        let Some(r) = runs.get(id) else { continue };
        if !r.finished {
            let waits = ack.approval.as_ref().is_some_and(|a| rows.get(a).is_some_and(|s| s == "pending"));
            if !waits {
                unsettled += 1;
                f.note("run not settled after recovery", format!("{id}: {}", r.status));
            }
            continue;
        }
        f.checked("finished runs (events checked)", 1);
        if r.last_seq < 1 || r.events != (r.last_seq, r.last_seq) {
            f.lose(
                "finished run with missing events",
                format!(
                    "{id} ({}): last_seq {} but {} events up to seq {}",
                    r.status, r.last_seq, r.events.0, r.events.1
                ),
            );
        }
    }
    unsettled
}

/// Each acknowledged finished run against the agent's own record (`hermes(run_id)`, the
/// fake's `GET /v1/runs/{id}` object): same final status, same output. A kill while a run
/// streamed must not leave hal0 with a different answer once recovery has reconciled it.
pub fn against_agent(c: &Connection, l: &Ledger, hermes: impl Fn(&str) -> Option<serde_json::Value>, f: &mut Findings) {
    let mut q = c.prepare("SELECT status, output FROM runs WHERE run_id = ?1 AND finished = 1").unwrap();
    for id in l.runs.keys() {
        let Some((status, output)) = q.query_row([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).ok()
        else {
            continue;
        };
        let Some(h) = hermes(id) else {
            f.note("run unknown to the agent", id.clone());
            continue;
        };
        f.checked("finished runs compared with the agent", 1);
        let hs = h["status"].as_str().unwrap_or("");
        let ho = h["output"].as_str();
        if hs != status || ho.is_some_and(|o| o != output) {
            f.lose(
                "run differs from the agent",
                format!(
                    "{id}: hal0 {status} with {} bytes, agent {hs} with {} bytes",
                    output.len(),
                    ho.map(str::len).unwrap_or(0)
                ),
            );
        }
    }
}
