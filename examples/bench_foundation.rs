//! Benchmarks of the foundation (figures go into the closing note):
//! cold `hal0 bridge list` wall time, `tools/call` of a trivial tool over TCP (sequential
//! p50/p99 and 32 concurrent clients), idle RSS of `hal0 serve`, and RSS with 1000 open MCP
//! sessions.
//!
//! Run: `cargo build --release && cargo run --release --example bench_foundation -- target/release/hal0`
//!
//! The limits of a default install are raised first: this harness alone opens more than
//! 1000 connections and sessions from 127.0.0.1, past the default per-peer (64) and
//! per-key (128) bounds, which would refuse them (they did, and the run stopped).

#[path = "support/mod.rs"]
mod support;

use std::process::Command;
use std::time::{Duration, Instant};
use support::{Session, pct, rss_kib};

async fn version_info(s: &Session, id: u64) -> f64 {
    s.call(id, "version_info", serde_json::json!({"args": {}}), "\"uptime_s\"").await.0
}

#[tokio::main]
async fn main() {
    let bin = std::env::args().nth(1).unwrap_or_else(|| "target/release/hal0".into());
    let dir = tempfile::tempdir().unwrap();
    let envs = [("HAL0_CONFIG_DIR", dir.path().join("etc")), ("HAL0_STATE_DIR", dir.path().join("var"))];
    let run = |args: &[&str]| {
        let o = Command::new(&bin).args(args).envs(envs.iter().map(|(k, v)| (k, v))).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let out: serde_json::Value =
        serde_json::from_str(&run(&["bridge", "add", "bench", "--scope", "admin", "--json"])).unwrap();
    let key = out["key"].as_str().unwrap().to_string();
    for i in 0..20 {
        run(&["bridge", "add", &format!("c{i}"), "--json"]);
    }
    for (key, value) in [
        ("limits.max_connections_per_peer", "4096"),
        ("limits.max_sessions", "4096"),
        ("limits.max_sessions_per_key", "4096"),
    ] {
        run(&["config", "set", key, value]);
    }

    // Cold `hal0 bridge list` (a fresh process each time; 21 clients in the store).
    let mut walls: Vec<f64> = (0..50)
        .map(|_| {
            let t = Instant::now();
            run(&["bridge", "list", "--json"]);
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    println!(
        "bridge list (cold process, 50 runs): p50 {:.2} ms, p99 {:.2} ms",
        pct(&mut walls, 0.5),
        pct(&mut walls, 0.99)
    );

    let (child, base) = support::serve(&bin, &envs[0].1, &envs[1].1, &[]);
    let pid = child.id();
    // Killed however this ends, a panic included: a daemon left behind held the refresh
    // script's pipe open, which looked like a hang.
    let _child = support::KillOnDrop(child);
    tokio::time::sleep(Duration::from_millis(500)).await;
    println!("idle RSS of hal0 serve: {:.1} MiB", rss_kib(pid) as f64 / 1024.0);
    let url = format!("{base}/mcp/admin/mcp");

    // Sequential tools/call on one session.
    let s = Session::open(&url, &key).await;
    for i in 0..200 {
        version_info(&s, i).await;
    }
    let n = 5000;
    let t = Instant::now();
    let mut lat = Vec::with_capacity(n);
    for i in 0..n as u64 {
        lat.push(version_info(&s, 1000 + i).await);
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "tools/call version_info sequential ({n} calls): p50 {:.3} ms, p99 {:.3} ms, {:.0} calls/s",
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99),
        n as f64 / secs
    );

    // Admin tools/list (generated tools plus the memory delegates).
    let mut lists = Vec::new();
    for i in 0..1000u64 {
        let body = serde_json::json!({"jsonrpc":"2.0","id":100000 + i,"method":"tools/list","params":{}});
        let t = Instant::now();
        let text =
            support::post(&s.http, &s.url, &s.key, Some(&s.sid), body).send().await.unwrap().text().await.unwrap();
        lists.push(t.elapsed().as_secs_f64() * 1000.0);
        assert!(text.contains("version_info"));
    }
    println!(
        "hal0-admin tools/list (1000 calls): p50 {:.3} ms, p99 {:.3} ms",
        pct(&mut lists, 0.5),
        pct(&mut lists, 0.99)
    );

    // 32 concurrent clients, each on its own session and connection.
    let clients = 32;
    let per = 500;
    let mut sessions = Vec::new();
    for _ in 0..clients {
        sessions.push(Session::open(&url, &key).await);
    }
    let (mut all, secs) =
        support::concurrent(sessions, per as u64, "version_info", serde_json::json!({"args": {}}), "\"uptime_s\"")
            .await;
    println!(
        "tools/call with {clients} concurrent clients ({} calls): {:.0} calls/s, p50 {:.3} ms, p99 {:.3} ms",
        all.len(),
        all.len() as f64 / secs,
        pct(&mut all, 0.5),
        pct(&mut all, 0.99)
    );

    // 1000 open MCP sessions.
    let before = rss_kib(pid);
    let mut open = Vec::new();
    for _ in 0..1000 {
        open.push(Session::open(&url, &key).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = rss_kib(pid);
    println!(
        "RSS with 1000 open MCP sessions: {:.1} MiB (was {:.1} MiB; {:.1} KiB per session)",
        after as f64 / 1024.0,
        before as f64 / 1024.0,
        (after - before) as f64 / 1000.0
    );
    // Every session is still usable.
    assert!(version_info(&open[0], 1).await > 0.0 && version_info(&open[999], 1).await > 0.0);
}
