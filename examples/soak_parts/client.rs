//! The soak's MCP clients: the real rmcp Streamable-HTTP client over TCP, reconnecting after
//! the daemon was killed (a fresh `initialize` on the current base URL), one attempt per
//! `call` with a time limit; and the shared record of latencies and errors per call kind.

use super::daemon::{Outage, Up, in_outage};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::watch;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// Resuming a cut response stream: three tries, 200 ms doubling. (rmcp's default retries
/// forever, so a call whose stream died with the daemon would only end at its time limit.)
#[derive(Debug)]
struct ResumeBriefly;

impl rmcp::transport::common::client_side_sse::SseRetryPolicy for ResumeBriefly {
    fn retry(&self, n: usize) -> Option<Duration> {
        (n < 3).then(|| Duration::from_millis(200 << n))
    }
}

/// What one call came back with.
#[derive(Debug)]
pub enum Outcome {
    /// A result: its structured content (or its text parsed as JSON, or the text).
    Ok(Value),
    /// An `isError` result: hal0 answered (and audited the call) with this code.
    Tool { code: String },
    /// No answer: the connection, the session or the time limit failed. Nothing is known
    /// about whether the daemon carried the call out.
    Transport(String),
}

impl Outcome {
    /// Whether hal0 answered at all (the call reached a tool and was audited).
    pub fn answered(&self) -> bool {
        !matches!(self, Outcome::Transport(_))
    }
}

/// One MCP session to one hal0 mount, re-established whenever a call fails in transport.
pub struct Conn {
    path: String,
    key: String,
    private: bool,
    up: watch::Receiver<Option<Up>>,
    /// The base URL of the last daemon seen up (tried again while it is down).
    base: Option<String>,
    cur: Option<Client>,
}

/// A short class for a transport failure (the full text varies with ports and ids).
fn transport_class(text: &str) -> String {
    let t = text.to_ascii_lowercase();
    let class = if t.contains("connection refused") {
        "refused"
    } else if t.contains("404") || t.contains("session") {
        "session_gone"
    } else if t.contains("reset") || t.contains("closed before") || t.contains("incomplete") || t.contains("eof") {
        "connection_broken"
    } else if t.contains("transport closed") || t.contains("closed") {
        "closed"
    } else if t.contains("timeout") || t.contains("timed out") {
        "timeout"
    } else if t.contains("503") || t.contains("unavailable") {
        "unavailable"
    } else {
        "other"
    };
    format!("transport.{class}")
}

/// The stable code of an `isError` result: the admin/memory envelope's `error.code`, or the
/// `code: message` prefix of the bridge and proxy texts.
fn error_code(structured: Option<&Value>, text: &str) -> String {
    if let Some(c) = structured.and_then(|v| v["error"]["code"].as_str()) {
        return c.to_string();
    }
    let head = text.split(": ").next().unwrap_or("");
    if !head.is_empty() && head.contains('.') && head.chars().all(|c| c.is_ascii_lowercase() || c == '.' || c == '_') {
        head.to_string()
    } else {
        "tool_error".into()
    }
}

impl Conn {
    /// A session to `path` (e.g. `/mcp/agents/mcp`) with `key`; `private` sends X-hal0-Private: 1.
    pub fn new(up: watch::Receiver<Option<Up>>, path: &str, key: &str, private: bool) -> Conn {
        Conn { path: path.into(), key: key.into(), private, up, base: None, cur: None }
    }

    async fn connect(&mut self) -> Result<Client, String> {
        // While the daemon is down the last base URL is still tried (and refused), as a
        // real client would; the harness tells clients a new port only if it had to move.
        if let Some(u) = self.up.borrow().as_ref() {
            self.base = Some(u.base.clone());
        }
        let Some(base) = self.base.clone() else { return Err("transport.refused".into()) };
        let mut headers = HashMap::new();
        if self.private {
            headers.insert(
                reqwest::header::HeaderName::from_static("x-hal0-private"),
                reqwest::header::HeaderValue::from_static("1"),
            );
        }
        let mut cfg = StreamableHttpClientTransportConfig::with_uri(format!("{base}{}", self.path))
            .auth_header(self.key.clone())
            .custom_headers(headers);
        cfg.retry_config = std::sync::Arc::new(ResumeBriefly);
        match tokio::time::timeout(Duration::from_secs(15), ().serve(StreamableHttpClientTransport::from_config(cfg)))
            .await
        {
            Ok(Ok(c)) => Ok(c),
            Ok(Err(e)) => Err(transport_class(&format!("{e:?}"))),
            Err(_) => Err("transport.timeout".into()),
        }
    }

    /// One attempt at `tool` with `args`, within `limit`.
    pub async fn call(&mut self, tool: &str, args: Value, limit: Duration) -> Outcome {
        if self.cur.is_none() {
            match self.connect().await {
                Ok(c) => self.cur = Some(c),
                Err(e) => return Outcome::Transport(e),
            }
        }
        let c = self.cur.as_ref().unwrap();
        let p = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().cloned().expect("object arguments"));
        let r = match tokio::time::timeout(limit, c.call_tool(p)).await {
            Err(_) => {
                self.cur = None;
                return Outcome::Transport("transport.timeout".into());
            }
            Ok(Err(e)) => {
                self.cur = None;
                return Outcome::Transport(transport_class(&format!("{e:?} {e}")));
            }
            Ok(Ok(r)) => r,
        };
        let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
        if r.is_error == Some(true) {
            return Outcome::Tool { code: error_code(r.structured_content.as_ref(), &text) };
        }
        Outcome::Ok(match r.structured_content {
            Some(v) => v,
            None => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        })
    }
}

/// One failed call: its kind, code and when it ran (classified against the outages at the end).
struct Failure {
    kind: &'static str,
    code: String,
    start: Instant,
    end: Instant,
}

/// Latencies of answered calls and every failure, per call kind.
#[derive(Default)]
pub struct Stats {
    inner: Mutex<StatsInner>,
}

#[derive(Default)]
struct StatsInner {
    /// Milliseconds of every answered call (a result or an `isError` result).
    lat: BTreeMap<&'static str, Vec<f64>>,
    answered: BTreeMap<&'static str, u64>,
    failures: Vec<Failure>,
    /// Failures beyond the kept list (counted only).
    failures_dropped: u64,
}

const FAILURES_KEPT: usize = 200_000;

/// Error counts split by whether they happened during an outage.
pub struct ErrorTable {
    /// (kind, code) → (during outages, outside them).
    pub by_code: BTreeMap<(String, String), (u64, u64)>,
    pub dropped: u64,
}

impl Stats {
    /// Record the outcome of one call of `kind` that ran from `start` to now.
    pub fn record(&self, kind: &'static str, start: Instant, out: &Outcome) {
        let end = Instant::now();
        let mut s = self.inner.lock().unwrap();
        match out {
            Outcome::Ok(_) => {
                s.lat.entry(kind).or_default().push((end - start).as_secs_f64() * 1000.0);
                *s.answered.entry(kind).or_default() += 1;
            }
            Outcome::Tool { code, .. } => {
                s.lat.entry(kind).or_default().push((end - start).as_secs_f64() * 1000.0);
                *s.answered.entry(kind).or_default() += 1;
                let code = code.clone();
                s.push(Failure { kind, code, start, end });
            }
            Outcome::Transport(code) => {
                let code = code.clone();
                s.push(Failure { kind, code, start, end });
            }
        }
    }

    /// Record a failure that is not an MCP call (e.g. a CLI decision that exited non-zero).
    pub fn fail(&self, kind: &'static str, code: String, start: Instant) {
        self.inner.lock().unwrap().push(Failure { kind, code, start, end: Instant::now() });
    }

    /// Record the latency of a successful non-MCP action (e.g. a CLI decision).
    pub fn done(&self, kind: &'static str, start: Instant) {
        let mut s = self.inner.lock().unwrap();
        s.lat.entry(kind).or_default().push(start.elapsed().as_secs_f64() * 1000.0);
        *s.answered.entry(kind).or_default() += 1;
    }

    /// Per kind: (answered, p50 ms, p99 ms, max ms).
    pub fn latencies(&self) -> Vec<(&'static str, u64, f64, f64, f64)> {
        let mut s = self.inner.lock().unwrap();
        let answered = s.answered.clone();
        s.lat
            .iter_mut()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| {
                let max = v.iter().cloned().fold(0.0, f64::max);
                (*k, answered[k], super::pct(v, 0.5), super::pct(v, 0.99), max)
            })
            .collect()
    }

    pub fn errors(&self, outages: &[Outage]) -> ErrorTable {
        let s = self.inner.lock().unwrap();
        let mut by_code: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
        for f in &s.failures {
            let e = by_code.entry((f.kind.to_string(), f.code.clone())).or_default();
            if in_outage(outages, f.start, f.end) {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
        ErrorTable { by_code, dropped: s.failures_dropped }
    }
}

impl StatsInner {
    fn push(&mut self, f: Failure) {
        if self.failures.len() < FAILURES_KEPT {
            self.failures.push(f);
        } else {
            self.failures_dropped += 1;
        }
    }
}
