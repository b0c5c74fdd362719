//! Soak of `hal0 serve` under mixed load with SIGKILLs (issue 10): for `--minutes`, several
//! MCP clients (the rmcp client over TCP) run bridge runs against the fake Hermes, memory
//! adds/searches/deletes (shared and private), proxied calls of an allowed and of a gated
//! tool on an rmcp upstream, while an operator decides approvals at the CLI; every
//! `--kill-every-secs` (±25 %) the daemon gets SIGKILL and is started again on the same
//! dirs. Clients retry through the outage; a write counts only when its answer arrived.
//!
//! At the end the daemon is killed once more and the store (opened read-only) must hold
//! every acknowledged run, event, note, approval, decision and audited call; then a last
//! life lets recovery settle the unfinished runs, whose events are checked too. Printed:
//! load counts, kills, lost items per kind (must be 0), RSS per life, p50/p99 per call
//! kind, errors by code during outages and outside them. Exit 1 if anything was lost.
//!
//! Run: `cargo build --release --example soak --bin hal0 &&
//!       cargo run --release --example soak -- --minutes 30 [--kill-every-secs 180] [--bin target/release/hal0]`
//! Smoke: `--minutes 1` (kills every 20 s unless told). Loopback only; stops by itself.

#[path = "soak_parts/client.rs"]
mod client;
#[path = "soak_parts/daemon.rs"]
mod daemon;
#[path = "../tests/it/support/fake_hermes.rs"]
mod fake_hermes;
#[path = "soak_parts/ledger.rs"]
mod ledger;
#[path = "soak_parts/load.rs"]
mod load;
#[path = "soak_parts/rng.rs"]
mod rng;
#[path = "support/mod.rs"]
mod support;
#[path = "../tests/it/support/upstream.rs"]
mod upstream;
#[path = "soak_parts/verify.rs"]
mod verify;

use daemon::{Daemon, Life};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::pct;

struct Args {
    minutes: f64,
    kill_every: Duration,
    bin: String,
    seed: u64,
    /// Keep the soak's dirs (config, store, daemon log) even when nothing was lost.
    keep: bool,
}

fn args() -> Args {
    let usage = "usage: soak --minutes N [--kill-every-secs S] [--bin PATH] [--seed N] [--keep]";
    let (mut minutes, mut kill, mut bin, mut seed, mut keep) =
        (None, None, "target/release/hal0".to_string(), 1u64, false);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| panic!("{a} needs a value; {usage}"));
        match a.as_str() {
            "--minutes" => minutes = Some(val().parse::<f64>().expect("--minutes: a number")),
            "--kill-every-secs" => kill = Some(val().parse::<u64>().expect("--kill-every-secs: a number")),
            "--bin" => bin = val(),
            "--seed" => seed = val().parse().expect("--seed: a number"),
            "--keep" => keep = true,
            _ => panic!("unknown argument {a}; {usage}"),
        }
    }
    let minutes = minutes.filter(|m| *m > 0.0 && *m <= 24.0 * 60.0).expect("--minutes between 0 and 1440");
    let kill = kill.unwrap_or(if minutes <= 2.0 { 20 } else { 180 }).max(5);
    Args { minutes, kill_every: Duration::from_secs(kill), bin, seed, keep }
}

/// Run the hal0 CLI on the soak's dirs; its stdout (panics unless it exits 0).
fn hal0(bin: &str, cfg: &Path, state: &Path, args: &[&str]) -> String {
    let o = Command::new(bin)
        .args(args)
        .env("HAL0_CONFIG_DIR", cfg)
        .env("HAL0_STATE_DIR", state)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {bin}: {e}"));
    assert!(o.status.success(), "hal0 {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn main() {
    let a = args();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let code = rt.block_on(soak(a));
    rt.shutdown_timeout(Duration::from_secs(5));
    std::process::exit(code);
}

async fn soak(a: Args) -> i32 {
    let started = Instant::now();
    let dir = tempfile::Builder::new().prefix("hal0-soak-").tempdir().unwrap();
    let (cfg, state, home) = (dir.path().join("etc"), dir.path().join("var"), dir.path().join("hermes"));
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::create_dir_all(&home).unwrap();

    // The fake Hermes: no cap on active runs; approvals wait for the operator.
    let hermes = fake_hermes::FakeHermes::start(fake_hermes::FakeHermesOptions {
        max_concurrent_runs: 0,
        approval_timeout: None,
        ..Default::default()
    })
    .await;
    std::fs::write(
        home.join("config.yaml"),
        format!("platforms:\n  api_server:\n    extra:\n      port: {}\n      key: {}\n", hermes.port(), hermes.key()),
    )
    .unwrap();
    std::fs::write(
        cfg.join("hal0.toml"),
        format!(
            "[bridge]\nmax_concurrent_runs_per_client = 100000\n[hermes]\nhome = \"{}\"\n[mcp]\ngate_wait_secs = 0\n",
            home.display()
        ),
    )
    .unwrap();
    let cli = |args: &[&str]| hal0(&a.bin, &cfg, &state, args);
    let key_of = |out: String| serde_json::from_str::<Value>(&out).unwrap()["key"].as_str().unwrap().to_string();
    let bridge_key = key_of(cli(&["bridge", "add", "soak", "--json"]));

    // The upstream behind the proxy: `echo` allowed, `add` gated.
    let up = upstream::RmcpUpstream::start().await;
    cli(&["mcp", "install", &up.url(), "--id", "up"]);
    cli(&["mcp", "allow", "up", "echo"]);
    cli(&["mcp", "gate", "up", "add"]);
    let proxy_key = key_of(cli(&["mcp", "keys", "add", "up", "soak", "--json"]));

    let log = std::env::temp_dir().join(format!("hal0-soak-daemon-{}.log", std::process::id()));
    let (mut d, up_rx) = Daemon::new(&a.bin, cfg.clone(), state.clone(), log.clone());
    d.start();
    let outages = d.outages.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let (every, seed, stop2) = (a.kill_every, a.seed, stop.clone());
    let chaos = std::thread::spawn(move || daemon::chaos(d, every, Duration::from_secs(1), stop2, seed));

    let load_for = Duration::from_secs_f64(a.minutes * 60.0);
    let sh = Arc::new(load::Shared {
        up: up_rx,
        ledger: Mutex::new(Default::default()),
        stats: Default::default(),
        deadline: Instant::now() + load_for,
        max_ops: 1_000_000,
        bridge_key,
        proxy_key,
        bin: a.bin.clone(),
        cfg: cfg.clone(),
        state: state.clone(),
    });
    eprintln!(
        "soak: {} min of load, SIGKILL every ~{} s, daemon log {}, dirs {}",
        a.minutes,
        a.kill_every.as_secs(),
        log.display(),
        dir.path().display()
    );
    let mut tasks = tokio::task::JoinSet::new();
    let s = a.seed;
    for w in 1..=2u64 {
        let sh = sh.clone();
        tasks.spawn(async move { load::runs(&sh, w, s ^ w).await });
    }
    for (w, private) in [(1u64, false), (2, true)] {
        let sh = sh.clone();
        tasks.spawn(async move { load::memory(&sh, w, private, s ^ (10 + w)).await });
    }
    {
        let sh = sh.clone();
        tasks.spawn(async move { load::echo(&sh, 1).await });
    }
    {
        let sh = sh.clone();
        tasks.spawn(async move { load::gated(&sh, 1, s ^ 20).await });
    }
    {
        let sh = sh.clone();
        tasks.spawn(async move { load::operator(&sh, s ^ 30).await });
    }
    // Every task ends by itself after the deadline (its last call is bounded by its time
    // limit and its retries by their patience); the watchdog is a second bound.
    let watchdog = load_for + Duration::from_secs(300);
    let drained = tokio::time::timeout(watchdog, async {
        while let Some(r) = tasks.join_next().await {
            if let Err(e) = r {
                eprintln!("soak: a client task failed: {e}");
            }
        }
    })
    .await;
    if drained.is_err() {
        eprintln!("soak: client tasks did not end within {watchdog:?}; aborting them");
        tasks.abort_all();
    }
    stop.store(true, Ordering::Relaxed);
    let mut d = tokio::task::spawn_blocking(move || chaos.join().expect("the chaos thread")).await.unwrap();
    let load_secs = started.elapsed().as_secs_f64();
    let load_end = Instant::now();

    // 1. SIGKILL once more, with whatever the daemon was still doing, and check presence.
    d.sample();
    d.kill9();
    let kills = d.lives.iter().filter(|l| l.end == "SIGKILL").count();
    let db = state.join("hal0.db");
    let ledger = std::mem::take(&mut *sh.ledger.lock().unwrap());
    let mut f = verify::Findings::default();
    verify::presence(&verify::open(&db), &ledger, &mut f);
    let lost_after_kill = f.lost_total();

    // 2. One more life: recovery settles the unfinished runs; then their events are checked.
    d.start();
    let t = Instant::now();
    let mut unsettled = usize::MAX;
    while t.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(Duration::from_secs(2)).await;
        unsettled = verify::settled(&verify::open(&db), &ledger, &mut verify::Findings::default());
        if unsettled == 0 {
            break;
        }
    }
    let settle_secs = t.elapsed().as_secs_f64();
    d.sample();
    d.kill9();
    let c = verify::open(&db);
    verify::settled(&c, &ledger, &mut f);
    verify::against_agent(&c, &ledger, |id| hermes.run_status(id), &mut f);
    // The recovery life must not have lost anything either.
    let mut again = verify::Findings::default();
    verify::presence(&c, &ledger, &mut again);
    for (what, (_, ex)) in again.lost {
        for e in ex {
            f.lose(what, format!("after the recovery life: {e}"));
        }
    }

    let outages = outages.lock().unwrap().clone();
    let report =
        Report { a: &a, load_secs, load_end, kills, lives: &d.lives, ledger: &ledger, f: &f, sh: &sh, log: &log };
    report.print(&outages, settle_secs, unsettled, lost_after_kill);
    drop(hermes);
    drop(up);
    let lost = f.lost_total() > 0 || !ledger.anomalies.is_empty();
    let crashed = d.lives.iter().any(|l| l.end.starts_with("exited"));
    if lost || crashed || a.keep {
        let kept = dir.keep();
        eprintln!("soak: the soak's dirs are kept at {}", kept.display());
    }
    if lost || crashed {
        eprintln!("soak: FAILED");
        1
    } else {
        0
    }
}

struct Report<'a> {
    a: &'a Args,
    load_secs: f64,
    load_end: Instant,
    kills: usize,
    lives: &'a [Life],
    ledger: &'a ledger::Ledger,
    f: &'a verify::Findings,
    sh: &'a load::Shared,
    log: &'a Path,
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Least-squares slope of RSS over a life's samples after its first 30 s, in MiB per hour.
fn slope_mib_h(s: &[(f64, u64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = s.iter().filter(|(t, _)| *t >= 30.0).map(|(t, k)| (*t, mib(*k))).collect();
    if pts.len() < 3 {
        return None;
    }
    let n = pts.len() as f64;
    let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx * 3600.0)
}

impl Report<'_> {
    fn print(&self, outages: &[daemon::Outage], settle_secs: f64, unsettled: usize, lost_after_kill: u64) {
        let (l, f) = (self.ledger, self.f);
        let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
        println!(
            "== hal0 soak: {:.1} min of load, SIGKILL every ~{} s (±25 %), seed {} ==",
            self.load_secs / 60.0,
            self.a.kill_every.as_secs(),
            self.a.seed
        );
        println!("binary: {}", self.a.bin);
        println!(
            "machine: {} cores, load average {}",
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim()
        );

        println!("\n-- load (answered calls) --");
        let lat = self.sh.stats.latencies();
        for (k, n, p50, p99, max) in &lat {
            println!("  {k:<18} {n:>7}   p50 {p50:>8.2} ms   p99 {p99:>8.2} ms   max {max:>9.1} ms");
        }
        let notes_deleted = l.notes.values().filter(|n| n.delete == ledger::Delete::Acked).count();
        let decided =
            |s: &str| l.approvals.values().filter(|a| a.decision == ledger::Decision::Decided(s.into())).count();
        let pending = l.approvals.values().filter(|a| a.decision == ledger::Decision::Pending).count();
        println!(
            "  acknowledged: {} runs ({} seen finished), {} notes ({} deleted), {} approvals ({} mcp_call, {} hermes_command): {} executed, {} denied, {} failed, {} left pending",
            l.runs.len(),
            l.runs.values().filter(|r| r.finished.is_some()).count(),
            l.notes.len(),
            notes_deleted,
            l.approvals.len(),
            l.approvals.values().filter(|a| a.kind == "mcp_call").count(),
            l.approvals.values().filter(|a| a.kind == "hermes_command").count(),
            decided("executed"),
            decided("denied"),
            decided("failed"),
            pending
        );
        println!("  audited calls answered: {:?}", l.audited);

        println!("\n-- kills and lives --");
        println!(
            "  SIGKILLs during load: {} (plus 2 at the end: before the checks and after the recovery life)",
            self.kills.saturating_sub(1)
        );
        // The kills during the load (the two after it are not outages a client saw).
        let outs: Vec<f64> = outages
            .iter()
            .filter(|o| o.down < self.load_end)
            .filter_map(|o| o.up.map(|u| (u - o.down).as_secs_f64()))
            .collect();
        if !outs.is_empty() {
            println!(
                "  outage (kill to listening again, incl. 1 s pause): mean {:.2} s, max {:.2} s",
                outs.iter().sum::<f64>() / outs.len() as f64,
                outs.iter().cloned().fold(0.0, f64::max)
            );
        }
        println!(
            "  life  pid      port   secs  startup ms  reap ms  RSS MiB start / max / end  anon end  slope MiB/h  end"
        );
        for life in self.lives {
            let s = &life.rss_kib;
            let (first, last) = (s.first().map(|x| x.1).unwrap_or(0), s.last().map(|x| x.1).unwrap_or(0));
            let max = s.iter().map(|x| x.1).max().unwrap_or(0);
            let slope = slope_mib_h(s).map(|v| format!("{v:+.1}")).unwrap_or_else(|| "-".into());
            println!(
                "  {:>4}  {:<7}  {:<5} {:>5.0}  {:>10.0}  {:>7.0}  {:>7.1} / {:>6.1} / {:>6.1}  {:>8.1}  {:>11}  {}",
                life.life,
                life.pid,
                life.port,
                life.secs,
                life.startup_ms,
                life.reap_ms,
                mib(first),
                mib(max),
                mib(last),
                mib(life.anon_kib),
                slope,
                life.end
            );
        }
        // The shape of long lives: RSS at each minute.
        for life in self.lives.iter().filter(|l| l.secs >= 120.0) {
            let per_min: Vec<String> = (0..=(life.secs / 60.0) as usize)
                .filter_map(|m| life.rss_kib.iter().find(|(t, _)| *t >= m as f64 * 60.0))
                .map(|(_, k)| format!("{:.1}", mib(*k)))
                .collect();
            println!("  life {} RSS MiB at each minute: {}", life.life, per_min.join(" "));
        }

        println!("\n-- checks against the store --");
        println!("  checked: {:?}", f.checked);
        println!("  lost right after the final SIGKILL: {lost_after_kill}");
        let kinds = [
            "run missing",
            "events missing",
            "finished run changed",
            "finished run with missing events",
            "note missing",
            "acknowledged delete undone",
            "approval missing",
            "acknowledged decision undone",
            "undecided approval changed",
            "audit rows missing",
            "audit row of an answered call missing",
            "audit row of a gated call missing",
            "run differs from the agent",
        ];
        for k in kinds {
            let (n, ex) = f.lost.get(k).cloned().unwrap_or_default();
            println!("  lost/wrong {k:<40} {n}");
            for e in ex {
                println!("      e.g. {e}");
            }
        }
        for (k, (n, ex)) in &f.info {
            println!("  note: {k}: {n}");
            for e in ex {
                println!("      e.g. {e}");
            }
        }
        println!(
            "  recovery life: unfinished acknowledged runs settled in {settle_secs:.1} s ({} left unsettled, runs waiting on a pending approval excluded)",
            if unsettled == usize::MAX { "?".to_string() } else { unsettled.to_string() }
        );
        println!("  client-side anomalies: {}", l.anomalies.len());
        for x in l.anomalies.iter().take(10) {
            println!("      {x}");
        }

        println!(
            "\n-- errors by code (during outages incl. {} s grace after restart / outside) --",
            daemon::GRACE.as_secs()
        );
        let errs = self.sh.stats.errors(outages);
        let (mut during, mut outside) = (0, 0);
        for ((kind, code), (d, o)) in &errs.by_code {
            println!("  {kind:<18} {code:<40} {d:>6} / {o:>6}");
            during += d;
            outside += o;
        }
        println!("  total: {during} during outages, {outside} outside (+{} not kept)", errs.dropped);

        let log = std::fs::read_to_string(self.log).unwrap_or_default();
        let panics = log.lines().filter(|l| l.contains("panicked")).count();
        let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
        println!("\n-- daemon log ({}) --", self.log.display());
        println!("  {} lines, {} panics, {} ERROR lines", log.lines().count(), panics, errors.len());
        let mut distinct: Vec<String> = Vec::new();
        for e in &errors {
            let key: String = e.split_whitespace().skip(4).take(12).collect::<Vec<_>>().join(" ");
            if !distinct.contains(&key) && distinct.len() < 8 {
                distinct.push(key);
                println!("      {e}");
            }
        }

        let lives: Vec<Value> = self
            .lives
            .iter()
            .map(|life| {
                let s = &life.rss_kib;
                json!({
                    "life": life.life, "secs": life.secs.round(), "startup_ms": life.startup_ms.round(), "reap_ms": life.reap_ms.round(), "end": life.end,
                    "rss_mib": {"start": s.first().map(|x| r3(mib(x.1))), "max": s.iter().map(|x| x.1).max().map(|k| r3(mib(k))), "end": s.last().map(|x| r3(mib(x.1))), "anon_end": r3(mib(life.anon_kib))},
                    "slope_mib_per_h": slope_mib_h(s).map(r3),
                })
            })
            .collect();
        let lat: Value = lat
            .iter()
            .map(|(k, n, p50, p99, max)| {
                (k.to_string(), json!({"n": n, "p50_ms": r3(*p50), "p99_ms": r3(*p99), "max_ms": r3(*max)}))
            })
            .collect::<serde_json::Map<_, _>>()
            .into();
        let lost: Value =
            f.lost.iter().map(|(k, (n, _))| (k.to_string(), json!(n))).collect::<serde_json::Map<_, _>>().into();
        let errors: Vec<Value> = errs
            .by_code
            .iter()
            .map(|((k, c), (d, o))| json!({"kind": k, "code": c, "during_outage": d, "outside": o}))
            .collect();
        let line = json!({
            "soak": "hal0", "minutes": self.a.minutes, "kill_every_s": self.a.kill_every.as_secs(), "seed": self.a.seed,
            "kills_during_load": self.kills.saturating_sub(1), "lost_total": f.lost_total(), "lost": lost,
            "anomalies": l.anomalies.len(), "unsettled_runs": unsettled,
            "acknowledged": {"runs": l.runs.len(), "notes": l.notes.len(), "notes_deleted": notes_deleted, "approvals": l.approvals.len(), "audited": l.audited},
            "latency": lat, "lives": lives, "errors": errors, "daemon_panics": panics,
        });
        println!("\n{line}");
    }
}
