//! Benchmarks of the agent bridge (figures go into the closing note), against the
//! in-process fake Hermes 0.19.0 from tests/it/support:
//! `agent_run_status` tools/call p50/p99 and calls/s (sequential and 32 clients), hal0's
//! added latency on `agent_run` over a direct `POST /v1/runs`, the time to read a
//! 500-event page with `agent_run_events`, and the same finished run read three ways
//! (MCP `agent_run_status`, A2A `GetTask` over JSON-RPC and over HTTP+JSON) with hal0's
//! CPU per read from `/proc`.
//!
//! Run: `cargo build --release && cargo run --release --example bench_bridge -- target/release/hal0`

#[path = "../tests/it/support/fake_hermes.rs"]
mod fake_hermes;
#[path = "support/mod.rs"]
mod support;

use fake_hermes::{FakeHermes, FakeHermesOptions};
use serde_json::json;
use std::time::Instant;
use support::{Session, pct};

#[tokio::main(flavor = "multi_thread", worker_threads = 1)]
async fn main() {
    let bin = std::env::args().nth(1).unwrap_or_else(|| "target/release/hal0".into());
    let hermes = FakeHermes::start(FakeHermesOptions { max_concurrent_runs: 0, ..Default::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let (cfg, state, home) = (dir.path().join("etc"), dir.path().join("var"), dir.path().join("hermes"));
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.yaml"),
        format!("platforms:\n  api_server:\n    extra:\n      port: {}\n      key: {}\n", hermes.port(), hermes.key()),
    )
    .unwrap();
    std::fs::write(
        cfg.join("hal0.toml"),
        format!("[bridge]\nmax_concurrent_runs_per_client = 100000\n[hermes]\nhome = \"{}\"\n", home.display()),
    )
    .unwrap();
    let key = support::bridge_key(&bin, &cfg, &state, "bench", &[]);

    // A 500-event run written straight into the ledger (mixed text and tool events).
    let store = hal0::store::Store::open(&state.join("hal0.db")).unwrap();
    let run = hal0::bridge::ledger::Run {
        run_id: "run_bench500".into(),
        agent: "hermes".into(),
        profile: "default".into(),
        client: "bench".into(),
        status: hal0::bridge::ledger::RunStatus::Completed,
        input_preview: "bench".into(),
        fingerprint: "x".into(),
        finished: true,
        ..hal0::bridge::ledger::Run::queued(hal0::store::now())
    };
    hal0::bridge::ledger::insert(&store, &run).unwrap();
    let events: Vec<(String, serde_json::Value)> = (0..500)
        .map(|i| {
            if i % 5 == 4 {
                ("tool.completed".to_string(), json!({"tool": "terminal", "duration": 0.1, "error": false, "timestamp": 1.0}))
            } else {
                ("message.text".to_string(), json!({"text": format!("line {i}: {} HF_TOKEN=hf_abcdefghijklmnopqrstuv{i:04}\n", "lorem ipsum dolor sit amet ".repeat(6)), "timestamp": 1.0}))
            }
        })
        .collect();
    hal0::bridge::ledger::apply(&store, "run_bench500", &hal0::bridge::ledger::Update { events, ..Default::default() })
        .unwrap();
    drop(store);

    let (mut child, base) = support::serve(&bin, &cfg, &state, &[]);
    let url = format!("{base}/mcp/agents/mcp");
    let s = Session::open(&url, &key).await;

    // A finished run to read.
    let (_, text) =
        s.call(1, "agent_run", json!({"agent": "hermes", "input": "BIG:40000", "wait_s": 60}), "run_").await;
    let run_id = text.split("\\\"run_id\\\":\\\"").nth(1).or_else(|| text.split("\"run_id\":\"").nth(1)).unwrap();
    let run_id: String = run_id.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();

    let status = |id: u64| {
        let s = &s;
        let run_id = run_id.clone();
        async move { s.call(id, "agent_run_status", json!({"run_id": run_id}), "output_total").await.0 }
    };
    for i in 0..200 {
        status(10 + i).await;
    }
    let n = 3000;
    let t = Instant::now();
    let mut lat = Vec::new();
    for i in 0..n {
        lat.push(status(1000 + i).await);
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "agent_run_status (16 KiB window of a 40 KB output) sequential, {n} calls: p50 {:.3} ms, p99 {:.3} ms, {:.0} calls/s",
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99),
        n as f64 / secs
    );
    let mut sessions = Vec::new();
    for _ in 0..32 {
        sessions.push(Session::open(&url, &key).await);
    }
    let (mut all, secs) =
        support::concurrent(sessions, 200, "agent_run_status", json!({"run_id": run_id}), "output_total").await;
    println!(
        "agent_run_status with 32 concurrent clients, {} calls: {:.0} calls/s, p50 {:.3} ms, p99 {:.3} ms",
        all.len(),
        all.len() as f64 / secs,
        pct(&mut all, 0.5),
        pct(&mut all, 0.99)
    );

    // agent_run through hal0 vs a direct POST /v1/runs, interleaved.
    let http = reqwest::Client::new();
    let (mut direct, mut via) = (Vec::new(), Vec::new());
    for i in 0..300u64 {
        let t = Instant::now();
        let r = http
            .post(hermes.url("/v1/runs"))
            .bearer_auth(hermes.key())
            .json(&json!({"input": "x"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 202);
        let _ = r.text().await;
        direct.push(t.elapsed().as_secs_f64() * 1000.0);
        via.push(s.call(5000 + i, "agent_run", json!({"agent": "hermes", "input": "x"}), "run_id").await.0);
    }
    let (d50, d99, v50, v99) = (pct(&mut direct, 0.5), pct(&mut direct, 0.99), pct(&mut via, 0.5), pct(&mut via, 0.99));
    println!(
        "start a run, 300 each: direct POST /v1/runs p50 {d50:.3} ms p99 {d99:.3} ms; agent_run via hal0 p50 {v50:.3} ms p99 {v99:.3} ms; added p50 {:.3} ms",
        v50 - d50
    );

    // A 500-event page.
    let mut page = Vec::new();
    for i in 0..50u64 {
        let (ms, text) =
            s.call(9000 + i, "agent_run_events", json!({"run_id": "run_bench500", "limit": 500}), "last_seq").await;
        assert!(text.contains("\\\"seq\\\":500") || text.contains("\"seq\":500"), "a full page");
        assert!(!text.contains("hf_abcdefghijklmnopqrstuv0001"), "masked");
        page.push(ms);
    }
    println!(
        "agent_run_events page of 500 events (50 reads): p50 {:.2} ms, p99 {:.2} ms",
        pct(&mut page, 0.5),
        pct(&mut page, 0.99)
    );
    // The same finished run read three ways, sequentially; hal0's CPU per read.
    let pid = child.id();
    let a2a = reqwest::Client::builder().tcp_nodelay(true).build().unwrap();
    let n = 2000u64;
    let mut rows = Vec::new();
    for way in ["mcp agent_run_status", "a2a GetTask (JSON-RPC)", "a2a GetTask (HTTP+JSON)"] {
        let read = |i: u64| {
            let (s, a2a, run_id, base, key) = (&s, &a2a, run_id.clone(), base.clone(), key.clone());
            async move {
                match way {
                    "mcp agent_run_status" => {
                        s.call(i, "agent_run_status", json!({"run_id": run_id}), "output_total").await.0
                    }
                    "a2a GetTask (JSON-RPC)" => {
                        let body = json!({"jsonrpc": "2.0", "id": i, "method": "GetTask", "params": {"id": run_id}});
                        let t = Instant::now();
                        let r = a2a
                            .post(format!("{base}/a2a/hermes"))
                            .bearer_auth(&key)
                            .header("A2A-Version", "1.0")
                            .json(&body)
                            .send()
                            .await
                            .unwrap();
                        let text = r.text().await.unwrap();
                        assert!(text.contains("TASK_STATE_COMPLETED"), "{}", &text[..text.len().min(300)]);
                        t.elapsed().as_secs_f64() * 1000.0
                    }
                    _ => {
                        let t = Instant::now();
                        let r = a2a
                            .get(format!("{base}/a2a/rest/hermes/tasks/{run_id}"))
                            .bearer_auth(&key)
                            .header("A2A-Version", "1.0")
                            .send()
                            .await
                            .unwrap();
                        let text = r.text().await.unwrap();
                        assert!(text.contains("TASK_STATE_COMPLETED"), "{}", &text[..text.len().min(300)]);
                        t.elapsed().as_secs_f64() * 1000.0
                    }
                }
            }
        };
        for i in 0..200 {
            read(20_000 + i).await;
        }
        let cpu0 = support::cpu_ms(pid);
        let mut lat = Vec::new();
        for i in 0..n {
            lat.push(read(30_000 + i).await);
        }
        let cpu_us = (support::cpu_ms(pid) - cpu0) * 1000.0 / n as f64;
        rows.push(format!(
            "{way}, {n} reads of a 40 KB run: p50 {:.3} ms, p99 {:.3} ms, hal0 CPU {cpu_us:.0} µs per read",
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99)
        ));
    }
    for r in rows {
        println!("{r}");
    }
    let _ = child.kill();
    let _ = child.wait();
}
