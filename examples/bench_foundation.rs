//! Benchmarks of the foundation (figures go into the closing note):
//! cold `hal0 bridge list` wall time, `tools/call` of a trivial tool over TCP (sequential
//! p50/p99 and 32 concurrent clients), idle RSS of `hal0 serve`, and RSS with 1000 open MCP
//! sessions.
//!
//! Run: `cargo build --release && cargo run --release --example bench_foundation -- target/release/hal0`

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn rss_kib(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines().find(|l| l.starts_with("VmRSS:")).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap()
}

struct Session {
    http: reqwest::Client,
    url: String,
    key: String,
    sid: String,
}

fn post(
    http: &reqwest::Client,
    url: &str,
    key: &str,
    sid: Option<&str>,
    body: serde_json::Value,
) -> reqwest::RequestBuilder {
    let mut r = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {key}"))
        .json(&body);
    if let Some(s) = sid {
        r = r.header("mcp-session-id", s);
    }
    r
}

impl Session {
    async fn open(url: &str, key: &str) -> Session {
        let http = reqwest::Client::new();
        let init = serde_json::json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}});
        let r = post(&http, url, key, None, init).send().await.unwrap();
        let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
        let _ = r.text().await.unwrap();
        let n = serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        post(&http, url, key, Some(&sid), n).send().await.unwrap();
        Session { http, url: url.into(), key: key.into(), sid }
    }

    async fn call(&self, id: u64) -> f64 {
        let body = serde_json::json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"version_info","arguments":{"args":{}}}});
        let t = Instant::now();
        let text =
            post(&self.http, &self.url, &self.key, Some(&self.sid), body).send().await.unwrap().text().await.unwrap();
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        assert!(text.contains("\"uptime_s\""), "unexpected reply: {text}");
        ms
    }
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

    let mut child = Command::new(&bin)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .envs(envs.iter().map(|(k, v)| (k, v)))
        .env("HAL0_LOG", "warn")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = loop {
        let l = lines.next().unwrap().unwrap();
        if let Some(b) = l.strip_prefix("hal0: listening on ") {
            break b.to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    tokio::time::sleep(Duration::from_millis(500)).await;
    println!("idle RSS of hal0 serve: {:.1} MiB", rss_kib(pid) as f64 / 1024.0);
    let url = format!("{base}/mcp/admin/mcp");

    // Sequential tools/call on one session.
    let s = Session::open(&url, &key).await;
    for i in 0..200 {
        s.call(i).await;
    }
    let n = 5000;
    let t = Instant::now();
    let mut lat = Vec::with_capacity(n);
    for i in 0..n as u64 {
        lat.push(s.call(1000 + i).await);
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "tools/call version_info sequential ({n} calls): p50 {:.3} ms, p99 {:.3} ms, {:.0} calls/s",
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99),
        n as f64 / secs
    );

    // 32 concurrent clients, each on its own session and connection.
    let clients = 32;
    let per = 500;
    let mut sessions = Vec::new();
    for _ in 0..clients {
        sessions.push(Session::open(&url, &key).await);
    }
    let t = Instant::now();
    let handles: Vec<_> = sessions
        .into_iter()
        .map(|s| {
            tokio::spawn(async move {
                let mut v = Vec::with_capacity(per);
                for i in 0..per as u64 {
                    v.push(s.call(i).await);
                }
                v
            })
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.await.unwrap());
    }
    let secs = t.elapsed().as_secs_f64();
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
    assert!(open[0].call(1).await > 0.0 && open[999].call(1).await > 0.0);
    let _ = child.kill();
    let _ = child.wait();
}
