//! Group commit for the store's logs — audit entries and the relay's history: one writer
//! thread per store takes every entry submitted while it was busy and stores them in a
//! single transaction, then answers each submitter (that waits) with its row id. Under concurrent MCP calls this turns N commits into one; a lone call
//! waits no longer than a direct INSERT. Calls to read-only tools do not wait: their
//! entries gather for [`GATHER`] and are committed together, and every in-process reader of
//! the log first passes a barrier ([`flush`]) so it sees them.
//!
//! An entry someone waits on (a call's `started` row, stored before the call goes out) is
//! committed at once while calls come sparsely. When they come densely ([`Pace`]: the mean
//! gap between such entries is at most half of [`commit_delay`]), it waits that delay
//! for the entries of concurrent calls and shares their commit, as PostgreSQL's
//! `commit_delay` with `commit_siblings` does: each commit writes the same few pages (the
//! log's last leaf and its indexes' last leaves), so N rows in one commit cost about what
//! one does. It is still committed before its call goes out.

use crate::audit::{Prepared, insert};
use crate::base::error::{Error, Result};
use crate::store::{Store, immediate};
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::oneshot;

/// What a submitter hands the writer. Nearly every job is a row, so the row is kept inline
/// rather than boxed (one allocation less per call).
#[allow(clippy::large_enum_variant)]
enum Job {
    /// An entry to store; `reply` gets its row id once committed, when the submitter waits.
    Row(Prepared, Option<oneshot::Sender<Result<i64>>>),
    /// Another log's change (the relay's history); nobody waits on it.
    Change(Box<dyn Change>),
    /// The outcome of a call whose `started` entry is stored; nobody waits on it.
    Finish(crate::audit::Outcome),
    /// Answered once every job queued before it is stored.
    Barrier(oneshot::Sender<()>),
}

/// Most entries committed in one transaction.
const BATCH_MAX: usize = 256;

/// How long a batch opened by an entry nobody waits on gathers the entries of concurrent
/// calls before it is committed: under load one wake-up and one commit serve every row of
/// the window; it is also the most such an entry stays in memory only.
pub(crate) const GATHER: Duration = Duration::from_millis(10);

/// How long a waited entry among dense traffic waits for company before its commit:
/// 500 µs, or `HAL0_AUDIT_COMMIT_DELAY_US` read once at start (0: never wait; for
/// measuring what the wait buys, as `bench_proxy` does).
fn commit_delay() -> Duration {
    static D: OnceLock<Duration> = OnceLock::new();
    *D.get_or_init(|| {
        let us = std::env::var("HAL0_AUDIT_COMMIT_DELAY_US").ok().and_then(|v| v.parse().ok()).unwrap_or(500);
        Duration::from_micros(us)
    })
}

/// The pace of waited entries: the time of the last one and a moving mean of the gaps
/// between them (nanoseconds; each new gap weighs an eighth). Updated without a lock: two
/// arrivals at once may lose one sample, which a mean of many does not miss.
struct Pace {
    origin: std::time::Instant,
    last: AtomicU64,
    gap: AtomicU64,
}

/// The longest gap a sample counts as (a quiet minute is as sparse as a quiet second).
const SPARSE: u64 = 1_000_000_000;

impl Default for Pace {
    fn default() -> Pace {
        Pace { origin: std::time::Instant::now(), last: AtomicU64::new(0), gap: AtomicU64::new(SPARSE) }
    }
}

impl Pace {
    /// Record a waited entry arriving now.
    fn arrive(&self) {
        self.arrive_at(self.origin.elapsed().as_nanos() as u64);
    }

    fn arrive_at(&self, now: u64) {
        let last = self.last.swap(now, Ordering::Relaxed);
        let sample = now.saturating_sub(last).min(SPARSE);
        let gap = self.gap.load(Ordering::Relaxed);
        self.gap.store(gap - gap / 8 + sample / 8, Ordering::Relaxed);
    }

    /// Waited entries come densely: more than one is expected within the commit delay.
    fn dense(&self) -> bool {
        let delay = commit_delay().as_nanos() as u64;
        delay > 0 && self.gap.load(Ordering::Relaxed) <= delay / 2
    }
}

/// The writer thread of one store: its queue, and the thread to unpark when a job someone
/// waits on is queued while it gathers.
#[derive(Clone)]
struct Writer {
    tx: Sender<Job>,
    thread: std::thread::Thread,
    /// Held while a batch is stored; free when the writer is idle (see [`submit`]).
    turn: std::sync::Arc<Mutex<()>>,
    /// Callers in [`submit`], waiting for their entry to be stored.
    waiting: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// Entries (new rows) sent and not yet stored, queued or gathered by the writer. An
    /// outcome or a relay write pending does not count: it adds no row, so an entry stored
    /// before it keeps the log's order.
    pending: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// The pace of waited entries, which decides whether one waits for company.
    pace: std::sync::Arc<Pace>,
}

impl Writer {
    fn send(&self, job: Job) -> Result<()> {
        let urgent = waited_on(&job);
        let row = usize::from(matches!(job, Job::Row(..)));
        self.pending.fetch_add(row, std::sync::atomic::Ordering::SeqCst);
        if self.tx.send(job).is_err() {
            self.pending.fetch_sub(row, std::sync::atomic::Ordering::SeqCst);
            return Err(Error::internal("the audit writer stopped"));
        }
        if urgent {
            self.thread.unpark();
        }
        Ok(())
    }
}

fn writers() -> &'static Mutex<HashMap<PathBuf, Writer>> {
    static W: OnceLock<Mutex<HashMap<PathBuf, Writer>>> = OnceLock::new();
    W.get_or_init(Default::default)
}

fn existing(store: &Store) -> Option<Writer> {
    writers().lock().unwrap_or_else(|p| p.into_inner()).get(store.path()).cloned()
}

fn writer_for(store: &Store) -> Result<Writer> {
    let mut m = writers().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(w) = m.get(store.path()) {
        return Ok(w.clone());
    }
    let (tx, rx) = channel::<Job>();
    let s = store.clone();
    let (turn, pending) = (std::sync::Arc::new(Mutex::new(())), std::sync::Arc::default());
    let pace = std::sync::Arc::new(Pace::default());
    let (t, p, pc) = (turn.clone(), std::sync::Arc::clone(&pending), pace.clone());
    let handle = std::thread::Builder::new()
        .name("hal0-audit".into())
        .spawn(move || run(s, rx, &t, &p, &pc))
        .map_err(|e| Error::internal(format!("cannot start the audit writer: {e}")))?;
    let w = Writer { tx, thread: handle.thread().clone(), turn, pending, waiting: Default::default(), pace };
    m.insert(store.path().to_path_buf(), w.clone());
    Ok(w)
}

/// The batch that `first` opens. A job nobody waits on gathers the jobs that arrive within
/// `window`, but only until one that someone waits on comes: a call's `started` entry (or a
/// reader's barrier) queued behind the previous call's outcome must not sit out the window,
/// or every call of a sequential client would pay it. The thread parks meanwhile, so the
/// jobs nobody waits on are queued without waking it (a wake-up per read-only call cost
/// more than its insert); the sender of a waited job unparks it ([`Writer::send`]).
///
/// Once the batch holds a row someone waits on, it waits `company` more (zero while calls
/// come sparsely; [`commit_delay`] while they come densely) and takes what came meanwhile.
/// It sleeps rather than parks then, so the rows that come do not wake it one by one.
fn gather(first: Job, rx: &Receiver<Job>, window: Duration, company: Duration) -> Vec<Job> {
    let batch = gather_until_waited(first, rx, window);
    if company.is_zero() || !batch.iter().any(|j| matches!(j, Job::Row(_, Some(_)))) {
        return batch;
    }
    std::thread::sleep(company);
    let mut batch = batch;
    take_queued(&mut batch, rx);
    batch
}

/// Move the jobs queued now into `batch`, up to [`BATCH_MAX`]; whether one of them is waited on.
fn take_queued(batch: &mut Vec<Job>, rx: &Receiver<Job>) -> bool {
    let mut urgent = false;
    while batch.len() < BATCH_MAX {
        match rx.try_recv() {
            Ok(j) => {
                urgent |= waited_on(&j);
                batch.push(j);
            }
            Err(_) => break,
        }
    }
    urgent
}

fn gather_until_waited(first: Job, rx: &Receiver<Job>, window: Duration) -> Vec<Job> {
    let mut batch = vec![first];
    if waited_on(&batch[0]) {
        return batch;
    }
    let until = std::time::Instant::now() + window;
    loop {
        let urgent = take_queued(&mut batch, rx);
        let left = until.saturating_duration_since(std::time::Instant::now());
        if urgent || batch.len() >= BATCH_MAX || left.is_zero() {
            return batch;
        }
        std::thread::park_timeout(left);
    }
}

/// Someone waits for this job to be stored.
fn waited_on(j: &Job) -> bool {
    matches!(j, Job::Row(_, Some(_)) | Job::Barrier(_))
}

/// Store `batch` in one transaction: the row id of each row.
fn commit(c: &mut rusqlite::Connection, batch: &[Job]) -> Result<Vec<Option<i64>>> {
    // Under the write lock from the start: each row's chain link reads the chain's head.
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let ids = batch
        .iter()
        .map(|j| match j {
            Job::Row(p, _) => insert(&tx, p).map(Some),
            Job::Change(w) => w.apply(&tx).map(|()| None),
            Job::Finish(o) => o.apply(&tx).map(|()| None),
            Job::Barrier(_) => Ok(None),
        })
        .collect::<Result<Vec<_>>>()?;
    tx.commit()?;
    Ok(ids)
}

fn run(store: Store, rx: Receiver<Job>, turn: &Mutex<()>, pending: &std::sync::atomic::AtomicUsize, pace: &Pace) {
    while let Ok(first) = rx.recv() {
        let company = if pace.dense() { commit_delay() } else { Duration::ZERO };
        let mut batch = gather(first, &rx, GATHER, company);
        take_queued(&mut batch, &rx);
        let _turn = turn.lock().unwrap_or_else(|p| p.into_inner());
        let rows = batch.iter().filter(|j| matches!(j, Job::Row(..))).count();
        let ids = store.with(|c| commit(c, &batch));
        match ids {
            Ok(ids) => {
                pending.fetch_sub(rows, std::sync::atomic::Ordering::SeqCst);
                forward(&store, &batch, &ids);
                for (job, id) in batch.into_iter().zip(ids) {
                    answer(job, id.map(Ok));
                }
            }
            // The batch failed as a whole: store each alone, so one bad entry fails only itself.
            Err(_) => {
                for job in batch {
                    let out = match &job {
                        Job::Row(p, _) => Some(store.with(|c| immediate(c, |c| insert(c, p)))),
                        Job::Change(w) => {
                            if let Err(e) = store.with(|c| w.apply(c)) {
                                tracing::warn!("cannot record {}: {}", w.what(), e.message);
                            }
                            None
                        }
                        Job::Finish(o) => {
                            // An outcome is never lost to a full store: it may take a few
                            // reserved pages (its `started` entry is there already).
                            let apply = |c: &rusqlite::Connection| immediate(c, |c| o.apply(c));
                            let applied = store.with(|c| match apply(c) {
                                Err(e) if e.code == "store.full" => crate::store::beyond_cap(c, apply),
                                other => other,
                            });
                            if let Err(e) = applied {
                                tracing::warn!("cannot record the outcome of a call: {}", e.message);
                            }
                            None
                        }
                        Job::Barrier(_) => None,
                    };
                    pending.fetch_sub(usize::from(matches!(job, Job::Row(..))), std::sync::atomic::Ordering::SeqCst);
                    answer(job, out);
                }
            }
        }
    }
}

/// Send the rows of a committed batch that have their outcome to the system log, when the
/// store's rows are forwarded (`crate::audit::forward`).
fn forward(store: &Store, batch: &[Job], ids: &[Option<i64>]) {
    let Some(f) = crate::audit::forward::of(store.path()) else { return };
    let ids: Vec<i64> = batch
        .iter()
        .zip(ids)
        .filter_map(|(job, id)| match job {
            Job::Row(..) => *id,
            Job::Finish(o) => Some(o.id),
            _ => None,
        })
        .collect();
    if ids.is_empty() {
        return;
    }
    match store.with(|c| crate::audit::finished_rows(c, &ids)) {
        Ok(rows) => rows.iter().for_each(|r| f.send(r)),
        Err(e) => tracing::warn!("cannot read audit rows to forward: {}", e.message),
    }
}

fn answer(job: Job, out: Option<Result<i64>>) {
    match (job, out) {
        (Job::Row(_, Some(reply)), Some(out)) => {
            let _ = reply.send(out);
        }
        (Job::Row(_, None), Some(Err(e))) => tracing::warn!("cannot record an audit entry: {}", e.message),
        (Job::Barrier(reply), _) => {
            let _ = reply.send(());
        }
        _ => {}
    }
}

/// Store `p` through the writer of `store`; resolves once it is committed.
///
/// When the writer is idle (nothing queued or gathered, so every entry sent before this one
/// is stored: the log keeps its order) and the store is not locked, the entry is committed
/// right here instead: queueing it would cost two thread switches (waking the
/// writer, then being woken by it), most of what a lone call waits for its row. The commit
/// is one INSERT under WAL without fsync, and a locked store is never waited for in this
/// thread: the entry then goes to the writer as usual, as it does on any failure (the
/// writer's answer is the one that counts).
pub(crate) async fn submit(store: &Store, p: Prepared) -> Result<i64> {
    let w = writer_for(store)?;
    let _waiting = Waiting::enter(&w.waiting);
    w.pace.arrive();
    // Alone and among sparse calls: store it here. With others waiting too, or calls coming
    // densely, the writer's one commit serves all.
    let alone = w.waiting.load(std::sync::atomic::Ordering::SeqCst) == 1 && !w.pace.dense();
    let p = match if alone { store_here(&w, store, p) } else { ControlFlow::Continue(p) } {
        ControlFlow::Break(id) => return Ok(id),
        ControlFlow::Continue(p) => p,
    };
    let (reply, answer) = oneshot::channel();
    w.send(Job::Row(p, Some(reply)))?;
    answer.await.map_err(|_| Error::internal("the audit writer dropped an entry"))?
}

/// One caller in [`submit`], counted while it waits.
struct Waiting<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Waiting<'a> {
    fn enter(n: &'a std::sync::atomic::AtomicUsize) -> Waiting<'a> {
        n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Waiting(n)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Commit `p` in this thread if the writer `w` is idle; `p` back when it is not (or the
/// store is locked, or the commit failed).
fn store_here(w: &Writer, store: &Store, p: Prepared) -> ControlFlow<i64, Prepared> {
    let Ok(turn) = w.turn.try_lock() else { return ControlFlow::Continue(p) };
    if w.pending.load(std::sync::atomic::Ordering::SeqCst) != 0 {
        return ControlFlow::Continue(p);
    }
    let batch = [Job::Row(p, None)];
    let out = store.with_no_wait(|c| commit(c, &batch));
    drop(turn);
    match out {
        Ok(ids) => {
            forward(store, &batch, &ids);
            if let Some(id) = ids[0] {
                return ControlFlow::Break(id);
            }
        }
        Err(e) => tracing::debug!("the audit entry goes to the writer: {}", e.message),
    }
    let [Job::Row(p, _)] = batch else { unreachable!("a one-row batch") };
    ControlFlow::Continue(p)
}

/// Queue `p` for the writer of `store` and return at once: it is committed within
/// [`GATHER`] (plus the commit), together with the entries of concurrent calls.
pub(crate) fn submit_soon(store: &Store, p: Prepared) -> Result<()> {
    send(store, Job::Row(p, None))
}

/// A change to another log the writer commits with the audit entries (the relay's history,
/// [`crate::relay::history::Write`]), so the writer need not know its tables.
pub(crate) trait Change: Send {
    /// Make the change inside the writer's transaction.
    fn apply(&self, c: &rusqlite::Connection) -> Result<()>;
    /// What it records, for the warning when it cannot be stored ("a relay exchange").
    fn what(&self) -> &'static str;
}

/// Queue a change to another log; committed within [`GATHER`] (plus the commit).
pub(crate) fn submit_change(store: &Store, w: Box<dyn Change>) -> Result<()> {
    send(store, Job::Change(w))
}

/// Queue the outcome of a call whose `started` entry is stored; committed within
/// [`GATHER`] (plus the commit).
pub(crate) fn submit_finish(store: &Store, o: crate::audit::Outcome) -> Result<()> {
    send(store, Job::Finish(o))
}

fn send(store: &Store, job: Job) -> Result<()> {
    writer_for(store)?.send(job)
}

/// Resolve once every entry this process queued for `store` so far is stored (at once when
/// nothing was ever queued): readers of the audit log call it first, so they see the
/// entries of calls that already answered.
pub(crate) async fn flush(store: &Store) {
    let Some(tx) = existing(store) else { return };
    let (reply, done) = oneshot::channel();
    if tx.send(Job::Barrier(reply)).is_ok() {
        let _ = done.await;
    }
}

/// [`flush`] for blocking code (the pruner, the CLI).
pub(crate) fn flush_blocking(store: &Store) {
    let Some(tx) = existing(store) else { return };
    let (reply, done) = oneshot::channel();
    if tx.send(Job::Barrier(reply)).is_ok() {
        let _ = futures::executor::block_on(done);
    }
}

#[cfg(test)]
mod tests {
    use crate::audit::{Entry, Filter, Verdict, flush, list, record_async, record_soon};
    use crate::store::Store;
    use serde_json::json;

    /// An `ok` entry of admin tool `tool` with `args`.
    fn entry<'a>(tool: &'a str, args: &'a serde_json::Value) -> Entry<'a> {
        Entry {
            surface: "mcp:admin",
            tool,
            identity: "ci",
            arguments: args,
            verdict: Verdict::Ok,
            result_code: None,
            approval_id: None,
            detail: None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_entries_are_all_stored_with_distinct_ids() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("h.db")).unwrap();
        let mut tasks = Vec::new();
        for i in 0..200 {
            let s = s.clone();
            tasks.push(tokio::spawn(async move {
                let tool = format!("t{i}");
                let args = json!({"i": i, "token": "Bearer abcdefghijklmnop"});
                let e = entry(&tool, &args);
                record_async(&s, &e).await.unwrap()
            }));
        }
        let mut ids = Vec::new();
        for t in tasks {
            ids.push(t.await.unwrap());
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 200);
        let rows = list(&s, &Filter { limit: 0, ..Default::default() }).unwrap();
        assert_eq!(rows.len(), 200);
        assert!(rows.iter().all(|r| !r.arguments.to_string().contains("abcdefghijklmnop")), "redacted");
        // A bad entry (an unknown surface) fails alone.
        let empty = json!({});
        let bad = Entry {
            surface: "mcp:nowhere",
            tool: "t",
            identity: "ci",
            arguments: &empty,
            verdict: Verdict::Ok,
            result_code: None,
            approval_id: None,
            detail: None,
        };
        assert_eq!(record_async(&s, &bad).await.unwrap_err().code, "audit.invalid_entry");
        assert_eq!(record_soon(&s, &bad).unwrap_err().code, "audit.invalid_entry");
    }

    #[test]
    fn a_waited_entry_ends_the_gathering_at_once() {
        use super::{Job, gather};
        let (tx, rx) = std::sync::mpsc::channel();
        let o = |id| crate::audit::Outcome { id, verdict: Verdict::Ok, result_code: None, approval_id: None };
        let (reply, _answer) = tokio::sync::oneshot::channel();
        tx.send(Job::Finish(o(2))).unwrap();
        tx.send(Job::Barrier(reply)).unwrap();
        tx.send(Job::Finish(o(3))).unwrap();
        // An hour's window: were the barrier not to end it, this test would hang.
        let batch = gather(Job::Finish(o(1)), &rx, std::time::Duration::from_secs(3600), std::time::Duration::ZERO);
        assert_eq!(batch.len(), 4, "everything queued, then at once: a barrier waits");
        assert!(matches!(batch[2], Job::Barrier(_)));
        // A waited job opens a batch of its own without gathering.
        let (reply, _answer) = tokio::sync::oneshot::channel();
        assert_eq!(
            gather(Job::Barrier(reply), &rx, std::time::Duration::from_secs(3600), std::time::Duration::ZERO).len(),
            1
        );
    }

    /// Calls a tenth of a millisecond apart are dense; the first call after a pause is not,
    /// so it never waits for company that is not coming.
    #[test]
    fn the_pace_turns_dense_under_load_and_sparse_after_one_pause() {
        let pace = super::Pace::default();
        assert!(!pace.dense(), "a new writer starts sparse");
        let mut t = 5_000_000_000u64;
        for _ in 0..3 {
            t += 100_000;
            pace.arrive_at(t);
        }
        assert!(!pace.dense(), "three calls are not yet a pace");
        for _ in 0..100 {
            t += 100_000;
            pace.arrive_at(t);
        }
        assert!(pace.dense(), "calls 0.1 ms apart");
        t += 1_000_000_000;
        pace.arrive_at(t);
        assert!(!pace.dense(), "one call after a second's pause");
        // A sequential client's pace (one call a millisecond) never turns dense.
        let pace = super::Pace::default();
        for _ in 0..1000 {
            t += 1_000_000;
            pace.arrive_at(t);
        }
        assert!(!pace.dense());
    }

    /// With company to wait for, a batch opened by a waited row takes the rows that come
    /// within the delay; without, it is committed alone at once.
    #[test]
    fn a_waited_row_among_dense_calls_shares_its_commit() {
        use super::{Job, gather};
        fn row(reply: Option<tokio::sync::oneshot::Sender<crate::base::error::Result<i64>>>) -> Job {
            Job::Row(crate::audit::prepare(&entry("t", &json!({}))).unwrap(), reply)
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let (r1, _a1) = tokio::sync::oneshot::channel();
        let later = tx.clone();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            let (r2, a2) = tokio::sync::oneshot::channel();
            later.send(row(Some(r2))).unwrap();
            a2
        });
        let batch = gather(row(Some(r1)), &rx, super::GATHER, std::time::Duration::from_secs(1));
        let _a2 = sender.join().unwrap();
        assert_eq!(batch.len(), 2, "the second row came within the delay and shares the commit");
        let (r3, _a3) = tokio::sync::oneshot::channel();
        tx.send(row(None)).unwrap();
        let batch = gather(row(Some(r3)), &rx, super::GATHER, std::time::Duration::ZERO);
        assert_eq!(batch.len(), 1, "sparse: committed at once, alone");
    }

    #[test]
    fn a_waited_entry_wakes_a_parked_writer() {
        use super::{Job, Writer, gather};
        let (tx, rx) = std::sync::mpsc::channel();
        let w = Writer {
            tx,
            thread: std::thread::current(),
            turn: Default::default(),
            pending: Default::default(),
            waiting: Default::default(),
            pace: Default::default(),
        };
        let o = crate::audit::Outcome { id: 1, verdict: Verdict::Ok, result_code: None, approval_id: None };
        // While this thread gathers (parked), another queues a barrier through the writer.
        let sender = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let (reply, answer) = tokio::sync::oneshot::channel();
            w.send(Job::Barrier(reply)).unwrap();
            answer
        });
        let started = std::time::Instant::now();
        let batch = gather(Job::Finish(o), &rx, std::time::Duration::from_secs(60), std::time::Duration::ZERO);
        assert!(matches!(batch.last(), Some(Job::Barrier(_))), "the barrier ended the gathering");
        // Not a timing test: without the unpark it would sit out the whole minute.
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "{:?}", started.elapsed());
        drop(sender.join().unwrap());
    }

    /// An idle writer lets the caller commit its entry itself; a store locked by another
    /// connection sends the entry to the writer instead, which waits the lock out.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_locked_store_sends_the_entry_to_the_writer() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("h.db");
        let s = Store::open(&path).unwrap();
        let args = json!({});
        let first = record_async(&s, &entry("alone", &args)).await.unwrap();
        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            rx.recv().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(200));
            other.execute_batch("COMMIT").unwrap();
        });
        tx.send(()).unwrap();
        let second = record_async(&s, &entry("behind a lock", &args)).await.unwrap();
        holder.join().unwrap();
        assert!(second > first);
        flush(&s).await;
        let rows = list(&s, &Filter { limit: 0, ..Default::default() }).unwrap();
        let tools: Vec<&str> = rows.iter().map(|r| r.tool.as_str()).collect();
        assert_eq!(tools, ["behind a lock", "alone"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn entries_nobody_waits_on_are_stored_by_the_next_barrier() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("h.db")).unwrap();
        // Nothing queued yet: a barrier returns at once and starts no writer.
        flush(&s).await;
        let args = json!({});
        for i in 0..150 {
            let tool = format!("read{i}");
            let e = entry(&tool, &args);
            record_soon(&s, &e).unwrap();
            if i == 75 {
                // A waited entry in the middle keeps its place in the order.
                let w = Entry { tool: "write", ..e };
                record_async(&s, &w).await.unwrap();
            }
        }
        flush(&s).await;
        let rows = list(&s, &Filter { limit: 0, ..Default::default() }).unwrap();
        assert_eq!(rows.len(), 151);
        let mut tools: Vec<String> = rows.iter().map(|r| r.tool.clone()).collect();
        tools.reverse(); // list is newest first
        assert_eq!(tools[75], "read75");
        assert_eq!(tools[76], "write");
        assert_eq!(tools[150], "read149");
    }
}
