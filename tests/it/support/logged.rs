//! `hal0 serve` whose log (stderr) is kept for the test to read, and echoed.

use super::{Env, Server, eventually};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `hal0 serve` whose stderr lines are kept (and echoed).
pub struct Logged {
    pub server: Server,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Logged {
    pub fn start(env: &Env) -> Logged {
        let mut child = env
            .cmd(&["serve", "--bind", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .env("HAL0_LOG", "info,rmcp=warn")
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let (tx, rx) = std::sync::mpsc::channel();
        let kept = lines.clone();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[hal0 serve] {line}");
                if let Some(rest) = line.strip_prefix("hal0: listening on ")
                    && let Some(t) = tx.take()
                {
                    let _ = t.send(rest.to_string());
                }
                kept.lock().unwrap().push(line);
            }
        });
        let base = rx.recv_timeout(Duration::from_secs(60)).expect("hal0 serve did not start");
        let port = base.rsplit(':').next().unwrap().parse().unwrap();
        Logged { server: Server { child, base, port }, lines }
    }

    pub fn log(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    pub async fn wait_log(&self, needle: &str) -> String {
        let ok = eventually(Duration::from_secs(20), async || self.log().contains(needle)).await;
        assert!(ok, "the log never said {needle:?}:\n{}", self.log());
        self.log()
    }

    /// SIGTERM and wait for the exit (a liveness bound); the log once it exited.
    pub async fn stop(self) -> String {
        let Logged { mut server, lines } = self;
        let pid = server.child.id().to_string();
        assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let exited = tokio::task::spawn_blocking(move || {
            let s = server.child.wait().unwrap();
            (s, server)
        });
        let (status, _server) = tokio::time::timeout(Duration::from_secs(20), exited).await.expect("exits").unwrap();
        assert!(status.success(), "{status:?}");
        // The reader thread drains what was written before the exit.
        tokio::time::sleep(Duration::from_millis(200)).await;
        lines.lock().unwrap().join("\n")
    }

    /// The first log line holding `needle`, once it is written (20 s at most).
    pub async fn line(&self, needle: &str) -> String {
        self.wait_log(needle).await;
        self.lines.lock().unwrap().iter().find(|l| l.contains(needle)).cloned().unwrap_or_default()
    }

    /// Send SIGHUP (what `systemctl reload hal0` does).
    pub fn hup(&self) {
        let pid = self.server.child.id().to_string();
        assert!(std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap().success());
    }
}
