//! OpenTelemetry traces of MCP calls, through the OpenTelemetry SDK and its OTLP/HTTP
//! (protobuf) exporter. On when `[telemetry].otlp_endpoint` is set or the standard
//! environment names a collector (`OTEL_EXPORTER_OTLP_ENDPOINT`,
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); off with `OTEL_SDK_DISABLED=true` or
//! `OTEL_TRACES_EXPORTER=none`. The SDK reads the rest of the standard configuration itself:
//! `OTEL_EXPORTER_OTLP_HEADERS` (a hosted collector's key), `_TIMEOUT`, `_COMPRESSION`,
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER[_ARG]`,
//! `OTEL_BSP_*`. hal0.toml wins where both name the same thing (its endpoint; its
//! `service_name` when it is not the default).
//!
//! One `SERVER` span per MCP tool call, named and attributed after the OpenTelemetry MCP
//! semantic conventions (`tools/call <tool>`, `mcp.method.name`, `gen_ai.tool.name`,
//! `gen_ai.operation.name`, `mcp.session.id`, `mcp.protocol.version`, `jsonrpc.request.id`,
//! `error.type`, `client.address`); the caller's W3C `traceparent` and `tracestate` (in the
//! request's `_meta`, SEP-414, else its HTTP headers) make it a child of the caller's span.
//! The proxy's call upstream is a `CLIENT` child span whose context goes upstream in the
//! call's `_meta`. The exporter sends with hal0's own HTTP client (its roots, its redirect
//! rule), driven on the daemon's runtime; a collector that fails is logged once a minute.

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// OpenTelemetry traces of MCP calls.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Telemetry {
    /// An OTLP/HTTP collector's base URL (spans go to `<url>/v1/traces`); unset: no traces.
    pub otlp_endpoint: Option<String>,
    /// `service.name` of the spans.
    pub service_name: String,
}

impl Default for Telemetry {
    fn default() -> Self {
        Telemetry { otlp_endpoint: None, service_name: "hal0".into() }
    }
}

pub use opentelemetry::trace::SpanContext;

tokio::task_local! {
    /// The span the current task works within (the MCP call being served).
    static CURRENT: SpanContext;
}

/// The current task's span, if any.
pub fn current() -> Option<SpanContext> {
    CURRENT.try_with(|c| c.clone()).ok()
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
    Server,
    Client,
}

struct Tracing {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

static TRACING: OnceLock<Tracing> = OnceLock::new();

/// Whether spans are recorded (a collector is configured and the exporter runs).
pub fn enabled() -> bool {
    TRACING.get().is_some()
}

/// One span being recorded; exported when [`Span::end`] is called.
pub struct Span {
    pub ctx: SpanContext,
    inner: opentelemetry_sdk::trace::Span,
}

impl std::fmt::Debug for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Span").field("ctx", &self.ctx).finish()
    }
}

impl Span {
    /// A span named `name` under `parent` (a new trace without one); `None` when tracing is
    /// off, so a caller pays nothing.
    pub fn start(name: impl Into<String>, kind: Kind, parent: Option<SpanContext>) -> Option<Span> {
        let t = TRACING.get()?;
        let cx = match parent {
            Some(p) if p.is_valid() => Context::new().with_remote_span_context(p),
            _ => Context::new(),
        };
        let kind = match kind {
            Kind::Server => SpanKind::Server,
            Kind::Client => SpanKind::Client,
        };
        let inner = t.tracer.span_builder(name.into()).with_kind(kind).start_with_context(&t.tracer, &cx);
        Some(Span { ctx: inner.span_context().clone(), inner })
    }

    pub fn attr(&mut self, key: &'static str, value: impl Into<String>) {
        self.inner.set_attribute(KeyValue::new(key, value.into()));
    }

    /// The call failed with `error_type` (`error.type`, and the span's status with
    /// `message`, the error in words where there is one).
    pub fn fail(&mut self, error_type: impl Into<String>, message: Option<String>) {
        let e = error_type.into();
        self.inner.set_status(Status::error(message.unwrap_or_else(|| e.clone())));
        self.inner.set_attribute(KeyValue::new("error.type", e));
    }

    /// This span's context as `_meta` carries it (SEP-414): `traceparent` and, when there
    /// is one, `tracestate`.
    pub fn meta(&self) -> rmcp::model::RequestMetaObject {
        let mut carrier = HashMap::new();
        TraceContextPropagator::new()
            .inject_context(&Context::new().with_remote_span_context(self.ctx.clone()), &mut carrier);
        let mut meta = rmcp::model::RequestMetaObject::default();
        if let Some(tp) = carrier.remove("traceparent") {
            meta.set_traceparent(tp);
        }
        if let Some(ts) = carrier.remove("tracestate").filter(|s| !s.is_empty()) {
            meta.set_tracestate(ts);
        }
        meta
    }

    /// End the span now; the SDK's batch processor exports it.
    pub fn end(mut self) {
        self.inner.end();
    }
}

/// The parent a caller named: its W3C `traceparent` (and `tracestate`), `None` when absent
/// or malformed.
pub fn parent_of(traceparent: Option<&str>, tracestate: Option<&str>) -> Option<SpanContext> {
    let mut carrier = HashMap::new();
    carrier.insert("traceparent".to_string(), traceparent?.trim().to_string());
    if let Some(ts) = tracestate {
        carrier.insert("tracestate".to_string(), ts.to_string());
    }
    let cx = TraceContextPropagator::new().extract(&carrier);
    let sc = cx.span().span_context().clone();
    sc.is_valid().then_some(sc)
}

/// Where spans go and under which name, from hal0.toml and the standard environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The traces URL hal0.toml names (`<otlp_endpoint>/v1/traces`); `None`: the SDK takes
    /// it from `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`.
    pub endpoint: Option<String>,
    /// The service name to set; `None`: the SDK takes `OTEL_SERVICE_NAME`.
    pub service_name: Option<String>,
}

/// Whether to trace and how; `None`: off. `env` reads one environment variable.
pub fn plan(cfg: &Telemetry, env: impl Fn(&str) -> Option<String>) -> Option<Plan> {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        || set("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"))
    {
        return None;
    }
    let endpoint = cfg.otlp_endpoint.as_deref().map(|e| format!("{}/v1/traces", e.trim_end_matches('/')));
    let from_env = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| set("OTEL_EXPORTER_OTLP_ENDPOINT"));
    if endpoint.is_none() && from_env.is_none() {
        return None;
    }
    let default_name = cfg.service_name == Telemetry::default().service_name;
    let service_name = (!default_name || set("OTEL_SERVICE_NAME").is_none()).then(|| cfg.service_name.clone());
    Some(Plan { endpoint, service_name })
}

/// Start the exporter on the current runtime when a collector is configured (once per
/// process). Returns whether tracing is on.
pub fn init(cfg: &Telemetry) -> crate::base::error::Result<bool> {
    use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
    let Some(plan) = plan(cfg, |k| std::env::var(k).ok()) else { return Ok(false) };
    if TRACING.get().is_some() {
        return Ok(true);
    }
    let http = crate::base::outbound::build(crate::base::outbound::builder(None)?.timeout(Duration::from_secs(10)))?;
    let client = OnRuntime { http, rt: tokio::runtime::Handle::current(), warned: Mutex::new(None) };
    let mut exporter = opentelemetry_otlp::SpanExporter::builder().with_http().with_http_client(client);
    if let Some(e) = &plan.endpoint {
        exporter = exporter.with_endpoint(e.clone());
    }
    let exporter = exporter
        .build()
        .map_err(|e| crate::base::error::Error::internal(format!("telemetry: cannot build the OTLP exporter: {e}")))?;
    let mut resource = opentelemetry_sdk::Resource::builder()
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    if let Some(name) = &plan.service_name {
        resource = resource.with_service_name(name.clone());
    }
    let provider = SdkTracerProvider::builder().with_resource(resource.build()).with_batch_exporter(exporter).build();
    let tracer = provider.tracer("hal0");
    let _ = TRACING.set(Tracing { provider, tracer });
    let to = plan.endpoint.as_deref().unwrap_or("the collector OTEL_EXPORTER_OTLP_*ENDPOINT names");
    tracing::info!("telemetry: sending MCP call traces to {} (OTLP/HTTP protobuf)", crate::base::redact::redact(to));
    Ok(true)
}

/// Export what is still queued and stop the exporter (at shutdown; waits at most a few
/// seconds for the collector).
pub async fn shutdown() {
    let Some(t) = TRACING.get() else { return };
    let provider = t.provider.clone();
    let done = tokio::task::spawn_blocking(move || provider.shutdown());
    let _ = tokio::time::timeout(Duration::from_secs(5), done).await;
}

/// The exporter's HTTP client: hal0's reqwest client, its requests run on the daemon's
/// runtime (the SDK's batch thread has none); a failed export is logged once a minute.
struct OnRuntime {
    http: reqwest::Client,
    rt: tokio::runtime::Handle,
    warned: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for OnRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnRuntime")
    }
}

impl OnRuntime {
    fn warn(&self, url: &str, why: &str) {
        let mut w = self.warned.lock().unwrap_or_else(|p| p.into_inner());
        if w.is_none_or(|t| t.elapsed() > Duration::from_secs(60)) {
            tracing::warn!(
                "telemetry: cannot send spans to {}: {}",
                crate::base::redact::redact(url),
                crate::base::redact::redact(why)
            );
            *w = Some(Instant::now());
        }
    }
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for OnRuntime {
    async fn send_bytes(
        &self,
        req: opentelemetry_http::Request<opentelemetry_http::Bytes>,
    ) -> Result<opentelemetry_http::Response<opentelemetry_http::Bytes>, opentelemetry_http::HttpError> {
        let url = req.uri().to_string();
        let http = self.http.clone();
        let sent = self
            .rt
            .spawn(async move {
                let r = http.execute(reqwest::Request::try_from(req)?).await?;
                let mut answer = opentelemetry_http::Response::builder().status(r.status());
                for (k, v) in r.headers() {
                    answer = answer.header(k, v);
                }
                Ok::<_, opentelemetry_http::HttpError>(answer.body(r.bytes().await?)?)
            })
            .await
            .map_err(|e| -> opentelemetry_http::HttpError { Box::new(e) })
            .and_then(|r| r);
        match &sent {
            Ok(r) if !r.status().is_success() => self.warn(&url, &format!("the collector answered {}", r.status())),
            Ok(_) => {}
            Err(e) => self.warn(&url, &e.to_string()),
        }
        sent
    }
}

/// What a tool call's span takes from its request: the caller's W3C trace context (the
/// request's `_meta`, else its HTTP headers), the MCP session, the protocol version, the
/// JSON-RPC id and the peer's address.
#[derive(Debug, Clone, Default)]
pub struct Incoming {
    pub traceparent: Option<String>,
    pub tracestate: Option<String>,
    pub session: Option<String>,
    pub protocol_version: Option<String>,
    pub request_id: String,
    pub client: Option<std::net::SocketAddr>,
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
        let (tp, ts) = match ctx.meta.get_traceparent() {
            Some(tp) => (Some(tp.to_string()), ctx.meta.get_tracestate().map(str::to_string)),
            None => (header("traceparent"), header("tracestate")),
        };
        Incoming {
            traceparent: tp,
            tracestate: ts,
            session: header("mcp-session-id"),
            protocol_version: header("mcp-protocol-version")
                .or_else(|| ctx.peer.peer_info().map(|i| i.protocol_version.to_string())),
            request_id: ctx.id.to_string(),
            client: parts
                .and_then(|p| p.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>())
                .map(|c| c.0),
        }
    }
}

/// The MCP `tools/call` server span of `tool` on `server`, under the caller's context.
pub fn tool_call_span(server: &str, tool: &str, from: &Incoming) -> Option<Span> {
    let parent = parent_of(from.traceparent.as_deref(), from.tracestate.as_deref());
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
    if let Some(v) = &from.protocol_version {
        s.attr("mcp.protocol.version", v.clone());
    }
    if let Some(a) = from.client {
        s.attr("client.address", a.ip().to_string());
        s.inner.set_attribute(KeyValue::new("client.port", i64::from(a.port())));
    }
    Some(s)
}

/// Record how a tool call ended on its span and end it.
pub fn end_tool_call(span: Option<Span>, out: &Result<rmcp::model::CallToolResponse, rmcp::ErrorData>) {
    let Some(mut s) = span else { return };
    match out {
        Ok(rmcp::model::CallToolResponse::Complete(r)) if r.is_error == Some(true) => s.fail("tool_error", None),
        Ok(_) => {}
        Err(e) => {
            s.attr("rpc.response.status_code", e.code.0.to_string());
            s.fail(e.code.0.to_string(), Some(crate::base::redact::redact(&e.message).into_owned()));
        }
    }
    s.end();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callers_traceparent_is_read_and_bad_ones_are_ignored() {
        let tp = format!("00-{}-{}-01", "ab".repeat(16), "01".repeat(8));
        let p = parent_of(Some(&tp), Some("vendor=x")).expect("a valid parent");
        assert_eq!(p.trace_id().to_string(), "ab".repeat(16));
        assert_eq!(p.span_id().to_string(), "01".repeat(8));
        assert_eq!(p.trace_state().get("vendor"), Some("x"));
        assert!(p.is_sampled() && p.is_remote());
        for bad in [
            "",
            "00-xyz-01-01",
            &format!("00-{}-{}-01", "0".repeat(32), "1".repeat(16)),
            &format!("ff-{}-{}-01", "a".repeat(32), "1".repeat(16)),
        ] {
            assert_eq!(parent_of(Some(bad), None), None, "{bad}");
        }
        assert_eq!(parent_of(None, Some("vendor=x")), None);
    }

    #[test]
    fn the_plan_follows_hal0_toml_then_the_standard_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let mut cfg = Telemetry::default();
        assert_eq!(plan(&cfg, env(&[])), None, "no collector named: off");
        let from_env =
            plan(&cfg, env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), ("OTEL_SERVICE_NAME", "box")]));
        assert_eq!(from_env, Some(Plan { endpoint: None, service_name: None }), "the SDK reads both");
        let traces_only = plan(&cfg, env(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces")]));
        assert_eq!(traces_only, Some(Plan { endpoint: None, service_name: Some("hal0".into()) }));
        cfg.otlp_endpoint = Some("http://127.0.0.1:4318/".into());
        cfg.service_name = "box-a".into();
        let toml = plan(&cfg, env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), ("OTEL_SERVICE_NAME", "box")]));
        assert_eq!(
            toml,
            Some(Plan { endpoint: Some("http://127.0.0.1:4318/v1/traces".into()), service_name: Some("box-a".into()) })
        );
        for off in [[("OTEL_SDK_DISABLED", "true")], [("OTEL_TRACES_EXPORTER", "none")]] {
            let off: &'static [(&str, &str)] = Box::leak(Box::new(off));
            assert_eq!(plan(&cfg, env(off)), None, "{off:?}");
        }
    }
}
