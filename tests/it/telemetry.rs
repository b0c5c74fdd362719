//! OpenTelemetry traces received on a local OTLP/HTTP collector stub: a proxied call with
//! the caller's `traceparent` in `_meta` is a SERVER span in the caller's trace, named and
//! attributed after the MCP semantic conventions, whose CLIENT child is the upstream call;
//! the upstream receives that child's `traceparent`; a call without trace context starts
//! its own trace; a tool error marks its span. The standard OpenTelemetry environment
//! (`OTEL_EXPORTER_OTLP_ENDPOINT`, `_HEADERS`, `OTEL_SERVICE_NAME`) configures it alone, and
//! hal0.toml's endpoint and service name win over it.

use crate::support::mcp::{call, connect_with};
use crate::support::upstream::RmcpUpstream;
use crate::support::*;
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use prost::Message;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// An OTLP/HTTP collector stub: every span POSTed to `/v1/traces` (protobuf, decoded with
/// the official OTLP message types), with its resource's `service.name`, and each request's
/// `authorization` header.
struct Collector {
    port: u16,
    spans: Arc<Mutex<Vec<(String, Value)>>>,
    auth: Arc<Mutex<Vec<String>>>,
}

impl Collector {
    async fn start() -> Collector {
        let spans: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
        let auth: Arc<Mutex<Vec<String>>> = Arc::default();
        let (keep, keep_auth) = (spans.clone(), auth.clone());
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let (keep, keep_auth) = (keep.clone(), keep_auth.clone());
                async move {
                    assert_eq!(headers["content-type"], "application/x-protobuf");
                    if let Some(a) = headers.get("authorization") {
                        keep_auth.lock().unwrap().push(a.to_str().unwrap().to_string());
                    }
                    keep.lock().unwrap().extend(decoded(&body));
                    let answer = ExportTraceServiceResponse::default().encode_to_vec();
                    ([("content-type", "application/x-protobuf")], answer)
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, app).await.ok() });
        Collector { port, spans, auth }
    }

    /// The spans named `name` once there are `n` of them (waiting up to 15 s).
    async fn wait(&self, name: &str, n: usize) -> Vec<(String, Value)> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let got: Vec<_> = self.spans.lock().unwrap().iter().filter(|(_, s)| s["name"] == name).cloned().collect();
            if got.len() >= n || Instant::now() > deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Each span of an OTLP protobuf export as OTLP's JSON shape names it (hex ids, string
/// nanoseconds, `{"key", "value": {"stringValue" | "intValue"}}` attributes), with its
/// resource's `service.name`.
fn decoded(body: &[u8]) -> Vec<(String, Value)> {
    use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
    let attrs = |list: &[KeyValue]| {
        Value::Array(
            list.iter()
                .map(|kv| {
                    let v = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                        Some(any_value::Value::StringValue(s)) => json!({"stringValue": s}),
                        Some(any_value::Value::IntValue(i)) => json!({"intValue": i.to_string()}),
                        Some(any_value::Value::BoolValue(b)) => json!({"boolValue": b}),
                        other => json!({"other": format!("{other:?}")}),
                    };
                    json!({"key": kv.key, "value": v})
                })
                .collect(),
        )
    };
    let req = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf export");
    let mut out = Vec::new();
    for rs in req.resource_spans {
        let resource = attrs(&rs.resource.map(|r| r.attributes).unwrap_or_default());
        let service = attr(&resource, "service.name").unwrap_or_default();
        for s in rs.scope_spans.into_iter().flat_map(|ss| ss.spans) {
            let mut v = json!({
                "traceId": hex(&s.trace_id),
                "spanId": hex(&s.span_id),
                "name": s.name,
                "kind": s.kind,
                "startTimeUnixNano": s.start_time_unix_nano.to_string(),
                "endTimeUnixNano": s.end_time_unix_nano.to_string(),
                "attributes": attrs(&s.attributes),
                "status": s.status.map(|st| json!({"code": st.code, "message": st.message})).unwrap_or(json!({"code": 0})),
            });
            if !s.parent_span_id.is_empty() {
                v["parentSpanId"] = json!(hex(&s.parent_span_id));
            }
            out.push((service.clone(), v));
        }
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A string attribute of an OTLP key-value list.
fn attr(list: &Value, key: &str) -> Option<String> {
    list.as_array()?.iter().find(|kv| kv["key"] == key)?["value"]["stringValue"].as_str().map(str::to_string)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxied_call_is_a_span_tree_in_the_callers_trace() {
    let collector = Collector::start().await;
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    std::fs::write(
        env.config_dir().join("hal0.toml"),
        format!(
            "[telemetry]\notlp_endpoint = \"http://127.0.0.1:{}\"\nservice_name = \"hal0-box-a\"\n",
            collector.port
        ),
    )
    .unwrap();
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    env.ok(&["mcp", "allow", "up", "whoami"]);
    env.ok(&["mcp", "block", "up", "delete_everything"]);
    let consumer = env.json(&["mcp", "keys", "add", "up", "ci", "--json"])["key"].as_str().unwrap().to_string();
    let bridge = env.bridge_key("ops", &[]);
    let server = env.serve();

    // The caller's trace context rides in `_meta` (SEP-414).
    let (trace, parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let c = connect_with(&server, "proxy/up", &consumer, false).await;
    let mut p = CallToolRequestParams::new("whoami");
    let mut meta = rmcp::model::RequestMetaObject::default();
    meta.set_traceparent(format!("00-{trace}-{parent}-01"));
    p.meta = Some(meta);
    let r = c.call_tool(p).await.unwrap();
    let seen: Value = serde_json::from_str(&r.content[0].as_text().unwrap().text).unwrap();
    assert!(call(&c, "delete_everything", json!({"confirm": true})).await.is_err());
    let a = connect_with(&server, "agents", &bridge, false).await;
    call(&a, "agent_runs_list", json!({})).await.unwrap();

    let spans = collector.wait("tools/call whoami", 2).await;
    assert_eq!(spans.len(), 2, "a server span and its client child: {spans:?}");
    let (service, server_span) = spans.iter().find(|(_, s)| s["kind"] == 2).expect("the SERVER span").clone();
    let (_, client_span) = spans.iter().find(|(_, s)| s["kind"] == 3).expect("the CLIENT span").clone();
    assert_eq!(service, "hal0-box-a");
    assert_eq!(server_span["traceId"], trace, "the caller's trace");
    assert_eq!(server_span["parentSpanId"], parent, "under the caller's span");
    assert_eq!(client_span["traceId"], trace);
    assert_eq!(client_span["parentSpanId"], server_span["spanId"], "the upstream call is the served call's child");
    let attrs = &server_span["attributes"];
    assert_eq!(attr(attrs, "mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(attr(attrs, "gen_ai.tool.name").as_deref(), Some("whoami"));
    assert_eq!(attr(attrs, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert!(attr(attrs, "mcp.session.id").is_some_and(|s| !s.is_empty()), "{attrs}");
    assert!(attr(attrs, "jsonrpc.request.id").is_some(), "{attrs}");
    let (start, end) =
        (server_span["startTimeUnixNano"].as_str().unwrap(), server_span["endTimeUnixNano"].as_str().unwrap());
    assert!(start.parse::<u128>().unwrap() <= end.parse::<u128>().unwrap());
    // The upstream got the CLIENT span's context.
    let want = format!("00-{trace}-{}-01", client_span["spanId"].as_str().unwrap());
    assert_eq!(seen["traceparent"], want.as_str(), "{seen}");

    // A blocked call is a failed span; a call without context starts a trace of its own.
    let blocked = collector.wait("tools/call delete_everything", 1).await;
    assert_eq!(blocked.len(), 1, "blocked calls never go upstream: one span");
    assert_eq!(blocked[0].1["status"]["code"], 2);
    assert_eq!(attr(&blocked[0].1["attributes"], "error.type").as_deref(), Some("tool_error"));
    let listed = collector.wait("tools/call agent_runs_list", 1).await;
    assert_eq!(listed.len(), 1);
    assert!(listed[0].1.get("parentSpanId").is_none(), "a root span");
    assert_ne!(listed[0].1["traceId"], trace);
    assert_eq!(attr(&listed[0].1["attributes"], "hal0.mcp.server").as_deref(), Some("agents"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standard_environment_alone_configures_the_exporter() {
    let collector = Collector::start().await;
    let env = Env::new();
    let bridge = env.bridge_key("ops", &[]);
    let endpoint = format!("http://127.0.0.1:{}", collector.port);
    let server = env.serve_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20collector-key-1"),
        ("OTEL_SERVICE_NAME", "box-from-env"),
    ]);
    let a = connect_with(&server, "agents", &bridge, false).await;
    call(&a, "agent_runs_list", json!({})).await.unwrap();
    let spans = collector.wait("tools/call agent_runs_list", 1).await;
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert_eq!(spans[0].0, "box-from-env", "OTEL_SERVICE_NAME names the service");
    let attrs = &spans[0].1["attributes"];
    assert!(attr(attrs, "mcp.protocol.version").is_some_and(|v| v.starts_with("20")), "{attrs}");
    assert_eq!(attr(attrs, "client.address").as_deref(), Some("127.0.0.1"), "{attrs}");
    let auth = collector.auth.lock().unwrap().clone();
    assert!(!auth.is_empty() && auth.iter().all(|a| a == "Bearer collector-key-1"), "the collector's key: {auth:?}");
}

#[test]
fn a_bad_endpoint_is_refused_with_its_key() {
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    for bad in ["collector:4318", "http://user:pw@127.0.0.1:4318", "http://127.0.0.1:4318/?token=x"] {
        let o = env.run(&["config", "set", "telemetry.otlp_endpoint", bad]);
        assert_eq!(o.code(), 2, "{bad}: {}", o.stderr());
        assert!(o.stderr().contains("telemetry.otlp_endpoint"), "{}", o.stderr());
    }
    assert!(
        !env.config_dir().join("hal0.toml").exists()
            || !std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap().contains("collector")
    );
    env.ok(&["config", "set", "telemetry.otlp_endpoint", "http://127.0.0.1:4318"]);
}
