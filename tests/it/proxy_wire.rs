//! The proxy's wire path (`crate::proxy::wire_path`): allowed calls of a consumer session that
//! declared no sampling, elicitation or roots go upstream as bytes. What a consumer sees
//! must be what rmcp's path gives. These tests run consumers with sessions (an rmcp client
//! pinned to 2025-11-25, and raw JSON-RPC over HTTP) against the rmcp upstream, and read
//! `hal0_proxy_forwarded_total` to know which path carried each call.

use crate::metrics::scrape;
use crate::proxy::{call, give_bearer, key_for, proxy_rows};
use crate::proxy_protocol::cancel_a_wait;
use crate::support::upstream::RmcpUpstream;
use crate::support::*;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>;

/// An rmcp consumer of `/mcp/proxy/up/mcp` on a protocol with sessions, declaring `caps`.
async fn session(server: &Server, key: &str, caps: ClientCapabilities) -> Client {
    let cfg =
        StreamableHttpClientTransportConfig::with_uri(server.url("/mcp/proxy/up/mcp")).auth_header(key.to_string());
    let info = ClientConfig::new(caps, Implementation::new("wire-test", "1"))
        .with_protocol_version(ProtocolVersion::V_2025_11_25);
    info.serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake with the proxy")
}

/// Calls of `up` carried by `path` between two scrapes.
fn carried(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>, path: &str) -> f64 {
    let key = format!("hal0_proxy_forwarded_total{{server=\"proxy/up\",path=\"{path}\"}}");
    after.get(&key).copied().unwrap_or(0.0) - before.get(&key).copied().unwrap_or(0.0)
}

fn admin_key(env: &Env) -> String {
    env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string()
}

/// `up` installed as `up` with `tools` allowed (and `setup` done) before hal0 serves; a
/// consumer session declaring `caps` that has listed the tools (so its upstream session is
/// open), and the metrics as they were then.
struct Rig {
    env: Env,
    server: Server,
    admin: String,
    key: String,
    c: Client,
    before: BTreeMap<String, f64>,
}

async fn rig(up: &RmcpUpstream, tools: &[&str], caps: ClientCapabilities, setup: impl FnOnce(&Env)) -> Rig {
    let env = Env::new();
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    for tool in tools {
        env.ok(&["mcp", "allow", "up", tool]);
    }
    setup(&env);
    let key = key_for(&env, "up", "ci");
    let admin = admin_key(&env);
    let server = env.serve();
    let c = session(&server, &key, caps).await;
    c.list_all_tools().await.unwrap();
    let before = scrape(&server, &admin).await;
    Rig { env, server, admin, key, c, before }
}

impl Rig {
    /// Calls carried by `path` since the rig was set up.
    async fn carried(&self, path: &str) -> f64 {
        carried(&self.before, &scrape(&self.server, &self.admin).await, path)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_calls_take_the_wire_path_and_answer_as_rmcps_path_does() {
    let token = "up-secret-token-8f3a2b";
    let up = RmcpUpstream::start_with_bearer(token).await;
    let tools = ["echo", "add", "whoami", "no_such_tool"];
    let r = rig(&up, &tools, ClientCapabilities::default(), |env| {
        env.ok(&["mcp", "block", "up", "delete_everything"]);
        give_bearer(env, "up", token);
    })
    .await;
    let (env, c) = (&r.env, &r.c);
    let mut listed: Vec<String> = c.list_all_tools().await.unwrap().into_iter().map(|t| t.name.into()).collect();
    listed.sort();
    assert_eq!(listed, ["add", "echo", "whoami"], "the policy lists a tool the server lacks; it is not shown");

    assert_eq!(call(c, "echo", json!({"text": "hello"})).await.unwrap(), "hello");
    assert_eq!(call(c, "add", json!({"a": 2, "b": 3})).await.unwrap(), json!({"result": 5}));
    // The record's credential went upstream and is masked in what comes back.
    let who = call(c, "whoami", json!({})).await.unwrap().to_string();
    assert!(!who.contains(token) && who.contains("REDACTED"), "{who}");
    assert!(!who.contains(&r.key), "{who}");
    // The server's own error result comes back as it is.
    let e = call(c, "add", json!({"a": "two", "b": 3})).await.unwrap_err();
    assert!(e.contains("invalid type: string \"two\""), "{e}");
    // The server's JSON-RPC refusal of the call, as rmcp's path words it.
    let e = call(c, "no_such_tool", json!({})).await.unwrap_err();
    assert!(e.starts_with("mcp.upstream_failed:") && e.contains("`up`") && e.contains("-32602"), "{e}");
    // A blocked tool never reaches the server, on either path.
    let e = call(c, "delete_everything", json!({"confirm": true})).await.unwrap_err();
    assert!(e.starts_with("mcp.tool_blocked:"), "{e}");
    assert_eq!(r.carried("wire").await, 5.0, "every allowed call went on the wire path");
    assert_eq!(r.carried("rmcp").await, 0.0);
    assert_eq!(up.count("delete_everything"), 0);
    assert_eq!(up.count("echo"), 1);

    // A policy edit applies to the very next call.
    env.ok(&["mcp", "block", "up", "echo"]);
    let e = call(c, "echo", json!({"text": "again"})).await.unwrap_err();
    assert!(e.starts_with("mcp.tool_blocked:"), "{e}");
    assert_eq!(up.count("echo"), 1);

    // The audit log: one row per call, its outcome filled in.
    let rows = proxy_rows(env, "up");
    let has = |tool: &str, verdict: &str, code: Option<&str>| {
        rows.iter().any(|r| r["tool"] == tool && r["verdict"] == verdict && r["result_code"].as_str() == code)
    };
    assert!(has("echo", "allow", None), "{rows:#?}");
    assert!(has("add", "allow", Some("mcp.upstream_tool_error")), "{rows:#?}");
    assert!(has("echo", "blocked", Some("mcp.tool_blocked")), "{rows:#?}");
    assert!(has("no_such_tool", "allow", Some("mcp.upstream_failed")), "{rows:#?}");
    assert!(!rows.iter().any(|r| r["verdict"] == "started"), "no row is left half-written: {rows:#?}");
    r.c.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_or_timed_out_wire_call_is_cancelled_upstream() {
    let up = RmcpUpstream::start().await;
    let r = rig(&up, &["wait"], ClientCapabilities::default(), |env| {
        env.ok(&["config", "set", "mcp.call_timeout_secs", "3"]);
    })
    .await;
    // The consumer cancels.
    cancel_a_wait(&r.c, &up).await;
    // hal0's call timeout ends the call: the consumer gets an error result, the upstream is told.
    let p = CallToolRequestParams::new("wait").with_arguments(json!({"secs": 60}).as_object().unwrap().clone());
    let res = r.c.call_tool(p).await.expect("an answer");
    assert_eq!(res.is_error, Some(true), "{res:?}");
    let text = format!("{:?}", res.content);
    assert!(text.contains("mcp.upstream_failed") && text.contains("did not answer within 3 s"), "{text}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while up.count("wait_cancelled") < 2 {
        assert!(Instant::now() < deadline, "the upstream was not told the call ended: {:?}", up.counts());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(r.carried("wire").await, 2.0);
    let rows = proxy_rows(&r.env, "up");
    let codes: Vec<&str> = rows.iter().filter_map(|r| r["result_code"].as_str()).collect();
    assert!(codes.contains(&"mcp.call_cancelled") && codes.contains(&"mcp.upstream_failed"), "{rows:#?}");
    r.c.cancel().await.ok();
}

/// An upstream that answers `application/json`: the wire path reads the one message and
/// answers the consumer as from a stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_answer_is_carried_too() {
    let up = RmcpUpstream::start_json().await;
    let r = rig(&up, &["echo", "add"], ClientCapabilities::default(), |_| {}).await;
    assert_eq!(call(&r.c, "echo", json!({"text": "as json"})).await.unwrap(), "as json");
    assert_eq!(call(&r.c, "add", json!({"a": 40, "b": 2})).await.unwrap(), json!({"result": 42}));
    assert_eq!(r.carried("wire").await, 2.0);
    r.c.cancel().await.ok();
}

/// A consumer that declared sampling is asked during a wire-path call, on the call's own
/// stream: its answer reaches the upstream; when the upstream gives up on its request
/// first, the consumer's handler is cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_asks_the_consumer_during_a_wire_call() {
    use crate::support::mcp::Sampler;
    use std::sync::atomic::Ordering;

    let up = RmcpUpstream::start().await;
    let r = rig(&up, &["ask_then_give_up"], ClientCapabilities::default(), |_| {}).await;
    let url = r.server.url("/mcp/proxy/up/mcp");
    // The patient consumer's request is withdrawn after 1 s, the call answered 2 s later.
    let ask = |secs: u64| {
        let args = json!({"secs": secs, "linger_ms": 2000});
        CallToolRequestParams::new("ask_then_give_up").with_arguments(args.as_object().unwrap().clone())
    };
    for patient in [false, true] {
        let key = key_for(&r.env, "up", if patient { "patient" } else { "prompt" });
        let cfg = StreamableHttpClientTransportConfig::with_uri(url.as_str()).auth_header(key);
        let handler = Sampler { patient, ..Default::default() };
        let c = handler.clone().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("handshake");
        c.list_all_tools().await.unwrap();
        let res = c.call_tool(ask(if patient { 1 } else { 10 })).await.expect("an answer");
        let answered = Instant::now();
        let text = format!("{:?}", res.content);
        assert_eq!(handler.asked.load(Ordering::SeqCst), 1, "the request reached the consumer");
        if patient {
            assert!(text.contains("gave up"), "{text}");
            // rmcp's server sends the withdrawal on the session's own stream; hal0 still
            // tells the consumer on the call's, when it happens, not when the call ends.
            assert_eq!(handler.cancelled.load(Ordering::SeqCst), 1, "the consumer was told of the withdrawal");
            let early = handler.told_before(answered).unwrap();
            assert!(early >= Duration::from_secs(1), "told {early:?} before the answer, not when it was withdrawn");
        } else {
            assert!(text.contains("answered: true"), "the consumer's answer reached the upstream: {text}");
        }
        c.cancel().await.ok();
    }
    assert_eq!((up.count("ask_answered"), up.count("ask_cancelled")), (1, 1), "{:?}", up.counts());
    assert_eq!(r.carried("wire").await, 2.0);
    assert_eq!(r.carried("rmcp").await, 0.0);
    r.c.cancel().await.ok();
}

/// Raw JSON-RPC: the consumer's own ids (numbers and strings) and progress token come back
/// as it sent them; what the wire path does not take (bad params, an unknown cancellation)
/// is rmcp's to answer, as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_come_back_as_sent_and_bad_requests_get_rmcps_answer() {
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    env.ok(&["mcp", "allow", "up", "echo"]);
    let key = key_for(&env, "up", "ci");
    let admin = admin_key(&env);
    let server = env.serve();
    let url = server.url("/mcp/proxy/up/mcp");
    let http = reqwest::Client::new();
    let post = |sid: Option<&str>, body: Value| {
        let mut r = http
            .post(&url)
            .bearer_auth(&key)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .json(&body);
        if let Some(s) = sid {
            r = r.header("mcp-session-id", s).header("mcp-protocol-version", "2025-06-18");
        }
        r.send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let r = post(None, init).await.unwrap();
    assert!(r.status().is_success());
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    // Tasks are declared only to a consumer that negotiated 2025-11-25.
    let text = r.text().await.unwrap();
    assert!(text.contains("\"capabilities\"") && !text.contains("\"tasks\""), "{text}");
    let r = post(Some(&sid), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await.unwrap();
    assert_eq!(r.status(), 202);
    post(Some(&sid), json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await.unwrap().text().await.unwrap();

    /// The one JSON-RPC message of an SSE (or JSON) answer that has an id.
    fn answer(text: &str) -> Value {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .chain(std::iter::once(text))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or_else(|| panic!("no answer in {text}"))
    }
    let before = scrape(&server, &admin).await;
    for id in [json!(7), json!("call-seven"), json!(0)] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": "tok-1"}}});
        let text = post(Some(&sid), body).await.unwrap().text().await.unwrap();
        let v = answer(&text);
        assert_eq!(v["id"], id, "{text}");
        assert_eq!(v["result"]["content"][0]["text"], "hi", "{text}");
        assert_eq!(v["result"]["resultType"], "complete", "{text}");
        assert!(!text.contains("hal0-"), "hal0's upstream id never reaches the consumer: {text}");
    }
    // Arguments that are no object: not the wire path's; rmcp refuses them.
    let bad = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "echo", "arguments": 5}});
    let text = post(Some(&sid), bad).await.unwrap().text().await.unwrap();
    assert!(answer(&text)["error"]["code"].is_i64(), "{text}");
    // A cancellation of no call in flight: rmcp takes it, as any notification.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}});
    assert_eq!(post(Some(&sid), cancel).await.unwrap().status(), 202);
    let after = scrape(&server, &admin).await;
    assert_eq!(carried(&before, &after, "wire"), 3.0);
    assert_eq!(up.count("echo"), 3);

    // Tasks this session did not create (none, here) are refused by hal0 with a stable
    // code, whatever the id looks like; nothing reaches the server.
    for params in [json!({"taskId": "made-up"}), json!({"taskId": 5}), json!({}), json!(null), json!(7)] {
        for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
            let body = json!({"jsonrpc": "2.0", "id": 20, "method": method, "params": params});
            let text = post(Some(&sid), body).await.unwrap().text().await.unwrap();
            let v = answer(&text);
            assert_eq!(
                (v["id"].clone(), v["error"]["code"].clone()),
                (json!(20), json!(-32602)),
                "{method} {params}: {text}"
            );
            assert_eq!(v["error"]["data"]["code"], "mcp.task_unknown", "{method} {params}: {text}");
        }
    }
    // A list goes to the server, which (knowing no tasks) refuses the method; the
    // consumer gets its error as it gave it. A listing whose params are no object: rmcp's.
    let body = json!({"jsonrpc": "2.0", "id": 21, "method": "tasks/list"});
    let text = post(Some(&sid), body).await.unwrap().text().await.unwrap();
    assert_eq!(answer(&text)["error"]["code"], -32601, "{text}");
    let body = json!({"jsonrpc": "2.0", "id": 22, "method": "tools/list", "params": 5});
    let text = post(Some(&sid), body).await.unwrap().text().await.unwrap();
    assert!(answer(&text)["error"]["code"].is_i64(), "{text}");
    // A task-augmented call of a tool the policy does not list: refused like any call of it.
    let body = json!({"jsonrpc": "2.0", "id": 23, "method": "tools/call", "params": {
        "name": "add", "arguments": {"a": 1, "b": 2}, "task": {"ttl": 1000}}});
    let text = post(Some(&sid), body).await.unwrap().text().await.unwrap();
    assert!(text.contains("mcp.unknown_tool"), "{text}");
    assert_eq!(up.count("add"), 0);
}

/// A record credential holding `"`, `\` and `&` (the JSON carries them escaped, and the
/// `whoami` text escapes them twice), and the bare token of its `Bearer <token>` value: none
/// reaches the consumer on the wire path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mask_a_credential_with_quotes_and_its_bare_token() {
    let token = r#"up-"q\uo&te-8f3a2b"#;
    let up = RmcpUpstream::start_with_bearer(token).await;
    let r = rig(&up, &["echo", "whoami"], ClientCapabilities::default(), |env| give_bearer(env, "up", token)).await;
    let who = call(&r.c, "whoami", json!({})).await.unwrap().to_string();
    assert!(!who.contains("8f3a2b") && who.contains("REDACTED"), "{who}");
    let echoed = call(&r.c, "echo", json!({"text": format!("the token: {token}")})).await.unwrap().to_string();
    assert!(!echoed.contains("8f3a2b") && echoed.contains("REDACTED"), "{echoed}");
    assert_eq!(r.carried("wire").await, 2.0);
}
