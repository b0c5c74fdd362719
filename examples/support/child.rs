//! Child processes of the benchmark harnesses: a child killed when dropped, and this
//! example re-executed as the rmcp upstream (`--upstream`), in a process of its own so it
//! has its own runtime and threads, apart from the load generator and `hal0 serve`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

pub use super::support::KillOnDrop;

/// Re-execute this example with `args`; the child, and what it printed after `prefix` on
/// the first line that starts with it.
pub fn spawn_self(args: &[&str], prefix: &str) -> (KillOnDrop, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let said = loop {
        let l = lines.next().unwrap_or_else(|| panic!("{args:?} exited before printing {prefix}")).unwrap();
        if let Some(u) = l.strip_prefix(prefix) {
            break u.to_string();
        }
    };
    (KillOnDrop(child), said)
}

/// Re-execute this example with `--upstream`; returns the child and the URL it printed.
pub fn spawn_upstream() -> (KillOnDrop, String) {
    spawn_self(&["--upstream"], "UPSTREAM ")
}

/// In a re-executed child: serve `app` on a free loopback port (TCP_NODELAY on), print
/// `<label> <address>`, and exit when stdin closes (the parent exited or dropped it).
pub fn serve_child(label: &str, app: axum::Router) {
    std::thread::spawn(|| {
        use std::io::Read;
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{label} {}", listener.local_addr().unwrap());
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app).await.unwrap();
    });
}

/// The 1-minute, 5-minute and 15-minute load averages.
pub fn loadavg() -> Vec<f64> {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    s.split_whitespace().take(3).filter_map(|x| x.parse().ok()).collect()
}

pub use super::support::cpu_ms;

/// This example re-executed with `--upstream`: serve the rmcp upstream, print
/// `UPSTREAM <url>`, and stop when stdin closes (the parent exited or dropped it).
pub fn upstream_main() {
    use std::io::Read;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let up = rt.block_on(crate::upstream::RmcpUpstream::start());
    println!("UPSTREAM {}", up.url());
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(up);
}

/// The command line of a benchmark: `HAL0_BIN [--calls N] [--clients C]` plus the named
/// boolean flags.
pub struct BenchArgs {
    pub bin: String,
    pub calls: u64,
    pub clients: usize,
    pub flags: Vec<String>,
}

/// Parse the arguments after the program name (`calls` / `clients` are the defaults).
pub fn bench_args(name: &str, calls: u64, clients: usize, flags: &[&str]) -> BenchArgs {
    let mut a = BenchArgs { bin: "target/release/hal0".into(), calls, clients, flags: Vec::new() };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut num = |what: &str| -> u64 {
            it.next().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or_else(|| panic!("{what} needs a number"))
        };
        match arg.as_str() {
            "--calls" => a.calls = num("--calls"),
            "--clients" => a.clients = num("--clients") as usize,
            f if flags.contains(&f) => a.flags.push(arg),
            _ if arg.starts_with("--") => {
                let extra: String = flags.iter().map(|f| format!(" [{f}]")).collect();
                panic!("unknown option {arg}; usage: {name} HAL0_BIN [--calls N] [--clients C]{extra}")
            }
            _ => a.bin = arg,
        }
    }
    a
}
