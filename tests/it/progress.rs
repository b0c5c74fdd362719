//! Progress on hal0's own long waits, seen by real clients over TCP against `hal0 serve`
//! (`[mcp].progress_secs = 1`): `agent_run_wait` and `agent_run` with `wait_s` on a run that
//! stays busy (a fake Hermes run waiting for an approval nobody gives), and a gated proxied
//! call waiting for a person.
//! - the rmcp client (it puts a progress token on every request): notifications for that
//!   token at the pace, each larger, with the wait's bound as total;
//! - a raw JSON-RPC client that sends no token: no notification at all;
//! - the TypeScript SDK (`tests/external/progress_client.mjs`): with a 3 s request timeout
//!   that resets on progress it completes an 8 s wait; with its defaults (60 s, no token)
//!   the quiet default wait answers `timed_out: true` before the SDK gives up.

use crate::support::upstream;

use crate::support::*;
use rmcp::model::{
    CallToolRequestParams, ClientRequest, ProgressNotificationParam, ProgressToken, Request, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A client that keeps every progress notification it receives.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.0.lock().unwrap().push(params);
    }
}

impl Recorder {
    fn take(&self) -> Vec<ProgressNotificationParam> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

type Client = rmcp::service::RunningService<RoleClient, Recorder>;

async fn connect(url: String, key: &str, rec: &Recorder) -> Client {
    let cfg = StreamableHttpClientTransportConfig::with_uri(url).auth_header(key.to_string());
    rec.clone().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake")
}

/// Send `tools/call`; the request's progress token (rmcp always sends one) and the result.
async fn call(c: &Client, tool: &str, args: Value) -> (ProgressToken, Value) {
    let p = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone());
    let h = c
        .send_request_with_option(ClientRequest::CallToolRequest(Request::new(p)), PeerRequestOptions::no_options())
        .await
        .expect("send");
    let token = h.progress_token.clone();
    match h.await_response().await.expect("response") {
        ServerResult::CallToolResult(r) => {
            assert_ne!(r.is_error, Some(true), "{tool}: {r:?}");
            let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
            (token, r.structured_content.unwrap_or(Value::String(text)))
        }
        other => panic!("{tool}: {other:?}"),
    }
}

/// The notifications of one request: all for its token, each larger than the one before,
/// with `total` as the wait's bound and the wait named in the message.
fn check_reports(got: &[ProgressNotificationParam], token: &ProgressToken, total: f64, names: &str) {
    assert!(got.iter().all(|p| &p.progress_token == token), "{got:?}");
    assert!(got.windows(2).all(|w| w[1].progress > w[0].progress), "{got:?}");
    assert!(got.iter().all(|p| p.total == Some(total)), "{got:?}");
    assert!(got.iter().all(|p| p.message.as_deref().is_some_and(|m| m.contains(names))), "{got:?}");
}

const BUSY: &str = "APPROVE hold";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_waits_report_progress_at_the_pace() {
    let b = busy_hermes_box("[mcp]\nprogress_secs = 1\n").await;
    let key = b.env.bridge_key("prog", &[]);
    let rec = Recorder::default();
    let c = connect(b.server.url("/mcp/agents/mcp"), &key, &rec).await;

    // agent_run without a wait answers at once: no progress.
    let (_, v) = call(&c, "agent_run", json!({"agent": "hermes", "input": BUSY})).await;
    let run_id = v["run_id"].as_str().unwrap().to_string();
    assert!(rec.take().is_empty());

    // A 6 s wait on a busy run: it times out, and reported at a 1 s pace meanwhile (at
    // least 3 reports however slow the machine).
    let (token, w) = call(&c, "agent_run_wait", json!({"run_id": run_id, "timeout_s": 6})).await;
    assert_eq!(w["timed_out"], true, "{w}");
    assert_eq!(w["status"], "waiting_for_approval", "{w}");
    let got = rec.take();
    assert!(got.len() >= 3, "{got:?}");
    check_reports(&got, &token, 6.0, &run_id);

    // agent_run with wait_s reports the same way.
    let (token, v) = call(&c, "agent_run", json!({"agent": "hermes", "input": BUSY, "wait_s": 4})).await;
    assert_eq!(v["timed_out"], true, "{v}");
    let got = rec.take();
    assert!(got.len() >= 2, "{got:?}");
    check_reports(&got, &token, 4.0, v["run_id"].as_str().unwrap());

    // Without timeout_s, a caller that listens to progress gets the 120 s default: the
    // first report says so (the call is then cancelled).
    let p = CallToolRequestParams::new("agent_run_wait")
        .with_arguments(json!({"run_id": run_id}).as_object().unwrap().clone());
    let h = c
        .send_request_with_option(ClientRequest::CallToolRequest(Request::new(p)), PeerRequestOptions::no_options())
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(30), async || !rec.0.lock().unwrap().is_empty()).await,
        "no progress within 30 s"
    );
    let first = rec.take().remove(0);
    assert_eq!(first.total, Some(120.0), "{first:?}");
    assert_eq!(first.progress_token, h.progress_token);
    h.cancel(None).await.unwrap();
    c.cancel().await.unwrap();
}

/// A raw JSON-RPC client over Streamable HTTP whose `tools/call` carries no progress
/// token: the answer comes with no notification before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_progress_token_no_notifications() {
    let b = busy_hermes_box("[mcp]\nprogress_secs = 1\n").await;
    let key = b.env.bridge_key("raw", &[]);
    let rec = Recorder::default();
    let c = connect(b.server.url("/mcp/agents/mcp"), &key, &rec).await;
    let (_, v) = call(&c, "agent_run", json!({"agent": "hermes", "input": BUSY})).await;
    let run_id = v["run_id"].as_str().unwrap().to_string();
    c.cancel().await.unwrap();

    let http = reqwest::Client::new();
    let url = b.server.url("/mcp/agents/mcp");
    let init = mcp_post(&http, &url, Some(&key), &initialize_body()).send().await.unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers().get("mcp-session-id").unwrap().to_str().unwrap().to_string();
    let _ = init.text().await;
    let post = |body: Value| {
        mcp_post(&http, &url, Some(&key), &body)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
    };
    let n = post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).send().await.unwrap();
    assert!(n.status().is_success(), "{}", n.status());
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "agent_run_wait", "arguments": {"run_id": run_id, "timeout_s": 3}}});
    let text = post(body).send().await.unwrap().text().await.unwrap();
    let msgs: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect();
    assert!(msgs.iter().all(|m| m["method"] != "notifications/progress"), "{text}");
    let result = msgs.iter().find(|m| m["id"] == 2).unwrap_or_else(|| panic!("no result in {text}"));
    assert_eq!(result["result"]["structuredContent"]["timed_out"], true, "{text}");
}

/// A gated proxied call waiting for a person reports progress until the bound; an allowed
/// call gets none from hal0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_call_reports_progress_while_it_waits_for_a_person() {
    let up = upstream::RmcpUpstream::start().await;
    let env = Env::new();
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    env.ok(&["mcp", "allow", "up", "echo"]);
    env.ok(&["mcp", "gate", "up", "delete_everything"]);
    env.ok(&["config", "set", "mcp.gate_wait_secs", "4"]);
    env.ok(&["config", "set", "mcp.progress_secs", "1"]);
    let key = env.json(&["mcp", "keys", "add", "up", "ci", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();
    let rec = Recorder::default();
    let c = connect(server.url("/mcp/proxy/up/mcp"), &key, &rec).await;

    let (token, out) = call(&c, "delete_everything", json!({"confirm": true})).await;
    assert_eq!(out["status"], "pending_approval", "{out}");
    let approval = out["approval_id"].as_str().unwrap();
    let got = rec.take();
    assert!(got.len() >= 2, "{got:?}");
    // The bound is the decision wait plus the time the approved call may take.
    check_reports(&got, &token, 4.0 + 120.0, approval);
    assert_eq!(up.count("delete_everything"), 0);

    let (_, out) = call(&c, "echo", json!({"text": "hi"})).await;
    assert!(out.to_string().contains("hi"), "{out}");
    assert!(rec.take().is_empty(), "an allowed call waits for no one");
    c.cancel().await.unwrap();
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The TypeScript SDK as the client: see `tests/external/progress_client.mjs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_keeps_a_long_wait_open_on_progress() {
    let sdk = repo().join(".tools/node/node_modules/@modelcontextprotocol/sdk");
    if !sdk.exists() {
        missing_external(format!("the TypeScript SDK at {}", sdk.display()), "run tests/external/setup.sh");
        return;
    }
    let b = busy_hermes_box("[mcp]\nprogress_secs = 1\n").await;
    let key = b.env.bridge_key("ts", &[]);
    let rec = Recorder::default();
    let c = connect(b.server.url("/mcp/agents/mcp"), &key, &rec).await;
    let mut runs = Vec::new();
    for _ in 0..2 {
        let (_, v) = call(&c, "agent_run", json!({"agent": "hermes", "input": BUSY})).await;
        runs.push(v["run_id"].as_str().unwrap().to_string());
    }
    c.cancel().await.unwrap();
    let url = b.server.url("/mcp/agents/mcp");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("node")
            .arg(repo().join("tests/external/progress_client.mjs"))
            .args([&url, &key, &runs[0], &runs[1]])
            .env("HAL0_TS_SDK", sdk)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run node")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "node failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    eprintln!("TypeScript SDK: {v}");

    // 3 s request timeout reset by progress, 8 s wait: completes, after at least 5 reports.
    let long = &v["reset_on_progress"];
    assert_eq!(long["error"], Value::Null, "{v}");
    assert_eq!(long["result"]["timed_out"], true, "{v}");
    assert!(long["progress"].as_array().unwrap().len() >= 5, "{v}");
    assert!(long["elapsed_ms"].as_u64().unwrap() >= 8_000, "{v}");
    // The same wait without progress ends at the SDK's 3 s timeout (what hal0 did for every
    // client before it reported progress).
    let cut = &v["no_reset"];
    assert_eq!(cut["error_code"], -32001, "{v}");
    // SDK defaults (60 s timeout, no progress token), no timeout_s: hal0's quiet default
    // (50 s) answers first.
    let quiet = &v["defaults"];
    assert_eq!(quiet["error"], Value::Null, "{v}");
    assert_eq!(quiet["result"]["timed_out"], true, "{v}");
    assert_eq!(quiet["result"]["status"], "waiting_for_approval", "{v}");
}
