//! OpenTelemetry traces of MCP calls, sent over OTLP/HTTP (JSON) when
//! `[telemetry].otlp_endpoint` is set. One `SERVER` span per MCP tool call, named and
//! attributed after the MCP semantic conventions (`tools/call <tool>`, `mcp.method.name`,
//! `gen_ai.tool.name`, `gen_ai.operation.name`, `mcp.session.id`, `jsonrpc.request.id`,
//! `error.type`); a caller's W3C `traceparent` (in the request's `_meta`, SEP-414, or its
//! HTTP header) makes it a child of the caller's span. The proxy's call upstream is a
//! `CLIENT` child span, and its `traceparent` goes upstream in the call's `_meta`.
//!
//! A deliberately small exporter instead of the OpenTelemetry SDK (which would add a second
//! HTTP stack and a protobuf toolchain to the build): spans are queued (at most
//! [`QUEUE`]; past that they are dropped and counted in the log), a task sends them in
//! batches every [`EVERY`] with hal0's own HTTP client, and a collector that fails is
//! logged once a minute. With no endpoint nothing is recorded at all.

use serde_json::{Value, json};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;

/// Spans waiting to be sent at most.
pub const QUEUE: usize = 8192;
/// How often a batch goes out.
pub const EVERY: Duration = Duration::from_millis(500);
/// Spans in one request at most.
const BATCH: usize = 512;

/// A span's identity: its trace and its own id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanContext {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
}

impl SpanContext {
    /// The W3C `traceparent` naming this span as the parent (sampled).
    pub fn traceparent(&self) -> String {
        format!("00-{}-{}-01", hex::encode(self.trace_id), hex::encode(self.span_id))
    }

    /// A `traceparent` value's trace and parent span (`None` when malformed or all zero).
    pub fn parse(tp: &str) -> Option<SpanContext> {
        let mut parts = tp.trim().split('-');
        let (version, trace, span) = (parts.next()?, parts.next()?, parts.next()?);
        let _flags = parts.next()?;
        if version.len() != 2 || version == "ff" {
            return None;
        }
        let mut trace_id = [0u8; 16];
        let mut span_id = [0u8; 8];
        hex::decode_to_slice(trace, &mut trace_id).ok()?;
        hex::decode_to_slice(span, &mut span_id).ok()?;
        (trace_id != [0; 16] && span_id != [0; 8]).then_some(SpanContext { trace_id, span_id })
    }
}

tokio::task_local! {
    /// The span the current task works within (the MCP call being served).
    static CURRENT: SpanContext;
}

/// The current task's span, if any.
pub fn current() -> Option<SpanContext> {
    CURRENT.try_with(|c| *c).ok()
}

/// Run `f` within span `ctx` (children made inside take it as parent).
pub async fn within<F: std::future::Future>(ctx: Option<SpanContext>, f: F) -> F::Output {
    match ctx {
        Some(c) => CURRENT.scope(c, f).await,
        None => f.await,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Server = 2,
    Client = 3,
}

/// One span being recorded; sent when [`Span::end`] is called.
#[derive(Debug)]
pub struct Span {
    pub ctx: SpanContext,
    parent: Option<[u8; 8]>,
    name: String,
    kind: Kind,
    start: SystemTime,
    attributes: Vec<(&'static str, Value)>,
    error: Option<String>,
}

struct Exporter {
    tx: mpsc::Sender<Value>,
}

static EXPORTER: OnceLock<Exporter> = OnceLock::new();

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    if getrandom::fill(&mut b).is_err() || b == [0u8; N] {
        // Never an all-zero id (invalid in W3C trace context).
        b[N - 1] = 1;
    }
    b
}

/// Whether spans are recorded (an endpoint is configured and the exporter runs).
pub fn enabled() -> bool {
    EXPORTER.get().is_some()
}

impl Span {
    /// A span named `name` under `parent` (a new trace without one); `None` when tracing is
    /// off, so a caller pays nothing.
    pub fn start(name: impl Into<String>, kind: Kind, parent: Option<SpanContext>) -> Option<Span> {
        if !enabled() {
            return None;
        }
        let ctx = SpanContext { trace_id: parent.map_or_else(random, |p| p.trace_id), span_id: random() };
        Some(Span {
            ctx,
            parent: parent.map(|p| p.span_id),
            name: name.into(),
            kind,
            start: SystemTime::now(),
            attributes: Vec::new(),
            error: None,
        })
    }

    pub fn attr(&mut self, key: &'static str, value: impl Into<Value>) {
        self.attributes.push((key, value.into()));
    }

    /// The call failed with `error_type` (`error.type`, and the span's status).
    pub fn fail(&mut self, error_type: impl Into<String>) {
        self.error = Some(error_type.into());
    }

    /// End the span now and queue it for the collector.
    pub fn end(mut self) {
        if let Some(e) = self.error.clone() {
            self.attributes.push(("error.type", Value::String(e)));
        }
        let Some(x) = EXPORTER.get() else { return };
        if x.tx.try_send(self.to_otlp(SystemTime::now())).is_err() {
            tracing::debug!("telemetry: the span queue is full; a span was dropped");
        }
    }

    fn to_otlp(&self, end: SystemTime) -> Value {
        let nanos = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos().to_string();
        let mut v = json!({
            "traceId": hex::encode(self.ctx.trace_id),
            "spanId": hex::encode(self.ctx.span_id),
            "name": self.name,
            "kind": self.kind as i32,
            "startTimeUnixNano": nanos(self.start),
            "endTimeUnixNano": nanos(end),
            "attributes": attributes(&self.attributes),
            "status": match &self.error {
                Some(e) => json!({"code": 2, "message": e}),
                None => json!({"code": 0}),
            },
        });
        if let Some(p) = self.parent {
            v["parentSpanId"] = json!(hex::encode(p));
        }
        v
    }
}

/// OTLP's JSON `KeyValue` list.
fn attributes(list: &[(&str, Value)]) -> Value {
    Value::Array(
        list.iter()
            .map(|(k, v)| {
                let value = match v {
                    Value::Bool(b) => json!({"boolValue": b}),
                    Value::Number(n) if n.is_i64() => json!({"intValue": n.to_string()}),
                    Value::Number(n) => json!({"doubleValue": n.as_f64()}),
                    Value::String(s) => json!({"stringValue": s}),
                    other => json!({"stringValue": other.to_string()}),
                };
                json!({"key": k, "value": value})
            })
            .collect(),
    )
}

/// Start the exporter on the current runtime when `cfg` names an endpoint (once per
/// process). Returns whether tracing is on.
pub fn init(cfg: &crate::config::Telemetry) -> crate::error::Result<bool> {
    let Some(endpoint) = cfg.otlp_endpoint.as_deref() else { return Ok(false) };
    let url = format!("{}/v1/traces", endpoint.trim_end_matches('/'));
    let http = crate::outbound::build(crate::outbound::builder(None)?.timeout(Duration::from_secs(10)))?;
    let (tx, rx) = mpsc::channel(QUEUE);
    if EXPORTER.set(Exporter { tx }).is_err() {
        return Ok(true);
    }
    let resource =
        attributes(&[("service.name", json!(cfg.service_name)), ("service.version", json!(env!("CARGO_PKG_VERSION")))]);
    tokio::spawn(send_batches(rx, http, url, resource));
    tracing::info!("telemetry: sending MCP call traces to {endpoint} (OTLP/HTTP JSON)");
    Ok(true)
}

async fn send_batches(mut rx: mpsc::Receiver<Value>, http: reqwest::Client, url: String, resource: Value) {
    let mut last_warning: Option<std::time::Instant> = None;
    loop {
        let Some(first) = rx.recv().await else { return };
        let mut spans = vec![first];
        let deadline = tokio::time::Instant::now() + EVERY;
        while spans.len() < BATCH {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(s)) => spans.push(s),
                Ok(None) | Err(_) => break,
            }
        }
        let body = json!({"resourceSpans": [{
            "resource": {"attributes": resource},
            "scopeSpans": [{"scope": {"name": "hal0", "version": env!("CARGO_PKG_VERSION")}, "spans": spans}],
        }]});
        let sent = http.post(&url).json(&body).send().await;
        let failed = match sent {
            Ok(r) if r.status().is_success() => None,
            Ok(r) => Some(format!("the collector answered {}", r.status())),
            Err(e) => Some(crate::outbound::chain(&e)),
        };
        if let Some(why) = failed
            && last_warning.is_none_or(|t| t.elapsed() > Duration::from_secs(60))
        {
            tracing::warn!("telemetry: cannot send spans to {url}: {}", crate::redact::redact(&why));
            last_warning = Some(std::time::Instant::now());
        }
    }
}

/// What a tool call's span takes from its request: the caller's W3C `traceparent` (the
/// request's `_meta`, else its HTTP header), the MCP session and the JSON-RPC id.
#[derive(Debug, Clone, Default)]
pub struct Incoming {
    pub traceparent: Option<String>,
    pub session: Option<String>,
    pub request_id: String,
}

impl Incoming {
    /// The [`Incoming`] of a request (empty, and never read, while tracing is off).
    pub fn of(ctx: &rmcp::service::RequestContext<rmcp::RoleServer>) -> Incoming {
        if !enabled() {
            return Incoming::default();
        }
        let parts = ctx.extensions.get::<axum::http::request::Parts>();
        let header =
            |name: &str| parts.and_then(|p| p.headers.get(name)).and_then(|v| v.to_str().ok()).map(str::to_string);
        Incoming {
            traceparent: ctx.meta.get_traceparent().map(str::to_string).or_else(|| header("traceparent")),
            session: header("mcp-session-id"),
            request_id: ctx.id.to_string(),
        }
    }
}

/// The MCP `tools/call` server span of `tool` on `server`, under the caller's `traceparent`.
pub fn tool_call_span(server: &str, tool: &str, from: &Incoming) -> Option<Span> {
    let parent = from.traceparent.as_deref().and_then(SpanContext::parse);
    let mut s = Span::start(format!("tools/call {tool}"), Kind::Server, parent)?;
    s.attr("mcp.method.name", "tools/call");
    s.attr("gen_ai.tool.name", tool);
    s.attr("gen_ai.operation.name", "execute_tool");
    s.attr("jsonrpc.request.id", from.request_id.clone());
    s.attr("network.transport", "tcp");
    s.attr("network.protocol.name", "http");
    s.attr("hal0.mcp.server", server);
    if let Some(id) = &from.session {
        s.attr("mcp.session.id", id.clone());
    }
    Some(s)
}

/// Record how a tool call ended on its span and end it.
pub fn end_tool_call(span: Option<Span>, out: &Result<rmcp::model::CallToolResponse, rmcp::ErrorData>) {
    let Some(mut s) = span else { return };
    match out {
        Ok(rmcp::model::CallToolResponse::Complete(r)) if r.is_error == Some(true) => s.fail("tool_error"),
        Ok(_) => {}
        Err(e) => {
            s.attr("rpc.response.status_code", e.code.0.to_string());
            s.fail(e.code.0.to_string());
        }
    }
    s.end();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_round_trips_and_bad_ones_are_ignored() {
        let c = SpanContext { trace_id: [0xab; 16], span_id: [0x01; 8] };
        let tp = c.traceparent();
        assert_eq!(tp, format!("00-{}-{}-01", "ab".repeat(16), "01".repeat(8)));
        assert_eq!(SpanContext::parse(&tp), Some(c));
        for bad in [
            "",
            "00-xyz-01-01",
            &format!("00-{}-{}-01", "0".repeat(32), "1".repeat(16)),
            &format!("ff-{}-{}-01", "a".repeat(32), "1".repeat(16)),
        ] {
            assert_eq!(SpanContext::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn attributes_are_otlp_key_values() {
        let v = attributes(&[("a", json!("x")), ("b", json!(3)), ("c", json!(true))]);
        assert_eq!(
            v,
            json!([
                {"key": "a", "value": {"stringValue": "x"}},
                {"key": "b", "value": {"intValue": "3"}},
                {"key": "c", "value": {"boolValue": true}},
            ])
        );
    }
}
