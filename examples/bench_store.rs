//! Benchmark of the store's growth and of reading the audit log at scale (the figures of
//! issue 19's closing note):
//!
//! 1. growth: bytes per audited call (`--calls` `version_info` calls on `/mcp/admin/mcp` of
//!    a real `hal0 serve`, `--clients` sessions at once), per run event (the bridge ledger,
//!    `bridge::ledger::apply` in flushes of 10 events, 200 events per run) and per memory
//!    note (`MemoryEngine::add_many`, 100 a call): the growth of `hal0.db` after a
//!    `wal_checkpoint(TRUNCATE)`, divided by what was added;
//! 2. activity: `--rows` (default 10 M) generated audit rows (40 tools, 50 identities plus a
//!    rare and an ambiguous one, every surface, verdicts, 30 days up to now, ids growing
//!    with time) written straight into a store made by `Store::open`, then the real
//!    `hal0 activity list` with several filters, `--runs` times each, p50 in ms; with
//!    `--before BIN` (a `hal0` built before the index review) side by side with it;
//! 3. week: 7 simulated days of `--week-rate` audited calls a second (default 20: 1.7 M
//!    rows a day, 12 M in the week, above the default `max_rows` of 5 M), each day's rows
//!    with that day's timestamps followed by `retention::prune` with the default policy
//!    while a writer stores one audit entry every 2 ms (its waits show how long a prune
//!    holds the write lock); then the store's size and the rows kept.
//!
//! Run: `cargo build --release --bin hal0 --example bench_store &&
//!       target/release/examples/bench_store target/release/hal0 [--before OLD_HAL0]
//!       [--calls 20000] [--clients 4] [--rows 10000000] [--week-rate 20] [--runs 5]
//!       [--only growth,activity,week]`

#[path = "support/rng.rs"]
mod rng;
#[path = "support/mod.rs"]
mod support;

use hal0::audit::{self, Entry, Verdict};
use hal0::bridge::ledger::{self, Run, RunStatus, Update};
use hal0::memory::{MemoryEngine, NewNote};
use hal0::ops::retention::{self, Policy};
use hal0::store::Store;
use rng::Rng;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::pct;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The daemon's allocator, so that the figures are the daemon's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Args {
    bin: String,
    before: Option<String>,
    calls: u64,
    clients: usize,
    rows: u64,
    week_rate: u64,
    runs: usize,
    only: Vec<String>,
}

fn args() -> Args {
    let mut a = Args {
        bin: "target/release/hal0".into(),
        before: None,
        calls: 20_000,
        clients: 4,
        rows: 10_000_000,
        week_rate: 20,
        runs: 5,
        only: vec!["growth".into(), "activity".into(), "week".into()],
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        let mut num = |what: &str| -> u64 {
            value().parse().ok().filter(|&n| n > 0).unwrap_or_else(|| panic!("{what} needs a number above 0"))
        };
        match arg.as_str() {
            "--calls" => a.calls = num("--calls"),
            "--clients" => a.clients = num("--clients") as usize,
            "--rows" => a.rows = num("--rows"),
            "--week-rate" => a.week_rate = num("--week-rate"),
            "--runs" => a.runs = num("--runs") as usize,
            "--before" => a.before = Some(value()),
            "--only" => a.only = value().split(',').map(str::to_string).collect(),
            _ if arg.starts_with("--") => panic!(
                "unknown option {arg}; usage: bench_store HAL0_BIN [--before OLD_HAL0] [--calls N] [--clients C] \
                 [--rows N] [--week-rate R] [--runs K] [--only growth,activity,week]"
            ),
            _ => a.bin = arg,
        }
    }
    a
}

/// `hal0 serve`, killed when dropped (also when the bench panics).
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The 1-minute, 5-minute and 15-minute load averages.
fn loadavg() -> Vec<f64> {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    s.split_whitespace().take(3).filter_map(|x| x.parse().ok()).collect()
}

fn main() {
    let a = args();
    let started = Instant::now();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!("store growth and audit log reads; machine: {cores} cores, load average {:?}", loadavg());
    let mut figures = serde_json::Map::new();
    if a.only.iter().any(|o| o == "growth") {
        figures.insert("growth".into(), growth(&a));
    }
    if a.only.iter().any(|o| o == "activity") {
        figures.insert("activity".into(), activity(&a));
    }
    if a.only.iter().any(|o| o == "week") {
        figures.insert("week".into(), week(&a));
    }
    println!("total {:.0} s, load average at end {:?}", started.elapsed().as_secs_f64(), loadavg());
    println!(
        "{}",
        json!({"bench": "store", "bin": a.bin, "before": a.before, "cores": cores, "calls": a.calls, "rows": a.rows,
               "week_rate": a.week_rate, "runs": a.runs, "figures": figures, "total_s": started.elapsed().as_secs()})
    );
}

// ---------------------------------------------------------------------------------------
// Sizes

fn len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

fn wal(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push("-wal");
    PathBuf::from(s)
}

/// Checkpoint the write-ahead log into `hal0.db` and cut it to nothing (retried while
/// another connection reads), then `hal0.db` + WAL in bytes.
fn settled_size(db: &Path) -> u64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.busy_timeout(Duration::from_secs(10)).unwrap();
    for _ in 0..100 {
        let busy: i64 = c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0)).unwrap();
        if busy == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    len(db) + len(&wal(db))
}

fn count(db: &Path, table: &str) -> u64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.busy_timeout(Duration::from_secs(10)).unwrap();
    c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get::<_, i64>(0)).unwrap() as u64
}

fn mib(b: u64) -> f64 {
    b as f64 / 1_048_576.0
}

// ---------------------------------------------------------------------------------------
// Deterministic generated content

/// The store bench's draws on top of [`Rng`].
trait Draws {
    fn chance(&mut self, per_million: u64) -> bool;
    fn words(&mut self, n: usize) -> String;
}

impl Draws for Rng {
    fn chance(&mut self, per_million: u64) -> bool {
        self.next() % 1_000_000 < per_million
    }
    fn words(&mut self, n: usize) -> String {
        const W: &[&str] = &[
            "deploy", "staging", "invoice", "backup", "release", "notes", "customer", "retry", "queue", "report",
            "disk", "latency", "build", "schema", "token", "budget", "cluster", "review", "summary", "incident",
            "rollout", "ticket", "weekly", "metrics", "cache", "nginx", "postgres", "python", "error", "config",
        ];
        (0..n).map(|_| W[self.below(W.len())]).collect::<Vec<_>>().join(" ")
    }
}

/// Cumulative weights of a rough Zipf law over `n` items (the first is the most common).
fn zipf(n: usize) -> Vec<f64> {
    let mut acc = 0.0;
    (0..n)
        .map(|i| {
            acc += 1.0 / (i as f64 + 1.0);
            acc
        })
        .collect()
}

fn pick(rng: &mut Rng, cum: &[f64]) -> usize {
    let x = (rng.next() % 1_000_000_000) as f64 / 1e9 * cum[cum.len() - 1];
    cum.partition_point(|&c| c < x).min(cum.len() - 1)
}

/// 40 tools with their surfaces, most used first.
const TOOLS: [(&str, &str); 40] = [
    ("mcp:memory", "memory_recall"),
    ("mcp:admin", "version_info"),
    ("mcp:proxy/files", "read_file"),
    ("mcp:agents", "agent_run_status"),
    ("mcp:memory", "memory_retain"),
    ("mcp:proxy/github", "get_issue"),
    ("mcp:agents", "agent_run"),
    ("mcp:memory", "memory_search"),
    ("mcp:admin", "settings_get"),
    ("mcp:proxy/files", "list_directory"),
    ("mcp:relay", "relay_ask"),
    ("mcp:proxy/browser", "navigate"),
    ("mcp:agents", "agent_run_events"),
    ("mcp:memory", "memory_list"),
    ("mcp:proxy/github", "list_pull_requests"),
    ("mcp:proxy/files", "search_files"),
    ("mcp:admin", "servers_list"),
    ("mcp:memory", "memory_get"),
    ("mcp:proxy/browser", "screenshot"),
    ("mcp:agents", "agents_list"),
    ("mcp:proxy/github", "search_code"),
    ("mcp:relay", "relay_agents"),
    ("mcp:admin", "store_status"),
    ("mcp:memory", "memory_update"),
    ("mcp:proxy/files", "write_file"),
    ("mcp:agents", "runs_list"),
    ("mcp:proxy/browser", "click"),
    ("mcp:admin", "logs_tail"),
    ("mcp:memory", "memory_forget"),
    ("mcp:agents", "agent_run_answer"),
    ("mcp:proxy/github", "create_issue"),
    ("mcp:relay", "relay_history"),
    ("mcp:admin", "doctor_run"),
    ("mcp:memory", "directives_list"),
    ("mcp:agents", "agent_run_stop"),
    ("mcp:proxy/files", "move_file"),
    ("mcp:admin", "clients_list"),
    ("mcp:admin", "settings_set"),
    ("api", "store_prune"),
    ("cli", "server_restart"),
];

/// The tool a query names, and the rare tool.
const BUSY_TOOL: &str = "memory_recall";

/// 50 identities, busiest first: bridge clients, proxy consumers, the admin and client
/// keys, named admin keys, CLI users. `deploy` names two of them.
fn identities() -> Vec<String> {
    let mut v: Vec<String> = ["ci", "laptop", "hermes", "deploy"].iter().map(|n| format!("bridge:{n}")).collect();
    v.extend((1..=20).map(|i| format!("bridge:agent-{i:02}")));
    for s in ["files", "github", "browser"] {
        for c in ["hermes", "ci", "research"] {
            v.push(format!("consumer:{s}/{c}"));
        }
    }
    v.push("consumer:files/backup".into());
    v.extend(["admin", "client", "anonymous", "admin:deploy", "admin:ops-bot", "admin:grafana"].map(String::from));
    v.extend(["cli:root", "cli:alice", "cli:bob"].map(String::from));
    v.extend((1..=7).map(|i| format!("bridge:worker-{i}")));
    assert_eq!(v.len(), 50);
    v
}

/// A caller seen once in 100 000 rows.
const RARE: &str = "bridge:auditor";

/// Generated audit rows.
struct Gen {
    rng: Rng,
    tools: Vec<f64>,
    ids: Vec<String>,
    id_w: Vec<f64>,
    /// The last second formatted, and its text.
    at: (i64, String),
}

impl Gen {
    fn new(seed: u64) -> Gen {
        let ids = identities();
        Gen { rng: Rng(seed), tools: zipf(TOOLS.len()), id_w: zipf(ids.len()), ids, at: (i64::MIN, String::new()) }
    }

    fn at(&mut self, t: i64) -> String {
        if self.at.0 != t {
            let d = OffsetDateTime::from_unix_timestamp(t).unwrap();
            self.at = (t, d.format(&Rfc3339).unwrap());
        }
        self.at.1.clone()
    }

    /// surface, tool, identity, arguments, verdict, result_code, detail
    #[allow(clippy::type_complexity)]
    fn row(
        &mut self,
    ) -> (&'static str, &'static str, String, String, &'static str, Option<&'static str>, Option<String>) {
        let r = &mut self.rng;
        let (surface, tool) = TOOLS[pick(r, &self.tools)];
        let identity = if r.chance(10) { RARE.to_string() } else { self.ids[pick(r, &self.id_w)].clone() };
        let args = match surface {
            "mcp:memory" => json!({"query": r.words(3), "dataset": "shared", "limit": 10}).to_string(),
            "mcp:agents" => {
                json!({"agent": "hermes", "input": r.words(8), "run_id": format!("run_{:016x}", r.next())}).to_string()
            }
            "mcp:relay" => json!({"to": "hermes", "message": r.words(10)}).to_string(),
            "mcp:proxy/files" => json!({"path": format!("/srv/app/src/{}.rs", r.words(1))}).to_string(),
            "mcp:proxy/github" => {
                json!({"owner": "acme", "repo": r.words(1), "number": r.below(5000), "query": r.words(2)}).to_string()
            }
            "mcp:proxy/browser" => json!({"url": format!("https://example.com/{}", r.words(1))}).to_string(),
            _ => json!({"args": {}}).to_string(),
        };
        let proxied = surface.starts_with("mcp:proxy/");
        let (verdict, code, detail) = match r.below(100) {
            0..=3 if proxied => ("blocked", Some("policy.blocked"), Some(format!("{tool} is blocked by the policy"))),
            4 if proxied => ("gated", None, None),
            _ if proxied => ("allow", None, None),
            0..=4 => ("error", Some("tool.error"), Some(format!("{} failed: {}", tool, r.words(4)))),
            _ => ("ok", None, None),
        };
        (surface, tool, identity, args, verdict, code, detail)
    }
}

/// Append `n` generated rows to `store`'s audit log, their times spread evenly over
/// `[from, to)` (unix seconds), in transactions of 100 000 rows; returns the seconds taken.
fn fill(store: &Store, g: &mut Gen, n: u64, from: i64, to: i64, mut progress: impl FnMut(u64)) -> f64 {
    let t = Instant::now();
    let span = (to - from) as f64;
    let mut done = 0u64;
    while done < n {
        let end = (done + 100_000).min(n);
        store
            .with(|c| {
                let tx = c.transaction()?;
                {
                    let mut st = tx.prepare_cached(
                        "INSERT INTO audit_log (at, surface, tool, identity, arguments, verdict, result_code, detail)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    )?;
                    for i in done..end {
                        let at = g.at(from + (i as f64 * span / n as f64) as i64);
                        let (surface, tool, identity, args, verdict, code, detail) = g.row();
                        st.execute(rusqlite::params![at, surface, tool, identity, args, verdict, code, detail])?;
                    }
                }
                tx.commit()?;
                Ok(())
            })
            .unwrap();
        done = end;
        progress(done);
    }
    t.elapsed().as_secs_f64()
}

fn now_s() -> i64 {
    OffsetDateTime::now_utc().unix_timestamp()
}

// ---------------------------------------------------------------------------------------
// 1. Growth

fn growth(a: &Args) -> Value {
    println!("\n1. growth of hal0.db (after a WAL checkpoint)");
    let per_call = audited_calls(a);
    let per_event = run_events(a.calls);
    let per_note = notes(a.calls);
    json!({"bytes_per_audited_call": per_call.round(), "bytes_per_run_event": per_event.round(),
           "bytes_per_note": per_note.round()})
}

fn audited_calls(a: &Args) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, state) = (dir.path().join("etc"), dir.path().join("var"));
    let key = support::bridge_key(&a.bin, &cfg, &state, "bench", &["admin"]);
    let (server, base) = support::serve(&a.bin, &cfg, &state, &[]);
    let _server = Server(server);
    let url = format!("{base}/mcp/admin/mcp");
    let db = state.join("hal0.db");
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let version = ("version_info", json!({"args": {}}), "uptime_s");
    // Warm sessions (their calls make the table's first pages), then settle and measure.
    let sessions = rt.block_on(support::open_warm(&url, &key, a.clients, 50, version.clone()));
    std::thread::sleep(Duration::from_millis(300));
    let (size0, rows0) = (settled_size(&db), count(&db, "audit_log"));
    let per = (a.calls / a.clients as u64).max(1);
    let (_, secs) = rt.block_on(support::concurrent(sessions, per, version.0, version.1, version.2));
    std::thread::sleep(Duration::from_millis(300));
    let (size1, rows1) = (settled_size(&db), count(&db, "audit_log"));
    let what = format!("audited call (version_info over MCP, {} sessions)", a.clients);
    per_item(&what, rows1 - rows0, "call", secs, (size0, size1))
}

/// Print and return the bytes each of `added` items (`unit`s) grew the store by.
fn per_item(what: &str, added: u64, unit: &str, secs: f64, (size0, size1): (u64, u64)) -> f64 {
    let per = (size1 - size0) as f64 / added as f64;
    println!(
        "  {what}: {added} {unit}s in {secs:.1} s, {:.2} -> {:.2} MiB = {per:.0} bytes/{unit}",
        mib(size0),
        mib(size1)
    );
    per
}

fn run_events(n: u64) -> f64 {
    const PER_RUN: u64 = 200;
    const FLUSH: u64 = 10;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hal0.db");
    let store = Store::open(&db).unwrap();
    let runs = n.div_ceil(PER_RUN);
    let mut r = Rng(7);
    let now = hal0::store::now();
    for i in 0..runs {
        let input = r.words(12);
        ledger::insert(
            &store,
            &Run {
                run_id: format!("run_{:016x}", r.next()),
                agent: "hermes".into(),
                profile: "default".into(),
                client: format!("agent-{:02}", i % 20),
                status: RunStatus::Running,
                input_preview: input.clone(),
                fingerprint: format!("{:016x}{:016x}", r.next(), r.next()),
                ..Run::queued(now.clone())
            },
        )
        .unwrap();
    }
    let ids: Vec<String> = store
        .with(|c| {
            let mut st = c.prepare("SELECT run_id FROM runs")?;
            Ok(st.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<Vec<String>>>()?)
        })
        .unwrap();
    let size0 = settled_size(&db);
    let t = Instant::now();
    let ts = now_s() as f64;
    let mut added = 0u64;
    'runs: for id in &ids {
        for _ in 0..PER_RUN / FLUSH {
            let events = (0..FLUSH)
                .map(|k| match r.below(10) {
                    0 => (
                        "tool.started".to_string(),
                        json!({"tool": "terminal", "preview": r.words(5), "timestamp": ts + k as f64}),
                    ),
                    1 => (
                        "tool.completed".to_string(),
                        json!({"tool": "terminal", "duration": 0.4, "error": false, "timestamp": ts}),
                    ),
                    _ => ("message.delta".to_string(), json!({"delta": r.words(6), "timestamp": ts + k as f64 * 0.05})),
                })
                .collect();
            ledger::apply(&store, id, &Update { events, ..Default::default() }).unwrap();
            added += FLUSH;
            if added >= n {
                break 'runs;
            }
        }
    }
    let what = format!("run event (bridge ledger, {FLUSH} a flush, {PER_RUN} a run)");
    per_item(&what, added, "event", t.elapsed().as_secs_f64(), (size0, settled_size(&db)))
}

fn notes(n: u64) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hal0.db");
    let engine = MemoryEngine::new(Store::open(&db).unwrap());
    let mut r = Rng(11);
    let note = |r: &mut Rng, i: u64| {
        let words = 8 + r.below(17);
        NewNote {
            text: format!("{} {i}", r.words(words)),
            dataset: if i.is_multiple_of(10) { "agents".into() } else { "shared".into() },
            tags: vec![format!("topic-{}", r.below(50))],
            metadata: None,
            document_id: None,
        }
    };
    engine.add("bench", note(&mut r, 0)).unwrap();
    let size0 = settled_size(&db);
    let t = Instant::now();
    let mut i = 1u64;
    while i <= n {
        let end = (i + 100).min(n + 1);
        engine.add_many("bench", (i..end).map(|j| note(&mut r, j)).collect()).unwrap();
        i = end;
    }
    let what = "memory note (8-24 words, one tag, 100 a call)";
    per_item(what, n, "note", t.elapsed().as_secs_f64(), (size0, settled_size(&db)))
}

// ---------------------------------------------------------------------------------------
// 2. `hal0 activity list` at scale

/// One `hal0 activity list` with `extra`; milliseconds, and the rows printed.
fn activity_list(bin: &str, cfg: &Path, state: &Path, extra: &[String]) -> (f64, usize) {
    let t = Instant::now();
    let out = Command::new(bin)
        .args(["activity", "list"])
        .args(extra)
        .env("HAL0_CONFIG_DIR", cfg)
        .env("HAL0_STATE_DIR", state)
        .env("HAL0_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    assert!(out.status.success(), "{bin} activity list {extra:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    // The table's rows start with their id (after the border).
    let rows = text.lines().filter(|l| l.split_whitespace().take(2).any(|w| w.parse::<i64>().is_ok())).count();
    (ms, rows)
}

fn activity(a: &Args) -> Value {
    println!("\n2. hal0 activity list at {} audit rows", a.rows);
    let dir = tempfile::tempdir().unwrap();
    let (cfg, state) = (dir.path().join("etc"), dir.path().join("var"));
    std::fs::create_dir_all(&cfg).unwrap();
    let db = state.join("hal0.db");
    let store = Store::open(&db).unwrap();
    store.with(|c| Ok(c.execute_batch("PRAGMA cache_size = -262144;")?)).unwrap();
    let end = now_s();
    let mut g = Gen::new(42);
    let mut shown = 0;
    let secs = fill(&store, &mut g, a.rows, end - 30 * 86_400, end, |done| {
        if done * 10 / a.rows > shown {
            shown = done * 10 / a.rows;
            eprint!("\r  filling: {done} rows");
        }
    });
    eprintln!();
    drop(store);
    let size = settled_size(&db);
    println!(
        "  filled {} rows in {secs:.0} s ({:.0} rows/s); store {:.0} MiB = {:.0} bytes/row",
        a.rows,
        a.rows as f64 / secs,
        mib(size),
        size as f64 / a.rows as f64
    );
    // Nothing is newer than this (the box was idle since).
    let idle = OffsetDateTime::from_unix_timestamp(end + 1).unwrap().format(&Rfc3339).unwrap();
    let queries: Vec<(&str, Vec<String>)> = vec![
        ("default (newest 50)", vec![]),
        ("--tool memory_recall", vec!["--tool".into(), BUSY_TOOL.into()]),
        ("--client ci (busiest)", vec!["--client".into(), "ci".into()]),
        ("--client bridge:ci", vec!["--client".into(), "bridge:ci".into()]),
        ("--client deploy (2 identities)", vec!["--client".into(), "deploy".into()]),
        ("--client auditor (1 in 100k)", vec!["--client".into(), "auditor".into()]),
        ("--client nobody (no row)", vec!["--client".into(), "nobody".into()]),
        ("--since 1h", vec!["--since".into(), "1h".into()]),
        ("--since <newest> (idle box)", vec!["--since".into(), idle]),
        ("--client ci --tool memory_recall", vec!["--client".into(), "ci".into(), "--tool".into(), BUSY_TOOL.into()]),
        (
            "--client auditor --tool version_info",
            vec!["--client".into(), "auditor".into(), "--tool".into(), "version_info".into()],
        ),
        ("--client ci --since 1h", vec!["--client".into(), "ci".into(), "--since".into(), "1h".into()]),
    ];
    let bins: Vec<(&str, &str)> =
        a.before.iter().map(|b| ("before", b.as_str())).chain([("after", a.bin.as_str())]).collect();
    println!("  p50 of {} runs of the CLI (process start, store open, query, table), ms:", a.runs);
    let head: String = bins.iter().map(|(l, _)| format!("{l:>10}")).collect();
    println!("  {:<40}{head}  rows", "query");
    let mut out = Vec::new();
    for (label, extra) in &queries {
        let mut row = serde_json::Map::new();
        row.insert("query".into(), json!(label));
        let mut line = format!("  {label:<40}");
        let mut rows_seen = Vec::new();
        for (which, bin) in &bins {
            activity_list(bin, &cfg, &state, extra); // warm the page cache
            let mut lat = Vec::new();
            let mut n = 0;
            for _ in 0..a.runs {
                let (ms, rows) = activity_list(bin, &cfg, &state, extra);
                lat.push(ms);
                n = rows;
            }
            let p50 = pct(&mut lat, 0.5);
            line.push_str(&format!("{p50:>10.1}"));
            row.insert(format!("{which}_p50_ms"), json!((p50 * 10.0).round() / 10.0));
            rows_seen.push(n);
        }
        assert!(rows_seen.windows(2).all(|w| w[0] == w[1]), "{label}: before and after list different rows");
        println!("{line}  {}", rows_seen[0]);
        row.insert("rows".into(), json!(rows_seen[0]));
        out.push(Value::Object(row));
    }
    json!({"rows": a.rows, "fill_s": secs.round(), "store_bytes": size, "queries": out})
}

// ---------------------------------------------------------------------------------------
// 3. A week of load under the default retention

fn week(a: &Args) -> Value {
    let per_day = a.week_rate * 86_400;
    let policy = Policy::default();
    println!(
        "\n3. a week at {} audited calls/s ({per_day} rows a day), pruned after each day by the default policy \
         (audit {} days, at most {} rows)",
        a.week_rate, policy.audit_days, policy.audit_max_rows
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hal0.db");
    let store = Store::open(&db).unwrap();
    let mut g = Gen::new(1234);
    let start = now_s() - 7 * 86_400;
    println!(
        "  {:<4} {:>9} {:>8} {:>9} {:>8} {:>10} {:>10} {:>7} {:>9} {:>9} {:>9}",
        "day",
        "inserted",
        "fill s",
        "pruned",
        "prune s",
        "reclaimed",
        "size MiB",
        "writes",
        "w p50 ms",
        "w p99 ms",
        "w max ms"
    );
    let mut days = Vec::new();
    let mut worst = 0.0f64;
    for d in 0..7 {
        let from = start + d * 86_400;
        let fill_s = fill(&store, &mut g, per_day, from, from + 86_400, |_| {});
        // The day's rows are in the store file, as the hourly checkpoints of a day would
        // have left them (else the writer's first commit pays for the whole day's).
        settled_size(&db);
        // A writer storing one audit entry every 2 ms while the pruner runs.
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (store, stop) = (store.clone(), stop.clone());
            std::thread::spawn(move || {
                let args = json!({"args": {}});
                let e = Entry {
                    surface: "mcp:admin",
                    tool: "version_info",
                    identity: "bridge:writer",
                    arguments: &args,
                    verdict: Verdict::Ok,
                    result_code: None,
                    approval_id: None,
                    detail: None,
                };
                let mut lat = Vec::new();
                loop {
                    let t = Instant::now();
                    audit::record(&store, &e).unwrap();
                    lat.push(t.elapsed().as_secs_f64() * 1000.0);
                    if stop.load(Ordering::Relaxed) {
                        return lat;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
        };
        let report = retention::prune(&store, &policy).unwrap();
        stop.store(true, Ordering::Relaxed);
        let mut lat = writer.join().unwrap();
        let size = len(&db) + len(&wal(&db));
        let (p50, p99, max) = (pct(&mut lat, 0.5), pct(&mut lat, 0.99), pct(&mut lat, 1.0));
        worst = worst.max(max);
        println!(
            "  {:<4} {per_day:>9} {fill_s:>8.1} {:>9} {:>8.1} {:>10.1} {:>10.0} {:>7} {p50:>9.2} {p99:>9.2} {max:>9.1}",
            d + 1,
            report.rows(),
            report.took_ms as f64 / 1000.0,
            mib(report.reclaimed_bytes),
            mib(size),
            lat.len()
        );
        days.push(json!({"day": d + 1, "inserted": per_day, "fill_s": (fill_s * 10.0).round() / 10.0,
                         "pruned": report.rows(), "prune_ms": report.took_ms, "reclaimed_bytes": report.reclaimed_bytes,
                         "store_bytes": size, "writer_entries": lat.len(), "writer_p50_ms": p50, "writer_p99_ms": p99,
                         "writer_max_ms": max}));
    }
    let kept = count(&db, "audit_log");
    let size = settled_size(&db);
    println!(
        "  after the week: {kept} audit rows kept, hal0.db + WAL {:.0} MiB ({:.0} bytes/row); longest wait of the writer during a prune {worst:.1} ms",
        mib(size),
        size as f64 / kept as f64
    );
    json!({"rate_per_s": a.week_rate, "rows_per_day": per_day, "policy": policy, "rows_kept": kept,
           "store_bytes": size, "writer_max_ms": worst, "days": days})
}
