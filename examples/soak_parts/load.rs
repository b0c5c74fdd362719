//! The soak's mixed load, one tokio task per client: bridge runs against the fake Hermes
//! (start, wait, events, status), memory (add, search right after, recall, a few deletes;
//! shared and private), proxied calls of the allowed `echo` and of the gated `add`
//! (approvals), and an operator deciding approvals with the CLI. A write enters the ledger
//! only when its answer arrived; transport failures are retried with backoff.

use super::client::{Conn, Outcome, Stats};
use super::daemon::Up;
use super::ledger::{ApprovalAck, Decision, Delete, Ledger, NoteAck, SeenFinished};
use super::rng::Rng;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::watch;

pub const AGENTS: &str = "mcp:agents";
pub const MEMORY: &str = "mcp:memory";
pub const PROXY: &str = "mcp:proxy/up";
const TERMINAL: [&str; 4] = ["completed", "failed", "cancelled", "interrupted"];

/// What every client task shares.
pub struct Shared {
    pub up: watch::Receiver<Option<Up>>,
    pub ledger: Mutex<Ledger>,
    pub stats: Stats,
    /// Load stops being started after this.
    pub deadline: Instant,
    /// Most operations per task (a bound besides the time).
    pub max_ops: u64,
    pub bridge_key: String,
    pub proxy_key: String,
    pub bin: String,
    pub cfg: PathBuf,
    pub state: PathBuf,
}

impl Shared {
    fn running(&self, n: u64) -> bool {
        Instant::now() < self.deadline && n < self.max_ops
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap()
    }
}

/// Exponential backoff for transport failures: 100 ms doubling to 2 s.
struct Backoff(Duration);

impl Backoff {
    fn new() -> Backoff {
        Backoff(Duration::from_millis(100))
    }
    async fn wait(&mut self) {
        tokio::time::sleep(self.0).await;
        self.0 = (self.0 * 2).min(Duration::from_secs(2));
    }
}

/// One call of `kind` (the tool's name, or `tool (what)`), recorded, with its answer
/// noted on `surface` in the ledger.
async fn once(
    sh: &Shared,
    c: &mut Conn,
    kind: &'static str,
    surface: &'static str,
    args: Value,
    marker: Option<&str>,
    limit: Duration,
) -> Outcome {
    let t = Instant::now();
    let tool = kind.split(' ').next().unwrap_or(kind);
    let out = c.call(tool, args, limit).await;
    sh.stats.record(kind, t, &out);
    if out.answered() {
        sh.ledger().audited(surface, marker);
    }
    out
}

/// A read (or an idempotent write): retried through transport failures until answered,
/// for at most `patience` (outages last a second or two plus the restart).
async fn retried(
    sh: &Shared,
    c: &mut Conn,
    kind: &'static str,
    surface: &'static str,
    args: Value,
    marker: Option<&str>,
    limit: Duration,
) -> Outcome {
    let patience = Instant::now() + Duration::from_secs(90);
    let mut b = Backoff::new();
    loop {
        let out = once(sh, c, kind, surface, args.clone(), marker, limit).await;
        if out.answered() || Instant::now() > patience {
            return out;
        }
        b.wait().await;
    }
}

async fn pause(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

/// Bridge runs: start (idempotency key = the run's marker, so a retry after an outage
/// returns the same run), then wait, read its events, read its status; an `APPROVE` run
/// is left waiting for the operator once its approval shows in its status.
pub async fn runs(sh: &Shared, w: u64, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut c = Conn::new(sh.up.clone(), "/mcp/agents/mcp", &sh.bridge_key, false);
    let mut n = 0;
    while sh.running(n) {
        n += 1;
        let marker = format!("soakr{w}n{n}");
        let r = rng.unit();
        let input = if r < 0.15 {
            format!("SLOW {marker}")
        } else if r < 0.25 {
            format!("TOOLCALL {marker}")
        } else if r < 0.30 {
            format!("FAIL {marker}")
        } else if r < 0.34 {
            format!("APPROVE {marker}")
        } else {
            format!("hello {marker}")
        };
        let args = json!({"agent": "hermes", "input": input, "idempotency_key": marker});
        let out = retried(sh, &mut c, "agent_run", AGENTS, args, Some(&marker), Duration::from_secs(30)).await;
        let run_id = match out {
            Outcome::Ok(v) => match v["run_id"].as_str() {
                Some(id) => id.to_string(),
                None => {
                    sh.ledger().anomaly(format!("agent_run answered without a run_id: {v}"));
                    continue;
                }
            },
            _ => {
                pause(500).await;
                continue;
            }
        };
        sh.ledger().runs.entry(run_id.clone()).or_default();
        if input.starts_with("APPROVE") {
            approval_of(sh, &mut c, &run_id, &mut rng).await;
            continue;
        }
        let args = json!({"run_id": run_id, "timeout_s": 30});
        let out = retried(sh, &mut c, "agent_run_wait", AGENTS, args, None, Duration::from_secs(45)).await;
        if let Outcome::Ok(v) = &out {
            seen(sh, &run_id, v);
        }
        let args = json!({"run_id": run_id, "since_seq": 0, "limit": 500});
        if let Outcome::Ok(v) =
            retried(sh, &mut c, "agent_run_events", AGENTS, args, None, Duration::from_secs(30)).await
        {
            let evs = v["events"].as_array().map(Vec::len).unwrap_or(0);
            let last = v["last_seq"].as_i64().unwrap_or(0);
            let mut l = sh.ledger();
            let ack = l.runs.get_mut(&run_id).unwrap();
            ack.events_read = Some((evs, last));
            if let Some(f) = ack.finished.clone()
                && last != f.last_seq
            {
                l.anomaly(format!("{run_id}: finished with last_seq {} but its events end at {last}", f.last_seq));
            }
        }
        if rng.unit() < 0.5 {
            let args = json!({"run_id": run_id});
            if let Outcome::Ok(v) =
                retried(sh, &mut c, "agent_run_status", AGENTS, args, None, Duration::from_secs(30)).await
            {
                seen(sh, &run_id, &v);
            }
        }
        pause(150).await;
    }
}

/// Note what a view of a run shows; a finished run must not change afterwards.
fn seen(sh: &Shared, run_id: &str, v: &Value) {
    let status = v["status"].as_str().unwrap_or("").to_string();
    if !TERMINAL.contains(&status.as_str()) {
        return;
    }
    let now = SeenFinished {
        status,
        output_total: v["output_total"].as_u64().unwrap_or(0),
        last_seq: v["last_seq"].as_i64().unwrap_or(-1),
    };
    let mut l = sh.ledger();
    let ack = l.runs.get_mut(run_id).unwrap();
    match &ack.finished {
        None => ack.finished = Some(now),
        Some(f) if f.status != now.status || f.output_total != now.output_total || f.last_seq != now.last_seq => {
            let msg = format!("{run_id}: finished run changed from {f:?} to {now:?}");
            l.anomaly(msg);
        }
        Some(_) => {}
    }
}

/// Poll an `APPROVE` run's status until its approval shows; note the approval id.
async fn approval_of(sh: &Shared, c: &mut Conn, run_id: &str, rng: &mut Rng) {
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        let args = json!({"run_id": run_id});
        if let Outcome::Ok(v) = retried(sh, c, "agent_run_status", AGENTS, args, None, Duration::from_secs(30)).await
            && let Some(id) = v["pending"]["approval_id"].as_str()
        {
            let leave = rng.unit() < 0.3;
            let mut l = sh.ledger();
            l.runs.get_mut(run_id).unwrap().approval = Some(id.to_string());
            l.approvals.entry(id.to_string()).or_insert(ApprovalAck {
                kind: "hermes_command",
                decision: Decision::Pending,
                leave,
            });
            return;
        }
        pause(250).await;
    }
}

const WORDS: [&str; 12] = [
    "kettle", "harbor", "lantern", "orchard", "granite", "meadow", "copper", "willow", "saffron", "quartz", "ember",
    "tundra",
];

/// Memory: add a note with a unique marker (search it back now and then), recall, and
/// delete one of this task's own notes every tenth round.
pub async fn memory(sh: &Shared, w: u64, private: bool, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut c = Conn::new(sh.up.clone(), "/mcp/memory/mcp", &sh.bridge_key, private);
    let mut mine: Vec<String> = Vec::new();
    let mut b = Backoff::new();
    let mut n = 0;
    while sh.running(n) {
        n += 1;
        let marker = format!("soakm{w}n{n}");
        let words: Vec<&str> = (0..6).map(|_| WORDS[rng.below(WORDS.len())]).collect();
        let args =
            json!({"text": format!("soak note {marker}: {}", words.join(" ")), "tags": ["soak", format!("w{w}")]});
        match once(sh, &mut c, "memory_add", MEMORY, args, Some(&marker), Duration::from_secs(30)).await {
            Outcome::Ok(v) => {
                b = Backoff::new();
                let Some(id) = v["id"].as_str().map(str::to_string) else {
                    sh.ledger().anomaly(format!("memory_add answered without an id: {v}"));
                    continue;
                };
                sh.ledger().notes.insert(id.clone(), NoteAck { marker: marker.clone(), delete: Delete::None });
                mine.push(id.clone());
                if n % 4 == 0 {
                    let args = json!({"query": marker, "limit": 5});
                    if let Outcome::Ok(v) =
                        retried(sh, &mut c, "memory_search", MEMORY, args, None, Duration::from_secs(30)).await
                    {
                        let hit = v["results"].as_array().is_some_and(|r| r.iter().any(|x| x["id"] == json!(id)));
                        if !hit {
                            sh.ledger().read_misses.push(format!("{id} ({marker}) not found by memory_search"));
                        }
                    }
                }
            }
            Outcome::Tool { .. } => {}
            Outcome::Transport(_) => {
                b.wait().await;
                continue;
            }
        }
        if n % 7 == 0 {
            let args = json!({"query": words[0], "max_tokens": 512});
            retried(sh, &mut c, "memory_recall", MEMORY, args, None, Duration::from_secs(30)).await;
        }
        if n % 10 == 0 && !mine.is_empty() {
            let id = mine.swap_remove(rng.below(mine.len()));
            let args = json!({"ids": [id]});
            let out = once(sh, &mut c, "memory_delete", MEMORY, args, None, Duration::from_secs(30)).await;
            let mut l = sh.ledger();
            let note = l.notes.get_mut(&id).unwrap();
            match &out {
                Outcome::Ok(v) if v["deleted"] == json!(1) => note.delete = Delete::Acked,
                // Not deleted (an isError answer): the note must still be there.
                Outcome::Tool { .. } => {}
                Outcome::Transport(_) => note.delete = Delete::Unknown,
                Outcome::Ok(v) => {
                    note.delete = Delete::Unknown;
                    l.anomaly(format!("memory_delete of own note {id} answered {v}"));
                }
            }
        }
        pause(80).await;
    }
}

/// Proxied calls of the allowed `echo`; the answer must be the text sent.
pub async fn echo(sh: &Shared, w: u64) {
    let mut c = Conn::new(sh.up.clone(), "/mcp/proxy/up/mcp", &sh.proxy_key, false);
    let mut b = Backoff::new();
    let mut n = 0;
    while sh.running(n) {
        n += 1;
        let marker = format!("soake{w}n{n}");
        match once(sh, &mut c, "echo", PROXY, json!({"text": marker}), Some(&marker), Duration::from_secs(30)).await {
            Outcome::Ok(v) => {
                b = Backoff::new();
                if v != json!(marker) {
                    sh.ledger().anomaly(format!("echo of {marker} answered {v}"));
                }
            }
            Outcome::Tool { .. } => {}
            Outcome::Transport(_) => b.wait().await,
        }
        pause(40).await;
    }
}

/// Proxied calls of the gated `add`: each answers `pending_approval` with a new approval.
pub async fn gated(sh: &Shared, w: u64, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut c = Conn::new(sh.up.clone(), "/mcp/proxy/up/mcp", &sh.proxy_key, false);
    let mut b = Backoff::new();
    let mut n = 0;
    while sh.running(n) {
        n += 1;
        let args = json!({"a": 1_000_000 * w + n, "b": 1});
        match once(sh, &mut c, "add (gated)", PROXY, args, None, Duration::from_secs(30)).await {
            Outcome::Ok(v) => {
                b = Backoff::new();
                match v["approval_id"].as_str() {
                    Some(id) if v["status"] == "pending_approval" => {
                        let leave = rng.unit() < 0.3;
                        sh.ledger().approvals.insert(
                            id.to_string(),
                            ApprovalAck { kind: "mcp_call", decision: Decision::Pending, leave },
                        );
                    }
                    _ => sh.ledger().anomaly(format!("gated add answered {v}")),
                }
            }
            Outcome::Tool { .. } => {}
            Outcome::Transport(_) => b.wait().await,
        }
        pause(600).await;
    }
}

/// The operator: every few seconds decide a few pending approvals at the CLI (approve or
/// deny), leaving the ones set aside pending. The CLI works on the store directly, so it
/// goes on while the daemon is down.
pub async fn operator(sh: &Shared, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut n = 0;
    while sh.running(n) {
        n += 1;
        pause(2500).await;
        let mut todo = sh.ledger().undecided();
        for _ in 0..3 {
            if todo.is_empty() {
                break;
            }
            let (id, kind) = todo.swap_remove(rng.below(todo.len()));
            let approve = rng.unit() < 0.6;
            decide(sh, &id, kind, approve).await;
        }
    }
}

async fn decide(sh: &Shared, id: &str, kind: &str, approve: bool) {
    let verb = if approve { "approve" } else { "deny" };
    let what: &'static str = if approve { "cli approve" } else { "cli deny" };
    sh.ledger().approvals.get_mut(id).unwrap().decision = Decision::Unknown;
    let t = Instant::now();
    let out = tokio::process::Command::new(&sh.bin)
        .args(["agent", "approvals", verb, id, "--yes", "--json"])
        .env("HAL0_CONFIG_DIR", &sh.cfg)
        .env("HAL0_STATE_DIR", &sh.state)
        .stdin(std::process::Stdio::null())
        .output()
        .await;
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            sh.stats.fail(what, format!("spawn: {e}"), t);
            return;
        }
    };
    let row: Option<Value> = serde_json::from_slice(&out.stdout).ok();
    let status = row.as_ref().and_then(|r| r["status"].as_str().map(str::to_string));
    if out.status.success()
        && let Some(s) = status
    {
        sh.stats.done(what, t);
        sh.ledger().approvals.get_mut(id).unwrap().decision = Decision::Decided(s);
        return;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    // The CLI's error line names the stable code; keep just that.
    let code = err
        .split(|c: char| c.is_whitespace() || c == '[' || c == ']' || c == ':' || c == '(' || c == ')')
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_lowercase() || c == '.' || c == '_'))
        .unwrap_or("cli_error")
        .to_string();
    sh.stats.fail(what, format!("{kind}: {code}"), t);
    if let Some(s) = status {
        // Decided but reported non-zero (a failed execution): the row says so.
        sh.ledger().approvals.get_mut(id).unwrap().decision = Decision::Decided(s);
    }
}
