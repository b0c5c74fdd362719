//! The whole protocol through hal0's proxy, beyond tools: progress, cancellation, logging,
//! sampling, resources, prompts and completion, each under the record's policy.
//! - the TypeScript SDK (`tests/external/proxy_protocol.mjs`) as the consumer of
//!   `@modelcontextprotocol/server-everything`;
//! - rmcp clients against the in-process rmcp upstream, where the upstream itself can be
//!   asked whether a cancellation reached it.

use crate::proxy::{key_for, proxy_rows};
use crate::support::upstream::{Everything, RmcpUpstream};
use crate::support::*;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
use rmcp::service::PeerRequestOptions;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Policy for server-everything installed as `id`: three tools, the static documents but
/// one, one template, three prompts.
fn everything_policy(env: &Env, id: &str) {
    for tool in [
        "trigger-long-running-operation",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "toggle-simulated-logging",
    ] {
        env.ok(&["mcp", "allow", id, tool]);
    }
    env.ok(&["mcp", "allow", id, "demo://resource/static/*", "--resource"]);
    env.ok(&["mcp", "block", id, "demo://resource/static/document/instructions.md", "--resource"]);
    env.ok(&["mcp", "allow", id, "demo://resource/dynamic/text/{resourceId}", "--resource"]);
    for prompt in ["args-prompt", "simple-prompt", "completable-prompt"] {
        env.ok(&["mcp", "allow", id, prompt, "--prompt"]);
    }
}

/// Run `tests/external/proxy_protocol.mjs` against `/mcp/proxy/<id>/mcp` of `server`.
async fn run_script(env: &Env, server: &Server, id: &str) -> Value {
    run_node(env, server, id, "proxy_protocol.mjs", &[]).await
}

/// Run TypeScript SDK script `tests/external/<script>` against `/mcp/proxy/<id>/mcp` of
/// `server` with a fresh consumer key (and `extra` arguments): the JSON it prints.
pub(crate) async fn run_node(env: &Env, server: &Server, id: &str, script: &str, extra: &[&str]) -> Value {
    let sdk = repo().join(".tools/node/node_modules/@modelcontextprotocol/sdk");
    assert!(sdk.exists(), "the TypeScript SDK comes with server-everything from tests/external/setup.sh");
    let key = key_for(env, id, "ts");
    let url = server.url(&format!("/mcp/proxy/{id}/mcp"));
    let (script, extra): (PathBuf, Vec<String>) =
        (repo().join("tests/external").join(script), extra.iter().map(|s| s.to_string()).collect());
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("node")
            .arg(script)
            .args([&url, &key])
            .args(&extra)
            .env("HAL0_TS_SDK", sdk)
            .output()
            .expect("node")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "node failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The TypeScript SDK through the proxy in front of server-everything over streamable HTTP
/// (an upstream session per consumer session).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_speaks_the_whole_protocol_through_the_proxy() {
    let Some(up) = Everything::start() else { return };
    let env = Env::new();
    env.ok(&["mcp", "install", &up.url(), "--id", "everything"]);
    everything_policy(&env, "everything");
    // A gate is for calls: a read does not wait for a person.
    let o = env.run(&["mcp", "gate", "everything", "simple-prompt", "--prompt"]);
    assert_ne!(o.code(), 0);
    assert!(o.stderr().contains("mcp.access_invalid"), "{}", o.stderr());
    let o = env.run(&["mcp", "allow", "everything", "has space", "--resource"]);
    assert_ne!(o.code(), 0);
    assert!(o.stderr().contains("mcp.access_invalid"), "{}", o.stderr());
    let status = env.ok(&["mcp", "status", "everything"]);
    assert!(status.contains("demo://resource/static/*") && status.contains("completable-prompt"), "{status}");
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();
    let v = run_script(&env, &server, "everything").await;
    check_everything(&env, "everything", &v);
    // What the clients were offered is pinned as first seen: tools, resources, prompts.
    let pins = env.json(&["mcp", "status", "everything", "--json"])["pins"].as_array().unwrap().clone();
    let pinned =
        |item: &str, name: &str| pins.iter().any(|p| p["item"] == item && p["name"] == name && p["state"] == "pinned");
    assert!(pinned("tool", "trigger-long-running-operation") && pinned("prompt", "simple-prompt"), "{pins:?}");
    assert!(pins.iter().any(|p| p["item"] == "resource" && p["state"] == "pinned"), "{pins:?}");
    assert!(!pinned("resource", "demo://resource/static/document/instructions.md"), "a blocked one is never offered");
    // Both clients listed the tools first (which opens their upstream sessions), so every
    // call took the wire path: the sampler's six (progress, cancellation, sampling and
    // elicitation put to it, logging on and off) and the plain client's three.
    let m = crate::metrics::scrape(&server, &admin).await;
    let carried = |path: &str| {
        m.get(&format!("hal0_proxy_forwarded_total{{server=\"proxy/everything\",path=\"{path}\"}}")).copied()
    };
    assert_eq!((carried("wire"), carried("rmcp")), (Some(9.0), None), "{m:?}");
    let rows = proxy_rows(&env, "everything");
    let cancelled = rows.iter().filter(|r| r["result_code"] == "mcp.call_cancelled").count();
    assert_eq!(cancelled, 2, "both cancelled calls are on record: {rows:#?}");
    // The upstream's log for this client's own session reached it.
    assert!(v["logs"].as_u64().unwrap() >= 1, "{v}");
    // Sampling went to the client that made the call, and its answer back to the server.
    assert_eq!(v["sampled"], 1, "{v}");
    let sampling = v["sampling"]["ok"].as_str().unwrap_or("");
    assert!(sampling.contains("consumer answered: ") && sampling.contains("what is 6 times 7?"), "{v}");
    assert_eq!(v["subscribe"]["ok"], "subscribed and unsubscribed", "{v}");
    // Elicitation likewise: the client's person declined, and the server heard so.
    assert_eq!(v["elicited"], 1, "{v}");
    assert!(v["elicitation"]["ok"].as_str().unwrap_or("").contains("declined"), "{v}");
}

/// The same through server-everything as a stdio child that hal0 starts (one connection
/// shared by every consumer: progress by token, the server's requests to the one consumer
/// whose call is in flight).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_through_a_shared_stdio_child() {
    let script = repo().join(".tools/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !script.exists() {
        missing_external(script.display(), "run tests/external/setup.sh");
        return;
    }
    let env = Env::new();
    env.ok(&["mcp", "install", "npm:hal0-placeholder", "--id", "ev-stdio"]);
    let path = env.config_dir().join("mcp-servers/ev-stdio.toml");
    let mut doc: toml_edit::DocumentMut = std::fs::read_to_string(&path).unwrap().parse().unwrap();
    doc["command"] = toml_edit::value("node");
    let mut args = toml_edit::Array::new();
    args.push(script.to_str().unwrap());
    args.push("stdio");
    doc["args"] = toml_edit::value(args);
    std::fs::write(&path, doc.to_string()).unwrap();
    everything_policy(&env, "ev-stdio");
    let server = env.serve();
    let v = run_script(&env, &server, "ev-stdio").await;
    check_everything(&env, "ev-stdio", &v);
    // One connection for every client: a request of the server names no call, so hal0
    // puts it to nobody rather than guess (it might be another client's).
    assert_eq!(v["sampled"], 0, "{v}");
    assert_eq!(v["elicited"], 0, "{v}");
    assert!(v.to_string().contains("shared by every client"), "{v}");
    assert!(v["subscribe"]["error"].as_str().unwrap().contains("mcp.subscribe_unsupported"), "{v}");
}

/// What both runs of the script must show.
fn check_everything(env: &Env, id: &str, v: &Value) {
    let tools: Vec<&str> = v["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(
        tools,
        [
            "toggle-simulated-logging",
            "trigger-elicitation-request",
            "trigger-long-running-operation",
            "trigger-sampling-request"
        ],
        "{v}"
    );

    // 4 steps, 4 progress notifications under the client's own token, in order; the
    // client gave up after 1 s of 20. Both for the client that can be asked (rmcp's path)
    // and the plain one (the wire path, on an http upstream).
    for (long, progress, cancelled) in
        [("long", "progress", "cancelled"), ("plain_long", "plain_progress", "plain_cancelled")]
    {
        assert!(v[long]["ok"].as_str().unwrap_or("").contains("completed"), "{v}");
        let steps: Vec<f64> = v[progress].as_array().unwrap().iter().map(|p| p["progress"].as_f64().unwrap()).collect();
        assert_eq!(steps, [1.0, 2.0, 3.0, 4.0], "{progress}: {v}");
        assert!(v[progress].as_array().unwrap().iter().all(|p| p["total"] == 4), "{v}");
        assert!(v[cancelled]["error"].is_string(), "{v}");
        assert!(v[cancelled]["elapsed_ms"].as_u64().unwrap() < 10_000, "{v}");
    }

    // A client without the capability: the server's request was refused, the call ended.
    let plain = &v["plain_sampling"]["ok"];
    assert_eq!(plain["is_error"], true, "{v}");
    let text = plain["text"].as_str().unwrap();
    assert!(
        text.contains("did not declare the `sampling` capability") || text.contains("shared by every client"),
        "{v}"
    );

    // Resources: the static documents but the blocked one; the allowed template.
    let resources: Vec<&str> = v["resources"]["ok"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(!resources.is_empty() && resources.iter().all(|u| u.starts_with("demo://resource/static/")), "{v}");
    assert!(!resources.contains(&"demo://resource/static/document/instructions.md"), "{v}");
    assert_eq!(v["templates"]["ok"], json!(["demo://resource/dynamic/text/{resourceId}"]), "{v}");
    assert_eq!(v["read_allowed"]["ok"], json!(["demo://resource/static/document/features.md"]), "{v}");
    assert!(v["read_blocked"]["error"].as_str().unwrap().contains("mcp.resource_blocked"), "{v}");
    assert!(v["read_unlisted"]["error"].as_str().unwrap().contains("mcp.resource_unlisted"), "{v}");
    // A dot segment under an allowed prefix could resolve to the blocked file.
    assert!(v["read_sneaky"]["error"].as_str().unwrap().contains("mcp.resource_unlisted"), "{v}");
    let sub = v["subscribe_unlisted"]["error"].as_str().unwrap();
    assert!(sub.contains("mcp.resource_unlisted") || sub.contains("mcp.subscribe_unsupported"), "{v}");

    // Prompts and completion.
    assert_eq!(v["prompts"]["ok"], json!(["args-prompt", "completable-prompt", "simple-prompt"]), "{v}");
    assert!(v["prompt"]["ok"][0].as_str().unwrap().contains("Oslo"), "{v}");
    assert!(v["prompt_unlisted"]["error"].as_str().unwrap().contains("mcp.prompt_unlisted"), "{v}");
    let values: Vec<&str> = v["complete"]["ok"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(values.contains(&"Engineering"), "{v}");
    assert!(v["complete_unlisted"]["error"].as_str().unwrap().contains("mcp.prompt_unlisted"), "{v}");

    // The audit log: the cancelled call, the reads with their verdicts.
    let rows = proxy_rows(env, id);
    let has = |tool: &str, verdict: &str, code: Option<&str>| {
        rows.iter().any(|r| r["tool"] == tool && r["verdict"] == verdict && code.is_none_or(|c| r["result_code"] == c))
    };
    assert!(has("trigger-long-running-operation", "allow", Some("mcp.call_cancelled")), "{rows:#?}");
    assert!(has("resources/read", "blocked", Some("mcp.resource_blocked")), "{rows:#?}");
    assert!(has("resources/read", "refused", Some("mcp.resource_unlisted")), "{rows:#?}");
    assert!(has("resources/read", "allow", None), "{rows:#?}");
    assert!(has("prompts/get", "refused", Some("mcp.prompt_unlisted")), "{rows:#?}");
}

/// Install the rmcp upstream `up` as `up`, with `tool` allowed.
fn install_allowing(env: &Env, up: &RmcpUpstream, tool: &str) {
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    env.ok(&["mcp", "allow", "up", tool]);
}

/// A new consumer key `name` of `up`, as the client config for `server`'s proxy mount.
fn consumer(env: &Env, server: &Server, name: &str) -> StreamableHttpClientTransportConfig {
    StreamableHttpClientTransportConfig::with_uri(server.url("/mcp/proxy/up/mcp")).auth_header(key_for(env, "up", name))
}

/// An upstream that gives up on its own sampling request (`notifications/cancelled`) has
/// the consumer told too: the request it was put is cancelled at the client, at once while
/// the call goes on, and also when the server answers the call right after giving up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_giving_up_on_its_request_cancels_it_at_the_client() {
    use crate::support::mcp::Sampler;
    use std::sync::atomic::Ordering;

    let up = RmcpUpstream::start().await;
    let env = Env::new();
    install_allowing(&env, &up, "ask_then_give_up");
    let server = env.serve();
    let cfg = consumer(&env, &server, "ci");
    let client = Sampler { patient: true, ..Default::default() };
    let c = client.clone().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake");
    let ask = |secs: u64, linger_ms: u64| {
        let args = json!({"secs": secs, "linger_ms": linger_ms});
        CallToolRequestParams::new("ask_then_give_up").with_arguments(args.as_object().unwrap().clone())
    };
    // The server gives up after 3 s and goes on for 2 s: the client is told when it gives
    // up, well before the answer.
    let r = c.call_tool(ask(3, 2000)).await.expect("an answer");
    let answered = Instant::now();
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(up.count("ask_cancelled"), 1, "{:?}", up.counts());
    assert_eq!(client.asked.load(Ordering::SeqCst), 1, "the sampling request reached the client");
    assert_eq!(client.cancelled.load(Ordering::SeqCst), 1, "the client was told");
    let early = client.told_before(answered).unwrap();
    assert!(early >= Duration::from_secs(1), "told {early:?} before the answer, not when the server gave up");
    // The server answers right after giving up: the call ends first, the client is told after.
    let r = c.call_tool(ask(1, 0)).await.expect("an answer");
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(client.asked.load(Ordering::SeqCst), 2);
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.cancelled.load(Ordering::SeqCst) < 2 {
        assert!(Instant::now() < deadline, "the client was never told the server gave up on its request");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c.cancel().await.ok();
}

/// Start the upstream's 60 s `wait` through `c`, cancel it once it runs, and see the
/// upstream told.
pub(crate) async fn cancel_a_wait(c: &rmcp::Peer<rmcp::RoleClient>, up: &RmcpUpstream) {
    let p = CallToolRequestParams::new("wait").with_arguments(json!({"secs": 60}).as_object().unwrap().clone());
    let h = c
        .send_request_with_option(ClientRequest::CallToolRequest(Request::new(p)), PeerRequestOptions::no_options())
        .await
        .unwrap();
    let (reached, told) = (up.count("wait") + 1, up.count("wait_cancelled") + 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while up.count("wait") < reached {
        assert!(Instant::now() < deadline, "the call never reached the upstream");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    h.cancel(Some("enough".into())).await.unwrap();
    while up.count("wait_cancelled") < told {
        assert!(Instant::now() < deadline, "the upstream was not told of the cancellation: {:?}", up.counts());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A consumer's cancellation reaches the upstream server; so does the end of a call that
/// hal0 gives up on (its call timeout), which drops the forwarded call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_cancelled_upstream() {
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    install_allowing(&env, &up, "wait");
    let server = env.serve();
    let cfg = consumer(&env, &server, "ci");
    let c = ().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake with the proxy");
    cancel_a_wait(&c, &up).await;
    c.cancel().await.ok();
    drop(server);

    // hal0's own call timeout ends the call: the upstream is told too.
    env.ok(&["config", "set", "mcp.call_timeout_secs", "2"]);
    let server = env.serve();
    let cfg = consumer(&env, &server, "ci2");
    let c = ().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake with the proxy");
    let p = CallToolRequestParams::new("wait").with_arguments(json!({"secs": 60}).as_object().unwrap().clone());
    let r = c.call_tool(p).await.expect("an answer");
    assert_eq!(r.is_error, Some(true), "{r:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while up.count("wait_cancelled") < 2 {
        assert!(Instant::now() < deadline, "the upstream was not told the call ended: {:?}", up.counts());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c.cancel().await.ok();
}
