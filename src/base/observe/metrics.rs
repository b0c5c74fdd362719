//! The daemon's Prometheus metrics (`GET /metrics`, admin tier), kept with the
//! `prometheus-client` crate and encoded as OpenMetrics text: MCP tool calls by server,
//! tool and outcome with a latency histogram, proxy verdicts by server, relay asks by
//! outcome and store call latency are counted where they happen; pending approvals, open
//! MCP sessions and WebSockets, and runs by status are read when scraped. One registry per
//! process.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::LazyLock;
use std::time::Duration;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    server: String,
    tool: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ServerTool {
    server: String,
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Verdict {
    server: String,
    verdict: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Path {
    server: String,
    path: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Status {
    status: String,
}

fn latency() -> Histogram {
    // 0.5 ms to ~65 s.
    Histogram::new(exponential_buckets(0.0005, 4.0, 9))
}

fn store_latency() -> Histogram {
    // 50 µs to ~3 s.
    Histogram::new(exponential_buckets(0.00005, 4.0, 9))
}

struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    call_seconds: Family<ServerTool, Histogram, fn() -> Histogram>,
    proxy: Family<Verdict, Counter>,
    forwarded: Family<Path, Counter>,
    relay: Family<Outcome, Counter>,
    store_seconds: Histogram,
    websockets: Gauge,
    sessions: Gauge,
    approvals: Gauge,
    runs: Family<Status, Gauge>,
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    let mut registry = Registry::with_prefix("hal0");
    let calls = Family::<CallLabels, Counter>::default();
    registry.register(
        "mcp_tool_calls",
        "MCP tool calls by server, tool and outcome (ok, is_error, protocol_error)",
        calls.clone(),
    );
    let call_seconds = Family::<ServerTool, Histogram, fn() -> Histogram>::new_with_constructor(latency);
    registry.register("mcp_tool_call_seconds", "MCP tool call latency", call_seconds.clone());
    let proxy = Family::<Verdict, Counter>::default();
    registry.register("proxy_verdicts", "Proxied MCP calls by server and policy verdict", proxy.clone());
    let forwarded = Family::<Path, Counter>::default();
    registry.register(
        "proxy_forwarded",
        "Allowed proxied tool calls by server and the path that carried them upstream (wire: relayed as bytes; \
         rmcp: through hal0's MCP client)",
        forwarded.clone(),
    );
    let relay = Family::<Outcome, Counter>::default();
    registry.register("relay_asks", "Relay asks by how they ended (ok or the failure)", relay.clone());
    let store_seconds = store_latency();
    registry.register("store_call_seconds", "Latency of the daemon's store calls", store_seconds.clone());
    let websockets = Gauge::default();
    registry.register("websockets_open", "Open relay WebSockets", websockets.clone());
    let sessions = Gauge::default();
    registry.register("mcp_sessions_open", "Open MCP sessions", sessions.clone());
    let approvals = Gauge::default();
    registry.register("approvals_pending", "Approvals waiting for a person", approvals.clone());
    let runs = Family::<Status, Gauge>::default();
    registry.register("runs", "Agent bridge runs in the ledger by status", runs.clone());
    Metrics {
        registry,
        calls,
        call_seconds,
        proxy,
        forwarded,
        relay,
        store_seconds,
        websockets,
        sessions,
        approvals,
        runs,
    }
});

/// An MCP server's label: `agents`, `memory`, `admin`, `relay`, `proxy/<id>` (the audit
/// surface without its `mcp:`).
fn server_of(surface: &str) -> String {
    surface.strip_prefix("mcp:").unwrap_or(surface).to_string()
}

/// Distinct (server, tool) label pairs at most; calls past it count as tool `_other`.
pub const MAX_TOOL_LABELS: usize = 1024;

/// The tool label of a call: the caller names the tool, so a name that is not plain
/// (`A-Z a-z 0-9 _ - . /`, at most 64) is `_invalid` (prometheus-client writes label values
/// unescaped), a name shaped like a secret is `_redacted`, a name not seen to reach a tool
/// before (`reached`: the call ended `ok` or `is_error`, which only a tool the server has
/// can do) is `_unknown`, and past [`MAX_TOOL_LABELS`] distinct pairs a new one is `_other`.
fn tool_label(server: &str, tool: &str, reached: bool) -> String {
    type Seen = std::collections::HashMap<String, std::collections::HashSet<String>>;
    static SEEN: LazyLock<std::sync::RwLock<(Seen, usize)>> = LazyLock::new(Default::default);
    let plain = !tool.is_empty()
        && tool.len() <= 64
        && tool.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'));
    if !plain {
        return "_invalid".into();
    }
    // A pair seen before (nearly every call) is a shared read without allocating; a
    // secret-shaped name is never recorded, so only a new name is scanned.
    let known = |seen: &Seen| seen.get(server).is_some_and(|tools| tools.contains(tool));
    if known(&SEEN.read().unwrap_or_else(|p| p.into_inner()).0) {
        return tool.to_string();
    }
    if crate::base::redact::is_secret_shaped(tool) || crate::base::redact::redact(tool) != tool {
        return "_redacted".into();
    }
    let mut guard = SEEN.write().unwrap_or_else(|p| p.into_inner());
    let (seen, pairs) = &mut *guard;
    if known(seen) {
        return tool.to_string();
    }
    if !reached {
        return "_unknown".into();
    }
    if *pairs >= MAX_TOOL_LABELS {
        return "_other".into();
    }
    seen.entry(server.to_string()).or_default().insert(tool.to_string());
    *pairs += 1;
    tool.to_string()
}

/// One MCP tool call ended: `outcome` is `ok`, `is_error` or `protocol_error`.
pub fn tool_call(surface: &str, tool: &str, outcome: &'static str, took: Duration) {
    let m = &*METRICS;
    let server = server_of(surface);
    let tool = tool_label(&server, tool, outcome != "protocol_error");
    m.calls.get_or_create(&CallLabels { server: server.clone(), tool: tool.clone(), outcome }).inc();
    m.call_seconds.get_or_create(&ServerTool { server, tool }).observe(took.as_secs_f64());
}

/// The outcome label of an rmcp tool call result.
pub fn outcome_of(out: &Result<rmcp::model::CallToolResponse, rmcp::ErrorData>) -> &'static str {
    match out {
        Ok(rmcp::model::CallToolResponse::Complete(r)) if r.is_error == Some(true) => "is_error",
        Ok(_) => "ok",
        Err(_) => "protocol_error",
    }
}

/// The proxy decided about a call to `surface`'s server.
pub fn proxy_verdict(surface: &str, verdict: &str) {
    METRICS.proxy.get_or_create(&Verdict { server: server_of(surface), verdict: verdict.to_string() }).inc();
}

/// An allowed proxied call to `surface`'s server went upstream by `path` (`wire`, `rmcp`).
pub fn proxy_forwarded(surface: &str, path: &'static str) {
    METRICS.forwarded.get_or_create(&Path { server: server_of(surface), path }).inc();
}

/// A relay ask ended as `outcome` (`ok`, `timeout`, `agent_offline`, …).
pub fn relay_ask(outcome: &str) {
    METRICS.relay.get_or_create(&Outcome { outcome: outcome.to_string() }).inc();
}

/// A store call took `took`.
pub fn store_call(took: Duration) {
    METRICS.store_seconds.observe(took.as_secs_f64());
}

/// Counts an open WebSocket while it lives.
pub struct OpenSocket(());

impl Drop for OpenSocket {
    fn drop(&mut self) {
        METRICS.websockets.dec();
    }
}

/// A WebSocket opened; it is counted until the guard drops.
pub fn websocket() -> OpenSocket {
    METRICS.websockets.inc();
    OpenSocket(())
}

/// What is read at scrape time.
pub struct Snapshot {
    pub sessions: usize,
    pub approvals_pending: i64,
    pub runs: Vec<(String, i64)>,
}

/// The OpenMetrics text of every metric, with `now`'s readings.
pub fn render(now: Snapshot) -> String {
    let m = &*METRICS;
    m.sessions.set(now.sessions as i64);
    m.approvals.set(now.approvals_pending);
    m.runs.clear();
    for (status, n) in now.runs {
        m.runs.get_or_create(&Status { status }).set(n);
    }
    let mut out = String::new();
    if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &m.registry) {
        tracing::error!("cannot encode the metrics: {e}");
    }
    out
}

/// The content type of [`render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caller_named_tools_cannot_inject_or_explode_labels() {
        assert_eq!(tool_label("t1", "echo", true), "echo");
        for bad in ["x\"} 1\nfake_metric 9", "a b", "", &"x".repeat(65)] {
            assert_eq!(tool_label("t1", bad, true), "_invalid", "{bad:?}");
        }
        // Names a caller makes up never reach a tool: one label for all of them.
        for i in 0..50 {
            assert_eq!(tool_label("t3", &format!("made_up_{i}"), false), "_unknown");
        }
        assert_eq!(tool_label("t1", "echo", false), "echo", "a tool seen before keeps its name when a call fails");
        // A key sent as a tool name is never a label.
        let key = format!("hal0bk_{}xyz", "a1B2c3D4e5".repeat(4));
        assert_eq!(tool_label("t3", &key, true), "_redacted");
        assert_eq!(tool_label("t3", "ghp_0123456789abcdefABCDEF0123456789abcd", false), "_redacted");
        for i in 0..MAX_TOOL_LABELS + 10 {
            tool_label("t2", &format!("tool{i}"), true);
        }
        assert_eq!(tool_label("t2", "one_more", true), "_other");
        assert_eq!(tool_label("t1", "echo", true), "echo", "a pair already seen keeps its name");
    }
}
