//! In-process fake of the Hermes agent API server 0.19.0 (`gateway/platforms/api_server.py`), the
//! delegation target of hal0's agent bridge. See `/work/shared/reference/hermes-api.md`, Part 1.
//!
//! ```ignore
//! let hermes = FakeHermes::start(FakeHermesOptions::default()).await;
//! let url = format!("{}/v1/runs", hermes.base_url());   // bearer: hermes.key()
//! ```
//!
//! It listens on `127.0.0.1:<free port>` (TCP_NODELAY) inside the test's tokio runtime and speaks:
//!
//! * `GET /health`, `/v1/health` (no auth), `GET /v1/models`, `GET /v1/capabilities`;
//! * `POST /v1/runs` → 202 `{"run_id":"run_<32 hex>","status":"started"}`;
//! * `GET /v1/runs/{id}`, `GET /v1/runs/{id}/events` (SSE, one reader per run),
//!   `POST /v1/runs/{id}/approval`, `POST /v1/runs/{id}/stop`;
//! * only when enabled in the options: `POST /v1/runs/{id}/steer` and `POST /v1/runs/{id}/clarify`.
//!
//! Every route also answers under `/p/{profile}/…`. Any other path is aiohttp's plain `404: Not Found`.
//!
//! A run is scripted by its input text (the last user message); the first keyword found wins, in this
//! order: `BIG:<n>` (exactly n bytes of output, in deltas of at most 1000 bytes), `SLOW` (60 deltas,
//! one per `slow_interval`), `APPROVE` (dangerous-command approval), `CLARIFY` (only when
//! `clarify` is on), `TOOLCALL` (a terminal tool call), `FAIL` (`run.failed`), `UNICODE` (multi-byte
//! text, a delta boundary inside a word), `SECRET` (a bearer token split across three deltas);
//! anything else answers `FAKE ANSWER: <input>` in chunks of 12 characters. For every completed run
//! the `output` equals the concatenation of its `message.delta` texts, and a `reasoning.available`
//! event repeating that text comes just before `run.completed`, as Hermes does.
//!
//! JSON bodies and SSE payloads are written the way Python's `json.dumps` writes them by default:
//! `", "` / `": "` separators and every non-ASCII character escaped as `\uXXXX` (surrogate pairs for
//! emoji).
// Also compiled into examples/ (`#[path]`), which use other parts of it than the tests do.
#![allow(dead_code)]

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use axum::serve::ListenerExt;
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::{AbortHandle, JoinHandle};

/// Key used by `FakeHermesOptions::default()`.
pub const DEFAULT_KEY: &str = "fake-hermes-key-0123456789abcdef";
/// `MAX_REQUEST_BYTES` of 0.19.0: a larger POST body gets 413 `body_too_large`.
pub const MAX_REQUEST_BYTES: usize = 10_000_000;
/// Choices offered by `approval.request`.
pub const APPROVAL_CHOICES: [&str; 4] = ["once", "session", "always", "deny"];
/// The bearer token that `SECRET` runs split across deltas.
pub const SECRET_TEXT: &str = "Authorization: Bearer sk-abcdefghijklmnopqrstuvwx123";
/// The command an `APPROVE` run asks to run.
pub const APPROVAL_COMMAND: &str = "rm -r /tmp/fake-hermes-victim";
/// Output prefix of a denied approval (as the real terminal tool words it).
pub const DENIED_TEXT: &str = "BLOCKED: Command denied by user";
/// Output prefix of an approval that timed out.
pub const TIMED_OUT_TEXT: &str = "BLOCKED: Command timed out without user response";

const TERMINAL: [&str; 3] = ["completed", "failed", "cancelled"];

/// Behaviour switches. `Default` is a plain 0.19.0 server with fast event pacing.
#[derive(Clone, Debug)]
pub struct FakeHermesOptions {
    /// Bearer key (`API_SERVER_KEY`); must be at least 16 characters, like the real startup guard.
    pub key: String,
    /// `version` reported by `/health`; any string, e.g. "not-a-version". Default "0.19.0".
    pub version: String,
    /// Advertise `features.run_steer` / `endpoints.run_steer` and serve `POST /v1/runs/{id}/steer`.
    pub steer: bool,
    /// Advertise `features.run_clarify` / `endpoints.run_clarify`, serve `POST /v1/runs/{id}/clarify`
    /// and honour the `CLARIFY` keyword.
    pub clarify: bool,
    /// Cap on active (non-terminal) runs; over it POST /v1/runs gets 429. 0 disables. Default 10.
    pub max_concurrent_runs: usize,
    /// Silence after which the SSE stream sends `: keepalive`. Default 30 s.
    pub keepalive: Duration,
    /// Delay before each of the 60 deltas of a `SLOW` run. Default 100 ms.
    pub slow_interval: Duration,
    /// Delay before every other scripted event. Default 5 ms.
    pub event_interval: Duration,
    /// Time from `POST …/stop` being noticed to `run.cancelled`. Default 50 ms.
    pub stop_delay: Duration,
    /// `approvals.timeout`: an unanswered approval blocks the command after this; no event is sent
    /// and the status stays `waiting_for_approval` until the run ends. `None` waits forever.
    /// Default 60 s.
    pub approval_timeout: Option<Duration>,
    /// Answer every authenticated POST /v1/runs with this HTTP status and an OpenAI error envelope.
    pub fail_start_with: Option<u16>,
    /// Cut the SSE connection (no `: stream closed`, the chunked body is aborted) after this many
    /// `data:` frames. The queue is gone afterwards, as in 0.19.0, so a second GET is 404.
    pub drop_stream_after: Option<usize>,
}

impl Default for FakeHermesOptions {
    fn default() -> Self {
        FakeHermesOptions {
            key: DEFAULT_KEY.to_string(),
            version: "0.19.0".to_string(),
            steer: false,
            clarify: false,
            max_concurrent_runs: 10,
            keepalive: Duration::from_secs(30),
            slow_interval: Duration::from_millis(100),
            event_interval: Duration::from_millis(5),
            stop_delay: Duration::from_millis(50),
            approval_timeout: Some(Duration::from_secs(60)),
            fail_start_with: None,
            drop_stream_after: None,
        }
    }
}

/// One HTTP request as the fake saw it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    /// Path and query as sent (including any `/p/{profile}` prefix).
    pub path: String,
    pub authorization: Option<String>,
    pub session_key: Option<String>,
    pub idempotency_key: Option<String>,
    pub origin: Option<String>,
    /// All request headers, names lower-case.
    pub headers: Vec<(String, String)>,
    /// Body parsed as JSON; `Value::Null` when empty or not JSON.
    pub body: Value,
    /// Body, lossily decoded as UTF-8 (empty when over the size limit).
    pub body_text: String,
    /// Response status; 0 while the request is still being handled.
    pub status: u16,
}

impl RecordedRequest {
    /// A header value by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }
}

/// Cumulative counters (they survive `kill`/`restart_same_port`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub requests: usize,
    /// 401 answers.
    pub unauthorized: usize,
    /// 202 answers to POST /v1/runs.
    pub runs_started: usize,
    /// POST /v1/runs refused with 429 (cap) or by `fail_start_with`.
    pub runs_rejected: usize,
    /// GET …/events that got a stream (200).
    pub event_streams_opened: usize,
    /// Accepted approvals.
    pub approvals: usize,
    /// Stop requests answered `stopping`.
    pub stops: usize,
    /// Accepted steers.
    pub steers: usize,
    /// Accepted clarify answers.
    pub clarify_responses: usize,
}

/// Handle on a running fake. Dropping it stops the server.
pub struct FakeHermes {
    shared: Arc<Shared>,
    addr: SocketAddr,
    server: Mutex<Option<ServerTask>>,
    /// Serve tasks of killed lives, awaited by `wait_stopped`.
    dying: Mutex<Vec<JoinHandle<()>>>,
}

impl FakeHermes {
    /// Bind `127.0.0.1:0` and serve on the current tokio runtime.
    ///
    /// Panics if `opts.key` is shorter than 16 characters (0.19.0 refuses to start with such a key).
    pub async fn start(opts: FakeHermesOptions) -> FakeHermes {
        assert_key(&opts.key);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("fake hermes: bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared::new(opts));
        let server = spawn_server(shared.clone(), listener);
        FakeHermes { shared, addr, server: Mutex::new(Some(server)), dying: Mutex::new(Vec::new()) }
    }

    /// `FakeHermes::start(FakeHermesOptions::default())`.
    pub async fn start_default() -> FakeHermes {
        Self::start(FakeHermesOptions::default()).await
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
    /// `base_url()` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
    /// The bearer key (fixed for the life of the handle).
    pub fn key(&self) -> &str {
        &self.shared.key
    }

    /// A Hermes profile's `config.yaml` whose API server is this fake.
    pub fn profile_yaml(&self) -> String {
        format!(
            "model:\n  default: fake-model\nplatforms:\n  api_server:\n    enabled: true\n    extra:\n      host: 127.0.0.1\n      port: {}\n      key: {}\n",
            self.port(),
            self.key()
        )
    }

    /// Write [`Self::profile_yaml`] as `dir/config.yaml` (a Hermes home or profile dir).
    pub fn write_profile(&self, dir: &std::path::Path) {
        std::fs::write(dir.join("config.yaml"), self.profile_yaml()).unwrap();
    }
    /// Whether the listener is up (false after `kill`).
    pub fn is_running(&self) -> bool {
        self.server.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// Change options on the fly (e.g. `|o| o.fail_start_with = None`). Runs already started keep
    /// the pacing they started with. The key cannot be changed.
    pub fn configure(&self, f: impl FnOnce(&mut FakeHermesOptions)) {
        let mut inner = self.shared.lock();
        f(&mut inner.opts);
        assert_eq!(inner.opts.key, self.shared.key, "fake hermes: the key cannot be changed");
    }
    /// Current options.
    pub fn options(&self) -> FakeHermesOptions {
        self.shared.lock().opts.clone()
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().log.clone()
    }
    /// Requests with this method whose path (without query and `/p/{profile}` prefix) is `path`.
    pub fn requests_to(&self, method: &str, path: &str) -> Vec<RecordedRequest> {
        self.shared
            .lock()
            .log
            .iter()
            .filter(|r| r.method.eq_ignore_ascii_case(method) && route_path(&r.path) == path)
            .cloned()
            .collect()
    }
    pub fn counters(&self) -> Counters {
        self.shared.lock().counters.clone()
    }
    /// Ids of the runs of the current server life, oldest first.
    pub fn run_ids(&self) -> Vec<String> {
        self.shared.lock().run_order.clone()
    }
    /// Runs whose status is not terminal.
    pub fn active_runs(&self) -> usize {
        self.shared.lock().active_runs()
    }
    /// The status object `GET /v1/runs/{id}` would return.
    pub fn run_status(&self, id: &str) -> Option<Value> {
        self.shared.lock().runs.get(id).map(|r| r.status_json(id))
    }
    /// Every event emitted for the run so far, whether or not a subscriber read it.
    pub fn run_events(&self, id: &str) -> Vec<Value> {
        self.shared.lock().runs.get(id).map(|r| r.events.clone()).unwrap_or_default()
    }
    /// How many authenticated `GET /v1/runs/{id}/events` requests named this run (404s included).
    pub fn event_reads(&self, id: &str) -> usize {
        self.shared.lock().event_reads.get(id).copied().unwrap_or(0)
    }
    /// Accepted approvals as `(run_id, choice)`, the choice after alias mapping
    /// (`approve`/`approved`/`allow` → `once`); the raw body is in `requests()`.
    pub fn approvals_received(&self) -> Vec<(String, String)> {
        self.shared.lock().approvals.clone()
    }

    /// Poll until the run has `status`; returns the status object. Panics after `limit`.
    pub async fn wait_for_status(&self, id: &str, status: &str, limit: Duration) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let cur = self.run_status(id);
            if let Some(v) = &cur
                && v["status"] == status
            {
                return v.clone();
            }
            if Instant::now() >= deadline {
                panic!("fake hermes: run {id} did not reach {status:?} within {limit:?}; now {cur:?}");
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Simulate Hermes going down: the listener closes (new connections are refused), open SSE
    /// streams are cut, idle keep-alive connections are closed, and all runs are forgotten (0.19.0
    /// keeps them in memory only). The request log and counters are kept.
    ///
    /// Synchronous: the shutdown happens as soon as the runtime gets control (the next `.await`).
    /// Await `wait_stopped()` to be sure the port refuses connections before going on.
    pub fn kill(&self) {
        let server = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(server) = server {
            server.dead_tx.send_replace(true);
            self.dying.lock().unwrap_or_else(|e| e.into_inner()).push(server.task);
        }
        self.shared.forget_runs();
    }

    /// Wait until every killed server life has closed its listener and connections (at most 3 s
    /// each, then it is aborted).
    pub async fn wait_stopped(&self) {
        let tasks = std::mem::take(&mut *self.dying.lock().unwrap_or_else(|e| e.into_inner()));
        for mut task in tasks {
            if tokio::time::timeout(Duration::from_secs(3), &mut task).await.is_err() {
                task.abort();
            }
        }
    }

    /// `kill`, then listen again on the same port with no runs (a restarted gateway).
    pub async fn restart_same_port(&self) {
        self.kill();
        self.wait_stopped().await;
        let deadline = Instant::now() + Duration::from_secs(5);
        let listener = loop {
            match TcpListener::bind(self.addr).await {
                Ok(l) => break l,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("fake hermes: rebind {} failed: {e}", self.addr),
            }
        };
        let server = spawn_server(self.shared.clone(), listener);
        *self.server.lock().unwrap_or_else(|e| e.into_inner()) = Some(server);
    }

    /// Stop the server and wait until it is down (`kill` + `wait_stopped`, consuming the handle).
    pub async fn shutdown(self) {
        self.kill();
        self.wait_stopped().await;
    }
}

impl Drop for FakeHermes {
    fn drop(&mut self) {
        if let Some(server) = self.server.lock().unwrap_or_else(|e| e.into_inner()).take() {
            server.dead_tx.send_replace(true);
        }
        self.shared.forget_runs();
    }
}

fn assert_key(key: &str) {
    assert!(key.chars().count() >= 16, "fake hermes: API key must be at least 16 characters (0.19.0 startup guard)");
}

// ---------------------------------------------------------------------------------------------
// Server plumbing
// ---------------------------------------------------------------------------------------------

struct ServerTask {
    dead_tx: watch::Sender<bool>,
    task: JoinHandle<()>,
}

#[derive(Clone)]
struct Ctx {
    shared: Arc<Shared>,
    dead: watch::Receiver<bool>,
}

fn spawn_server(shared: Arc<Shared>, listener: TcpListener) -> ServerTask {
    let (dead_tx, dead_rx) = watch::channel(false);
    let app = Router::new().fallback(dispatch).with_state(Ctx { shared, dead: dead_rx.clone() });
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let mut signal = dead_rx;
    let task = tokio::spawn(async move {
        let shutdown = async move {
            let _ = signal.wait_for(|dead| *dead).await;
        };
        let _ = axum::serve(listener, app).with_graceful_shutdown(shutdown).await;
    });
    ServerTask { dead_tx, task }
}

struct Shared {
    key: String,
    inner: Mutex<Inner>,
    ids: RandomState,
}

struct Inner {
    opts: FakeHermesOptions,
    log: Vec<RecordedRequest>,
    runs: HashMap<String, Run>,
    run_order: Vec<String>,
    event_reads: HashMap<String, usize>,
    approvals: Vec<(String, String)>,
    counters: Counters,
    seq: u64,
}

impl Inner {
    fn active_runs(&self) -> usize {
        self.runs.values().filter(|r| !r.is_terminal()).count()
    }
}

enum StreamMsg {
    Frame(String),
    End,
}

struct Run {
    session_id: String,
    status: String,
    created_at: f64,
    updated_at: f64,
    last_event: Option<String>,
    output: Option<String>,
    error: Option<String>,
    usage: Option<Value>,
    events: Vec<Value>,
    tx: mpsc::UnboundedSender<StreamMsg>,
    /// The single event queue; taken by the first subscriber and never given back.
    rx: Option<mpsc::UnboundedReceiver<StreamMsg>>,
    stop_tx: watch::Sender<bool>,
    approval: Option<oneshot::Sender<String>>,
    clarify: Option<(String, oneshot::Sender<String>)>,
    pending_steers: Vec<String>,
    task: Option<AbortHandle>,
}

impl Run {
    fn is_terminal(&self) -> bool {
        TERMINAL.contains(&self.status.as_str())
    }

    fn status_json(&self, id: &str) -> Value {
        let mut v = json!({
            "object": "hermes.run",
            "run_id": id,
            "status": self.status,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "session_id": self.session_id,
            "model": "hermes-agent",
            "last_event": self.last_event,
        });
        if let Some(o) = &self.output {
            v["output"] = json!(o);
        }
        if let Some(e) = &self.error {
            v["error"] = json!(e);
        }
        if let Some(u) = &self.usage {
            v["usage"] = u.clone();
        }
        v
    }

    fn set_status(&mut self, status: &str) {
        // "stopping" sticks until the run settles.
        if self.is_terminal() || (self.status == "stopping" && !TERMINAL.contains(&status)) {
            return;
        }
        self.status = status.to_string();
        self.updated_at = now();
    }

    fn emit(&mut self, id: &str, event: &str, fields: Value) {
        let mut obj = Map::new();
        obj.insert("event".into(), json!(event));
        obj.insert("run_id".into(), json!(id));
        obj.insert("timestamp".into(), json!(now()));
        if let Value::Object(extra) = fields {
            obj.extend(extra);
        }
        let payload = Value::Object(obj);
        let frame = format!("data: {}\n\n", py_json(&payload));
        self.last_event = Some(event.to_string());
        self.updated_at = now();
        self.events.push(payload);
        let _ = self.tx.send(StreamMsg::Frame(frame));
    }
}

impl Shared {
    fn new(opts: FakeHermesOptions) -> Shared {
        Shared {
            key: opts.key.clone(),
            inner: Mutex::new(Inner {
                opts,
                log: Vec::new(),
                runs: HashMap::new(),
                run_order: Vec::new(),
                event_reads: HashMap::new(),
                approvals: Vec::new(),
                counters: Counters::default(),
                seq: 0,
            }),
            ids: RandomState::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn forget_runs(&self) {
        let runs: Vec<Run> = {
            let mut inner = self.lock();
            inner.run_order.clear();
            inner.runs.drain().map(|(_, r)| r).collect()
        };
        for run in runs {
            if let Some(task) = &run.task {
                task.abort();
            }
        }
    }

    fn new_hex(&self, seq: u64, bytes: usize) -> String {
        let mut out = String::new();
        let mut i = 0u64;
        while out.len() < bytes * 2 {
            let h = self.ids.hash_one((seq, i, SystemTime::now()));
            out.push_str(&format!("{h:016x}"));
            i += 1;
        }
        out.truncate(bytes * 2);
        out
    }

    fn with_run<T>(&self, id: &str, f: impl FnOnce(&mut Run) -> T) -> Option<T> {
        self.lock().runs.get_mut(id).map(f)
    }
}

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// Path without query and without a `/p/{profile}` prefix.
fn route_path(path_and_query: &str) -> String {
    let path = path_and_query.split('?').next().unwrap_or("");
    if let Some(rest) = path.strip_prefix("/p/") {
        match rest.find('/') {
            Some(i) => rest[i..].to_string(),
            None => "/".to_string(),
        }
    } else {
        path.to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

/// Python `json.dumps` default formatting: `", "` and `": "` separators, `ensure_ascii=True`.
struct PyFormatter;

impl serde_json::ser::Formatter for PyFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        for ch in fragment.chars() {
            if ch.is_ascii() && ch != '\x7f' {
                w.write_all(&[ch as u8])?;
            } else {
                let mut units = [0u16; 2];
                for unit in ch.encode_utf16(&mut units) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
}

/// Serialize like Python's `json.dumps(value)`.
pub fn py_json(v: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PyFormatter);
    serde::Serialize::serialize(v, &mut ser).expect("serialize json");
    String::from_utf8(out).expect("ascii json")
}

fn json_response(status: u16, v: &Value) -> Response {
    let mut resp = Response::new(Body::from(py_json(v)));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
    resp
}

/// OpenAI-style envelope `{"error":{"message","type","param","code"}}`.
fn error_response(status: u16, message: &str, code: Option<&str>) -> Response {
    let err_type = if status >= 500 { "server_error" } else { "invalid_request_error" };
    json_response(status, &json!({"error": {"message": message, "type": err_type, "param": null, "code": code}}))
}

fn run_not_found(id: &str) -> Response {
    error_response(404, &format!("Run not found: {id}"), Some("run_not_found"))
}

fn plain(status: u16, text: &str) -> Response {
    let mut resp = Response::new(Body::from(text.to_string()));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    resp
}

fn empty(status: u16) -> Response {
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    resp
}

fn with_retry_after(mut resp: Response) -> Response {
    resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    resp
}

fn security_headers(resp: &mut Response) {
    let h = resp.headers_mut();
    h.entry("x-content-type-options").or_insert(HeaderValue::from_static("nosniff"));
    h.entry("referrer-policy").or_insert(HeaderValue::from_static("no-referrer"));
}

fn header_str(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

fn parse_body(body: &Bytes) -> Option<Value> {
    serde_json::from_slice::<Value>(body).ok()
}

fn invalid_json() -> Response {
    error_response(400, "Invalid JSON", None)
}

// ---------------------------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------------------------

async fn dispatch(State(ctx): State<Ctx>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let headers = parts.headers;
    let method = parts.method;
    let path = parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| parts.uri.path().into());

    let declared_too_large = header_str(&headers, "content-length")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > MAX_REQUEST_BYTES as u64);
    let (bytes, too_large) = if declared_too_large {
        (Bytes::new(), true)
    } else {
        match axum::body::to_bytes(body, MAX_REQUEST_BYTES).await {
            Ok(b) => (b, false),
            Err(_) => (Bytes::new(), true),
        }
    };

    let index = {
        let mut inner = ctx.shared.lock();
        inner.counters.requests += 1;
        inner.log.push(RecordedRequest {
            method: method.to_string(),
            path: path.clone(),
            authorization: header_str(&headers, "authorization"),
            session_key: header_str(&headers, "x-hermes-session-key"),
            idempotency_key: header_str(&headers, "idempotency-key"),
            origin: header_str(&headers, "origin"),
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect(),
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            body_text: String::from_utf8_lossy(&bytes).into_owned(),
            status: 0,
        });
        inner.log.len() - 1
    };

    let resp = handle(&ctx, &method, &path, &headers, &bytes, too_large);

    let status = resp.status().as_u16();
    let mut inner = ctx.shared.lock();
    if let Some(entry) = inner.log.get_mut(index) {
        entry.status = status;
    }
    if status == 401 {
        inner.counters.unauthorized += 1;
    }
    resp
}

fn handle(ctx: &Ctx, method: &Method, path: &str, headers: &HeaderMap, body: &Bytes, too_large: bool) -> Response {
    // cors_middleware (outermost): CORS is off, so any browser Origin and any preflight is a bare 403.
    if headers.get(header::ORIGIN).is_some_and(|o| !o.is_empty()) || method == Method::OPTIONS {
        return empty(403);
    }
    // body_limit_middleware.
    if too_large && matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
        let mut r = error_response(413, "Request body too large.", Some("body_too_large"));
        security_headers(&mut r);
        return r;
    }
    let mut resp = route(ctx, method, path, headers, body);
    if resp.headers().get(header::CONTENT_TYPE).is_none_or(|ct| ct != "text/event-stream") {
        security_headers(&mut resp);
    }
    resp
}

fn route(ctx: &Ctx, method: &Method, path: &str, headers: &HeaderMap, body: &Bytes) -> Response {
    let path = route_path(path);
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (steer, clarify) = {
        let inner = ctx.shared.lock();
        (inner.opts.steer, inner.opts.clarify)
    };
    let allowed: &[Method] = match segs.as_slice() {
        ["health"] | ["v1", "health"] | ["v1", "models"] | ["v1", "capabilities"] => &[Method::GET, Method::HEAD],
        ["v1", "runs"] => &[Method::POST],
        ["v1", "runs", id] if !id.is_empty() => &[Method::GET, Method::HEAD],
        ["v1", "runs", id, "events"] if !id.is_empty() => &[Method::GET, Method::HEAD],
        ["v1", "runs", id, "approval" | "stop"] if !id.is_empty() => &[Method::POST],
        ["v1", "runs", id, "steer"] if !id.is_empty() && steer => &[Method::POST],
        ["v1", "runs", id, "clarify"] if !id.is_empty() && clarify => &[Method::POST],
        _ => return plain(404, "404: Not Found"),
    };
    if !allowed.contains(method) {
        let mut r = plain(405, "405: Method Not Allowed");
        let allow = allowed.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ");
        if let Ok(v) = HeaderValue::from_str(&allow) {
            r.headers_mut().insert(header::ALLOW, v);
        }
        return r;
    }
    match segs.as_slice() {
        ["health"] | ["v1", "health"] => health(ctx),
        _ if !authorized(ctx, headers) => json_response(
            401,
            &json!({"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": "invalid_api_key"}}),
        ),
        ["v1", "models"] => json_response(
            200,
            &json!({"object": "list", "data": [{"id": "hermes-agent", "object": "model", "created": now() as u64,
                "owned_by": "hermes"}]}),
        ),
        ["v1", "capabilities"] => capabilities(ctx),
        ["v1", "runs"] => start_run(ctx, headers, body),
        ["v1", "runs", id] => get_run(ctx, id),
        ["v1", "runs", id, "events"] => run_events(ctx, id),
        ["v1", "runs", id, "approval"] => approval(ctx, id, body),
        ["v1", "runs", id, "stop"] => stop(ctx, id),
        ["v1", "runs", id, "steer"] => steer_run(ctx, id, body),
        ["v1", "runs", id, "clarify"] => clarify_run(ctx, id, body),
        _ => plain(404, "404: Not Found"),
    }
}

fn authorized(ctx: &Ctx, headers: &HeaderMap) -> bool {
    let key = &ctx.shared.key;
    let Some(value) = headers.get(header::AUTHORIZATION) else { return false };
    let Ok(value) = value.to_str() else { return false };
    value.strip_prefix("Bearer ").is_some_and(|token| token.trim() == key.as_str())
}

// ---------------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------------

fn health(ctx: &Ctx) -> Response {
    let version = ctx.shared.lock().opts.version.clone();
    json_response(200, &json!({"status": "ok", "platform": "hermes-agent", "version": version}))
}

fn capabilities(ctx: &Ctx) -> Response {
    let (steer, clarify) = {
        let inner = ctx.shared.lock();
        (inner.opts.steer, inner.opts.clarify)
    };
    let ep = |method: &str, path: &str| json!({"method": method, "path": path});
    let mut caps = json!({
        "object": "hermes.api_server.capabilities",
        "platform": "hermes-agent",
        "model": "hermes-agent",
        "auth": {"type": "bearer", "required": true},
        "runtime": {"mode": "server_agent", "tool_execution": "server", "split_runtime": false},
        "features": {
            "chat_completions": true, "chat_completions_streaming": true, "responses_api": true,
            "responses_streaming": true, "run_submission": true, "run_status": true, "run_events_sse": true,
            "run_stop": true, "run_approval_response": true, "tool_progress_events": true, "approval_events": true,
            "session_resources": true, "session_chat": true, "session_chat_streaming": true, "session_fork": true,
            "admin_config_rw": false, "jobs_admin": false, "memory_write_api": false, "skills_api": true,
            "audio_api": false, "realtime_voice": false,
            "session_continuity_header": "X-Hermes-Session-Id", "session_key_header": "X-Hermes-Session-Key",
            "cors": false
        },
        "endpoints": {
            "health": ep("GET", "/health"),
            "models": ep("GET", "/v1/models"),
            "capabilities": ep("GET", "/v1/capabilities"),
            "chat_completions": ep("POST", "/v1/chat/completions"),
            "responses": ep("POST", "/v1/responses"),
            "runs": ep("POST", "/v1/runs"),
            "run_status": ep("GET", "/v1/runs/{run_id}"),
            "run_events": ep("GET", "/v1/runs/{run_id}/events"),
            "run_approval": ep("POST", "/v1/runs/{run_id}/approval"),
            "run_stop": ep("POST", "/v1/runs/{run_id}/stop")
        }
    });
    if steer {
        caps["features"]["run_steer"] = json!(true);
        caps["endpoints"]["run_steer"] = ep("POST", "/v1/runs/{run_id}/steer");
    }
    if clarify {
        caps["features"]["run_clarify"] = json!(true);
        caps["endpoints"]["run_clarify"] = ep("POST", "/v1/runs/{run_id}/clarify");
    }
    json_response(200, &caps)
}

fn forced_error(status: u16) -> Response {
    let msg = format!("Fake Hermes: forced HTTP {status} for POST /v1/runs");
    match status {
        401 => json_response(
            401,
            &json!({"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": "invalid_api_key"}}),
        ),
        413 => error_response(413, "Request body too large.", Some("body_too_large")),
        429 => with_retry_after(error_response(429, &msg, Some("rate_limit_exceeded"))),
        503 => with_retry_after(error_response(503, "Gateway is draining", Some("gateway_draining"))),
        _ => {
            let code = match status {
                400 => "invalid_request",
                403 => "forbidden",
                404 => "not_found",
                409 => "conflict",
                422 => "unprocessable_entity",
                500 => "internal_error",
                502 => "bad_gateway",
                504 => "gateway_timeout",
                _ => "fake_error",
            };
            error_response(status, &msg, Some(code))
        }
    }
}

/// Text of the last user message: a string input, or the `content` of the last array item (a
/// string, or the text parts of a content list).
fn user_message(input: &Value) -> String {
    match input {
        Value::String(s) => s.clone(),
        Value::Array(items) => match items.last().and_then(|m| m.get("content")) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => {
                parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join(" ")
            }
            _ => String::new(),
        },
        _ => String::new(),
    }
}

fn is_falsy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => !b,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(o)) => o.is_empty(),
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
    }
}

fn start_run(ctx: &Ctx, headers: &HeaderMap, body: &Bytes) -> Response {
    let shared = &ctx.shared;
    let (opts, active) = {
        let inner = shared.lock();
        (inner.opts.clone(), inner.active_runs())
    };
    if let Some(status) = opts.fail_start_with {
        shared.lock().counters.runs_rejected += 1;
        return forced_error(status);
    }
    // The cap is checked before the body is read.
    if opts.max_concurrent_runs > 0 && active >= opts.max_concurrent_runs {
        shared.lock().counters.runs_rejected += 1;
        let msg = format!("Too many concurrent runs (max {})", opts.max_concurrent_runs);
        return with_retry_after(error_response(429, &msg, Some("rate_limit_exceeded")));
    }
    let Some(Value::Object(body)) = parse_body(body) else { return invalid_json() };
    if is_falsy(body.get("input")) {
        return error_response(400, "Missing 'input' field", None);
    }
    let input = user_message(&body["input"]);
    if input.is_empty() {
        return error_response(400, "No user message found in input", None);
    }
    if let Some(history) = body.get("conversation_history").filter(|h| !is_falsy(Some(h))) {
        let Some(items) = history.as_array() else {
            return error_response(400, "'conversation_history' must be an array of message objects", None);
        };
        for (i, entry) in items.iter().enumerate() {
            if entry.get("role").is_none() || entry.get("content").is_none() {
                let msg = format!("conversation_history[{i}] must have 'role' and 'content' fields");
                return error_response(400, &msg, None);
            }
        }
    }
    let session_key = headers.get("x-hermes-session-key").cloned();
    if session_key.as_ref().is_some_and(|k| k.len() > 256) {
        return error_response(400, "X-Hermes-Session-Key must be at most 256 characters", Some("invalid_session_key"));
    }
    let instructions = body.get("instructions").and_then(Value::as_str).unwrap_or("").to_string();

    let script = Script::parse(&input, opts.clarify);
    let (tx, rx) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = watch::channel(false);
    let run_id = {
        let mut inner = shared.lock();
        inner.seq += 1;
        let id = format!("run_{}", shared.new_hex(inner.seq, 16));
        let session_id = match body.get("session_id") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => id.clone(),
        };
        let t = now();
        inner.runs.insert(
            id.clone(),
            Run {
                session_id,
                status: "queued".into(),
                created_at: t,
                updated_at: t,
                last_event: None,
                output: None,
                error: None,
                usage: None,
                events: Vec::new(),
                tx,
                rx: Some(rx),
                stop_tx,
                approval: None,
                clarify: None,
                pending_steers: Vec::new(),
                task: None,
            },
        );
        inner.run_order.push(id.clone());
        inner.counters.runs_started += 1;
        id
    };
    let runner = Runner { shared: shared.clone(), id: run_id.clone(), input, instructions, stop: stop_rx, opts };
    let task = tokio::spawn(runner.drive(script));
    shared.with_run(&run_id, |r| r.task = Some(task.abort_handle()));

    let mut resp = json_response(202, &json!({"run_id": run_id, "status": "started"}));
    if let Some(k) = session_key {
        resp.headers_mut().insert("x-hermes-session-key", k);
    }
    resp
}

fn get_run(ctx: &Ctx, id: &str) -> Response {
    match ctx.shared.lock().runs.get(id) {
        Some(run) => json_response(200, &run.status_json(id)),
        None => run_not_found(id),
    }
}

struct SseState {
    rx: mpsc::UnboundedReceiver<StreamMsg>,
    dead: watch::Receiver<bool>,
    keepalive: Duration,
    sent: usize,
    drop_after: Option<usize>,
    finished: bool,
}

enum SseNext {
    Frame(String),
    Keepalive,
    End,
    Dead,
}

fn run_events(ctx: &Ctx, id: &str) -> Response {
    let (rx, keepalive, drop_after) = {
        let mut inner = ctx.shared.lock();
        *inner.event_reads.entry(id.to_string()).or_insert(0) += 1;
        let Some(rx) = inner.runs.get_mut(id).and_then(|r| r.rx.take()) else {
            return run_not_found(id);
        };
        inner.counters.event_streams_opened += 1;
        (rx, inner.opts.keepalive, inner.opts.drop_stream_after)
    };
    let state = SseState { rx, dead: ctx.dead.clone(), keepalive, sent: 0, drop_after, finished: false };
    let stream = futures::stream::unfold(state, |mut st| async move {
        if st.finished {
            return None;
        }
        if st.drop_after.is_some_and(|n| st.sent >= n) {
            // Give hyper a moment to flush the frames already written, then abort the body.
            tokio::time::sleep(Duration::from_millis(50)).await;
            st.finished = true;
            return Some((Err(io::Error::other("fake hermes: SSE connection dropped")), st));
        }
        let next = tokio::select! {
            biased;
            _ = st.dead.wait_for(|dead| *dead) => SseNext::Dead,
            r = tokio::time::timeout(st.keepalive, st.rx.recv()) => match r {
                Err(_) => SseNext::Keepalive,
                Ok(Some(StreamMsg::Frame(f))) => SseNext::Frame(f),
                Ok(Some(StreamMsg::End)) | Ok(None) => SseNext::End,
            },
        };
        match next {
            SseNext::Frame(f) => {
                st.sent += 1;
                Some((Ok(Bytes::from(f)), st))
            }
            SseNext::Keepalive => Some((Ok(Bytes::from_static(b": keepalive\n\n")), st)),
            SseNext::End => {
                st.finished = true;
                Some((Ok(Bytes::from_static(b": stream closed\n\n")), st))
            }
            SseNext::Dead => {
                st.finished = true;
                Some((Err(io::Error::other("fake hermes: server killed")), st))
            }
        }
    });
    let mut resp = Response::new(Body::from_stream(stream));
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    resp
}

fn approval(ctx: &Ctx, id: &str, body: &Bytes) -> Response {
    let mut inner = ctx.shared.lock();
    let inner = &mut *inner;
    let Some(run) = inner.runs.get_mut(id) else { return run_not_found(id) };
    let Some(body) = parse_body(body) else { return invalid_json() };
    let sent = body.get("choice").and_then(Value::as_str).unwrap_or("").to_string();
    let choice = match sent.trim().to_ascii_lowercase().as_str() {
        "approve" | "approved" | "allow" | "once" => "once".to_string(),
        c @ ("session" | "always" | "deny") => c.to_string(),
        _ => {
            let msg = format!("Invalid choice '{sent}'. Must be one of: once, session, always, deny");
            return error_response(400, &msg, Some("invalid_approval_choice"));
        }
    };
    if run.is_terminal() {
        return error_response(409, &format!("Run {id} is no longer active"), Some("approval_not_active"));
    }
    let Some(tx) = run.approval.take() else {
        return error_response(409, &format!("No approval is pending for run {id}"), Some("approval_not_pending"));
    };
    if tx.send(choice.clone()).is_err() {
        return error_response(409, &format!("No approval is pending for run {id}"), Some("approval_not_pending"));
    }
    if run.status == "waiting_for_approval" {
        run.set_status("running");
    }
    run.emit(id, "approval.responded", json!({"choice": choice, "resolved": 1}));
    inner.approvals.push((id.to_string(), choice.clone()));
    inner.counters.approvals += 1;
    json_response(
        200,
        &json!({"object": "hermes.run.approval_response", "run_id": id, "choice": choice, "resolved": 1}),
    )
}

fn stop(ctx: &Ctx, id: &str) -> Response {
    let mut inner = ctx.shared.lock();
    let Some(run) = inner.runs.get_mut(id) else { return run_not_found(id) };
    // 0.19.0: a finished run is no longer interruptible and answers like an unknown one.
    if run.is_terminal() {
        return run_not_found(id);
    }
    run.set_status("stopping");
    run.stop_tx.send_replace(true);
    inner.counters.stops += 1;
    json_response(200, &json!({"run_id": id, "status": "stopping"}))
}

fn steer_run(ctx: &Ctx, id: &str, body: &Bytes) -> Response {
    let mut inner = ctx.shared.lock();
    let inner = &mut *inner;
    let Some(run) = inner.runs.get_mut(id) else { return run_not_found(id) };
    let Some(body) = parse_body(body) else { return invalid_json() };
    let text = ["input", "message", "text"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .unwrap_or("")
        .to_string();
    if text.is_empty() {
        return error_response(
            400,
            "Steer needs a non-empty 'input', 'message' or 'text'",
            Some("invalid_steer_input"),
        );
    }
    if run.status != "running" {
        let msg = format!("Run {id} is not accepting steer input (status: {})", run.status);
        return error_response(409, &msg, Some("run_not_accepting_steer"));
    }
    run.pending_steers.push(text.clone());
    run.emit(id, "run.steered", json!({"text": text}));
    inner.counters.steers += 1;
    json_response(200, &json!({"object": "hermes.run.steer", "run_id": id, "accepted": true}))
}

fn clarify_run(ctx: &Ctx, id: &str, body: &Bytes) -> Response {
    let mut inner = ctx.shared.lock();
    let inner = &mut *inner;
    let Some(run) = inner.runs.get_mut(id) else { return run_not_found(id) };
    let Some(body) = parse_body(body) else { return invalid_json() };
    let Some(clarify_id) = body.get("clarify_id").and_then(Value::as_str).map(str::to_string) else {
        return error_response(400, "Missing 'clarify_id'", Some("invalid_clarify_id"));
    };
    let response = match body.get("response") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
        }
        Some(_) => {
            return error_response(
                400,
                "'response' must be a string, a list of strings or null",
                Some("invalid_clarify_response"),
            );
        }
    };
    let pending = run.clarify.as_ref().is_some_and(|(cid, _)| *cid == clarify_id) && !run.is_terminal();
    if !pending {
        let msg = format!("No clarify request {clarify_id} is pending for run {id}");
        return error_response(409, &msg, Some("clarify_not_pending"));
    }
    let (_, tx) = run.clarify.take().expect("pending clarify");
    if tx.send(response.clone()).is_err() {
        let msg = format!("No clarify request {clarify_id} is pending for run {id}");
        return error_response(409, &msg, Some("clarify_not_pending"));
    }
    if run.status == "waiting_for_clarify" {
        run.set_status("running");
    }
    let echoed = body.get("response").cloned().unwrap_or(Value::Null);
    run.emit(id, "clarify.responded", json!({"clarify_id": clarify_id, "response": echoed}));
    inner.counters.clarify_responses += 1;
    json_response(
        200,
        &json!({"object": "hermes.run.clarify_response", "run_id": id, "clarify_id": clarify_id, "resolved": true}),
    )
}

// ---------------------------------------------------------------------------------------------
// Scripted runs
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
enum Script {
    Default,
    Slow,
    ToolCall,
    Approve,
    Clarify,
    Fail,
    Unicode,
    Secret,
    Big(usize),
}

impl Script {
    fn parse(input: &str, clarify: bool) -> Script {
        if let Some(n) = big_size(input) {
            Script::Big(n)
        } else if input.contains("SLOW") {
            Script::Slow
        } else if input.contains("APPROVE") {
            Script::Approve
        } else if clarify && input.contains("CLARIFY") {
            Script::Clarify
        } else if input.contains("TOOLCALL") {
            Script::ToolCall
        } else if input.contains("FAIL") {
            Script::Fail
        } else if input.contains("UNICODE") {
            Script::Unicode
        } else if input.contains("SECRET") {
            Script::Secret
        } else {
            Script::Default
        }
    }
}

fn big_size(input: &str) -> Option<usize> {
    let rest = &input[input.find("BIG:")? + 4..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Split on char boundaries into pieces of `size` chars.
fn chunk_chars(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size.max(1)).map(|c| c.iter().collect()).collect()
}

fn word_count(s: &str) -> u64 {
    s.split_whitespace().count() as u64
}

struct Stopped;

enum Outcome {
    Done(String),
    Failed(String),
}

struct Runner {
    shared: Arc<Shared>,
    id: String,
    input: String,
    instructions: String,
    stop: watch::Receiver<bool>,
    opts: FakeHermesOptions,
}

impl Runner {
    fn emit(&self, event: &str, fields: Value) {
        let id = self.id.as_str();
        self.shared.with_run(id, |r| r.emit(id, event, fields));
    }

    fn set_status(&self, status: &str) {
        self.shared.with_run(&self.id, |r| r.set_status(status));
    }

    async fn pause(&mut self, d: Duration) -> Result<(), Stopped> {
        if *self.stop.borrow() {
            return Err(Stopped);
        }
        if d.is_zero() {
            tokio::task::yield_now().await;
            return if *self.stop.borrow() { Err(Stopped) } else { Ok(()) };
        }
        tokio::select! {
            _ = tokio::time::sleep(d) => Ok(()),
            _ = self.stop.wait_for(|s| *s) => Err(Stopped),
        }
    }

    fn delta(&self, text: &str, out: &mut String) {
        out.push_str(text);
        self.emit("message.delta", json!({"delta": text}));
    }

    /// Steer texts received since the last checkpoint are acknowledged in the answer.
    fn ack_steers(&self, out: &mut String) {
        let steers = self.shared.with_run(&self.id, |r| std::mem::take(&mut r.pending_steers)).unwrap_or_default();
        for s in steers {
            self.delta(&format!("[steer acknowledged: {s}] "), out);
        }
    }

    /// Stream `chunks` as deltas, then `reasoning.available` repeating the text.
    async fn answer(&mut self, chunks: Vec<String>, interval: Duration) -> Result<Outcome, Stopped> {
        let mut out = String::new();
        for (i, chunk) in chunks.iter().enumerate() {
            // BIG answers stream back to back, yielding now and then.
            if interval.is_zero() && i % 64 != 0 {
                if *self.stop.borrow() {
                    return Err(Stopped);
                }
            } else {
                self.pause(interval).await?;
            }
            self.ack_steers(&mut out);
            self.delta(chunk, &mut out);
        }
        self.pause(self.opts.event_interval).await?;
        self.ack_steers(&mut out);
        self.emit("reasoning.available", json!({"text": out}));
        self.pause(self.opts.event_interval).await?;
        Ok(Outcome::Done(out))
    }

    async fn drive(mut self, script: Script) {
        self.set_status("running");
        let result = self.play(script).await;
        let id = self.id.clone();
        match result {
            Ok(Outcome::Done(output)) => {
                let output_tokens = word_count(&output).max(1);
                let input_tokens = word_count(&self.input) + word_count(&self.instructions) + 8;
                let usage = json!({"input_tokens": input_tokens, "output_tokens": output_tokens,
                    "total_tokens": input_tokens + output_tokens});
                self.shared.with_run(&id, |r| {
                    r.set_status("completed");
                    r.output = Some(output.clone());
                    r.usage = Some(usage.clone());
                    r.emit(&id, "run.completed", json!({"output": output, "usage": usage}));
                    let _ = r.tx.send(StreamMsg::End);
                });
            }
            Ok(Outcome::Failed(error)) => {
                self.shared.with_run(&id, |r| {
                    r.set_status("failed");
                    r.error = Some(error.clone());
                    r.emit(&id, "run.failed", json!({"error": error}));
                    let _ = r.tx.send(StreamMsg::End);
                });
            }
            Err(Stopped) => {
                tokio::time::sleep(self.opts.stop_delay).await;
                self.shared.with_run(&id, |r| {
                    r.approval = None;
                    r.clarify = None;
                    r.set_status("cancelled");
                    r.emit(&id, "run.cancelled", json!({}));
                    let _ = r.tx.send(StreamMsg::End);
                });
            }
        }
    }

    async fn play(&mut self, script: Script) -> Result<Outcome, Stopped> {
        let step = self.opts.event_interval;
        match script {
            Script::Default => {
                let text = format!("FAKE ANSWER: {}", self.input);
                self.answer(chunk_chars(&text, 12), step).await
            }
            Script::Slow => {
                let chunks = (1..=60)
                    .map(|i| {
                        if i == 1 { "FAKE ANSWER: slow part 01/60. ".to_string() } else { format!("part {i:02}/60. ") }
                    })
                    .collect();
                let interval = self.opts.slow_interval;
                self.answer(chunks, interval).await
            }
            Script::ToolCall => {
                self.pause(step).await?;
                self.emit("tool.started", json!({"tool": "terminal", "preview": "echo hello-from-tool"}));
                let started = Instant::now();
                self.pause(step).await?;
                let duration = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
                self.emit("tool.completed", json!({"tool": "terminal", "duration": duration, "error": false}));
                self.answer(chunk_chars("FAKE ANSWER: the terminal tool said hello-from-tool", 12), step).await
            }
            Script::Approve => self.play_approval().await,
            Script::Clarify => self.play_clarify().await,
            Script::Fail => {
                self.pause(step).await?;
                let mut out = String::new();
                self.delta("FAKE ANSWER: working on it", &mut out);
                self.pause(step).await?;
                // `FAIL: <detail>` puts the detail in the error (as a provider's message would).
                let detail = self.input.split_once("FAIL:").map(|(_, d)| format!(": {}", d.trim())).unwrap_or_default();
                Ok(Outcome::Failed(format!(
                    "FAKE FAILURE: the model provider returned HTTP 500 (FAIL requested){detail}"
                )))
            }
            Script::Unicode => {
                let chunks = ["FAKE ANSWER: caf", "é déjà v", "u — 日", "本語のテキスト 🎉", "🚀 naï", "ve façade"];
                self.answer(chunks.iter().map(|s| s.to_string()).collect(), step).await
            }
            Script::Secret => {
                let chunks = [
                    "FAKE ANSWER: use the header Authorization: Bea",
                    "rer sk-abcdefghij",
                    "klmnopqrstuvwx123 when calling the API.",
                ];
                self.answer(chunks.iter().map(|s| s.to_string()).collect(), step).await
            }
            Script::Big(n) => {
                const PATTERN: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789\n";
                let text: String = PATTERN.iter().cycle().take(n).map(|&b| b as char).collect();
                let size = if n >= 2000 { 1000 } else { n.div_ceil(2).max(1) };
                self.answer(chunk_chars(&text, size), Duration::ZERO).await
            }
        }
    }

    async fn play_approval(&mut self) -> Result<Outcome, Stopped> {
        let step = self.opts.event_interval;
        self.pause(step).await?;
        self.emit("tool.started", json!({"tool": "terminal", "preview": APPROVAL_COMMAND}));
        self.pause(step).await?;
        let (tx, rx) = oneshot::channel();
        let id = self.id.clone();
        self.shared.with_run(&id, |r| {
            r.approval = Some(tx);
            r.set_status("waiting_for_approval");
            r.emit(
                &id,
                "approval.request",
                json!({
                    "command": APPROVAL_COMMAND,
                    "pattern_key": "recursive delete",
                    "pattern_keys": ["recursive delete"],
                    "description": "recursive delete",
                    "allow_permanent": true,
                    "choices": APPROVAL_CHOICES,
                }),
            );
        });
        let timeout = self.opts.approval_timeout;
        let limit = async move {
            match timeout {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending::<()>().await,
            }
        };
        let choice = tokio::select! {
            r = rx => r.ok(),
            _ = self.stop.wait_for(|s| *s) => return Err(Stopped),
            _ = limit => None,
        };
        if choice.is_none() {
            // Timed out: the request is dropped silently and the status is left alone.
            self.shared.with_run(&id, |r| r.approval = None);
        }
        let started = Instant::now();
        self.pause(step).await?;
        let duration = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        let (ran, text) = match choice.as_deref() {
            Some("deny") => {
                (false, format!("FAKE ANSWER: {DENIED_TEXT}. The command `{APPROVAL_COMMAND}` was not run."))
            }
            Some(c) => (true, format!("FAKE ANSWER: command approved ({c}) and executed: {APPROVAL_COMMAND}")),
            None => (false, format!("FAKE ANSWER: {TIMED_OUT_TEXT}. The command `{APPROVAL_COMMAND}` was not run.")),
        };
        self.emit("tool.completed", json!({"tool": "terminal", "duration": duration, "error": !ran}));
        self.answer(chunk_chars(&text, 16), step).await
    }

    async fn play_clarify(&mut self) -> Result<Outcome, Stopped> {
        let step = self.opts.event_interval;
        self.pause(step).await?;
        let (tx, rx) = oneshot::channel();
        let id = self.id.clone();
        let clarify_id = {
            let seq = self.shared.lock().seq;
            format!("clarify_{}", self.shared.new_hex(seq, 8))
        };
        self.shared.with_run(&id, |r| {
            r.clarify = Some((clarify_id.clone(), tx));
            r.set_status("waiting_for_clarify");
            r.emit(
                &id,
                "clarify.request",
                json!({
                    "clarify_id": clarify_id,
                    "question": "Which colour should I use?",
                    "choices": ["red", "blue"],
                    "multi_select": false,
                }),
            );
        });
        let response = tokio::select! {
            r = rx => r.unwrap_or_default(),
            _ = self.stop.wait_for(|s| *s) => return Err(Stopped),
        };
        let text = if response.is_empty() {
            "FAKE ANSWER: no clarification given, using the default".to_string()
        } else {
            format!("FAKE ANSWER: you chose {response}")
        };
        self.answer(chunk_chars(&text, 12), step).await
    }
}
