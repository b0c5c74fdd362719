//! Benchmark of hal0's agent relay side by side with the hermes-bridge relay it replaces
//! (`../shared/peers/hermes-bridge`, built by `examples/bench_relay/peer.sh` into
//! `target/peer-hermes-bridge`), on the same harness, the same machine, in one run.
//!
//! The method of the reference's baseline (`../shared/reference/hermes-bridge-relay.md` §12):
//! bot B holds the WebSocket and answers every wake at once by calling `reply`; bot A holds
//! an idle WebSocket and asks `ask_agent{to: bot-b}` over raw Streamable HTTP (reqwest
//! keep-alive, one SSE event per answer). Each ask costs 2 MCP POSTs and 1 WebSocket frame
//! at the relay. Every relay gets a warm-up of 3000 asks at concurrency 4, then
//! 1000 sequential asks and 4000 asks from 16 concurrent askers. The relay's CPU time and
//! RSS come from `/proc/<pid>`: idle without bots, idle with both bots, after the load
//! (and the peak, VmHWM). hal0 writes its audit rows and the relay history (start and end
//! of every ask) to SQLite throughout; hermes-bridge keeps its history in memory.
//!
//! A floor relay (`support/relay_floor.rs`: the same messages passed and nothing else: no
//! sessions, schema, audit, history or limits) runs in each run too. Its asks/s is the most
//! any relay can show on this machine with this load generator beside it, and hal0's CPU
//! per ask is compared with its own.
//!
//! The hermes-bridge relay listens on every interface; a preload (`bench_relay/loopback.cjs`)
//! makes it bind 127.0.0.1 only. Runs alternate the two relays (`--runs`, default 3).
//!
//! With `--database URL` (a PostgreSQL database the bench may empty), a third setup runs:
//! two hal0 relays sharing that database, bot B connected to relay A and the askers on
//! relay B, so every ask crosses over as mail (CPU and RSS are the two processes' sums).
//!
//! Run: `cargo build --release --bin hal0 --example bench_relay &&
//!       target/release/examples/bench_relay target/release/hal0 [--runs 3] [--database URL]
//!       [--asker session|per-ask] [--replier concurrent|serial|per-reply|python] [--fresh] [--asks N]`
//! How the clients behave, to find what makes another harness's figures differ:
//! - `--asker per-ask`: every ask opens, uses and ends a session of its own, as a client that
//!   keeps none does; the default keeps one session per asker.
//! - `--replier`: bot B answers every wake at once on one session (`concurrent`, the
//!   default), one wake at a time (`serial`: the next frame is read after the last reply
//!   returned), or every wake at once on a session of its own (`per-reply`).
//!   `python`: a Python bot (`bench_relay/python_bot.py`, the Python MCP SDK) answers every
//!   wake at once on one session, and its CPU per ask is reported beside the relay's.
//! - `--fresh`: no keep-alive; every HTTP request opens a new TCP connection.

#[path = "support/child.rs"]
mod child;
#[path = "support/relay_floor.rs"]
mod relay_floor;
#[path = "support/mod.rs"]
mod support;
#[path = "../tests/it/support/upstream.rs"]
mod upstream;

use child::{KillOnDrop, cpu_ms};
use futures::StreamExt;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{Session, pct};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const WARM: u64 = 3000;
const SEQUENTIAL: u64 = 1000;
/// Asks in the concurrent phase unless `--asks` says otherwise.
const CONCURRENT: u64 = 4000;

/// A relay under test: its process, where to reach it, the two bots' keys.
struct Relay {
    name: &'static str,
    child: KillOnDrop,
    /// Where bot A (the askers) calls and holds its socket.
    mcp: String,
    ws: String,
    key_a: String,
    /// Where bot B (the replier) calls and holds its socket (another relay in a cluster).
    reply_mcp: String,
    ws_b: String,
    key_b: String,
    /// The second relay of a cluster.
    second: Option<KillOnDrop>,
    /// hal0's binary and dirs: its history is read back after it stops.
    hal0: Option<(String, PathBuf, PathBuf)>,
    _dir: tempfile::TempDir,
}

impl Relay {
    fn pid(&self) -> u32 {
        self.child.0.id()
    }
    fn pids(&self) -> Vec<u32> {
        std::iter::once(self.pid()).chain(self.second.as_ref().map(|c| c.0.id())).collect()
    }
    fn cpu_ms(&self) -> f64 {
        self.pids().into_iter().map(cpu_ms).sum()
    }
    fn rss_kib(&self, field: &str) -> u64 {
        self.pids().into_iter().map(|p| status_kib(p, field)).sum()
    }
}

fn status_kib(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let l = s.lines().find(|l| l.starts_with(field)).unwrap();
    l.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

async fn wait_health(url: &str) {
    let http = reqwest::Client::new();
    for _ in 0..200 {
        if http.get(url).send().await.is_ok_and(|r| r.status().is_success()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{url} did not answer within 10 s");
}

async fn start_peer(peer: &Path) -> Relay {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.yaml");
    std::fs::write(
        &cfg,
        "agents:\n  - name: bot-a\n    token: tok-a\n  - name: bot-b\n    token: tok-b\nask_timeout_ms: 120000\n",
    )
    .unwrap();
    let port = free_port();
    let shim = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/bench_relay/loopback.cjs");
    let child = Command::new("node")
        .arg("--require")
        .arg(shim)
        .arg(peer.join("dist/server/index.js"))
        .env("HERMES_BRIDGE_CONFIG", &cfg)
        .env("PORT", port.to_string())
        .env_remove("DATABASE_URL")
        .stdout(Stdio::null())
        .spawn()
        .expect("node (the hermes-bridge relay)");
    let base = format!("http://127.0.0.1:{port}");
    let child = KillOnDrop(child);
    wait_health(&format!("{base}/health")).await;
    Relay {
        name: "hermes-bridge",
        child,
        mcp: format!("{base}/mcp"),
        ws: format!("ws://127.0.0.1:{port}/bridge/connect"),
        key_a: "tok-a".into(),
        reply_mcp: format!("{base}/mcp"),
        ws_b: format!("ws://127.0.0.1:{port}/bridge/connect"),
        key_b: "tok-b".into(),
        second: None,
        hal0: None,
        _dir: dir,
    }
}

/// The floor relay (`support/relay_floor.rs`) in a process of its own.
async fn start_floor() -> Relay {
    let (child, port) = relay_floor::spawn();
    let base = format!("http://127.0.0.1:{port}");
    wait_health(&format!("{base}/health")).await;
    let ws = format!("ws://127.0.0.1:{port}/bridge/connect");
    Relay {
        name: "floor relay",
        child,
        mcp: format!("{base}/mcp"),
        ws: ws.clone(),
        key_a: relay_floor::KEYS[0].0.into(),
        reply_mcp: format!("{base}/mcp"),
        ws_b: ws,
        key_b: relay_floor::KEYS[1].0.into(),
        second: None,
        hal0: None,
        _dir: tempfile::tempdir().unwrap(),
    }
}

fn hal0_bot(bin: &str, cfg: &Path, state: &Path, name: &str) -> String {
    support::bridge_key(bin, cfg, state, name, &["relay"])
}

async fn start_hal0(bin: &str) -> Relay {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, state) = (dir.path().join("etc"), dir.path().join("var"));
    let key_a = hal0_bot(bin, &cfg, &state, "bot-a");
    let key_b = hal0_bot(bin, &cfg, &state, "bot-b");
    let (child, base) = support::serve(bin, &cfg, &state, &[]);
    let child = KillOnDrop(child);
    wait_health(&format!("{base}/api/health")).await;
    let port = base.rsplit(':').next().unwrap();
    Relay {
        name: "hal0",
        child,
        mcp: format!("{base}/mcp/relay/mcp"),
        ws: format!("ws://127.0.0.1:{port}/bridge/connect"),
        key_a,
        reply_mcp: format!("{base}/mcp/relay/mcp"),
        ws_b: format!("ws://127.0.0.1:{port}/bridge/connect"),
        key_b,
        second: None,
        hal0: Some((bin.to_string(), cfg, state)),
        _dir: dir,
    }
}

/// Two hal0 relays on the PostgreSQL database `url` (emptied first): bot B on relay A,
/// bot A (the askers) on relay B.
async fn start_cluster(bin: &str, url: &str) -> Relay {
    let (db, conn) = url.parse::<tokio_postgres::Config>().unwrap().connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    db.batch_execute(
        "DROP TABLE IF EXISTS hal0_relay_exchanges, hal0_relay_conversations, hal0_relay_nodes, hal0_relay_bots,
                              hal0_relay_mail",
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut started = Vec::new();
    for (node, bot) in [("box-a", "bot-b"), ("box-b", "bot-a")] {
        let (cfg, state) = (dir.path().join(node).join("etc"), dir.path().join(node).join("var"));
        std::fs::create_dir_all(&cfg).unwrap();
        std::fs::write(cfg.join("hal0.toml"), format!("[relay]\ndatabase_url = \"{url}\"\nnode = \"{node}\"\n"))
            .unwrap();
        let key = hal0_bot(bin, &cfg, &state, bot);
        let (child, base) = support::serve(bin, &cfg, &state, &[]);
        wait_health(&format!("{base}/api/health")).await;
        let ws = format!("ws://127.0.0.1:{}/bridge/connect", base.rsplit(':').next().unwrap());
        started.push((KillOnDrop(child), format!("{base}/mcp/relay/mcp"), ws, key, cfg, state));
    }
    let (b, a) = (started.pop().unwrap(), started.pop().unwrap());
    Relay {
        name: "hal0 x2 (PostgreSQL)",
        child: b.0,
        mcp: b.1,
        ws: b.2,
        key_a: b.3,
        reply_mcp: a.1,
        ws_b: a.2,
        key_b: a.3,
        second: Some(a.0),
        hal0: Some((bin.to_string(), b.4, b.5)),
        _dir: dir,
    }
}

/// How bot B answers its wakes (`--replier`).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Replier {
    /// Every wake at once, each `reply` on a task of its own, all on one session.
    Concurrent,
    /// One wake at a time: the next frame is read only once the last `reply` returned.
    Serial,
    /// Every wake at once, each `reply` on a session of its own (opened, used, ended).
    PerReply,
    /// A Python bot (`bench_relay/python_bot.py`: `websockets` and the Python MCP SDK, in
    /// the real Hermes's venv) answers every wake at once on one session.
    Python,
}

/// The harness's choices of client behaviour, set once from the command line.
#[derive(Clone, Copy, Debug)]
struct Mode {
    /// Every ask on a session of its own (`--asker per-ask`).
    per_ask: bool,
    replier: Replier,
    /// No pooled connections: every HTTP request on a new TCP connection (`--fresh`).
    fresh: bool,
    /// Asks in the concurrent phase (`--asks`; longer runs give a profiler time to look).
    concurrent: u64,
}

static MODE: std::sync::OnceLock<Mode> = std::sync::OnceLock::new();

fn mode() -> Mode {
    *MODE.get().expect("mode set in main")
}

/// An HTTP client as the mode wants it: keep-alive, or a new connection per request.
fn client() -> reqwest::Client {
    let b = reqwest::Client::builder().tcp_nodelay(true);
    let b = if mode().fresh { b.pool_max_idle_per_host(0) } else { b };
    b.build().unwrap()
}

/// An initialized session on a client the mode chose.
async fn open(url: &str, key: &str) -> Session {
    Session::open_on(client(), url, key).await
}

/// A bot's WebSocket. With `answer`, every wake is answered with `reply` as `--replier`
/// says (on that session, or on one of its own per reply); without, the socket is held
/// idle. Returns once the socket is open.
async fn bot(ws: &str, key: &str, answer: Option<Arc<Session>>) -> tokio::task::JoinHandle<()> {
    let mut req = ws.into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {key}").parse().unwrap());
    let (sock, _) = tokio_tungstenite::connect_async(req).await.expect("bot WebSocket");
    let replier = mode().replier;
    tokio::spawn(async move {
        // The sink is held (not used) so the socket stays open.
        let (_sink, mut stream) = sock.split();
        let mut n = 0u64;
        while let Some(Ok(m)) = stream.next().await {
            let (Message::Text(t), Some(s)) = (m, &answer) else { continue };
            let wake: Value = serde_json::from_str(&t).unwrap();
            let args = json!({"request_id": wake["request_id"], "answer": "pong"});
            let s = s.clone();
            n += 1;
            match replier {
                Replier::Serial => {
                    s.call(n, "reply", args, "ok").await;
                }
                Replier::Concurrent | Replier::Python => {
                    tokio::spawn(async move {
                        s.call(n, "reply", args, "ok").await;
                    });
                }
                Replier::PerReply => {
                    tokio::spawn(async move {
                        let own = Session::open_on(s.http.clone(), &s.url, &s.key).await;
                        own.call(n, "reply", args, "ok").await;
                        own.close().await;
                    });
                }
            }
        }
    })
}

/// Bot B as a Python process (`--replier python`), once it said READY.
fn python_bot(mcp: &str, ws: &str, key: &str) -> KillOnDrop {
    use std::io::BufRead;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(root.join(".hermes-venv/bin/python"))
        .arg(root.join("examples/bench_relay/python_bot.py"))
        .args([mcp, ws, key])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the Python bot (.hermes-venv: run tests/external/setup.sh)");
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "READY", "the Python bot did not start");
    KillOnDrop(child)
}

/// One ask on `s`, or with `--asker per-ask` on a session of its own (`initialize`,
/// `notifications/initialized`, the call, `DELETE`) on the asker's client, as a client that
/// keeps no session does, its latency the whole of it; milliseconds.
async fn ask(s: &Session, i: u64) -> f64 {
    let args = json!({"to": "bot-b", "message": "ping"});
    if !mode().per_ask {
        return s.call(i, "ask_agent", args, "pong").await.0;
    }
    let t = Instant::now();
    let own = Session::open_on(s.http.clone(), &s.url, &s.key).await;
    own.call(i, "ask_agent", args, "pong").await;
    own.close().await;
    t.elapsed().as_secs_f64() * 1000.0
}

/// `per` asks on each session at once; every latency and the wall time.
async fn asks(sessions: &[Arc<Session>], per: u64) -> (Vec<f64>, f64) {
    let t = Instant::now();
    let hs: Vec<_> = sessions
        .iter()
        .cloned()
        .map(|s| {
            tokio::spawn(async move {
                let mut v = Vec::with_capacity(per as usize);
                for i in 0..per {
                    v.push(ask(&s, i).await);
                }
                v
            })
        })
        .collect();
    let mut all = Vec::new();
    for h in hs {
        all.extend(h.await.unwrap());
    }
    (all, t.elapsed().as_secs_f64())
}

/// One phase's figures.
#[derive(Clone, Copy, Default)]
struct Phase {
    per_s: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
    cpu_ms_per_ask: f64,
    /// Bot B's CPU per ask, when bot B is a process of its own (`--replier python`).
    bot_cpu_ms_per_ask: f64,
}

/// `total` asks spread over `sessions`; `bot` is bot B's process when it is one of its own
/// (its CPU is reported beside the relay's).
async fn phase(r: &Relay, sessions: &[Arc<Session>], total: u64, bot: Option<u32>) -> Phase {
    let per = total / sessions.len() as u64;
    let bot_cpu = || bot.map_or(0.0, cpu_ms);
    let (cpu, bot_before) = (r.cpu_ms(), bot_cpu());
    let (mut v, wall) = asks(sessions, per).await;
    let (cpu, bot) = (r.cpu_ms() - cpu, bot_cpu() - bot_before);
    let n = v.len() as f64;
    Phase {
        per_s: n / wall,
        p50: pct(&mut v, 0.50),
        p90: pct(&mut v, 0.90),
        p99: pct(&mut v, 0.99),
        max: pct(&mut v, 1.0),
        cpu_ms_per_ask: cpu / n,
        bot_cpu_ms_per_ask: bot / n,
    }
}

/// Everything measured on one relay in one run.
#[derive(Clone, Copy, Default)]
struct Figures {
    seq: Phase,
    conc: Phase,
    rss_idle: u64,
    rss_bots: u64,
    rss_load: u64,
    rss_peak: u64,
    /// Exchanges in hal0's history after it stopped (SIGTERM), and how many of them are
    /// still `pending` (the old relay leaves 6–27 % so in its database).
    recorded: usize,
    pending: usize,
}

async fn measure(r: Relay, clients: usize) -> Figures {
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_idle = r.rss_kib("VmRSS:");
    // Bot B: a task of this process, or a Python process of its own.
    let (b, python) = match mode().replier {
        Replier::Python => (None, Some(python_bot(&r.reply_mcp, &r.ws_b, &r.key_b))),
        _ => (Some(bot(&r.ws_b, &r.key_b, Some(Arc::new(open(&r.reply_mcp, &r.key_b).await))).await), None),
    };
    let a = bot(&r.ws, &r.key_a, None).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_bots = r.rss_kib("VmRSS:");
    let mut askers = Vec::new();
    for _ in 0..clients {
        askers.push(Arc::new(open(&r.mcp, &r.key_a).await));
    }
    asks(&askers[..4], WARM / 4).await;
    let bot_pid = python.as_ref().map(|p| p.0.id());
    let seq = phase(&r, &askers[..1], SEQUENTIAL, bot_pid).await;
    let conc = phase(&r, &askers, mode().concurrent, bot_pid).await;
    let f = Figures {
        seq,
        conc,
        rss_idle,
        rss_bots,
        rss_load: r.rss_kib("VmRSS:"),
        rss_peak: r.rss_kib("VmHWM:"),
        recorded: 0,
        pending: 0,
    };
    a.abort();
    if let Some(b) = &b {
        b.abort();
    }
    drop(python);
    let mut f = f;
    if let Some((bin, cfg, state)) = r.hal0.clone() {
        let mut r = r;
        let _ = Command::new("kill").args(["-TERM", &r.pid().to_string()]).status();
        let _ = r.child.0.wait();
        let out = Command::new(&bin)
            .args(["relay", "exchanges", "--json", "--limit", "10000"])
            .env("HAL0_CONFIG_DIR", &cfg)
            .env("HAL0_STATE_DIR", &state)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let rows = v.as_array().cloned().unwrap_or_default();
        f.recorded = rows.len();
        f.pending = rows.iter().filter(|x| x["status"] == "pending").count();
        drop(r);
    } else {
        drop(r);
    }
    f
}

/// One run's line on stderr, as the runs go.
fn progress(run: usize, relay: &str, f: &Figures, clients: usize) {
    eprintln!(
        "run {run} {relay}: seq {:.0}/s p99 {:.2} ms; x{clients} {:.0}/s p50 {:.2} p99 {:.2} ms",
        f.seq.per_s, f.seq.p99, f.conc.per_s, f.conc.p50, f.conc.p99
    );
}

fn row(name: &str, what: &str, p: &Phase) {
    println!(
        "| {name} | {what} | {:.0} | {:.2} | {:.2} | {:.2} | {:.1} | {:.3} | {} |",
        p.per_s,
        p.p50,
        p.p90,
        p.p99,
        p.max,
        p.cpu_ms_per_ask,
        if p.bot_cpu_ms_per_ask > 0.0 { format!("{:.3}", p.bot_cpu_ms_per_ask) } else { "—".into() }
    );
}

fn median<T: Copy + PartialOrd>(runs: &[Figures], f: impl Fn(&Figures) -> T) -> T {
    let mut v: Vec<T> = runs.iter().map(f).collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--relay-floor") {
        return relay_floor::main();
    }
    let mut bin = "target/release/hal0".to_string();
    let mut runs = 3usize;
    let mut clients = 16usize;
    // `--only hal0|hermes-bridge|floor`: one relay.
    let mut only: Option<String> = None;
    let mut database: Option<String> = None;
    let mut mode = Mode { per_ask: false, replier: Replier::Concurrent, fresh: false, concurrent: CONCURRENT };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs needs a number"),
            "--clients" => clients = args.next().and_then(|v| v.parse().ok()).expect("--clients needs a number"),
            "--only" => only = args.next(),
            "--database" => database = args.next(),
            "--asker" => match args.next().as_deref() {
                Some("session") => {}
                Some("per-ask") => mode.per_ask = true,
                other => panic!("--asker takes session or per-ask, not {other:?}"),
            },
            "--replier" => {
                mode.replier = match args.next().as_deref() {
                    Some("concurrent") => Replier::Concurrent,
                    Some("serial") => Replier::Serial,
                    Some("per-reply") => Replier::PerReply,
                    Some("python") => Replier::Python,
                    other => panic!("--replier takes concurrent, serial, per-reply or python, not {other:?}"),
                }
            }
            "--fresh" => mode.fresh = true,
            "--asks" => mode.concurrent = args.next().and_then(|v| v.parse().ok()).expect("--asks needs a number"),
            a if a.starts_with("--") => {
                panic!(
                    "unknown option {a}; usage: bench_relay HAL0_BIN [--runs N] [--clients C] [--asker session|per-ask] \
                     [--replier concurrent|serial|per-reply|python] [--fresh] [--asks N]"
                )
            }
            _ => bin = a,
        }
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/bench_relay/peer.sh");
    let out = Command::new("bash").arg(script).stderr(Stdio::inherit()).output().unwrap();
    assert!(out.status.success(), "examples/bench_relay/peer.sh failed");
    let peer = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let (mut old, mut new, mut pair, mut floor) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    MODE.set(mode).unwrap();
    let asker = if mode.per_ask { "a session per ask" } else { "one session each" };
    let replier = match mode.replier {
        Replier::Concurrent => "every wake at once on one session",
        Replier::Serial => "one wake at a time",
        Replier::PerReply => "every wake at once, a session per reply",
        Replier::Python => "every wake at once from a Python bot (MCP SDK, one session)",
    };
    let conns = if mode.fresh { "a new connection per request" } else { "keep-alive" };
    println!(
        "bench_relay: {runs} run(s), {clients} concurrent askers ({asker}), bot B answers {replier}, {conns}, load {:?}",
        child::loadavg()
    );
    for i in 0..runs {
        // Alternate which relay goes first so a drift in machine load weighs on both alike.
        let order: [bool; 2] = if i % 2 == 0 { [true, false] } else { [false, true] };
        for is_peer in order {
            if only.as_deref().is_some_and(|o| o != if is_peer { "hermes-bridge" } else { "hal0" }) {
                continue;
            }
            let r = rt.block_on(async {
                let r = if is_peer { start_peer(&peer).await } else { start_hal0(&bin).await };
                let name = r.name;
                (name, measure(r, clients).await)
            });
            progress(i + 1, r.0, &r.1, clients);
            if is_peer { old.push(r.1) } else { new.push(r.1) }
        }
        if only.as_deref().is_none_or(|o| o == "floor") {
            let f = rt.block_on(async { measure(start_floor().await, clients).await });
            progress(i + 1, "floor relay", &f, clients);
            floor.push(f);
        }
        if let Some(url) = &database {
            let f = rt.block_on(async { measure(start_cluster(&bin, url).await, clients).await });
            progress(i + 1, "hal0 x2", &f, clients);
            pair.push(f);
        }
    }
    println!("\nMedians of {runs} run(s); latencies in ms, relay CPU in ms per ask.\n");
    println!("| relay | phase | asks/s | p50 | p90 | p99 | max | CPU/ask | bot B CPU/ask |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let both = [("hermes-bridge", &old), ("hal0", &new), ("hal0 x2 (PostgreSQL)", &pair), ("floor relay", &floor)];
    for (name, f) in both.iter().filter(|(_, f)| !f.is_empty()) {
        let m = |g: fn(&Figures) -> &Phase| Phase {
            per_s: median(f, |x| g(x).per_s),
            p50: median(f, |x| g(x).p50),
            p90: median(f, |x| g(x).p90),
            p99: median(f, |x| g(x).p99),
            max: median(f, |x| g(x).max),
            cpu_ms_per_ask: median(f, |x| g(x).cpu_ms_per_ask),
            bot_cpu_ms_per_ask: median(f, |x| g(x).bot_cpu_ms_per_ask),
        };
        row(name, &format!("sequential {SEQUENTIAL}"), &m(|x| &x.seq));
        row(name, &format!("{clients} concurrent, {}", mode.concurrent), &m(|x| &x.conc));
    }
    println!("\n| relay | RSS idle | idle + 2 bots | after load | peak (VmHWM) |");
    println!("|---|---|---|---|---|");
    for (name, f) in both.iter().filter(|(_, f)| !f.is_empty()) {
        let mib = |g: fn(&Figures) -> u64| median(f, g) as f64 / 1024.0;
        println!(
            "| {name} | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.1} MiB |",
            mib(|x| x.rss_idle),
            mib(|x| x.rss_bots),
            mib(|x| x.rss_load),
            mib(|x| x.rss_peak)
        );
    }
    for (name, f) in [("hal0", &new), ("hal0 x2 (PostgreSQL)", &pair)] {
        for f in f.iter() {
            println!("{name} history after SIGTERM: {} exchanges recorded, {} pending", f.recorded, f.pending);
        }
    }
    let rate = |f: &[Figures]| median(f, |x| x.conc.per_s);
    let cpu = |f: &[Figures]| median(f, |x| x.conc.cpu_ms_per_ask);
    println!();
    if !old.is_empty() && !new.is_empty() {
        println!("hal0 / hermes-bridge at {clients} askers: {:.1}x asks/s", rate(&new) / rate(&old));
    }
    if !old.is_empty() && !floor.is_empty() {
        println!(
            "floor relay / hermes-bridge at {clients} askers: {:.1}x asks/s (the most any relay shows on this machine)",
            rate(&floor) / rate(&old)
        );
    }
    if !new.is_empty() && !floor.is_empty() {
        println!(
            "hal0 at {clients} askers: {:.2} of the floor relay's asks/s, {:.2}x its CPU per ask",
            rate(&new) / rate(&floor),
            cpu(&new) / cpu(&floor)
        );
    }
}
