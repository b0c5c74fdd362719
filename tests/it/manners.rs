//! How hal0 answers MCP clients where the protocol leaves a choice (issue 15's manners):
//! a call of a tool the mount does not offer gets the same JSON-RPC error on every mount,
//! with hal0's code in `data`, and lands in the audit log with that code; a request
//! without a valid key gets a 401 that says which key to send and how to make one; a body
//! that is not JSON-RPC gets a JSON-RPC error (-32700 / -32600), not a bare 415.

use crate::support::mcp::{call_rpc_error, connect_with};
use crate::support::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_answered_alike_on_every_mount() {
    let env = Env::new();
    let key = env.bridge_key("ci", &["agents", "memory", "admin", "relay"]);
    let server = env.serve();
    for mount in ["agents", "memory", "admin", "relay"] {
        let c = connect_with(&server, mount, &key, false).await;
        let (rpc, code, message) = call_rpc_error(&c, "no_such_tool", json!({"x": 1})).await;
        assert_eq!(rpc, -32602, "{mount}: {message}");
        assert_eq!(code, "mcp.unknown_tool", "{mount}: {message}");
        assert!(message.contains("no_such_tool") && message.contains("tools/list"), "{mount}: {message}");
        // The session goes on: a known tool still answers.
        let tools = c.list_all_tools().await.expect("tools/list after the refusal");
        assert!(!tools.is_empty(), "{mount}");
        c.cancel().await.ok();
    }
    // hal0-admin's delegated memory_* tools answer the same way.
    let admin = connect_with(&server, "admin", &key, false).await;
    assert_eq!(call_rpc_error(&admin, "memory_no_such_tool", json!({})).await.1, "mcp.unknown_tool");
    let rows = env.json(&["activity", "list", "--tool", "no_such_tool", "--json"]);
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 4, "one row per mount: {rows:?}");
    assert!(rows.iter().all(|r| r["verdict"] == "error" && r["result_code"] == "mcp.unknown_tool"), "{rows:?}");
    server.terminate().await;
}

/// An `initialize` request body.
fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
           "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_a_valid_key_is_told_which_key_to_send() {
    let env = Env::new();
    env.json(&["auth", "rotate", "admin", "--yes", "--json"]);
    let server = env.serve();
    let http = reqwest::Client::new();
    for (mount, key, advice) in [
        ("agents", None, "hal0 bridge add NAME --scope agents"),
        ("memory", Some("Bearer hal0bk_not_a_key"), "--scope memory"),
        ("admin", None, "--scope admin"),
    ] {
        let mut r = http
            .post(server.url(&format!("/mcp/{mount}/mcp")))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize());
        if let Some(k) = key {
            r = r.header("authorization", k);
        }
        let resp = r.send().await.unwrap();
        assert_eq!(resp.status(), 401, "{mount}");
        let challenge = resp.headers()["www-authenticate"].to_str().unwrap().to_string();
        assert!(challenge.starts_with("Bearer realm=\"hal0\", error=\"invalid_token\""), "{challenge}");
        assert!(challenge.contains(advice) && challenge.contains("claude mcp add"), "{challenge}");
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "auth.key_required", "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(advice), "{message}");
        let what = if key.is_some() { "not valid" } else { "no key was sent" };
        assert!(message.contains(what), "{message}");
    }
    // No OAuth: discovery finds no metadata (404), and a registration is refused in RFC
    // 7591's shape with what to do instead.
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server"] {
        let meta = http.get(server.url(path)).send().await.unwrap();
        assert_eq!(meta.status(), 404, "{path}");
    }
    let reg = http
        .post(server.url("/register"))
        .json(&json!({"redirect_uris": ["http://localhost:1/cb"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(reg.status(), 400);
    let reg: serde_json::Value = reg.json().await.unwrap();
    assert_eq!(reg["error"], "invalid_client_metadata", "{reg}");
    assert!(reg["error_description"].as_str().unwrap().contains("Authorization: Bearer"), "{reg}");
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_body_gets_a_jsonrpc_error() {
    let env = Env::new();
    let key = env.bridge_key("ci", &["memory"]);
    let server = env.serve();
    let http = reqwest::Client::new();
    let post = |body: &'static str| {
        http.post(server.url("/mcp/memory/mcp"))
            .header("authorization", format!("Bearer {key}"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
            .send()
    };
    for (body, rpc, code) in [
        (r#"{"jsonrpc":"2.0","id":1,"#, -32700, "mcp.parse_error"),
        ("not json at all", -32700, "mcp.parse_error"),
        (r#"{"hello":"world"}"#, -32600, "mcp.invalid_request"),
        (r#"[1, 2]"#, -32600, "mcp.invalid_request"),
    ] {
        let resp = post(body).await.unwrap();
        assert_eq!(resp.status(), 400, "{body}");
        let v: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        assert!(v["id"].is_null(), "{v}");
        assert_eq!(v["error"]["code"], rpc, "{body}: {v}");
        assert_eq!(v["error"]["data"]["code"], code, "{body}: {v}");
    }
    // A well-formed request still opens a session.
    let ok = post(Box::leak(initialize().into_boxed_str())).await.unwrap();
    assert_eq!(ok.status(), 200);
    assert!(ok.headers().contains_key("mcp-session-id"));
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_front_page_points_to_the_dashboard_and_the_endpoints() {
    let env = Env::new();
    let server = env.serve();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let r = http.get(server.url("/")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let v: serde_json::Value = r.json().await.unwrap();
    assert_eq!(v["dashboard"], "/ui/");
    assert_eq!(v["health"], "/api/health");
    assert!(v["mcp"].as_array().unwrap().iter().any(|p| p == "/mcp/agents/mcp"), "{v}");
    // A browser goes to the dashboard.
    let r = http.get(server.url("/")).header("accept", "text/html,application/xhtml+xml").send().await.unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/ui/");
}

/// The spec's first check of a mount: a plain `curl -X POST` of `tools/list` with a bearer
/// key, JSON in and out, no `Accept`, no session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_json_post_without_a_session_gets_a_json_answer() {
    let env = Env::new();
    let key = env.bridge_key("ops", &["admin"]);
    let memory_only = env.bridge_key("notes", &["memory"]);
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let server = env.serve();
    let http = reqwest::Client::new();
    let post = |key: &str, body: serde_json::Value| {
        http.post(server.url("/mcp/admin/mcp"))
            .header("content-type", "application/json")
            .bearer_auth(key)
            .body(body.to_string())
            .send()
    };
    let r = post(&key, json!({"jsonrpc": "2.0", "method": "tools/list", "id": 1})).await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
    assert!(r.headers().get("mcp-session-id").is_none(), "no session is opened");
    let v: serde_json::Value = r.json().await.unwrap();
    let tools = v["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "version_info"), "{v}");
    let call = json!({"jsonrpc": "2.0", "method": "tools/call", "id": 2,
                      "params": {"name": "version_info", "arguments": {}}});
    let v: serde_json::Value = post(&key, call.clone()).await.unwrap().json().await.unwrap();
    assert_eq!(v["result"]["structuredContent"]["name"], "hal0", "{v}");
    // The same gate as a session: a key without the scope is refused, and the call is audited.
    assert_eq!(post(&memory_only, call).await.unwrap().status(), 403);
    let audit = env.ok(&["activity", "list", "--json"]);
    assert!(audit.contains("version_info"), "{audit}");
}

/// Extra Host names come from hal0.toml too (the environment variable adds to them), and
/// the refusal's log line names the key that fixes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_hosts_are_a_hal0_toml_key() {
    let env = Env::new();
    let http = reqwest::Client::new();
    let health_as =
        |server: &Server, host: &'static str| http.get(server.url("/api/status")).header("host", host).send();
    let server = env.serve();
    assert_eq!(health_as(&server, "hal0.example.lan").await.unwrap().status(), 421);
    drop(server);
    let o = env.run(&["config", "set", "network.allowed_hosts", "hal0.example.lan"]);
    assert_eq!(o.code(), 2, "a bare word is not a list: {}", o.stderr());
    assert!(o.stderr().contains("a list of strings"), "{}", o.stderr());
    env.ok(&["config", "set", "network.allowed_hosts", r#"["hal0.example.lan"]"#]);
    let server = env.serve();
    assert_eq!(health_as(&server, "hal0.example.lan").await.unwrap().status(), 200);
    assert_eq!(health_as(&server, "other.example.lan").await.unwrap().status(), 421);
    // Only the box's shell sets it.
    let r = http
        .put(server.url("/api/settings"))
        .json(&json!({"key": "network.allowed_hosts", "value": ["evil.example"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
}

/// A refusal sent before the request's body was read closes the connection, and says so,
/// so a client never sends its next request on a connection hal0 is about to drop (httpx:
/// "Server disconnected without sending a response"). A request whose body was read keeps
/// its connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_closed_after_an_unread_body_says_so() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let env = Env::new();
    let key = env.bridge_key("ops", &["admin"]);
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let server = env.serve();
    let body = r#"{"jsonrpc":"2.0","method":"tools/list","id":1}"#;
    let head = |auth: &str| {
        format!(
            "POST /mcp/admin/mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\n\r\n",
            server.port,
            body.len()
        )
    };
    let answer = |mut tcp: tokio::net::TcpStream| async move {
        let mut buf = vec![0u8; 65536];
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), tcp.read(&mut buf)).await.unwrap().unwrap();
        String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase()
    };
    // Refused at the guard, the body still on its way: `connection: close`.
    let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    tcp.write_all(head("").as_bytes()).await.unwrap();
    let refused = answer(tcp).await;
    assert!(refused.starts_with("http/1.1 401") && refused.contains("connection: close"), "{refused}");
    // Read and answered: the connection stays open for the next request.
    let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    tcp.write_all(format!("{}{body}", head(&format!("Authorization: Bearer {key}\r\n"))).as_bytes()).await.unwrap();
    let ok = answer(tcp).await;
    assert!(ok.starts_with("http/1.1 200") && !ok.contains("connection: close"), "{ok}");
}
