//! Child processes of the benchmark harnesses: a child killed when dropped, and this
//! example re-executed as the rmcp upstream (`--upstream`), in a process of its own so it
//! has its own runtime and threads, apart from the load generator and `hal0 serve`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A child process killed when dropped (also when the bench panics).
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Re-execute this example with `--upstream`; returns the child and the URL it printed.
pub fn spawn_upstream() -> (KillOnDrop, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .arg("--upstream")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = loop {
        let l = lines.next().expect("upstream exited before printing its URL").unwrap();
        if let Some(u) = l.strip_prefix("UPSTREAM ") {
            break u.to_string();
        }
    };
    (KillOnDrop(child), url)
}

/// The 1-minute, 5-minute and 15-minute load averages.
pub fn loadavg() -> Vec<f64> {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    s.split_whitespace().take(3).filter_map(|x| x.parse().ok()).collect()
}
