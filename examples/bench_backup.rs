//! Benchmark of `hal0 backup` and `hal0 restore` on a large store (issue 17's figures):
//!
//! 1. a store with `--rows` audit rows (default 2 M, about 160 bytes of arguments each,
//!    written straight into a store made by `Store::open`) and a running `hal0 serve`;
//! 2. `--clients` sessions calling `version_info` on `/mcp/admin/mcp` (each call writes an
//!    audit row) for `--secs` seconds: the baseline latencies and calls/s;
//! 3. the same load while `hal0 backup` runs: its wall time, the archive's size, and the
//!    calls' latencies and calls/s meanwhile (what a backup costs the daemon);
//! 4. `hal0 restore --yes` of that archive into fresh dirs (wall time), and a daemon on the
//!    restored dirs answering the same admin key.
//!
//! Run: `cargo build --release --bin hal0 --example bench_backup &&
//!       target/release/examples/bench_backup target/release/hal0 [--rows 2000000]
//!       [--clients 4] [--secs 5]`

#[path = "support/mod.rs"]
mod support;

use hal0::store::Store;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::{Session, hal0, pct};

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map(|v| v.parse().unwrap()).unwrap_or(default)
}

/// `n` audit rows of the last 30 days, in transactions of 50 000.
fn fill(store: &Store, n: u64) {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut done = 0;
    while done < n {
        let batch = (n - done).min(50_000);
        store
            .with(|c| {
                let tx = c.transaction()?;
                {
                    let mut st = tx.prepare(
                        "INSERT INTO audit_log (at, surface, tool, identity, arguments, verdict) VALUES (?1, 'mcp:admin', ?2, ?3, ?4, 'ok')",
                    )?;
                    for i in done..done + batch {
                        let at = time::OffsetDateTime::from_unix_timestamp(now - 30 * 86_400 + (i as i64 * 2_592_000 / n as i64))
                            .unwrap()
                            .format(&time::format_description::well_known::Rfc3339)
                            .unwrap();
                        let args = json!({"query": format!("row {i} of the benchmark"), "pad": "x".repeat(120)}).to_string();
                        st.execute(rusqlite::params![at, format!("tool_{}", i % 40), format!("bridge:c{}", i % 50), args])?;
                    }
                }
                tx.commit()?;
                Ok(())
            })
            .unwrap();
        done += batch;
    }
}

/// Every session calls `version_info` until `stop`; every latency (ms) and the calls.
async fn load(sessions: Arc<Vec<Session>>, stop: Arc<AtomicBool>) -> Vec<f64> {
    let handles: Vec<_> = (0..sessions.len())
        .map(|i| {
            let (sessions, stop) = (sessions.clone(), stop.clone());
            tokio::spawn(async move {
                let mut v = Vec::new();
                let mut id = 0;
                while !stop.load(Ordering::Relaxed) {
                    id += 1;
                    v.push(sessions[i].call(id, "version_info", json!({}), "version").await.0);
                }
                v
            })
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.await.unwrap());
    }
    all
}

fn report(label: &str, mut lat: Vec<f64>, secs: f64) {
    let n = lat.len();
    println!(
        "{label}: {n} calls in {secs:.1} s = {:.0} calls/s; p50 {:.2} ms, p99 {:.2} ms, max {:.1} ms",
        n as f64 / secs,
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99),
        pct(&mut lat, 1.0)
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bin = args.get(1).cloned().expect("usage: bench_backup PATH_TO_HAL0 [--rows N] [--clients N] [--secs N]");
    let rows = arg(&args, "--rows", 2_000_000);
    let clients = arg(&args, "--clients", 4) as usize;
    let secs = arg(&args, "--secs", 5);
    let dir = tempfile::tempdir().unwrap();
    let (cfg, state) = (dir.path().join("etc"), dir.path().join("var"));

    let out = hal0(&bin, &cfg, &state, &["auth", "rotate", "admin", "--yes", "--json"]);
    let admin = serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["key"].as_str().unwrap().to_string();
    let t = Instant::now();
    let store = Store::open(&state.join("hal0.db")).unwrap();
    fill(&store, rows);
    store.with(|c| Ok(c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?)).unwrap();
    drop(store);
    let db_bytes = std::fs::metadata(state.join("hal0.db")).unwrap().len();
    println!(
        "store: {rows} audit rows, {:.0} MiB (filled in {:.1} s)",
        db_bytes as f64 / 1048576.0,
        t.elapsed().as_secs_f64()
    );

    let (mut daemon, base) = support::serve(&bin, &cfg, &state, &[]);
    let url = format!("{base}/mcp/admin/mcp");
    let mut sessions = Vec::new();
    for _ in 0..clients {
        sessions.push(Session::open(&url, &admin).await);
    }
    let sessions = Arc::new(sessions);

    // Baseline.
    let stop = Arc::new(AtomicBool::new(false));
    let running = tokio::spawn(load(sessions.clone(), stop.clone()));
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    report("baseline (no backup)", running.await.unwrap(), secs as f64);

    // The same load while a backup runs.
    let archive = dir.path().join("box.tar.gz");
    let stop = Arc::new(AtomicBool::new(false));
    let running = tokio::spawn(load(sessions.clone(), stop.clone()));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = Instant::now();
    let (b, c, s, a) = (bin.clone(), cfg.clone(), state.clone(), archive.clone());
    tokio::task::spawn_blocking(move || hal0(&b, &c, &s, &["backup", a.to_str().unwrap()])).await.unwrap();
    let backup_secs = t.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let during = running.await.unwrap();
    let archive_bytes = std::fs::metadata(&archive).unwrap().len();
    println!(
        "backup: {backup_secs:.2} s wall, archive {:.0} MiB ({:.0}% of the store), {:.0} MiB/s of store",
        archive_bytes as f64 / 1048576.0,
        archive_bytes as f64 * 100.0 / db_bytes as f64,
        db_bytes as f64 / 1048576.0 / backup_secs
    );
    report("calls during the backup", during, backup_secs + 0.2);
    let _ = daemon.kill();
    let _ = daemon.wait();

    // Restore into a fresh box and serve the same key from it.
    let (cfg2, state2) = (dir.path().join("etc2"), dir.path().join("var2"));
    let t = Instant::now();
    hal0(&bin, &cfg2, &state2, &["restore", archive.to_str().unwrap(), "--yes"]);
    println!("restore into a fresh box: {:.2} s wall", t.elapsed().as_secs_f64());
    let (mut daemon, base) = support::serve(&bin, &cfg2, &state2, &[]);
    let s = Session::open(&format!("{base}/mcp/admin/mcp"), &admin).await;
    s.call(1, "version_info", json!({}), "version").await;
    println!("the restored daemon answers the same admin key");
    let _ = daemon.kill();
    let _ = daemon.wait();
}
