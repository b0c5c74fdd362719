//! Benchmark of the OAuth token path against the bridge-key path, side by side in the same
//! harness with the same client code (`support::Session`, one connection per session):
//!
//! - key: `version_info` on `/mcp/admin/mcp` with a bridge key (resolved once, then from
//!   the key cache);
//! - token: the same call on `/oauth/admin/mcp` with an OAuth access token (a store lookup
//!   per request: a token is never cached, so an expiry or a revocation holds at once).
//!
//! The token is obtained as a client would: dynamic registration, authorize, a person's
//! approval (a dashboard session opened with a `hal0 ui login` link), the code exchanged
//! with PKCE. Rounds K, T, T, K so a drift in machine load weighs on each alike; then one
//! sequential session per path for p50/p99.
//!
//! Run: `cargo build --release &&
//!       cargo run --release --example bench_oauth -- target/release/hal0 [--calls N] [--clients 16]`

#[path = "support/child.rs"]
mod child;
#[path = "support/mod.rs"]
mod support;
#[path = "../tests/it/support/upstream.rs"]
mod upstream;

use child::{KillOnDrop, cpu_ms, loadavg};
use serde_json::{Value, json};
use support::{Session, pct};

const TOOL: &str = "version_info";
const EXPECT: &str = "uptime_s";
/// A fixed PKCE pair: CHALLENGE is base64url(sha256(VERIFIER)), no padding.
const VERIFIER: &str = "dBjftJeZ4CVP-mJ92K1F5iYc5Bv6NZuZz4lTzb8Zfrk";
const CHALLENGE: &str = "pjijPwDN78Mc6iSo6CJl0wrU3sLtvxnae5BXDY6pmhs";

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--upstream") {
        return child::upstream_main();
    }
    let a = child::bench_args("bench_oauth", 20_000, 16, &[]);
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(run(a.bin, a.calls, a.clients));
}

fn args() -> Value {
    json!({"args": {}})
}

/// An access token for `/oauth/admin/mcp`, the way a client and a person get one.
async fn token(bin: &str, cfg: &std::path::Path, state: &std::path::Path, base: &str) -> String {
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let reg: Value = http
        .post(format!("{base}/oauth/register"))
        .json(&json!({"redirect_uris": ["http://127.0.0.1:9/cb"], "client_name": "bench", "token_endpoint_auth_method": "none"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client = reg["client_id"].as_str().unwrap().to_string();
    let mut u = reqwest::Url::parse(&format!("{base}/oauth/authorize")).unwrap();
    u.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &client)
        .append_pair("redirect_uri", "http://127.0.0.1:9/cb")
        .append_pair("code_challenge", CHALLENGE)
        .append_pair("code_challenge_method", "S256")
        .append_pair("resource", &format!("{base}/oauth/admin/mcp"));
    let r = http.get(u).send().await.unwrap();
    let id = r.headers()["location"].to_str().unwrap().rsplit('/').next().unwrap().to_string();
    let link: Value =
        serde_json::from_slice(&support::hal0(bin, cfg, state, &["ui", "login", "--json"]).stdout).unwrap();
    let link = link["url"].as_str().unwrap();
    let login = http
        .post(format!("{base}/ui/login"))
        .json(&json!({"token": link.split_once("token=").unwrap().1}))
        .send()
        .await
        .unwrap();
    let cookie = login.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string();
    let v: Value = http
        .get(format!("{base}/oauth/requests/{id}"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let csrf = v["csrf"].as_str().unwrap().to_string();
    let v: Value = http
        .post(format!("{base}/oauth/requests/{id}/approve"))
        .header("cookie", &cookie)
        .header("x-csrf-token", csrf)
        .json(&json!({"scopes": ["admin"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let back = reqwest::Url::parse(v["redirect"].as_str().unwrap()).unwrap();
    let code = back.query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();
    let form = reqwest::Url::parse_with_params(
        "http://x/",
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client),
            ("redirect_uri", "http://127.0.0.1:9/cb"),
            ("code_verifier", VERIFIER),
        ],
    )
    .unwrap();
    let t: Value = http
        .post(format!("{base}/oauth/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form.query().unwrap().to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    t["access_token"].as_str().unwrap_or_else(|| panic!("no token: {t}")).to_string()
}

async fn run(bin: String, calls: u64, clients: usize) {
    let load_start = loadavg();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let dir = tempfile::tempdir().unwrap();
    let (cfg, state) = (dir.path().join("etc"), dir.path().join("var"));
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    for (k, v) in [("network.public_url", format!("http://127.0.0.1:{port}")), ("oauth.enabled", "true".into())] {
        support::hal0(&bin, &cfg, &state, &["config", "set", k, &v]);
    }
    support::hal0(&bin, &cfg, &state, &["auth", "rotate", "admin", "--yes"]);
    let key = support::bridge_key(&bin, &cfg, &state, "bench", &["admin"]);
    let (server, base) = support::serve_at(&bin, &cfg, &state, &format!("127.0.0.1:{port}"), &[]);
    let server = KillOnDrop(server);
    let tok = token(&bin, &cfg, &state, &base).await;
    let paths =
        [("bridge key", format!("{base}/mcp/admin/mcp"), key), ("OAuth token", format!("{base}/oauth/admin/mcp"), tok)];

    let per = (calls / clients as u64 / 2).max(1);
    let warm = (per / 10).clamp(2, 20);
    let mut totals: Vec<(Vec<f64>, f64, f64)> = vec![(vec![], 0.0, 0.0), (vec![], 0.0, 0.0)];
    for j in [0, 1, 1, 0] {
        let (_, url, cred) = &paths[j];
        let sessions = support::open_warm(url, cred, clients, warm, (TOOL, args(), EXPECT)).await;
        let cpu0 = cpu_ms(server.0.id());
        let (lat, secs) = support::concurrent(sessions, per, TOOL, args(), EXPECT).await;
        let cpu = cpu_ms(server.0.id()) - cpu0;
        totals[j].0.extend(lat);
        totals[j].1 += secs;
        totals[j].2 += cpu;
    }
    let seq_n = (calls / 4).max(100);
    let mut seq: Vec<Session> = Vec::new();
    for (_, url, cred) in &paths {
        seq.push(support::open_warm(url, cred, 1, 50, (TOOL, args(), EXPECT)).await.pop().unwrap());
    }
    let mut seq_lat = [vec![], vec![]];
    for i in 0..seq_n {
        for j in 0..2 {
            seq_lat[j].push(seq[j].call(i, TOOL, args(), EXPECT).await.0);
        }
    }
    drop((seq, server));
    let load_end = loadavg();

    println!("hal0-admin version_info with a bridge key vs an OAuth token, same harness, same client code");
    println!("machine: {cores} cores, load average at start {load_start:?}, at end {load_end:?}");
    println!("{clients} concurrent sessions, {per} calls per session per round, rounds K,T,T,K:");
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let mut figures = serde_json::Map::new();
    for (j, (lat, secs, cpu)) in totals.iter_mut().enumerate() {
        let rate = lat.len() as f64 / *secs;
        let cpu_us = *cpu * 1000.0 / lat.len() as f64;
        let (p50, p99) = (pct(lat, 0.5), pct(lat, 0.99));
        let (s50, s99) = (pct(&mut seq_lat[j], 0.5), pct(&mut seq_lat[j], 0.99));
        println!(
            "  {:<12} {rate:>7.0} calls/s  server CPU {cpu_us:>4.0} µs/call  p50 {p50:.3} ms  p99 {p99:.3} ms | sequential p50 {s50:.3} ms  p99 {s99:.3} ms",
            paths[j].0
        );
        figures.insert(
            paths[j].0.into(),
            json!({"calls_per_s": rate.round(), "server_cpu_us_per_call": cpu_us.round(), "p50_ms": r3(p50), "p99_ms": r3(p99),
                   "sequential_p50_ms": r3(s50), "sequential_p99_ms": r3(s99)}),
        );
    }
    println!(
        "{}",
        json!({"bench": "oauth", "bin": bin, "clients": clients, "calls_per_path": totals[0].0.len(), "cores": cores,
               "figures": figures, "loadavg_start": load_start, "loadavg_end": load_end})
    );
}
