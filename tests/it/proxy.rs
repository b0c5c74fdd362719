//! hal0's MCP proxy (`/mcp/proxy/<id>/mcp`) in front of real MCP servers nobody here wrote
//! (a FastMCP server from the Python SDK, the npm reference server "everything") and an rmcp
//! server, each counting the calls that reach it: the policy on the call path (allowed
//! forwarded, gated only after approval and exactly once, blocked and unlisted never reach
//! the server), consumer keys, the record's own headers, the audit log and the REST table.

use crate::support::mcp::call_rpc_error;
use crate::support::upstream::{Everything, FastMcp, RmcpUpstream};
use crate::support::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::time::Duration;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

async fn consumer(server: &Server, id: &str, key: &str) -> Client {
    let cfg = StreamableHttpClientTransportConfig::with_uri(server.url(&format!("/mcp/proxy/{id}/mcp")))
        .auth_header(key.to_string());
    ().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake with the proxy")
}

/// `Ok(result JSON)` or `Err(error text)` of a proxied call.
pub(crate) async fn call(c: &rmcp::Peer<rmcp::RoleClient>, tool: &str, args: Value) -> Result<Value, String> {
    let p = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone());
    let r = c.call_tool(p).await.expect("transport");
    let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    if r.is_error == Some(true) {
        return Err(text);
    }
    Ok(r.structured_content.unwrap_or(Value::String(text)))
}

async fn tool_names(c: &Client) -> Vec<String> {
    let mut v: Vec<String> = c.list_all_tools().await.expect("tools/list").into_iter().map(|t| t.name.into()).collect();
    v.sort();
    v
}

pub(crate) fn key_for(env: &Env, id: &str, name: &str) -> String {
    env.json(&["mcp", "keys", "add", id, name, "--json"])["key"].as_str().unwrap().to_string()
}

/// Install `url` as `id` with echo allowed, delete_everything gated, add blocked.
fn install_with_policy(env: &Env, url: &str, id: &str) {
    env.ok(&["mcp", "install", url, "--id", id]);
    env.ok(&["mcp", "allow", id, "echo"]);
    env.ok(&["mcp", "gate", id, "delete_everything"]);
    env.ok(&["mcp", "block", id, "add"]);
}

/// Give record `id` the upstream credential `Authorization: Bearer <token>` (from api.env's
/// `UP_TOKEN`), as an operator editing the files would.
pub(crate) fn give_bearer(env: &Env, id: &str, token: &str) {
    let api_env = env.config_dir().join("api.env");
    let mut text = std::fs::read_to_string(&api_env).unwrap_or_default();
    text.push_str(&format!("UP_TOKEN=Bearer {token}\n"));
    std::fs::write(&api_env, text).unwrap();
    let rec = env.config_dir().join(format!("mcp-servers/{id}.toml"));
    let r = std::fs::read_to_string(&rec).unwrap();
    std::fs::write(&rec, r.replace("[secrets]\n", "[secrets]\nAuthorization = \"UP_TOKEN\"\n")).unwrap();
}

pub(crate) fn proxy_rows(env: &Env, id: &str) -> Vec<Value> {
    let rows = env.json(&["activity", "list", "--json", "--limit", "200"]);
    let rows = rows.as_array().cloned().unwrap_or_else(|| rows["entries"].as_array().cloned().unwrap_or_default());
    rows.into_iter().filter(|r| r["surface"] == format!("mcp:proxy/{id}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_on_the_call_path_against_an_rmcp_server() {
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    install_with_policy(&env, &up.url(), "up");
    let key = key_for(&env, "up", "ci");
    let server = env.serve();
    let c = consumer(&server, "up", &key).await;
    assert_eq!(c.peer_info().unwrap().server_info.clone().unwrap().name, "hal0-proxy");

    // Only allowed and gated tools are listed; gated ones say so.
    assert_eq!(tool_names(&c).await, vec!["delete_everything", "echo"]);
    let tools = c.list_all_tools().await.unwrap();
    let gated = tools.iter().find(|t| t.name == "delete_everything").unwrap();
    assert!(gated.description.as_deref().unwrap_or("").contains("approval"), "{gated:?}");

    // Allowed: forwarded, once.
    let out = call(&c, "echo", json!({"text": "hello through hal0"})).await.unwrap();
    assert!(out.to_string().contains("hello through hal0"), "{out}");
    assert_eq!(up.count("echo"), 1);

    // Blocked and unlisted: refused, never reach the server.
    let e = call(&c, "add", json!({"a": 1, "b": 2})).await.unwrap_err();
    assert!(e.starts_with("mcp.tool_blocked:"), "{e}");
    // Unlisted (so not in tools/list) or absent: an unknown tool, answered as on every mount.
    let (rpc, code, msg) = call_rpc_error(&c, "whoami", json!({})).await;
    assert_eq!((rpc, code.as_str()), (-32602, "mcp.unknown_tool"), "{msg}");
    assert!(msg.contains("hal0 mcp allow up whoami"), "{msg}");
    let (rpc, code, msg) = call_rpc_error(&c, "no_such_tool", json!({})).await;
    assert_eq!((rpc, code.as_str()), (-32602, "mcp.unknown_tool"), "{msg}");
    assert_eq!(up.count("add"), 0, "a blocked tool never reached the upstream");
    assert_eq!(up.count("whoami"), 0, "an unlisted tool never reached the upstream");

    // A policy edit applies to the next call, without a restart or reconnect.
    env.ok(&["mcp", "block", "up", "echo"]);
    let e = call(&c, "echo", json!({"text": "x"})).await.unwrap_err();
    assert!(e.starts_with("mcp.tool_blocked:"), "{e}");
    assert_eq!(up.count("echo"), 1);
    env.ok(&["mcp", "allow", "up", "add"]);
    let out = call(&c, "add", json!({"a": 2, "b": 3})).await.unwrap();
    assert!(out.to_string().contains('5'), "{out}");
    assert_eq!(up.count("add"), 1);

    // Each decision is audited with the policy in force.
    let rows = proxy_rows(&env, "up");
    let has = |tool: &str, verdict: &str, detail: &str| {
        rows.iter().any(|r| r["tool"] == tool && r["verdict"] == verdict && r["detail"] == detail)
    };
    assert!(has("echo", "allow", "policy: allow"), "{rows:?}");
    assert!(has("add", "blocked", "policy: blocked"), "{rows:?}");
    assert!(has("whoami", "refused", "policy: unknown_tool"), "{rows:?}");
    assert!(has("echo", "blocked", "policy: blocked"), "{rows:?}");
    assert!(rows.iter().all(|r| r["identity"] == "consumer:ci"), "{rows:?}");
    c.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_keys_open_only_their_server() {
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    install_with_policy(&env, &up.url(), "up");
    install_with_policy(&env, &up.url(), "other");
    let key = key_for(&env, "up", "ci");
    let other_key = key_for(&env, "other", "ci");
    let bridge = env.bridge_key("ws", &["admin", "memory"]);
    let admin = env.json(&["auth", "rotate", "admin", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();
    let post = |key: Option<&str>, id: &str| {
        let url = server.url(&format!("/mcp/proxy/{id}/mcp"));
        let key = key.map(str::to_string);
        async move {
            let mut r = reqwest::Client::new()
                .post(url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json");
            if let Some(k) = key {
                r = r.bearer_auth(k);
            }
            let resp = r.body(initialize_body().to_string()).send().await.unwrap();
            (resp.status().as_u16(), resp.text().await.unwrap_or_default())
        }
    };
    assert_eq!(post(None, "up").await.0, 401, "no key");
    assert_eq!(post(Some("hal0pk_not-a-real-key"), "up").await.0, 401, "unknown key");
    let (s, body) = post(Some(&other_key), "up").await;
    assert_eq!(s, 403, "a key of another server: {body}");
    assert!(body.contains("auth.forbidden") && body.contains("minted for `other`"), "{body}");
    let (s, body) = post(Some(&bridge), "up").await;
    assert_eq!(s, 403, "a bridge key does not open the proxy: {body}");
    assert_eq!(post(Some(&key), "up").await.0, 200);
    assert_eq!(post(Some(&admin), "up").await.0, 200, "the admin key works too");
    // A consumer key opens nothing else.
    let r = reqwest::Client::new().get(server.url("/api/status")).bearer_auth(&key).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let (s, body) = post(Some(&admin), "nope").await;
    assert_eq!(s, 404, "{body}");
    assert!(body.contains("mcp.not_found"), "{body}");

    // The admin key's calls are audited as admin.
    let c = consumer(&server, "up", &admin).await;
    call(&c, "echo", json!({"text": "a"})).await.unwrap();
    assert!(proxy_rows(&env, "up").iter().any(|r| r["identity"].as_str().unwrap().starts_with("admin:")));
    c.cancel().await.ok();

    // Revoked: the next request fails; rotated: the old key fails, the new one works.
    let c = consumer(&server, "up", &key).await;
    call(&c, "echo", json!({"text": "before"})).await.unwrap();
    env.ok(&["mcp", "keys", "revoke", "up", "ci", "--yes"]);
    assert_eq!(post(Some(&key), "up").await.0, 401);
    let new_key = key_for(&env, "up", "ci");
    assert_ne!(new_key, key);
    assert_eq!(post(Some(&new_key), "up").await.0, 200);
    let listed = env.json(&["mcp", "keys", "list", "up", "--json"]);
    assert!(!listed.to_string().contains("hal0pk_"), "keys are never listed: {listed}");
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");

    // Disabled: 404 with its own code; enabled again: served.
    env.ok(&["mcp", "disable", "up"]);
    let (s, body) = post(Some(&new_key), "up").await;
    assert_eq!(s, 404, "{body}");
    assert!(body.contains("mcp.server_disabled"), "{body}");
    env.ok(&["mcp", "enable", "up"]);
    assert_eq!(post(Some(&new_key), "up").await.0, 200);
    // Uninstalled: its keys are revoked.
    env.ok(&["mcp", "uninstall", "up", "--yes"]);
    assert_eq!(post(Some(&new_key), "up").await.0, 401);
    c.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gated_calls_run_only_after_approval_exactly_once() {
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    install_with_policy(&env, &up.url(), "up");
    env.ok(&["config", "set", "mcp.gate_wait_secs", "1"]);
    let key = key_for(&env, "up", "ci");
    let server = env.serve();
    let c = consumer(&server, "up", &key).await;

    // No decision within the bound: pending_approval with the row's id; nothing ran.
    let out = call(&c, "delete_everything", json!({"confirm": true})).await.unwrap();
    assert_eq!(out["status"], "pending_approval", "{out}");
    let id = out["approval_id"].as_str().unwrap().to_string();
    assert_eq!(up.count("delete_everything"), 0);
    let row = env.json(&["agent", "approvals", "show", &id, "--json"]);
    assert_eq!(row["kind"], "mcp_call");
    assert_eq!(row["status"], "pending");
    assert_eq!(row["arguments"]["server"], "up");
    assert_eq!(row["arguments"]["arguments"], json!({"confirm": true}));

    // Approved at the shell: executed once, with exactly the stored arguments.
    let done = env.json(&["agent", "approvals", "approve", &id, "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    assert_eq!(up.count("delete_everything"), 1);
    let o = env.run(&["agent", "approvals", "approve", &id, "--yes"]);
    assert_ne!(o.code(), 0, "a decided row is not run again");
    assert_eq!(up.count("delete_everything"), 1, "exactly once");

    // Denied: never runs, the row says so.
    let out = call(&c, "delete_everything", json!({"confirm": false})).await.unwrap();
    let id2 = out["approval_id"].as_str().unwrap().to_string();
    env.ok(&["agent", "approvals", "deny", &id2, "--yes"]);
    assert_eq!(up.count("delete_everything"), 1);
    assert_eq!(env.json(&["agent", "approvals", "show", &id2, "--json"])["status"], "denied");
    c.cancel().await.ok();
    drop(server);

    // A caller still waiting gets the one execution's result, or the denial.
    env.ok(&["config", "set", "mcp.gate_wait_secs", "60"]);
    let server = env.serve();
    let c = consumer(&server, "up", &key).await;
    let waiting = tokio::spawn(async move {
        let r = call(&c, "delete_everything", json!({"confirm": true})).await;
        (c, r)
    });
    let id3 = wait_for_pending(&env).await;
    env.ok(&["agent", "approvals", "approve", &id3, "--yes"]);
    let (c, r) = waiting.await.unwrap();
    let out = r.expect("the waiting call gets the result");
    assert!(out.to_string().contains("deleted"), "{out}");
    assert_eq!(up.count("delete_everything"), 2);
    let waiting = tokio::spawn(async move {
        let r = call(&c, "delete_everything", json!({"confirm": true})).await;
        (c, r)
    });
    let id4 = wait_for_pending(&env).await;
    let o = env.run(&["agent", "approvals", "deny", &id4, "--yes", "--reason", "not today"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    let (c, r) = waiting.await.unwrap();
    let e = r.unwrap_err();
    assert!(e.starts_with("mcp.call_denied:") && e.contains("not today"), "{e}");
    assert_eq!(up.count("delete_everything"), 2);
    let rows = proxy_rows(&env, "up");
    assert_eq!(rows.iter().filter(|r| r["verdict"] == "gated" && r["detail"] == "policy: gated").count(), 4);
    c.cancel().await.ok();
}

async fn wait_for_pending(env: &Env) -> String {
    for _ in 0..100 {
        let rows = env.json(&["agent", "approvals", "list", "--status", "pending", "--json"]);
        let rows =
            rows.as_array().cloned().unwrap_or_else(|| rows["approvals"].as_array().cloned().unwrap_or_default());
        if let Some(r) = rows.iter().find(|r| r["kind"] == "mcp_call") {
            return r["id"].as_str().unwrap().to_string();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no pending mcp_call row appeared");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_records_own_credential_goes_upstream_and_never_back() {
    let token = "up-secret-token-8f3a2b";
    let up = RmcpUpstream::start_with_bearer(token).await;
    let env = Env::new();
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    env.ok(&["mcp", "allow", "up", "whoami"]);
    env.ok(&["mcp", "allow", "up", "echo"]);
    let key = key_for(&env, "up", "ci");
    let server = env.serve();
    let c = consumer(&server, "up", &key).await;
    // Without the record's secret the upstream refuses hal0.
    let e = call(&c, "echo", json!({"text": "x"})).await.unwrap_err();
    assert!(e.starts_with("mcp.upstream_failed:"), "{e}");
    assert!(!e.contains(&key), "{e}");
    // With it, the upstream sees the record's credential, never the consumer's key.
    give_bearer(&env, "up", token);
    let out = call(&c, "whoami", json!({})).await.unwrap().to_string();
    assert!(!out.contains(token), "the upstream credential is masked in what goes back: {out}");
    assert!(out.contains("REDACTED"), "{out}");
    assert!(!out.contains(&key), "{out}");
    assert_eq!(up.count("whoami"), 1);
    c.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_server_behind_the_proxy() {
    let Some(up) = FastMcp::start() else { return };
    let env = Env::new();
    install_with_policy(&env, &up.url(), "py");
    let probe = env.json(&["mcp", "test", "py", "--json"]);
    let verdict =
        |t: &str| probe["tools"].as_array().unwrap().iter().find(|x| x["tool"] == t).map(|x| x["verdict"].clone());
    assert_eq!(verdict("echo"), Some(json!("allow")), "{probe}");
    assert_eq!(verdict("delete_everything"), Some(json!("gated")));
    assert_eq!(verdict("add"), Some(json!("blocked")));
    assert_eq!(verdict("whoami"), Some(json!("unknown_tool")));
    let key = key_for(&env, "py", "ci");
    let server = env.serve();
    let c = consumer(&server, "py", &key).await;
    assert_eq!(tool_names(&c).await, vec!["delete_everything", "echo"]);
    let out = call(&c, "echo", json!({"text": "from python"})).await.unwrap();
    assert!(out.to_string().contains("from python"), "{out}");
    assert!(call(&c, "add", json!({"a": 1, "b": 1})).await.unwrap_err().starts_with("mcp.tool_blocked:"));
    assert_eq!(call_rpc_error(&c, "whoami", json!({})).await.1, "mcp.unknown_tool");
    assert_eq!(up.count("echo"), 1);
    assert_eq!(up.count("add"), 0, "blocked: never reached the FastMCP server");
    assert_eq!(up.count("whoami"), 0, "unlisted: never reached the FastMCP server");
    assert_eq!(up.count("delete_everything"), 0);
    c.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_reference_server_behind_the_proxy() {
    let Some(up) = Everything::start() else { return };
    let env = Env::new();
    env.ok(&["mcp", "install", &up.url(), "--id", "everything"]);
    let probe = env.json(&["mcp", "test", "everything", "--json"]);
    let names: Vec<String> =
        probe["tools"].as_array().unwrap().iter().map(|t| t["tool"].as_str().unwrap().to_string()).collect();
    assert!(names.contains(&"echo".to_string()), "{probe}");
    let other = names.iter().find(|n| *n != "echo").expect("a second tool").clone();
    env.ok(&["mcp", "allow", "everything", "echo"]);
    env.ok(&["mcp", "block", "everything", &other]);
    let key = key_for(&env, "everything", "ci");
    let server = env.serve();
    let c = consumer(&server, "everything", &key).await;
    assert_eq!(tool_names(&c).await, vec!["echo"]);
    let out = call(&c, "echo", json!({"message": "from npm"})).await.unwrap();
    assert!(out.to_string().contains("from npm"), "{out}");
    let e = call(&c, &other, json!({})).await.unwrap_err();
    assert!(e.starts_with("mcp.tool_blocked:"), "{e}");
    c.cancel().await.ok();
}

async fn rest(server: &Server, key: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut r = reqwest::Client::new().request(m, server.url(path)).bearer_auth(key);
    if let Some(b) = body {
        r = r.header("content-type", "application/json").body(b.to_string());
    }
    let resp = r.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_table_status_and_error_codes() {
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    let admin = env.json(&["auth", "rotate", "admin", "--json"])["key"].as_str().unwrap().to_string();
    let hermes = tempfile::tempdir().unwrap();
    env.ok(&["config", "set", "hermes.home", hermes.path().to_str().unwrap()]);
    let server = env.serve();
    let k = admin.as_str();

    let (s, v) = rest(&server, k, "POST", "/api/mcp/install", Some(json!({"url": up.url(), "id": "up"}))).await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["installed"]["id"], "up");
    assert!(v["hermes_sync"]["errors"].as_array().unwrap().is_empty(), "{v}");
    let (s, v) = rest(&server, k, "POST", "/api/mcp/install", Some(json!({"url": up.url(), "id": "up"}))).await;
    assert_eq!((s, v["error"]["code"].as_str()), (409, Some("mcp.already_installed")), "{v}");
    let (s, v) = rest(&server, k, "POST", "/api/mcp/install", Some(json!({"url": up.url(), "id": "hal0-admin"}))).await;
    assert_eq!(s, 409, "{v}");
    let (s, v) = rest(&server, k, "POST", "/api/mcp/install", Some(json!({"nope": 1}))).await;
    assert_eq!((s, v["error"]["code"].as_str()), (400, Some("mcp.install_invalid")), "{v}");
    let (s, v) = rest(
        &server,
        k,
        "POST",
        "/api/mcp/install",
        Some(json!({"manifest": {"name": "Inline", "transport": "streamable-http", "url": up.url()}, "id": "inline"})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["installed"]["transport"], "streamable-http");

    let (s, v) =
        rest(&server, k, "PATCH", "/api/mcp/up/tools", Some(json!({"allow": ["echo"], "blocked": ["echo"]}))).await;
    assert_eq!((s, v["error"]["code"].as_str()), (400, Some("mcp.tools_invalid")), "{v}");
    let (s, v) =
        rest(&server, k, "PATCH", "/api/mcp/up/tools", Some(json!({"allow": ["echo"], "gated": ["add"]}))).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["server"]["tool_policy"]["allow"], json!(["echo"]));
    assert!(v["hermes_sync"].is_object());
    let (s, v) = rest(&server, k, "PATCH", "/api/mcp/hal0-memory/tools", Some(json!({"allow": []}))).await;
    assert_eq!((s, v["error"]["code"].as_str()), (409, Some("mcp.bundled")), "{v}");

    let (s, v) = rest(&server, k, "POST", "/api/mcp/up/test", None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["verdicts"]["echo"], "allow");
    assert_eq!(v["verdicts"]["add"], "gated");
    assert_eq!(v["verdicts"]["whoami"], "unknown_tool");

    let (s, v) = rest(&server, k, "PATCH", "/api/mcp/up/exposure", Some(json!({"openwebui": true}))).await;
    assert_eq!((s, v["error"]["code"].as_str()), (501, Some("mcp.exposure_unsupported")), "{v}");
    let (s, v) = rest(&server, k, "PATCH", "/api/mcp/up/exposure", Some(json!({"hermes": "yes"}))).await;
    assert_eq!((s, v["error"]["code"].as_str()), (400, Some("mcp.exposure_invalid")), "{v}");
    let (s, v) = rest(&server, k, "PATCH", "/api/mcp/up/exposure", Some(json!({"hermes": true}))).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["server"]["exposure"]["hermes"], true);
    assert_eq!(v["hermes_sync"]["probe"]["ok"], true, "{v}");
    let yaml = std::fs::read_to_string(hermes.path().join("config.yaml")).unwrap();
    assert!(yaml.contains("/mcp/proxy/up/mcp") && yaml.contains("${HAL0_MCP_UP_KEY}"), "{yaml}");
    let dotenv = std::fs::read_to_string(hermes.path().join(".env")).unwrap();
    assert!(dotenv.contains("HAL0_MCP_UP_KEY=hal0pk_") && dotenv.contains("NO_PROXY="), "{dotenv}");
    // A stdio record without a command (a git install) cannot be started, so not exposed.
    env.ok(&["mcp", "install", "git+https://example.com/x/stdio-server.git", "--id", "stdio1"]);
    let (s, v) = rest(&server, k, "PATCH", "/api/mcp/stdio1/exposure", Some(json!({"brain": true}))).await;
    assert_eq!((s, v["error"]["code"].as_str()), (409, Some("mcp.exposure_needs_supervisor")), "{v}");
    let (s, v) = rest(&server, k, "PATCH", "/api/mcp/stdio1/exposure", Some(json!({"brain": false}))).await;
    assert_eq!(s, 200, "withdrawing always works: {v}");

    let (s, v) = rest(&server, k, "PATCH", "/api/mcp/up/config", Some(json!({"env": {"X-Region": "eu"}}))).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["server"]["env"], json!(["X-Region"]), "names only, never a value: {v}");
    let record = std::fs::read_to_string(env.config_dir().join("mcp-servers/up.toml")).unwrap();
    assert!(record.contains("X-Region = \"eu\""), "{record}");
    let (s, v) = rest(
        &server,
        k,
        "PATCH",
        "/api/mcp/up/config",
        Some(json!({"env": {"X-Token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}})),
    )
    .await;
    assert_eq!((s, v["error"]["code"].as_str()), (400, Some("mcp.env_secret")), "{v}");
    let (s, v) = rest(&server, k, "PATCH", "/api/mcp/up/config", Some(json!({"enabled": "no"}))).await;
    assert_eq!((s, v["error"]["code"].as_str()), (400, Some("mcp.config_invalid")), "{v}");

    let (s, v) = rest(&server, k, "POST", "/api/mcp/up/restart", None).await;
    assert_eq!((s, v["error"]["code"].as_str()), (409, Some("mcp.not_supervised")), "an http server: {v}");
    let (s, v) = rest(&server, k, "POST", "/api/mcp/up/explode", None).await;
    assert_eq!((s, v["error"]["code"].as_str()), (404, Some("mcp.unknown_action")), "{v}");
    let (s, v) = rest(&server, k, "GET", "/api/mcp/catalog", None).await;
    assert_eq!(s, 200, "{v}");
    assert!(v["items"].as_array().unwrap().len() >= 5 && v["categories"].is_array(), "{v}");
    let (s, v) = rest(&server, k, "GET", "/api/mcp/resolve?url=npm:@example/thing", None).await;
    assert_eq!((s, v["transport"].as_str()), (200, Some("stdio")), "{v}");
    let (s, v) = rest(&server, k, "GET", "/api/mcp/resolve?url=http://127.0.0.1/manifest.json", None).await;
    assert_eq!(s, 400, "the SSRF guard refuses a loopback manifest: {v}");
    let (s, v) = rest(&server, k, "GET", "/api/mcp/up/logs?limit=0", None).await;
    assert_eq!((s, v["error"]["code"].as_str()), (400, Some("mcp.invalid_limit")), "{v}");

    // The event stream carries proxied calls as mcp.tool.<verdict>.
    let mut stream = reqwest::Client::new().get(server.url("/api/mcp/stream")).bearer_auth(k).send().await.unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    let key = key_for(&env, "up", "ci");
    let c = consumer(&server, "up", &key).await;
    call(&c, "echo", json!({"text": "streamed"})).await.unwrap();
    let mut seen = String::new();
    let got = tokio::time::timeout(Duration::from_secs(15), async {
        while let Some(chunk) = stream.chunk().await.unwrap() {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains("event: mcp.tool.allow") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(got, Ok(true), "{seen}");
    let (s, v) = rest(&server, k, "GET", "/api/mcp/up/logs", None).await;
    assert_eq!(s, 200, "{v}");
    assert!(v["events"].as_array().unwrap().iter().any(|e| e["tool"] == "echo"), "{v}");
    let (s, v) = rest(&server, k, "GET", "/api/mcp/clients", None).await;
    assert_eq!(s, 200, "{v}");
    assert!(v["clients"].as_array().unwrap().iter().any(|c| c["id"] == "consumer:ci"), "{v}");

    let (s, v) = rest(&server, k, "DELETE", "/api/mcp/hal0-admin", None).await;
    assert_eq!((s, v["error"]["code"].as_str()), (409, Some("mcp.bundled")), "{v}");
    let (s, v) = rest(&server, k, "DELETE", "/api/mcp/up", None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["uninstalled"], "up");
    assert_eq!(v["keys_revoked"], 2, "ci's key and the Hermes profile's: {v}");
    assert!(
        v["hermes_sync"]["removed"].as_array().unwrap().iter().any(|r| r.as_str().unwrap().ends_with(": up")),
        "{v}"
    );
    let yaml = std::fs::read_to_string(hermes.path().join("config.yaml")).unwrap();
    assert!(!yaml.contains("/mcp/proxy/up/mcp"), "{yaml}");
    assert!(!std::fs::read_to_string(hermes.path().join(".env")).unwrap().contains("HAL0_MCP_UP_KEY"));
    c.cancel().await.ok();
}

/// The Python SDK as the consumer (both of its connect modes), FastMCP as the server: the
/// listing, an allowed call, a gated call and a blocked call. On 2025-11-25 ("legacy") the
/// gated call answers `pending_approval` (its tool's output schema is withheld, so a
/// validating client accepts that answer); on 2026-07-28 ("auto") it is answered at once
/// with a card to decide, which this client's person declines (the card is withdrawn).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_consumer_through_the_proxy() {
    let Some(up) = FastMcp::start() else { return };
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let env = Env::new();
    install_with_policy(&env, &up.url(), "py");
    env.ok(&["config", "set", "mcp.gate_wait_secs", "0"]);
    let key = key_for(&env, "py", "sdk");
    let server = env.serve();
    let url = server.url("/mcp/proxy/py/mcp");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(python)
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/external/proxy_client.py"))
            .args(["--url", &url, "--key", &key])
            .args(["--allowed", "echo", "--allowed-args", r#"{"text":"py-consumer"}"#])
            .args(["--gated", "delete_everything", "--gated-args", r#"{"confirm":true}"#])
            .args(["--blocked", "add", "--blocked-args", r#"{"a":1,"b":2}"#])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "proxy_client.py failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    for mode in ["legacy", "auto"] {
        let m = &report[mode];
        assert_eq!(m["tools"], json!(["delete_everything", "echo"]), "{mode}: {m}");
        assert_eq!(m["allowed"]["is_error"], false, "{mode}: {m}");
        assert!(m["allowed"]["text"].as_str().unwrap().contains("py-consumer"), "{mode}: {m}");
        if mode == "legacy" {
            assert_eq!(m["gated"]["is_error"], false, "{mode}: {m}");
            assert_eq!(m["gated"]["structured"]["status"], "pending_approval", "{mode}: {m}");
        } else {
            assert_eq!(m["gated"]["is_error"], true, "{mode}: {m}");
            assert!(m["gated"]["text"].as_str().unwrap().contains("mcp.call_withdrawn"), "{mode}: {m}");
        }
        assert_eq!(m["blocked"]["is_error"], true, "{mode}: {m}");
        assert!(m["blocked"]["text"].as_str().unwrap().starts_with("mcp.tool_blocked:"), "{mode}: {m}");
    }
    assert_eq!(up.count("echo"), 2);
    assert_eq!(up.count("delete_everything"), 0, "gated: nothing ran without an approval");
    assert_eq!(up.count("add"), 0, "blocked: never reached the server");
}

/// What a client's rounds of a gated call on 2026-07-28 show (`gated_rounds.py` and
/// `gated_rounds.mjs` print the same report): one URL-mode elicitation of the card per
/// call, then the approved call's result, the denial, the withdrawal.
fn assert_rounds(r: &Value) {
    assert_eq!(r["protocol"], "2026-07-28", "{r}");
    for answer in ["approve", "deny", "decline"] {
        let e = &r[answer]["elicitations"];
        assert_eq!(e.as_array().map(Vec::len), Some(1), "one round with a person: {answer}: {r}");
        assert_eq!(e[0]["mode"], "url", "{r}");
        assert!(e[0]["url"].as_str().unwrap().contains("/ui/#ap-"), "{r}");
        assert!(e[0]["message"].as_str().unwrap().contains("delete_everything"), "{r}");
    }
    assert_eq!(r["approve"]["result"]["is_error"], false, "{r}");
    assert!(r["deny"]["result"]["text"].as_str().unwrap().contains("mcp.call_denied"), "{r}");
    assert!(r["decline"]["result"]["text"].as_str().unwrap().contains("mcp.call_withdrawn"), "{r}");
}

/// The same rounds with the TypeScript SDK v2 client (`@modelcontextprotocol/client` 2.4,
/// pinned to 2026-07-28).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_v2_client_decides_a_gated_call_round_by_round() {
    let Some(up) = FastMcp::start() else { return };
    let sdk =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/node/node_modules/@modelcontextprotocol/client");
    if !sdk.exists() {
        missing_external("@modelcontextprotocol/client 2.4 in .tools/node", "bash tests/external/setup.sh");
        return;
    }
    let env = Env::new();
    install_with_policy(&env, &up.url(), "ts");
    let key = key_for(&env, "ts", "v2");
    let server = env.serve();
    let url = server.url("/mcp/proxy/ts/mcp");
    let mut cmd = std::process::Command::new("node");
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/external/gated_rounds.mjs"))
        .args([&url, &key, "delete_everything", r#"{"confirm":true}"#, BIN, "approve", "deny", "decline"])
        .env("HAL0_TS_CLIENT", sdk);
    assert_rounds(&run_deciding_client(&env, cmd).await);
    assert_eq!(up.count("delete_everything"), 1, "approved: the call ran once, denied and declined never");
}

/// Protocol 2026-07-28 (the Python SDK's "auto" mode): a gated call is not held open. hal0
/// answers at once with `input_required`, a URL-mode elicitation of the card's address and
/// a `requestState` naming it; the client's person decides at the shell and answers, the
/// SDK retries, and the retry gets the call's result (approved: it ran once), the denial,
/// or (declined without a decision) the card withdrawn. A retry's state is bound to its
/// call: replayed by another caller or with other arguments it is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_a_gated_call_is_answered_round_by_round() {
    let Some(up) = FastMcp::start() else { return };
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let env = Env::new();
    install_with_policy(&env, &up.url(), "py");
    let key = key_for(&env, "py", "sdk");
    let server = env.serve();
    let url = server.url("/mcp/proxy/py/mcp");
    let mut cmd = std::process::Command::new(python);
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/external/gated_rounds.py"))
        .args(["--url", &url, "--key", &key, "--hal0", BIN])
        .args(["--tool", "delete_everything", "--args", r#"{"confirm":true}"#])
        .args(["--answer", "approve", "--answer", "deny", "--answer", "decline"]);
    assert_rounds(&run_deciding_client(&env, cmd).await);
    assert_eq!(up.count("delete_everything"), 1, "approved: the call ran once, denied and declined never");
    let rows = env.json(&["approvals", "list", "--all", "--json"]);
    let mut statuses: Vec<&str> = rows.as_array().unwrap().iter().map(|a| a["status"].as_str().unwrap()).collect();
    statuses.sort();
    assert_eq!(statuses, ["denied", "executed", "withdrawn"], "{rows}");

    // A retry's state is bound to its call: the executed card's state, replayed with other
    // arguments or by another consumer, is refused and nothing runs.
    let executed = rows.as_array().unwrap().iter().find(|a| a["status"] == "executed").unwrap();
    let id = executed["id"].as_str().unwrap();
    let other = key_for(&env, "py", "other");
    let http = reqwest::Client::new();
    for (k, args) in
        [(&key, json!({"confirm": false})), (&other, json!({"confirm": true})), (&key, json!({"confirm": true}))]
    {
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
            "name": "delete_everything", "arguments": args, "requestState": format!("hal0-approval:{id}"),
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                      "io.modelcontextprotocol/clientCapabilities": {}}}});
        let r = http
            .post(server.url("/mcp/proxy/py/mcp"))
            .bearer_auth(k)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "delete_everything")
            .json(&body)
            .send()
            .await
            .unwrap();
        let text = r.text().await.unwrap();
        let same = k == &key && args == json!({"confirm": true});
        if same {
            assert!(
                !text.contains("request_state_invalid") && text.contains("\"isError\":false"),
                "the same call reads its result again: {text}"
            );
        } else {
            assert!(text.contains("mcp.request_state_invalid"), "{text}");
        }
    }
    assert_eq!(up.count("delete_everything"), 1, "a replayed state runs nothing");
    let refused = proxy_rows(&env, "py")
        .into_iter()
        .filter(|r| r["result_code"] == "mcp.request_state_invalid" && r["verdict"] == "refused")
        .count();
    assert_eq!(refused, 2, "each replay is on the audit log");
}
