//! Self-test of the upstream MCP servers in tests/it/support/upstream.rs, driven directly (no hal0)
//! with the rmcp client: tools listed, echo, per-tool call counts, headers seen by `whoami`, and
//! the optional bearer requirement.

use crate::support::upstream::{Everything, FastMcp, RmcpUpstream};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// Connect with an optional bearer key and `X-API-Key`.
async fn connect(url: &str, bearer: Option<&str>, api_key: Option<&str>) -> Result<Client, String> {
    let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(b) = bearer {
        cfg = cfg.auth_header(b.to_string());
    }
    if let Some(k) = api_key {
        let mut headers = std::collections::HashMap::new();
        headers.insert(
            reqwest::header::HeaderName::from_static("x-api-key"),
            reqwest::header::HeaderValue::from_str(k).unwrap(),
        );
        cfg = cfg.custom_headers(headers);
    }
    let handshake = ().serve(StreamableHttpClientTransport::from_config(cfg));
    match tokio::time::timeout(Duration::from_secs(30), handshake).await {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(_) => Err("handshake timed out".into()),
    }
}

/// Call a tool and return its text content (panics on an error result).
async fn call_text(c: &Client, tool: &str, args: Value) -> String {
    let p = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone());
    let r = c.call_tool(p).await.expect("transport");
    let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    assert_ne!(r.is_error, Some(true), "{tool} failed: {text}");
    text
}

async fn tool_names(c: &Client) -> Vec<String> {
    c.list_all_tools().await.expect("tools/list").into_iter().map(|t| t.name.to_string()).collect()
}

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// The shared scenario for the two counting upstreams.
async fn exercise(url: &str, get_counts: impl Fn() -> BTreeMap<String, u64>, bearer: &str) {
    assert!(get_counts().is_empty(), "fresh server has counts: {:?}", get_counts());
    let c = connect(url, Some(bearer), Some("xk-1")).await.expect("connect");
    let mut names = tool_names(&c).await;
    names.sort();
    // `wait` and `ask_then_give_up` are the rmcp upstream's own (for the proxy's
    // cancellation tests).
    names.retain(|n| n != "wait" && n != "ask_then_give_up");
    assert_eq!(names, ["add", "delete_everything", "echo", "whoami"]);
    assert!(get_counts().is_empty(), "listing tools counted as calls: {:?}", get_counts());

    assert_eq!(call_text(&c, "echo", json!({"text": "hello upstream"})).await, "hello upstream");
    assert_eq!(call_text(&c, "echo", json!({"text": "again"})).await, "again");
    assert_eq!(call_text(&c, "add", json!({"a": 2, "b": 40})).await, "42");
    assert_eq!(get_counts(), counts(&[("add", 1), ("echo", 2)]));

    let who: Value = serde_json::from_str(&call_text(&c, "whoami", json!({})).await).expect("whoami JSON");
    assert_eq!(who, json!({"authorization": format!("Bearer {bearer}"), "x-api-key": "xk-1"}));
    assert_eq!(call_text(&c, "delete_everything", json!({"confirm": true})).await, "deleted");
    assert_eq!(get_counts(), counts(&[("add", 1), ("delete_everything", 1), ("echo", 2), ("whoami", 1)]));
    c.cancel().await.unwrap();
}

/// `whoami` without credentials reports nulls.
async fn anonymous_whoami(url: &str) {
    let c = connect(url, None, None).await.expect("connect");
    let who: Value = serde_json::from_str(&call_text(&c, "whoami", json!({})).await).unwrap();
    assert_eq!(who, json!({"authorization": null, "x-api-key": null}));
    c.cancel().await.unwrap();
}

/// Raw initialize POST: its HTTP status.
async fn initialize_status(url: &str, auth: Option<&str>) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "selftest", "version": "1"}}});
    let mut req = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    req.send().await.expect("POST").status().as_u16()
}

/// The bearer requirement: missing or wrong key refused (401 and no handshake), right key served.
async fn bearer_required(url: &str, get_counts: impl Fn() -> BTreeMap<String, u64>) {
    assert_eq!(initialize_status(url, None).await, 401);
    assert_eq!(initialize_status(url, Some("Bearer wrong")).await, 401);
    assert_eq!(initialize_status(url, Some("sekret")).await, 401);
    assert_eq!(initialize_status(url, Some("Bearer sekret")).await, 200);
    assert!(connect(url, None, None).await.is_err(), "handshake without a key succeeded");
    assert!(connect(url, Some("wrong"), None).await.is_err(), "handshake with a wrong key succeeded");
    let c = connect(url, Some("sekret"), None).await.expect("connect with the key");
    assert_eq!(call_text(&c, "echo", json!({"text": "in"})).await, "in");
    assert_eq!(get_counts(), counts(&[("echo", 1)]));
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_lists_echoes_counts_and_sees_headers() {
    let Some(up) = FastMcp::start() else { return };
    exercise(&up.url(), || up.counts(), "k-python").await;
    anonymous_whoami(&up.url()).await;
    assert_eq!(up.count("whoami"), 2);
    assert_eq!(up.count("no_such_tool"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_bearer_requirement() {
    let Some(up) = FastMcp::start_with_env(&[("UPSTREAM_REQUIRE_BEARER", "sekret")]) else { return };
    bearer_required(&up.url(), || up.counts()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_lists_echoes_counts_and_sees_headers() {
    let up = RmcpUpstream::start().await;
    exercise(&up.url(), || up.counts(), "k-rust").await;
    anonymous_whoami(&up.url()).await;
    assert_eq!(up.count("whoami"), 2);
    assert_eq!(up.count("no_such_tool"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_bearer_requirement() {
    let up = RmcpUpstream::start_with_bearer("sekret").await;
    bearer_required(&up.url(), || up.counts()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_lists_and_echoes() {
    let Some(up) = Everything::start() else { return };
    let c = connect(&up.url(), Some("ignored"), None).await.expect("connect");
    let names = tool_names(&c).await;
    assert!(names.iter().any(|n| n == "echo") && names.iter().any(|n| n == "get-sum"), "{names:?}");
    assert!(call_text(&c, "echo", json!({"message": "hi everything"})).await.contains("hi everything"));
    assert!(call_text(&c, "get-sum", json!({"a": 2, "b": 3})).await.contains('5'));
    c.cancel().await.unwrap();
}
