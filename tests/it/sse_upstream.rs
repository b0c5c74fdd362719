//! hal0's legacy HTTP+SSE client transport (`hal0::proxy::sse_client`) against a real
//! legacy-SSE MCP server: the official Python SDK's `MCPServer.sse_app()`
//! (`tests/upstream/fastmcp_server.py --sse`). Driven through rmcp's client (handshake, tools/list, calls,
//! the record's headers on the GET and on every POST, a refused credential, the server going
//! away), then through the CLI and the proxy (`hal0 mcp install <url>/sse`, `mcp allow`,
//! `mcp test --json`, a proxied call). Needs tests/external/setup.sh; without the venv the tests
//! skip, unless `HAL0_REQUIRE_EXTERNAL=1`, which turns the skip into a panic.

use crate::support::upstream;

use crate::support::*;
use hal0::proxy::sse_client;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

async fn call_text(c: &Client, tool: &str, args: Value) -> String {
    let p = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone());
    let r = c.call_tool(p).await.expect("transport");
    let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    assert_ne!(r.is_error, Some(true), "{tool} failed: {text}");
    text
}

async fn tool_names(c: &Client) -> Vec<String> {
    let mut v: Vec<String> = c.list_all_tools().await.expect("tools/list").into_iter().map(|t| t.name.into()).collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_over_the_python_sdk_sse_server() {
    let token = "sse-test-token-4d2c";
    let Some(mut up) = upstream::FastMcp::start_sse(&[("UPSTREAM_REQUIRE_BEARER", token)]) else { return };
    let headers = HashMap::from([
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("X-API-Key".to_string(), "xk-sse".to_string()),
    ]);
    let transport = sse_client::connect(&up.url(), &headers, "mcp.probe_failed", None).await.expect("SSE connect");
    assert!(transport.endpoint().as_str().starts_with(&format!("http://127.0.0.1:{}/messages/", up.port())));
    let c: Client =
        tokio::time::timeout(Duration::from_secs(30), ().serve(transport)).await.expect("handshake in time").unwrap();
    let info = c.peer_info().and_then(|i| i.server_info.clone()).expect("server info");
    assert_eq!(info.name, "hal0-test-upstream-python");
    assert_eq!(tool_names(&c).await, ["add", "delete_everything", "echo", "whoami"]);
    assert_eq!(call_text(&c, "echo", json!({"text": "hello over legacy sse"})).await, "hello over legacy sse");
    assert_eq!(call_text(&c, "add", json!({"a": 2, "b": 40})).await, "42");
    // The server answers 401 to any request without the bearer, so the GET and every POST
    // carried it; the POST that carried the call also had X-API-Key.
    let who: Value = serde_json::from_str(&call_text(&c, "whoami", json!({})).await).unwrap();
    assert_eq!(who, json!({"authorization": format!("Bearer {token}"), "x-api-key": "xk-sse"}));
    // Concurrent calls all get their own answers.
    let calls = (0..8).map(|i| call_text(&c, "add", json!({"a": i, "b": 100})));
    let sums = futures::future::join_all(calls).await;
    assert_eq!(sums, (0..8).map(|i| (i + 100).to_string()).collect::<Vec<_>>());

    // A wrong credential is refused on the GET, with a clear message and no secret in it.
    let wrong = HashMap::from([("Authorization".to_string(), "Bearer nope".to_string())]);
    let e = sse_client::connect(&up.url(), &wrong, "mcp.probe_failed", None).await.unwrap_err();
    assert_eq!((e.code, e.status()), ("mcp.probe_failed", 502));
    assert!(e.message.contains("refused our credentials"), "{}", e.message);
    // The streamable-http endpoint is not there: a clear error, not a hang.
    let e =
        sse_client::connect(&up.url().replace("/sse", "/mcp"), &headers, "mcp.probe_failed", None).await.unwrap_err();
    assert!(e.message.contains("404") || e.message.contains("401"), "{}", e.message);

    // The server goes away: the stream ends and rmcp sees the connection closed.
    up.stop();
    let quit = tokio::time::timeout(Duration::from_secs(10), c.waiting()).await.expect("closed after the server died");
    assert!(matches!(quit, Ok(rmcp::service::QuitReason::Closed)), "{quit:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hal0_probes_and_proxies_an_sse_server() {
    let Some(up) = upstream::FastMcp::start_sse(&[]) else { return };
    let env = Env::new();
    let url = up.url();
    env.ok(&["mcp", "install", &url, "--id", "s"]);
    let shown = env.json(&["mcp", "status", "s", "--json"]);
    assert_eq!(shown["transport"], "sse", "{shown}");
    env.ok(&["mcp", "allow", "s", "echo"]);
    let o = env.run(&["mcp", "test", "s", "--json"]);
    assert_eq!(
        o.code(),
        0,
        "hal0 mcp test of an sse server failed (does upstream.rs connect() use sse_client?): {}",
        o.stderr()
    );
    let probe: Value = serde_json::from_str(&o.stdout()).unwrap();
    assert_eq!(probe["server_name"], "hal0-test-upstream-python", "{probe}");
    let verdict =
        |t: &str| probe["tools"].as_array().unwrap().iter().find(|x| x["tool"] == t).map(|x| x["verdict"].clone());
    assert_eq!(verdict("echo"), Some(json!("allow")), "{probe}");
    assert_eq!(verdict("add"), Some(json!("unknown_tool")), "{probe}");
    assert_eq!(verdict("whoami"), Some(json!("unknown_tool")), "{probe}");

    // Through the proxy: the pooled upstream connection is the SSE transport.
    let key = env.json(&["mcp", "keys", "add", "s", "ci", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();
    let cfg = StreamableHttpClientTransportConfig::with_uri(server.url("/mcp/proxy/s/mcp")).auth_header(key);
    let c: Client = ().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("proxy handshake");
    assert_eq!(tool_names(&c).await, ["echo"]);
    assert_eq!(call_text(&c, "echo", json!({"text": "via hal0"})).await, "via hal0");
    assert_eq!(call_text(&c, "echo", json!({"text": "again"})).await, "again");
    c.cancel().await.ok();
}
