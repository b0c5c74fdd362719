//! Benchmark of a `hal0-admin` autonomous read against a bare rmcp server, side by side in
//! the same harness with the same client code (`support::Session`, a raw MCP session over
//! reqwest, one connection per session):
//!
//! - bare: the `echo` tool of an rmcp 3.11 streamable-HTTP server with nothing else
//!   (tests/it/support/upstream.rs), in a process of its own (this example re-executed with
//!   `--upstream`);
//! - hal0: `version_info` and `settings_get` on `/mcp/admin/mcp` of `hal0 serve`, which
//!   checks the bridge key, runs the operation (`crate::ops`) and writes an audit row per
//!   call.
//!
//! - bare, same document: the same `echo` given the text `settings_get` answers (read from
//!   hal0 once at the start), so `settings_get` is compared with a bare server that returns
//!   the same document (its request carries the document too).
//!
//! `--clients` concurrent sessions (default 16), rounds ordered bare, bare same document,
//! version_info, settings_get, settings_get, version_info, bare same document, bare so a
//! drift in machine load weighs on each alike; then one sequential session per target for
//! p50/p99.
//!
//! Run: `cargo build --release &&
//!       cargo run --release --example bench_admin -- target/release/hal0 [--calls N] [--clients 16]`

#[path = "support/child.rs"]
mod child;
#[path = "support/mod.rs"]
mod support;
#[path = "../tests/it/support/upstream.rs"]
mod upstream;

use child::{KillOnDrop, cpu_ms, loadavg};
use serde_json::{Value, json};
use support::{Session, pct};

/// One measured target: where, which tool with which arguments, and a text its answer holds.
#[derive(Clone, Copy)]
struct Target {
    label: &'static str,
    tool: &'static str,
    args: fn() -> Value,
    expect: &'static str,
}

const BARE: Target = Target { label: "bare rmcp echo", tool: "echo", args: || json!({"text": "x"}), expect: "x" };
const VERSION: Target =
    Target { label: "hal0-admin version_info", tool: "version_info", args: || json!({"args": {}}), expect: "uptime_s" };
const SETTINGS: Target =
    Target { label: "hal0-admin settings_get", tool: "settings_get", args: || json!({"args": {}}), expect: "running" };
/// The text of hal0's `settings_get` answer, read once at the start.
static DOCUMENT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
/// The bare server's `echo` of the same document that `settings_get` answers. The request
/// carries the document too, so this bare figure is, if anything, above a bare server's cost.
const BARE_DOC: Target = Target {
    label: "bare rmcp echo, same doc",
    tool: "echo",
    args: || json!({"text": DOCUMENT.get().expect("read at the start")}),
    expect: "running",
};

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--upstream") {
        return child::upstream_main();
    }
    let a = child::bench_args("bench_admin", 20_000, 16, &[]);
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(run(a.bin, a.calls, a.clients));
}

async fn open_warm(url: &str, key: &str, t: Target, clients: usize, warm: u64) -> Vec<Session> {
    support::open_warm(url, key, clients, warm, (t.tool, (t.args)(), t.expect)).await
}

async fn run(bin: String, calls: u64, clients: usize) {
    let load_start = loadavg();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let (upstream, bare_url) = child::spawn_upstream();

    let dir = tempfile::tempdir().unwrap();
    let (cfg, state) = (dir.path().join("etc"), dir.path().join("var"));
    let key = support::bridge_key(&bin, &cfg, &state, "bench", &["admin"]);
    let (server, base) = support::serve(&bin, &cfg, &state, &[]);
    let server = KillOnDrop(server);
    let admin_url = format!("{base}/mcp/admin/mcp");
    let url = |t: Target| if t.tool == "echo" { bare_url.clone() } else { admin_url.clone() };
    let probe = Session::open(&admin_url, &key).await;
    let (_, answer) = probe.call(0, SETTINGS.tool, (SETTINGS.args)(), SETTINGS.expect).await;
    let message: Value = answer
        .lines()
        .find_map(|l| serde_json::from_str(l.strip_prefix("data: ").unwrap_or(l)).ok())
        .expect("settings_get answered a JSON-RPC message");
    let document = message["result"]["content"][0]["text"].as_str().expect("settings_get's text").to_string();
    println!("settings_get: the answer is {} bytes, its text {} bytes", answer.len(), document.len());
    DOCUMENT.set(document).unwrap();

    // Concurrent rounds; each on fresh warmed sessions.
    let order = [BARE, BARE_DOC, VERSION, SETTINGS, SETTINGS, VERSION, BARE_DOC, BARE];
    let per = (calls / clients as u64 / 2).max(1);
    let warm = (per / 10).clamp(2, 20);
    // Per target: latencies, seconds, and the serving process's CPU milliseconds.
    let mut totals: Vec<(Target, Vec<f64>, f64, f64)> = vec![
        (BARE, vec![], 0.0, 0.0),
        (BARE_DOC, vec![], 0.0, 0.0),
        (VERSION, vec![], 0.0, 0.0),
        (SETTINGS, vec![], 0.0, 0.0),
    ];
    let pid = |t: Target| if t.tool == "echo" { upstream.0.id() } else { server.0.id() };
    for t in order {
        let sessions = open_warm(&url(t), &key, t, clients, warm).await;
        let cpu0 = cpu_ms(pid(t));
        let (lat, secs) = support::concurrent(sessions, per, t.tool, (t.args)(), t.expect).await;
        let cpu = cpu_ms(pid(t)) - cpu0;
        let e = totals.iter_mut().find(|(x, ..)| x.label == t.label).unwrap();
        e.1.extend(lat);
        e.2 += secs;
        e.3 += cpu;
    }
    // Sequential: one session per target, interleaved call by call.
    let seq_n = (calls / 4).max(100);
    let targets = [BARE, BARE_DOC, VERSION, SETTINGS];
    let seq: Vec<Session> = futures::future::join_all(targets.map(|t| {
        let u = url(t);
        let k = key.clone();
        async move { open_warm(&u, &k, t, 1, 50).await.pop().unwrap() }
    }))
    .await;
    let mut seq_lat = [vec![], vec![], vec![], vec![]];
    for i in 0..seq_n {
        for (j, t) in targets.into_iter().enumerate() {
            seq_lat[j].push(seq[j].call(i, t.tool, (t.args)(), t.expect).await.0);
        }
    }
    drop((seq, probe, server, upstream));
    let load_end = loadavg();

    let bare_rate = totals[0].1.len() as f64 / totals[0].2;
    println!("hal0-admin autonomous reads vs a bare rmcp server, same harness, same client code");
    println!("machine: {cores} cores, load average at start {load_start:?}, at end {load_end:?}");
    println!("{clients} concurrent sessions, {per} calls per session per round, rounds B,D,V,S,S,V,D,B:");
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let mut figures = serde_json::Map::new();
    for (j, (t, lat, secs, cpu)) in totals.iter_mut().enumerate() {
        let rate = lat.len() as f64 / *secs;
        let cpu_us = *cpu * 1000.0 / lat.len() as f64;
        let (p50, p99) = (pct(lat, 0.5), pct(lat, 0.99));
        let (s50, s99) = (pct(&mut seq_lat[j], 0.5), pct(&mut seq_lat[j], 0.99));
        println!(
            "  {:<26} {rate:>7.0} calls/s ({:.2} of bare)  server CPU {cpu_us:>4.0} µs/call  p50 {p50:.3} ms  p99 {p99:.3} ms | sequential p50 {s50:.3} ms  p99 {s99:.3} ms",
            t.label,
            rate / bare_rate
        );
        let name = if t.label == BARE_DOC.label { "echo_same_document" } else { t.tool };
        figures.insert(
            name.into(),
            json!({"calls_per_s": rate.round(), "ratio_to_bare": r3(rate / bare_rate), "server_cpu_us_per_call": cpu_us.round(), "p50_ms": r3(p50), "p99_ms": r3(p99),
                   "sequential_p50_ms": r3(s50), "sequential_p99_ms": r3(s99)}),
        );
    }
    println!(
        "{}",
        json!({"bench": "admin", "bin": bin, "clients": clients, "calls_per_target": totals[0].1.len(), "cores": cores,
               "figures": figures, "loadavg_start": load_start, "loadavg_end": load_end})
    );
}
