//! Shared pieces of the benchmark harnesses: percentiles, RSS, a raw MCP session over
//! reqwest, a bridge key and starting `hal0 serve` from a given binary.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// A child process killed when dropped (also when the bench panics).
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

/// CPU time (user + system) process `pid` has used so far, in milliseconds (Linux
/// `/proc/PID/stat`; 0 where it cannot be read). Server CPU per call is a steadier figure
/// than calls/s on a shared machine.
pub fn cpu_ms(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let hz = 100.0;
    (ticks(11) + ticks(12)) * 1000.0 / hz
}

pub fn rss_kib(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines().find(|l| l.starts_with("VmRSS:")).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// `hal0 ARGS…` with the given dirs; its output, which must be a success.
pub fn hal0(bin: &str, cfg: &Path, state: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new(bin)
        .args(args)
        .env("HAL0_CONFIG_DIR", cfg)
        .env("HAL0_STATE_DIR", state)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "hal0 {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// `hal0 bridge add NAME [--scope S]… --json` with the given dirs: the new client's key.
pub fn bridge_key(bin: &str, cfg: &Path, state: &Path, name: &str, scopes: &[&str]) -> String {
    let mut args = vec!["bridge", "add", name, "--json"];
    for s in scopes {
        args.extend(["--scope", s]);
    }
    let out = hal0(bin, cfg, state, &args);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["key"].as_str().unwrap().to_string()
}

/// `hal0 serve --bind 127.0.0.1:0` with the given dirs; returns the child and base URL.
pub fn serve(bin: &str, cfg: &Path, state: &Path, envs: &[(&str, &str)]) -> (Child, String) {
    serve_at(bin, cfg, state, "127.0.0.1:0", envs)
}

/// [`serve`] on `bind` (a port fixed in advance, e.g. to match `network.public_url`).
#[allow(dead_code)]
pub fn serve_at(bin: &str, cfg: &Path, state: &Path, bind: &str, envs: &[(&str, &str)]) -> (Child, String) {
    let mut child = Command::new(bin)
        .args(["serve", "--bind", bind])
        .env("HAL0_CONFIG_DIR", cfg)
        .env("HAL0_STATE_DIR", state)
        .env("HAL0_LOG", "warn")
        .envs(envs.iter().copied())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = loop {
        let l = lines.next().unwrap().unwrap();
        if let Some(b) = l.strip_prefix("hal0: listening on ") {
            break b.to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, base)
}

pub fn post(
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

/// One initialized MCP session on its own connection (`sid` empty when the server is
/// stateless and issues no `Mcp-Session-Id`, as the hermes-bridge relay).
pub struct Session {
    pub http: reqwest::Client,
    pub url: String,
    pub key: String,
    pub sid: String,
}

impl Session {
    pub async fn open(url: &str, key: &str) -> Session {
        Session::open_on(reqwest::Client::builder().tcp_nodelay(true).build().unwrap(), url, key).await
    }

    /// [`Session::open`] on a client that already exists (its pooled connection reused).
    pub async fn open_on(http: reqwest::Client, url: &str, key: &str) -> Session {
        let init = serde_json::json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}});
        let r = post(&http, url, key, None, init).send().await.unwrap();
        assert!(r.status().is_success(), "initialize on {url}: {}", r.status());
        let sid = r.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        let _ = r.text().await.unwrap();
        let n = serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        post(&http, url, key, Some(sid.as_str()).filter(|s| !s.is_empty()), n).send().await.unwrap();
        Session { http, url: url.into(), key: key.into(), sid }
    }

    /// End the session (`DELETE`), as a client done with it does; nothing for a stateless
    /// server's.
    pub async fn close(&self) {
        if self.sid.is_empty() {
            return;
        }
        let r = self
            .http
            .delete(&self.url)
            .bearer_auth(&self.key)
            .header("mcp-session-id", &self.sid)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "DELETE of session on {}: {}", self.url, r.status());
    }

    /// `tools/call`; returns (milliseconds, reply text). Panics unless `expect` is in the reply.
    pub async fn call(&self, id: u64, tool: &str, args: serde_json::Value, expect: &str) -> (f64, String) {
        let body =
            serde_json::json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":args}});
        let t = Instant::now();
        let sid = Some(self.sid.as_str()).filter(|s| !s.is_empty());
        let text = post(&self.http, &self.url, &self.key, sid, body).send().await.unwrap().text().await.unwrap();
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        assert!(text.contains(expect), "unexpected reply to {tool}: {}", &text[..text.len().min(400)]);
        (ms, text)
    }
}

/// Run `per` calls of `tool` on each session at once; every latency and the wall time.
pub async fn concurrent(
    sessions: Vec<Session>,
    per: u64,
    tool: &'static str,
    args: serde_json::Value,
    expect: &'static str,
) -> (Vec<f64>, f64) {
    let t = Instant::now();
    let handles: Vec<_> = sessions
        .into_iter()
        .map(|s| {
            let args = args.clone();
            tokio::spawn(async move {
                let mut v = Vec::with_capacity(per as usize);
                for i in 0..per {
                    v.push(s.call(i, tool, args.clone(), expect).await.0);
                }
                v
            })
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.await.unwrap());
    }
    (all, t.elapsed().as_secs_f64())
}

/// `clients` fresh sessions on `url`, each warmed up with `warm` calls of `tool` (all at once).
pub async fn open_warm(
    url: &str,
    key: &str,
    clients: usize,
    warm: u64,
    (tool, args, expect): (&str, serde_json::Value, &str),
) -> Vec<Session> {
    let mut sessions = Vec::with_capacity(clients);
    for _ in 0..clients {
        sessions.push(Session::open(url, key).await);
    }
    futures::future::join_all(sessions.iter().map(|s| {
        let args = args.clone();
        async move {
            for i in 0..warm {
                s.call(1_000_000 + i, tool, args.clone(), expect).await;
            }
        }
    }))
    .await;
    sessions
}
