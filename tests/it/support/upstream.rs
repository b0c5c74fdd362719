//! Real upstream MCP servers for putting behind hal0's proxy in tests, each over streamable
//! HTTP on 127.0.0.1: [`FastMcp`] (the official Python SDK, `tests/upstream/fastmcp_server.py`),
//! [`Everything`] (the npm reference server `@modelcontextprotocol/server-everything`) and
//! [`RmcpUpstream`] (an in-process rmcp server). `FastMcp` and `RmcpUpstream` serve the same
//! tools (`echo`, `add`, `delete_everything`, `whoami`) and count the calls each tool received,
//! so a test can prove a blocked call never reached the upstream.
//!
//! Tests reach it as `crate::support::upstream`; the examples include the file with `#[path]`.
//! The external servers come from `tests/external/setup.sh`; without them `start()` skips
//! (returns `None`), unless `HAL0_REQUIRE_EXTERNAL=1`, which turns the skip into a panic.
// Also compiled into examples/ (`#[path]`), which use other parts of it than the tests do.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

// The skip-or-fail rule for missing external parts, re-exported by `support`; loaded here
// (with `#[path]`) so that the benches, which include this file alone, get it too.
#[path = "external.rs"]
pub mod external;

const STARTUP: Duration = Duration::from_secs(60);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// An external server is not installed: skip (`None`), or panic under `HAL0_REQUIRE_EXTERNAL=1`.
#[track_caller]
fn missing<T>(what: &Path) -> Option<T> {
    external::missing_external(what.display(), "run tests/external/setup.sh");
    None
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Read `{"tool": n}` counts; empty when the file is absent.
fn read_counts(path: &Path) -> BTreeMap<String, u64> {
    match std::fs::read_to_string(path) {
        Ok(s) => serde_json::from_str(&s).unwrap_or_else(|e| panic!("bad counts file {}: {e}: {s}", path.display())),
        Err(_) => BTreeMap::new(),
    }
}

/// The Python SDK server (`MCPServer`, stateful streamable HTTP) as a child process.
pub struct FastMcp {
    child: Child,
    port: u16,
    sse: bool,
    counts_file: PathBuf,
    _dir: tempfile::TempDir,
}

impl FastMcp {
    pub fn start() -> Option<FastMcp> {
        Self::start_with_env(&[])
    }

    /// Start with extra environment, e.g. `[("UPSTREAM_REQUIRE_BEARER", "tok")]`.
    pub fn start_with_env(env: &[(&str, &str)]) -> Option<FastMcp> {
        Self::spawn(env, false)
    }

    /// The same server on the legacy HTTP+SSE transport (`url()` is then `/sse`).
    pub fn start_sse(env: &[(&str, &str)]) -> Option<FastMcp> {
        Self::spawn(env, true)
    }

    fn spawn(env: &[(&str, &str)], sse: bool) -> Option<FastMcp> {
        let python = root().join(".venv/bin/python");
        if !python.exists() {
            return missing(&python);
        }
        let dir = tempfile::tempdir().unwrap();
        let counts_file = dir.path().join("counts.json");
        let mut child = Command::new(&python)
            .arg(root().join("tests/upstream/fastmcp_server.py"))
            .args(if sse { &["--sse", "0"][..] } else { &["0"][..] })
            .env("UPSTREAM_COUNTS", &counts_file)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn fastmcp_server.py");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(p) = line.strip_prefix("PORT ") {
                    let _ = tx.send(p.trim().parse::<u16>().expect("PORT <n>"));
                }
            }
        });
        match rx.recv_timeout(STARTUP) {
            Ok(port) => Some(FastMcp { child, port, sse, counts_file, _dir: dir }),
            Err(_) => {
                kill(&mut child);
                panic!("fastmcp_server.py printed no PORT line within {STARTUP:?}");
            }
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/{}", self.port, if self.sse { "sse" } else { "mcp" })
    }

    /// Kill the server now (Drop does the same).
    pub fn stop(&mut self) {
        kill(&mut self.child);
    }

    pub fn counts(&self) -> BTreeMap<String, u64> {
        read_counts(&self.counts_file)
    }

    pub fn count(&self, tool: &str) -> u64 {
        self.counts().get(tool).copied().unwrap_or(0)
    }
}

impl Drop for FastMcp {
    fn drop(&mut self) {
        kill(&mut self.child);
    }
}

/// `@modelcontextprotocol/server-everything` in `streamableHttp` mode (`PORT` env, endpoint
/// `/mcp`, stateful sessions). Its tools include `echo {message}` and `get-sum {a, b}`; no counter.
pub struct Everything {
    child: Child,
    port: u16,
}

impl Everything {
    pub fn start() -> Option<Everything> {
        let script = root().join(".tools/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        if !script.exists() {
            return missing(&script);
        }
        // A port picked by binding :0 and releasing it can be taken by someone else before
        // node binds it; the server then exits at once (EADDRINUSE), so try a few times.
        let mut last = String::new();
        for _ in 0..3 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let mut child = Command::new("node")
                .arg(&script)
                .arg("streamableHttp")
                .env("PORT", port.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn node (server-everything)");
            let stderr = Arc::new(Mutex::new(String::new()));
            let (mut pipe, buf) = (child.stderr.take().unwrap(), stderr.clone());
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                    buf.lock().unwrap().push_str(&String::from_utf8_lossy(&chunk[..n]));
                }
            });
            let deadline = Instant::now() + STARTUP;
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    std::thread::sleep(Duration::from_millis(100));
                    last = format!("exited {status}: {}", stderr.lock().unwrap());
                    break;
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(Everything { child, port });
                }
                if Instant::now() > deadline {
                    kill(&mut child);
                    panic!("server-everything did not listen within {STARTUP:?}: {}", stderr.lock().unwrap());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("server-everything failed to start: {last}");
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        kill(&mut self.child);
    }
}

type Counts = Arc<Mutex<BTreeMap<String, u64>>>;

/// An in-process rmcp 3.11 server (axum + `StreamableHttpService`, stateful sessions) with the
/// same four tools as the Python one. Stops when dropped.
pub struct RmcpUpstream {
    addr: SocketAddr,
    counts: Counts,
    cancel: CancellationToken,
}

impl RmcpUpstream {
    pub async fn start() -> RmcpUpstream {
        Self::serve(None, false).await
    }

    /// Answer 401 to any HTTP request whose `Authorization` is not `Bearer <token>`.
    pub async fn start_with_bearer(token: &str) -> RmcpUpstream {
        Self::serve(Some(format!("Bearer {token}")), false).await
    }

    /// Answer a call that sends nothing before its result as `application/json`, not SSE.
    pub async fn start_json() -> RmcpUpstream {
        Self::serve(None, true).await
    }

    async fn serve(expected_auth: Option<String>, json: bool) -> RmcpUpstream {
        let counts = Counts::default();
        let cancel = CancellationToken::new();
        let c = counts.clone();
        let svc = StreamableHttpService::new(
            move || Ok(Tools::new(c.clone())),
            LocalSessionManager::default().into(),
            StreamableHttpServerConfig::default()
                .with_cancellation_token(cancel.child_token())
                .with_json_response(json),
        );
        let mut app = axum::Router::new().nest_service("/mcp", svc);
        if let Some(expected) = expected_auth {
            app = app.layer(axum::middleware::from_fn_with_state(Arc::new(expected), require_bearer));
        }
        use axum::serve::ListenerExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let stop = cancel.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned()).await;
        });
        RmcpUpstream { addr, counts, cancel }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub fn counts(&self) -> BTreeMap<String, u64> {
        self.counts.lock().unwrap().clone()
    }

    pub fn count(&self, tool: &str) -> u64 {
        self.counts().get(tool).copied().unwrap_or(0)
    }
}

/// Middleware: 401 unless `Authorization` equals the expected value.
async fn require_bearer(
    axum::extract::State(expected): axum::extract::State<Arc<String>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if req.headers().get("authorization").and_then(|v| v.to_str().ok()) == Some(expected.as_str()) {
        next.run(req).await
    } else {
        axum::response::IntoResponse::into_response(axum::http::StatusCode::UNAUTHORIZED)
    }
}

impl Drop for RmcpUpstream {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct WaitArgs {
    secs: u64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct AskArgs {
    /// Seconds to wait for the answer before giving up.
    secs: u64,
    /// Milliseconds the tool goes on working after it gave up, before it answers.
    linger_ms: u64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct DeleteArgs {
    #[allow(dead_code)]
    confirm: bool,
}

#[derive(Clone)]
struct Tools {
    counts: Counts,
    tool_router: ToolRouter<Tools>,
}

#[tool_router]
impl Tools {
    fn new(counts: Counts) -> Self {
        Tools { counts, tool_router: Self::tool_router() }
    }

    fn hit(&self, tool: &str) {
        *self.counts.lock().unwrap().entry(tool.to_string()).or_default() += 1;
    }

    #[tool(description = "Return the text unchanged.")]
    async fn echo(&self, Parameters(a): Parameters<EchoArgs>) -> String {
        self.hit("echo");
        a.text
    }

    #[tool(description = "Add two integers.")]
    async fn add(&self, Parameters(a): Parameters<AddArgs>) -> CallToolResult {
        self.hit("add");
        let sum = a.a + a.b;
        let mut r = CallToolResult::success(vec![ContentBlock::text(sum.to_string())]);
        r.structured_content = Some(serde_json::json!({ "result": sum }));
        r
    }

    #[tool(description = "Wait `secs` seconds, or until the caller cancels (counted as `wait_cancelled`).")]
    async fn wait(&self, Parameters(a): Parameters<WaitArgs>, ctx: RequestContext<RoleServer>) -> String {
        self.hit("wait");
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(a.secs)) => "waited".into(),
            _ = ctx.ct.cancelled() => {
                self.hit("wait_cancelled");
                "cancelled".into()
            }
        }
    }

    #[tool(
        description = "Ask the client for a sampling message and give up (notifications/cancelled) after `secs` seconds unanswered, then answer after `linger_ms`; counted as `ask_answered` or `ask_cancelled`."
    )]
    #[allow(deprecated)] // sampling (SEP-2577); hal0 still relays it for the servers that ask
    async fn ask_then_give_up(&self, Parameters(a): Parameters<AskArgs>, ctx: RequestContext<RoleServer>) -> String {
        use rmcp::model::{CancelledNotificationParam, CreateMessageRequestParams, SamplingMessage, ServerRequest};
        self.hit("ask_then_give_up");
        let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("say something")], 16);
        let request = ServerRequest::CreateMessageRequest(rmcp::model::Request::new(params));
        let options = rmcp::service::PeerRequestOptions::no_options();
        let h = match ctx.peer.send_cancellable_request(request, options).await {
            Ok(h) => h,
            Err(e) => return format!("could not ask: {e}"),
        };
        let (id, peer) = (h.id.clone(), h.peer.clone());
        tokio::select! {
            r = h.await_response() => {
                self.hit("ask_answered");
                format!("answered: {}", r.is_ok())
            }
            _ = tokio::time::sleep(Duration::from_secs(a.secs)) => {
                let p = CancelledNotificationParam::new(Some(id), Some("gave up".into()));
                let _ = peer.notify_cancelled(p).await;
                self.hit("ask_cancelled");
                tokio::time::sleep(Duration::from_millis(a.linger_ms)).await;
                "gave up".into()
            }
        }
    }

    #[tool(description = "Pretend to delete everything (a harmless stand-in for a dangerous tool).")]
    async fn delete_everything(&self, Parameters(_a): Parameters<DeleteArgs>) -> String {
        self.hit("delete_everything");
        "deleted".into()
    }

    #[tool(
        description = "Report the Authorization and X-API-Key request headers this server received, and the call's _meta.traceparent."
    )]
    async fn whoami(&self, ctx: RequestContext<RoleServer>) -> String {
        self.hit("whoami");
        let parts = ctx.extensions.get::<axum::http::request::Parts>();
        let header = |name: &str| parts.and_then(|p| p.headers.get(name)).and_then(|v| v.to_str().ok());
        let mut v = serde_json::json!({ "authorization": header("authorization"), "x-api-key": header("x-api-key") });
        if let Some(tp) = ctx.meta.get_traceparent() {
            v["traceparent"] = serde_json::json!(tp);
        }
        v.to_string()
    }
}

#[tool_handler(router = self.tool_router, name = "hal0-test-upstream-rmcp")]
impl ServerHandler for Tools {}
