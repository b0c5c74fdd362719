//! Benchmark of what hal0's MCP proxy (`/mcp/proxy/<id>/mcp`) adds to a `tools/call`: the
//! allowed tool `echo` of an rmcp upstream called DIRECTLY on the upstream and THROUGH the
//! proxy, in the same run, by the same client code (`support::Session`, a raw MCP session over
//! reqwest, one connection per session):
//!
//! 1. sequential latency p50/p99: one direct, one proxied and one floor-relay session,
//!    warmed up, then the calls interleaved one by one (which goes first rotates), and the
//!    added latency (proxied minus direct, floor minus direct);
//! 2. `--clients` concurrent clients (each its own MCP session and connection): calls/s and
//!    p50/p99, direct, proxied and through the floor relay, in rounds ordered direct,
//!    proxied, floor, floor, proxied, direct so a drift in machine load weighs on all alike;
//!    and the CPU each server process spent per call of its rounds (a steadier figure than
//!    calls/s on a shared machine).
//!
//! The floor relay (`support/floor.rs`, `--floor`) is the cheapest proxy there is: each
//! request's bytes relayed to the upstream with no MCP, policy, key check or audit. What it
//! reaches is the most any proxy can reach on the machine the run had.
//!
//! The upstream (`RmcpUpstream` of tests/it/support/upstream.rs) runs in its own process: this
//! example re-executes itself with `--upstream`, so it has its own tokio runtime and threads,
//! apart from the client load generator and from `hal0 serve`.
//!
//! Run: `cargo build --release &&
//!       cargo run --release --example bench_proxy -- target/release/hal0 [--calls N] [--clients 32] [--fastmcp]`
//! (`--fastmcp`: the upstream is the Python SDK's FastMCP server under uvicorn, from
//! tests/external/setup.sh, to show whether a pooled connection stalls against it.)
//! (`--calls`: calls per path in the sequential phase, and in the concurrent phase split
//! evenly over the clients and the two rounds of each path; default 10000.)

#[path = "support/child.rs"]
mod child;
#[path = "support/floor.rs"]
mod floor;
#[path = "support/mod.rs"]
mod support;
#[path = "../tests/it/support/upstream.rs"]
mod upstream;

use child::{KillOnDrop, loadavg};
use serde_json::json;
use std::process::{Command, Stdio};
use support::{Session, pct};

const TEXT: &str = "bench-proxy-payload";

/// The upstream: this binary re-executed (killed when dropped), or FastMCP.
struct UpstreamProcess {
    _child: Option<KillOnDrop>,
    /// With `--fastmcp`: the Python SDK's FastMCP server under uvicorn instead.
    _fastmcp: Option<upstream::FastMcp>,
    url: String,
}

impl UpstreamProcess {
    fn start() -> UpstreamProcess {
        let (child, url) = child::spawn_upstream();
        UpstreamProcess { _child: Some(child), _fastmcp: None, url }
    }

    /// FastMCP (uvicorn) from tests/external/setup.sh's venv.
    fn fastmcp() -> UpstreamProcess {
        let up = upstream::FastMcp::start().expect("FastMCP needs tests/external/setup.sh (the .venv)");
        UpstreamProcess { _child: None, url: up.url(), _fastmcp: Some(up) }
    }
}

fn args_echo() -> serde_json::Value {
    json!({ "text": TEXT })
}

async fn echo(s: &Session, id: u64) -> f64 {
    s.call(id, "echo", args_echo(), TEXT).await.0
}

async fn open_warm(url: &str, key: &str, clients: usize, warm: u64) -> Vec<Session> {
    support::open_warm(url, key, clients, warm, ("echo", args_echo(), TEXT)).await
}

/// One path of the concurrent phase: its URL, the process in its middle, what its rounds saw.
struct Path {
    url: String,
    pid: Option<u32>,
    lat: Vec<f64>,
    wall: f64,
    cpu_ms: f64,
}

impl Path {
    fn new(url: &str, pid: Option<u32>) -> Path {
        Path { url: url.to_string(), pid, lat: Vec::new(), wall: 0.0, cpu_ms: 0.0 }
    }

    /// Calls/s, p50 and p99 (ms), and the middle process's CPU per call (µs).
    fn sum(&mut self) -> (f64, f64, f64, Option<f64>) {
        let n = self.lat.len() as f64;
        let (p50, p99, _) = stats(&mut self.lat);
        (n / self.wall, p50, p99, self.pid.map(|_| self.cpu_ms * 1000.0 / n))
    }
}

/// p50, p99 and mean of `v` in ms.
fn stats(v: &mut [f64]) -> (f64, f64, f64) {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (pct(v, 0.5), pct(v, 0.99), mean)
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--upstream") {
        return child::upstream_main();
    }
    if std::env::args().nth(1).as_deref() == Some("--floor") {
        return floor::main(std::env::args().nth(2).expect("--floor UPSTREAM_URL"));
    }
    let a = child::bench_args("bench_proxy", 10_000, 32, &["--fastmcp"]);
    let fastmcp = a.flags.iter().any(|f| f == "--fastmcp");
    // The client load generator: a multi-thread runtime of its own (one worker per core).
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run(a.bin, a.calls, a.clients, fastmcp));
}

async fn run(bin: String, calls: u64, clients: usize, fastmcp: bool) {
    let load_start = loadavg();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let up = if fastmcp { UpstreamProcess::fastmcp() } else { UpstreamProcess::start() };
    let upstream_name = if fastmcp {
        "FastMCP (Python mcp SDK, uvicorn), separate process"
    } else {
        "rmcp 3.11 (tests/it/support/upstream.rs), separate process, own multi-thread runtime"
    };

    let dir = tempfile::tempdir().unwrap();
    let (cfg, state) = (dir.path().join("etc"), dir.path().join("var"));
    let hal0 = |args: &[&str]| {
        let o = Command::new(&bin)
            .args(args)
            .env("HAL0_CONFIG_DIR", &cfg)
            .env("HAL0_STATE_DIR", &state)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "hal0 {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    hal0(&["mcp", "install", &up.url, "--id", "up"]);
    hal0(&["mcp", "allow", "up", "echo"]);
    let out: serde_json::Value = serde_json::from_str(&hal0(&["mcp", "keys", "add", "up", "bench", "--json"])).unwrap();
    let key = out["key"].as_str().unwrap().to_string();
    let (server, base) = support::serve(&bin, &cfg, &state, &[]);
    let hal0_pid = server.id();
    let server = KillOnDrop(server);
    let (floor, floor_url, floor_pid) = floor::spawn(&up.url);
    let up_pid = up._child.as_ref().map(|c| c.0.id());
    let proxied_url = format!("{base}/mcp/proxy/up/mcp");
    // The upstream ignores the Authorization header; the direct path sends the same one.
    let direct_url = up.url.clone();

    // 1. Sequential: one session per path, interleaved call by call (the order of the three
    // turns a step each call, so none always goes first).
    let warm = (calls / 10).clamp(20, 500);
    let sessions = [
        Session::open(&direct_url, &key).await,
        Session::open(&proxied_url, &key).await,
        Session::open(&floor_url, &key).await,
    ];
    for i in 0..warm {
        for s in &sessions {
            echo(s, i).await;
        }
    }
    let mut seq: [Vec<f64>; 3] = std::array::from_fn(|_| Vec::with_capacity(calls as usize));
    for i in 0..calls {
        for k in 0..3 {
            let which = (i as usize + k) % 3;
            seq[which].push(echo(&sessions[which], warm + i).await);
        }
    }
    drop(sessions);
    let [mut seq_d, mut seq_p, mut seq_f] = seq;
    let (d50, d99, dmean) = stats(&mut seq_d);
    let (p50, p99, pmean) = stats(&mut seq_p);
    let (f50, f99, fmean) = stats(&mut seq_f);

    // 2. Concurrent: rounds direct, proxied, floor, floor, proxied, direct; fresh warmed
    // sessions per round. The CPU of the process in the middle (the upstream for direct
    // rounds) is read around each round's calls.
    let per = (calls / clients as u64 / 2).max(1);
    let cwarm = (per / 10).clamp(2, 20);
    let mut paths = [
        Path::new(&direct_url, up_pid),
        Path::new(&proxied_url, Some(hal0_pid)),
        Path::new(&floor_url, Some(floor_pid)),
    ];
    for which in [0, 1, 2, 2, 1, 0] {
        let p = &mut paths[which];
        let sessions = open_warm(&p.url, &key, clients, cwarm).await;
        let cpu = p.pid.map(child::cpu_ms);
        let (lat, secs) = support::concurrent(sessions, per, "echo", args_echo(), TEXT).await;
        if let (Some(pid), Some(before)) = (p.pid, cpu) {
            p.cpu_ms += child::cpu_ms(pid) - before;
        }
        p.lat.extend(lat);
        p.wall += secs;
    }
    let [d, p, f] = paths.map(|mut p| p.sum());
    let (rate_d, cd50, cd99, _) = d;
    let (rate_p, cp50, cp99, cpu_hal0) = p;
    let (rate_f, cf50, cf99, cpu_floor) = f;
    let cpu_up = d.3;
    let n = (calls / clients as u64 / 2).max(1) * clients as u64 * 2;
    drop((server, floor, up));
    let load_end = loadavg();

    println!("hal0 MCP proxy overhead: tools/call echo on {upstream_name}, direct vs /mcp/proxy/up/mcp");
    println!("machine: {cores} cores, load average at start {load_start:?}, at end {load_end:?}");
    println!("sequential, one session per path, {calls} calls each, interleaved after {warm} warm-up calls:");
    println!("  direct   p50 {d50:.3} ms  p99 {d99:.3} ms  mean {dmean:.3} ms");
    println!("  proxied  p50 {p50:.3} ms  p99 {p99:.3} ms  mean {pmean:.3} ms");
    println!("  added    p50 {:.3} ms  p99 {:.3} ms  mean {:.3} ms", p50 - d50, p99 - d99, pmean - dmean);
    println!("  floor    p50 {f50:.3} ms  p99 {f99:.3} ms  mean {fmean:.3} ms");
    println!("  floor added p50 {:.3} ms  p99 {:.3} ms  mean {:.3} ms", f50 - d50, f99 - d99, fmean - dmean);
    println!("{clients} concurrent clients (own session each), {n} calls per path in rounds D,P,F,F,P,D");
    println!("  (each round on fresh sessions after {cwarm} warm-up calls per session):");
    println!("  direct   {rate_d:.0} calls/s  p50 {cd50:.3} ms  p99 {cd99:.3} ms");
    println!("  proxied  {rate_p:.0} calls/s  p50 {cp50:.3} ms  p99 {cp99:.3} ms  ({:.2} of direct)", rate_p / rate_d);
    println!(
        "  floor    {rate_f:.0} calls/s  p50 {cf50:.3} ms  p99 {cf99:.3} ms  ({:.2} of direct; bytes relayed, nothing else)",
        rate_f / rate_d
    );
    let us = |x: Option<f64>| x.map_or("n/a".to_string(), |v| format!("{v:.0} µs"));
    println!(
        "  CPU per call of the process in the middle: upstream {}, hal0 {}, floor relay {}",
        us(cpu_up),
        us(cpu_hal0),
        us(cpu_floor)
    );
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let line = json!({
        "bench": "proxy",
        "bin": bin,
        "calls": calls,
        "clients": clients,
        "cores": cores,
        "upstream": upstream_name,
        "sequential": {
            "direct": {"p50_ms": r3(d50), "p99_ms": r3(d99), "mean_ms": r3(dmean)},
            "proxied": {"p50_ms": r3(p50), "p99_ms": r3(p99), "mean_ms": r3(pmean)},
            "added": {"p50_ms": r3(p50 - d50), "p99_ms": r3(p99 - d99), "mean_ms": r3(pmean - dmean)},
            "floor": {"p50_ms": r3(f50), "p99_ms": r3(f99), "mean_ms": r3(fmean)},
            "floor_added": {"p50_ms": r3(f50 - d50), "p99_ms": r3(f99 - d99), "mean_ms": r3(fmean - dmean)},
        },
        "concurrent": {
            "calls_per_path": n,
            "direct": {"calls_per_s": rate_d.round(), "p50_ms": r3(cd50), "p99_ms": r3(cd99), "upstream_cpu_us_per_call": cpu_up.map(f64::round)},
            "proxied": {"calls_per_s": rate_p.round(), "p50_ms": r3(cp50), "p99_ms": r3(cp99), "hal0_cpu_us_per_call": cpu_hal0.map(f64::round)},
            "floor": {"calls_per_s": rate_f.round(), "p50_ms": r3(cf50), "p99_ms": r3(cf99), "relay_cpu_us_per_call": cpu_floor.map(f64::round)},
        },
        "loadavg_start": load_start,
        "loadavg_end": load_end,
    });
    println!("{line}");
}
