//! Benchmark of the audit log's hash chain (issue 37): what a chained entry costs beside
//! the same entry stored as before the chain, in one run on one machine.
//!
//! 1. floor: `--entries` rows stored with the INSERT hal0 used before the chain, each in its
//!    own `BEGIN IMMEDIATE` transaction, on a store made by `Store::open`;
//! 2. record: the same rows through `hal0::audit::record` (the row, its SHA-256 link read
//!    from the chain's head and appended, one transaction);
//! 3. begin+finish: a call that may change state: `audit::begin` (a `started` row, linked)
//!    then `audit::finish` (its outcome, linked), through the group-commit writer, one call
//!    after another;
//! 4. verify: `hal0::audit::chain::verify` over every row stored by 2 and 3.
//!
//! For each: µs per entry (wall), CPU µs per entry (this process's utime + stime from
//! `/proc/self/stat`, writer thread included) and bytes per entry (store growth after a
//! checkpoint). Run: `cargo run --release --example bench_audit [-- --entries 20000]`.

use hal0::audit::{self, Entry, Outcome, Verdict};
use hal0::store::Store;
use serde_json::json;
use std::path::Path;
use std::time::Instant;

/// This process's CPU time so far, in µs (user + system).
fn cpu_us() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks * 1e6 / 100.0
}

fn size(db: &Path) -> u64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    std::fs::metadata(db).map(|m| m.len()).unwrap_or(0)
}

struct Figure {
    name: &'static str,
    wall_us: f64,
    cpu_us: f64,
    bytes: f64,
}

fn measure(name: &'static str, db: &Path, n: u64, f: impl FnOnce()) -> Figure {
    let before = size(db);
    let (t, c) = (Instant::now(), cpu_us());
    f();
    let (wall, cpu) = (t.elapsed().as_secs_f64() * 1e6, cpu_us() - c);
    let grown = size(db).saturating_sub(before);
    Figure { name, wall_us: wall / n as f64, cpu_us: cpu / n as f64, bytes: grown as f64 / n as f64 }
}

fn main() {
    let mut n: u64 = 20_000;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--entries" => n = it.next().and_then(|v| v.parse().ok()).filter(|&v| v > 0).expect("--entries N"),
            "--bench" => {}
            _ => panic!("unknown option {a}; usage: bench_audit [--entries N]"),
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let args = json!({"server_id": "files", "path": "/srv/data/report.csv", "mode": "read", "limit": 200});
    let e = |verdict| Entry {
        surface: "mcp:proxy/files",
        tool: "read_file",
        identity: "consumer:files/hermes",
        arguments: &args,
        verdict,
        result_code: Some("ok"),
        approval_id: None,
        detail: None,
    };
    let text = args.to_string();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut figures = Vec::new();

    let floor_db = dir.path().join("floor.db");
    let floor = Store::open(&floor_db).unwrap();
    figures.push(measure("floor: one INSERT a transaction, no chain", &floor_db, n, || {
        floor
            .with(|c| {
                for _ in 0..n {
                    hal0::store::immediate(c, |c| {
                        c.prepare_cached(
                            "INSERT INTO audit_log (at, surface, tool, identity, arguments, verdict, result_code)
                             VALUES (strftime('%Y-%m-%dT%H:%M:%SZ'), 'mcp:proxy/files', 'read_file',
                                     'consumer:files/hermes', ?1, 'ok', 'ok')",
                        )?
                        .execute([&text])?;
                        Ok(())
                    })?;
                }
                Ok(())
            })
            .unwrap()
    }));

    let db = dir.path().join("hal0.db");
    let store = Store::open(&db).unwrap();
    figures.push(measure("record: row + chain link", &db, n, || {
        for _ in 0..n {
            audit::record(&store, &e(Verdict::Ok)).unwrap();
        }
    }));
    figures.push(measure("begin + finish: started row, outcome, two links", &db, n, || {
        rt.block_on(async {
            for _ in 0..n {
                let id = audit::begin(&store, &e(Verdict::Started)).await.unwrap();
                audit::finish(
                    &store,
                    Outcome { id, verdict: Verdict::Ok, result_code: Some("ok".into()), approval_id: None },
                );
            }
            audit::flush(&store).await;
        })
    }));
    let mut report = None;
    figures.push(measure("verify: per row walked", &db, 2 * n, || {
        report = Some(store.with(audit::chain::verify).unwrap());
    }));
    let report = report.unwrap();
    assert!(report.intact && report.rows == 2 * n, "{report:?}");

    println!(
        "audit chain, {n} entries per case; cores {}",
        std::thread::available_parallelism().map_or(1, |c| c.get())
    );
    println!("{:<52} {:>10} {:>10} {:>10}", "case", "µs/entry", "CPU µs", "bytes");
    for f in &figures {
        println!("{:<52} {:>10.1} {:>10.1} {:>10.0}", f.name, f.wall_us, f.cpu_us, f.bytes);
    }
    let json: Vec<_> = figures
        .iter()
        .map(|f| json!({"case": f.name, "us_per_entry": f.wall_us, "cpu_us_per_entry": f.cpu_us, "bytes_per_entry": f.bytes}))
        .collect();
    println!("{}", json!({"bench": "audit", "entries": n, "figures": json}));
}
