//! The proxy's wire path for allowed `tools/call`s: the consumer's request goes to its own
//! upstream session as bytes (hal0's id in place of the consumer's, the protocol's `_meta`
//! added, the arguments as they came), and the upstream's answer stream comes back event
//! by event (the id and progress token put back, secrets masked, `resultType` added).
//! Nothing passes through rmcp's client or the consumer's rmcp session worker. A request
//! the upstream makes during the call (sampling, elicitation, roots) is put to the consumer
//! on the same stream under an id of hal0's when the consumer declared what it needs (its
//! answer, a POST, is routed back by that id), and answered by hal0 otherwise, as rmcp's
//! path does; an upstream that withdraws it has the consumer told.
//!
//! The same policy holds as on rmcp's path ([`super`]): only an `allow`ed tool, the
//! `started` audit row stored before the call leaves, its outcome after. `tools/list`, task-
//! augmented calls and the `tasks/*` requests ride the same machinery ([`super::tasks`]).
//! A session's first request opens its upstream session through rmcp's client, as rmcp's
//! path would. Whatever the wire path does not cover is left to rmcp's path, unchanged:
//! gated, blocked and unknown tools, stdio and legacy-SSE servers, tools whose schema asks
//! for parameter headers, and every call while OpenTelemetry export is on (the spans live on
//! rmcp's path).
//! A call whose upstream session expired (404) or whose connection failed before the
//! request went out is carried on rmcp's path, which reconnects.

use super::inbound::lock;
use super::upstream::Upstream;
use super::wire::Wire;
use super::{Call, Consumer, Link, Proxy, Served, Who, error_result, mask_in, outcome_code, upstream_error};
use crate::audit::Verdict as Logged;
use crate::base::error::Error;
use crate::base::sse::SseParser;
use axum::body::Bytes;
use futures::stream::BoxStream;
use rmcp::model::CallToolResult;
use rmcp::{RoleServer, service::Peer};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// The largest upstream answer read whole (an `application/json` reply).
const MAX_JSON: usize = 16 * 1024 * 1024;
/// How long the rest of an answered call's body is read for (see [`Flight::drain`]).
const DRAIN: Duration = Duration::from_millis(250);

/// How long a request waits for its session to be registered: rmcp runs the handler's
/// `on_initialized` after it answered the consumer's `notifications/initialized`, so the
/// consumer's next request can arrive first.
const REGISTRATION: Duration = Duration::from_secs(2);
/// The most tasks a session keeps track of; the oldest is forgotten first.
const MAX_TASKS: usize = 4096;

/// The consumer sessions the wire path may serve, by their `Mcp-Session-Id`.
#[derive(Default)]
pub struct Table {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    registered: tokio::sync::Notify,
}

/// One consumer session of the proxy, as its rmcp handler registered it.
pub struct Session {
    record_id: String,
    who: Who,
    link: Arc<Link>,
    peer: Peer<RoleServer>,
    /// What the consumer declared it can be asked: `sampling`, `elicitation`, `roots`.
    can: [bool; 3],
    /// Calls on the wire path in flight, by the consumer's request id (its JSON text).
    inflight: Mutex<HashMap<String, CancellationToken>>,
    /// The tasks this session's calls created upstream, oldest first: the only ones it
    /// may ask about.
    tasks: Mutex<VecDeque<String>>,
    /// Upstream requests put to the consumer, by the id hal0 gave them: where its answer
    /// goes (`"result":…` or `"error":…`).
    asks: Mutex<HashMap<String, oneshot::Sender<String>>>,
    next_ask: std::sync::atomic::AtomicU64,
}

/// Holds a session in the table; dropped with the consumer session's handler.
pub struct Registration {
    table: Weak<Table>,
    id: String,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(t) = self.table.upgrade() {
            lock(&t.sessions).remove(&self.id);
        }
    }
}

impl Table {
    /// Register consumer session `id` of record `record_id` (its handler keeps the
    /// returned registration for as long as the session lives).
    pub fn register(
        self: &Arc<Self>,
        id: &str,
        record_id: &str,
        who: Who,
        link: Arc<Link>,
        peer: Peer<RoleServer>,
    ) -> Registration {
        let caps = peer.peer_info().map(|i| i.capabilities.clone()).unwrap_or_default();
        let s = Session {
            record_id: record_id.to_string(),
            who,
            link,
            peer,
            can: [caps.sampling.is_some(), caps.elicitation.is_some(), caps.roots.is_some()],
            inflight: Mutex::default(),
            tasks: Mutex::default(),
            asks: Mutex::default(),
            next_ask: Default::default(),
        };
        lock(&self.sessions).insert(id.to_string(), Arc::new(s));
        self.registered.notify_waiters();
        Registration { table: Arc::downgrade(self), id: id.to_string() }
    }

    fn get(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.sessions).get(id).cloned()
    }

    /// Session `id`, waiting (up to [`REGISTRATION`]) for its handler to register it.
    async fn wait(&self, id: &str) -> Option<Arc<Session>> {
        let deadline = tokio::time::Instant::now() + REGISTRATION;
        loop {
            let registered = self.registered.notified();
            tokio::pin!(registered);
            registered.as_mut().enable();
            if let Some(s) = self.get(id) {
                return Some(s);
            }
            tokio::time::timeout_at(deadline, registered).await.ok()?;
        }
    }
}

impl Session {
    /// This session as rmcp's path knows a consumer: `token` its progress token, `ct` the
    /// request's cancellation.
    pub(super) fn consumer(&self, token: Option<rmcp::model::ProgressToken>, ct: CancellationToken) -> Consumer {
        Consumer { peer: self.peer.clone(), token, ct, link: self.link.clone() }
    }

    /// Remember task `id`, created by one of this session's calls.
    fn note_task(&self, id: String) {
        let mut tasks = lock(&self.tasks);
        if tasks.len() >= MAX_TASKS {
            tasks.pop_front();
        }
        tasks.push_back(id);
    }

    /// Whether this session's calls created task `id`.
    pub(super) fn made_task(&self, id: &str) -> bool {
        lock(&self.tasks).iter().any(|t| t == id)
    }
}

/// What the wire path answers a consumer's POST with.
pub enum Answer {
    /// `202 Accepted`: a notification it took.
    Accepted,
    /// The call's answer: SSE events, each one complete.
    Events(BoxStream<'static, Bytes>),
}

/// The members of a JSON-RPC message the wire path looks at.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// The top-level members of a tool result that matter here.
#[derive(Deserialize, Default)]
struct Shallow {
    #[serde(rename = "isError")]
    is_error: Option<bool>,
    #[serde(rename = "resultType")]
    result_type: Option<serde::de::IgnoredAny>,
}

/// A request id as a map key: its JSON text in one canonical form.
fn key_of(id: &Value) -> String {
    id.to_string()
}

/// One SSE event carrying `json` (split on the line breaks a pretty-printed message has).
fn event(json: &str) -> Bytes {
    let mut out = String::with_capacity(json.len() + 8);
    for line in json.split('\n') {
        out.push_str("data: ");
        out.push_str(line.trim_end_matches('\r'));
        out.push('\n');
    }
    out.push('\n');
    Bytes::from(out)
}

/// `text` with every secret masked by the proxy's one rule ([`crate::registry::mask::mask_json`]);
/// `None` when it had to be read and is not JSON.
fn masked<'t>(text: &'t str, secrets: &[String]) -> Option<Cow<'t, str>> {
    crate::registry::mask::mask_json(text, secrets)
}

/// A tool result object with `resultType` first when the server sent none (consumers on
/// 2026-07-28 require it; older ones ignore it).
fn with_result_type(result: &str) -> Cow<'_, str> {
    let shallow: Shallow = serde_json::from_str(result).unwrap_or_default();
    if shallow.result_type.is_some() {
        return Cow::Borrowed(result);
    }
    let t = result.trim_start();
    let Some(rest) = t.strip_prefix('{') else { return Cow::Borrowed(result) };
    if rest.trim_start().starts_with('}') {
        Cow::Owned(r#"{"resultType":"complete"}"#.to_string())
    } else {
        Cow::Owned(format!(r#"{{"resultType":"complete",{rest}"#))
    }
}

impl Proxy {
    /// Serve a consumer's POST on the wire path when it can: an allowed `tools/call` (see
    /// the module doc for what is left to rmcp), `tools/list`, the `tasks/*` requests of
    /// tasks the session made ([`super::tasks`]), the consumer's `notifications/cancelled`
    /// for a request in flight on it, or its answer to a request put to it. `None`: rmcp's
    /// session serves the request.
    pub async fn wire(&self, served: &Arc<Served>, session_id: &str, identity: &str, body: &[u8]) -> Option<Answer> {
        if crate::base::observe::telemetry::enabled() {
            return None;
        }
        let msg: Envelope = serde_json::from_slice(body).ok()?;
        // What rmcp's path cannot serve as asked waits for the session's registration;
        // anything else does not (a session that ended gets rmcp's 404 at once).
        let patient = match msg.method.as_deref() {
            Some("tools/list") => true,
            Some("tools/call") => msg.params.is_some_and(|p| p.get().contains(r#""task""#)),
            Some(m) => m.starts_with("tasks/"),
            None => false,
        };
        let session =
            if patient { self.wire_sessions.wait(session_id).await? } else { self.wire_sessions.get(session_id)? };
        if session.record_id != served.record.id || session.who.identity != identity {
            return None;
        }
        match (msg.method.as_deref(), msg.id) {
            (Some("notifications/cancelled"), None) => {
                let p: Map<String, Value> = serde_json::from_str(msg.params?.get()).ok()?;
                let ct = lock(&session.inflight).get(&key_of(p.get("requestId")?)).cloned()?;
                ct.cancel();
                Some(Answer::Accepted)
            }
            (Some("tools/call"), Some(id)) => self.wire_call(served, session, id, msg.params?).await,
            (Some("tools/list"), Some(id)) => self.wire_list(served, session, id, msg.params).await,
            (Some(m @ ("tasks/get" | "tasks/result" | "tasks/cancel" | "tasks/list")), Some(id)) => {
                self.wire_task(served, session, m, id, msg.params).await
            }
            // The consumer's answer to an upstream request the wire path put to it.
            (None, Some(id)) => {
                let ask: String = serde_json::from_str(id.get()).ok()?;
                let outcome = match (msg.result, msg.error) {
                    (Some(r), _) => format!(r#""result":{}"#, r.get()),
                    (None, Some(e)) => format!(r#""error":{}"#, e.get()),
                    (None, None) => return None,
                };
                let tx = lock(&session.asks).remove(&ask)?;
                let _ = tx.send(outcome);
                Some(Answer::Accepted)
            }
            _ => None,
        }
    }

    /// The upstream session of `session` for `served` that the wire path can post to, opened
    /// now when the session has none yet (its first request); `None` for a server the wire
    /// path does not reach (stdio, legacy SSE) or one that cannot be reached (rmcp's path
    /// then answers with the reason).
    pub(super) async fn wire_upstream(&self, served: &Served, session: &Session) -> Option<Arc<Upstream>> {
        if served.record.transport != crate::registry::Transport::StreamableHttp {
            return None;
        }
        // The common case without building a consumer for `client`, which checks the same.
        let now = super::current(&*session.link.0.lock().await, served);
        let up = match now {
            Some(up) => up,
            None => self.client(served, &session.consumer(None, CancellationToken::new())).await.ok()?,
        };
        up.wire.is_some().then_some(up)
    }

    async fn wire_call(
        &self,
        served: &Arc<Served>,
        session: Arc<Session>,
        id: &RawValue,
        params: &RawValue,
    ) -> Option<Answer> {
        let p: HashMap<Cow<str>, &RawValue> = serde_json::from_str(params.get()).ok()?;
        if p.keys().any(|k| !matches!(k.as_ref(), "name" | "arguments" | "_meta" | "task")) {
            return None;
        }
        let name_raw = p.get("name")?;
        let tool: String = serde_json::from_str(name_raw.get()).ok()?;
        let task = p.get("task").filter(|t| t.get() != "null");
        let verdict = served.verdict(&tool);
        let gated_task = verdict == crate::registry::policy::Verdict::Gated && task.is_some();
        if verdict != crate::registry::policy::Verdict::Allow && !gated_task {
            return None;
        }
        // A quarantined tool: rmcp's path refuses and records it.
        if self.pins.check(&self.store, &served.record.id, crate::registry::pins::Item::Tool, &tool).is_err() {
            return None;
        }
        let args_raw = p.get("arguments").filter(|a| a.get() != "null");
        let args: Option<Map<String, Value>> = match args_raw {
            Some(a) => Some(serde_json::from_str(a.get()).ok()?),
            None => None,
        };
        let c = Call {
            surface: format!("mcp:proxy/{}", served.record.id),
            tool: &tool,
            who: &session.who,
            args,
            policy: format!("policy: {}", verdict.as_str()),
        };
        if gated_task {
            let e = super::tasks::gated(&served.record.id, &tool);
            self.audit(&c, Logged::Refused, Some(e.code), None).await;
            return Some(refused(id, &e));
        }
        let up = self.wire_upstream(served, &session).await?;
        let wire = up.wire.clone()?;
        if !wire.carries(&tool) {
            return None;
        }
        let mut meta: Map<String, Value> = match p.get("_meta") {
            Some(m) => serde_json::from_str(m.get()).ok()?,
            None => Map::new(),
        };

        // From here the call is the wire path's.
        let purpose = if task.is_some() { Purpose::TaskCall } else { Purpose::Call };
        let mut end = Ending::new(self, served, &up, &session, purpose, &tool, id)?;
        end.relay_token(&mut meta);
        let token = end.token.clone();
        meta.extend(wire.meta().clone());
        let mut body = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"tools/call","params":{{"name":{}"#,
            end.up_id,
            name_raw.get()
        );
        if let Some(a) = args_raw {
            body.push_str(r#","arguments":"#);
            body.push_str(a.get());
        }
        if let Some(t) = task {
            body.push_str(r#","task":"#);
            body.push_str(t.get());
        }
        if !meta.is_empty() {
            body.push_str(r#","_meta":"#);
            body.push_str(&Value::Object(meta).to_string());
        }
        body.push_str("}}");

        end.entry = match self.begin(&c).await {
            Ok(e) => e,
            Err(e) => {
                // Nothing was stored, so there is no outcome to record.
                end.done = true;
                return Some(Answer::Events(one(end.error_answer(&e))));
            }
        };
        let (mut end, ct) = match end.carry(body, "tools/call", Some(&tool)).await {
            Ok(answer) => return Some(answer),
            Err(not_processed) => not_processed,
        };
        if purpose == Purpose::TaskCall {
            // rmcp's path would drop the `task`; the server's session (and any task it
            // held) is gone, so the consumer starts over.
            self.drop_client(served, &session.consumer(None, ct), &up).await;
            let e = upstream_error(&served.record, "its session ended before the task was created; call again");
            return Some(Answer::Events(one(end.fail(&e))));
        }
        // The request was not processed, or never left: rmcp's path reconnects and makes
        // the call.
        let consumer = session.consumer(token.and_then(|t| serde_json::from_value(t).ok()), ct);
        self.drop_client(served, &consumer, &up).await;
        end.path = "rmcp";
        let out = self.forward(served, &tool, c.args.clone(), &consumer).await;
        let code = outcome_code(&out);
        let res = out.unwrap_or_else(|e| error_result(&e));
        let ev = end.response(&res);
        end.finish(code);
        Some(Answer::Events(one(ev)))
    }
}

pub(super) fn one(b: Bytes) -> BoxStream<'static, Bytes> {
    Box::pin(futures::stream::once(std::future::ready(b)))
}

/// `e` as the whole answer to the consumer's request `id`, refused before anything was sent.
pub(super) fn refused(id: &RawValue, e: &Error) -> Answer {
    Answer::Events(one(rpc_error(id.get(), &super::error_data(e))))
}

/// The consumer's JSON-RPC error answer to its request `id` (JSON text).
pub(super) fn rpc_error(id: &str, e: &rmcp::ErrorData) -> Bytes {
    event(&format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{}}}"#, serde_json::to_string(e).unwrap_or_default()))
}

/// What a wire-path request is: how its answer is shaped and whether it is audited.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Purpose {
    /// `tools/call`: audited; the answer is a tool result, and so is a failure.
    Call,
    /// A task-augmented `tools/call`: audited; the answer names the task it created, which
    /// the session may then ask about.
    TaskCall,
    /// `tools/list`: the answer shows what the policy offers.
    Tools,
    /// `tasks/get`, `tasks/cancel`: the answer as it is.
    Task,
    /// `tasks/result`: a tool result.
    TaskResult,
    /// `tasks/list`: the session's own tasks only.
    TaskList,
}

impl Purpose {
    fn audited(self) -> bool {
        matches!(self, Purpose::Call | Purpose::TaskCall)
    }
}

/// How a wire-path request ends: for a call, its audit outcome and metrics, once. Dropped
/// before it ended (the consumer went away), it tells the upstream and records the
/// cancellation.
pub(super) struct Ending {
    store: crate::store::Store,
    pins: Arc<crate::registry::pins::Quarantine>,
    purpose: Purpose,
    entry: i64,
    surface: String,
    /// The tool called, or the method.
    tool: String,
    started: Instant,
    served: Arc<Served>,
    wire: Arc<Wire>,
    /// The upstream session's client handler, where withdrawals of the upstream's requests
    /// can arrive.
    relay: super::inbound::Relay,
    session: Arc<Session>,
    key: String,
    up_id: String,
    /// The consumer's request id as it sent it.
    consumer_id: String,
    /// The consumer's progress token, if it sent one.
    token: Option<Value>,
    timeout_secs: u64,
    /// The path that carried the call: `wire`, or `rmcp` when it fell back.
    path: &'static str,
    done: bool,
}

impl Ending {
    /// The ending of request `id` (the consumer's) of `purpose` about `what`, under a fresh
    /// id of hal0's on `up`'s wire path (`None` when it has none).
    pub(super) fn new(
        proxy: &Proxy,
        served: &Arc<Served>,
        up: &Upstream,
        session: &Arc<Session>,
        purpose: Purpose,
        what: &str,
        id: &RawValue,
    ) -> Option<Ending> {
        let wire = up.wire.as_ref()?;
        Some(Ending {
            store: proxy.store.clone(),
            pins: proxy.pins.clone(),
            purpose,
            entry: 0,
            surface: format!("mcp:proxy/{}", served.record.id),
            tool: what.to_string(),
            started: Instant::now(),
            served: served.clone(),
            wire: wire.clone(),
            relay: up.relay().clone(),
            session: session.clone(),
            key: serde_json::from_str::<Value>(id.get()).map(|v| key_of(&v)).unwrap_or_default(),
            up_id: wire.next_id(),
            consumer_id: id.get().to_string(),
            token: None,
            timeout_secs: proxy.config().mcp.call_timeout_secs,
            path: "wire",
            done: false,
        })
    }

    /// Put hal0's id in place of the consumer's progress token in request `meta` (the
    /// answer's notifications get the consumer's back).
    pub(super) fn relay_token(&mut self, meta: &mut Map<String, Value>) {
        if let Some(t) = meta.remove("progressToken") {
            meta.insert("progressToken".into(), Value::String(self.up_id.clone()));
            self.token = Some(t);
        }
    }

    /// hal0's id of the request upstream.
    pub(super) fn up_id(&self) -> &str {
        &self.up_id
    }

    /// Post `body` (the request, under [`Ending::up_id`]) and stream its answer to the
    /// consumer. `Err` when the upstream did not process it (its session expired or lives
    /// elsewhere, or the request never left): the ending and the request's cancellation
    /// back, for the caller to carry another way.
    pub(super) async fn carry(
        mut self,
        body: String,
        method: &str,
        name: Option<&str>,
    ) -> Result<Answer, (Ending, CancellationToken)> {
        let ct = CancellationToken::new();
        lock(&self.session.inflight).insert(self.key.clone(), ct.clone());
        let timeout = Duration::from_secs(self.timeout_secs);
        let deadline = tokio::time::Instant::now() + timeout;
        let wire = self.wire.clone();
        let sent = tokio::select! {
            r = tokio::time::timeout_at(deadline, wire.send(body, method, name)) => r,
            _ = ct.cancelled() => {
                self.cancelled();
                return Ok(Answer::Events(Box::pin(futures::stream::empty())));
            }
        };
        let served = self.served.clone();
        let r = &served.record;
        let sent = match sent {
            Ok(Ok(s)) if s.status.is_success() => s,
            // An OAuth account's token refused (revoked, or expired early): not processed;
            // rmcp's path connects again, refreshing the token or saying a person must
            // connect the account again.
            Ok(Ok(s)) if s.status == reqwest::StatusCode::UNAUTHORIZED && r.oauth.is_some() => {
                return Err((self, ct));
            }
            // Not processed: the upstream session expired (404) or lives elsewhere (a
            // redirect, which reqwest follows within the origin).
            Ok(Ok(s)) if s.status != reqwest::StatusCode::NOT_FOUND && !s.status.is_redirection() => {
                let e = upstream_error(r, &format!("answered HTTP {}", s.status));
                return Ok(Answer::Events(one(self.fail(&e))));
            }
            Ok(Err(super::conn::Failed::Broken(why))) => {
                return Ok(Answer::Events(one(self.fail(&upstream_error(r, &why)))));
            }
            Err(_) => {
                let e = upstream_error(r, &format!("`{}` did not answer within {} s", self.tool, timeout.as_secs()));
                return Ok(Answer::Events(one(self.fail(&e))));
            }
            Ok(Ok(_)) | Ok(Err(super::conn::Failed::NotSent(_))) => return Err((self, ct)),
        };
        let flight = Flight {
            body: sent.body,
            json: sent.json,
            ended: false,
            answered: false,
            asked: HashMap::new(),
            withdrawn: None,
            buf: Vec::new(),
            parser: SseParser::new(),
            out: VecDeque::new(),
            ct,
            deadline,
            end: self,
        };
        Ok(Answer::Events(Box::pin(futures::stream::unfold(
            flight,
            |mut f| async move { f.next().await.map(|b| (b, f)) },
        ))))
    }

    /// The consumer's answer carrying `res`.
    fn response(&self, res: &CallToolResult) -> Bytes {
        let res = serde_json::to_string(res).unwrap_or_else(|_| "{}".into());
        event(&format!(r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#, self.consumer_id, with_result_type(&res)))
    }

    /// Record the outcome (`code`: none for a result, else why it failed).
    pub(super) fn finish(&mut self, code: Option<&str>) {
        if self.done {
            return;
        }
        self.done = true;
        lock(&self.session.inflight).remove(&self.key);
        if !self.purpose.audited() {
            return;
        }
        crate::base::observe::metrics::proxy_verdict(&self.surface, Logged::Allow.as_str());
        crate::base::observe::metrics::proxy_forwarded(&self.surface, self.path);
        let outcome = if code.is_some() { "is_error" } else { "ok" };
        let surface = self.surface.trim_start_matches("mcp:");
        crate::base::observe::metrics::tool_call(surface, &self.tool, outcome, self.started.elapsed());
        let o = crate::audit::Outcome {
            id: self.entry,
            verdict: Logged::Allow,
            result_code: code.map(str::to_string),
            approval_id: None,
        };
        crate::audit::finish(&self.store, o);
    }

    /// `e` as the consumer's answer (a tool result for a plain call, else a JSON-RPC
    /// error), recorded.
    pub(super) fn fail(&mut self, e: &Error) -> Bytes {
        let ev = self.error_answer(e);
        self.finish(Some(e.code));
        ev
    }

    /// `e` as the consumer's answer: a tool result for a plain call, else a JSON-RPC error.
    fn error_answer(&self, e: &Error) -> Bytes {
        if self.purpose == Purpose::Call {
            self.response(&error_result(e))
        } else {
            rpc_error(&self.consumer_id, &super::error_data(e))
        }
    }

    /// The consumer cancelled (or went away): tell the upstream and record it.
    fn cancelled(&mut self) {
        if !self.done {
            self.wire.cancel(self.up_id.clone(), "the client cancelled the call");
            self.finish(Some("mcp.call_cancelled"));
        }
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        self.cancelled();
    }
}

/// A call's answer stream from the upstream, as the consumer gets it.
struct Flight {
    body: super::wire::Reply,
    /// The body was read to its end.
    ended: bool,
    /// The upstream's result came.
    answered: bool,
    /// Upstream requests put to the consumer: the upstream's id (JSON text) → hal0's.
    asked: HashMap<String, String>,
    /// Where the upstream's withdrawals of them arrive when they come on the session's own
    /// stream ([`super::inbound::Relay::watch_withdrawal`]); made at the first request.
    withdrawn: Option<Withdrawals>,
    /// The upstream answered `application/json` (one message, read whole).
    json: bool,
    buf: Vec<u8>,
    parser: SseParser,
    out: VecDeque<Bytes>,
    ct: CancellationToken,
    deadline: tokio::time::Instant,
    end: Ending,
}

/// A call's end of the channel its upstream's withdrawals come by.
struct Withdrawals {
    tx: tokio::sync::mpsc::UnboundedSender<super::inbound::Withdrawn>,
    rx: tokio::sync::mpsc::UnboundedReceiver<super::inbound::Withdrawn>,
}

/// The next withdrawal; never, while no request was put to the consumer.
async fn withdrawal(w: &mut Option<Withdrawals>) -> Option<super::inbound::Withdrawn> {
    match w {
        Some(w) => w.rx.recv().await,
        None => std::future::pending().await,
    }
}

impl Drop for Flight {
    /// A consumer gone mid-call leaves no withdrawal watched.
    fn drop(&mut self) {
        for id in self.asked.keys() {
            self.end.relay.unwatch_withdrawal(id);
        }
    }
}

impl Flight {
    /// The next event for the consumer; `None` once the answer went out.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(b) = self.out.pop_front() {
                return Some(b);
            }
            if self.end.done {
                if !self.asked.is_empty() {
                    self.withdraw_asks();
                    continue;
                }
                self.drain();
                return None;
            }
            let chunk = tokio::select! {
                biased;
                _ = self.ct.cancelled() => {
                    self.end.cancelled();
                    continue;
                }
                Some((id, reason)) = withdrawal(&mut self.withdrawn) => {
                    self.upstream_withdrew(&id, reason.map_or(Value::Null, Value::String));
                    continue;
                }
                c = tokio::time::timeout_at(self.deadline, self.body.chunk()) => c,
            };
            let served = self.end.served.clone();
            let r = &served.record;
            match chunk {
                Err(_) => {
                    let secs = self.end.timeout_secs;
                    let e = upstream_error(r, &format!("`{}` did not answer within {secs} s", self.end.tool));
                    self.end.wire.cancel(self.end.up_id.clone(), "hal0 stopped waiting for the answer");
                    let ev = self.end.fail(&e);
                    self.out.push_back(ev);
                }
                Ok(Err(e)) => {
                    let e = upstream_error(r, &e);
                    let ev = self.end.fail(&e);
                    self.out.push_back(ev);
                }
                Ok(Ok(Some(bytes))) if self.json => {
                    if self.buf.len() + bytes.len() > MAX_JSON {
                        let e = upstream_error(r, "the answer is larger than 16 MiB");
                        let ev = self.end.fail(&e);
                        self.out.push_back(ev);
                    } else {
                        self.buf.extend_from_slice(&bytes);
                    }
                }
                Ok(Ok(Some(bytes))) => match self.parser.push(&bytes) {
                    Ok(events) => {
                        for ev in events {
                            self.message(&ev.data);
                        }
                    }
                    Err(_) => {
                        let e = upstream_error(r, "an event of the answer stream is larger than 16 MiB");
                        let ev = self.end.fail(&e);
                        self.out.push_back(ev);
                    }
                },
                Ok(Ok(None)) => {
                    self.ended = true;
                    if self.json {
                        let text = String::from_utf8_lossy(&std::mem::take(&mut self.buf)).into_owned();
                        self.message(&text);
                    }
                    if !self.end.done {
                        let e = upstream_error(r, "the answer stream ended before the answer");
                        let ev = self.end.fail(&e);
                        self.out.push_back(ev);
                    }
                }
            }
        }
    }

    /// After the answer: read what is left of the upstream's body (an SSE stream ends right
    /// after its answer), so the connection can serve the next call; not for long, and not
    /// when the call was cancelled or failed (then the connection is closed instead). What
    /// has arrived is read here; the rest by a task of its own, so the consumer's answer
    /// ends now (its last event and the end of the stream leave together).
    fn drain(&mut self) {
        use futures::FutureExt;
        if self.ended || !self.answered {
            return;
        }
        self.ended = true;
        loop {
            match self.body.chunk().now_or_never() {
                Some(Ok(Some(_))) => {}
                Some(_) => return,
                None => break,
            }
        }
        let mut body = std::mem::replace(&mut self.body, super::wire::Reply::Gone);
        tokio::spawn(async move {
            let _ = tokio::time::timeout(DRAIN, async { while let Ok(Some(_)) = body.chunk().await {} }).await;
        });
    }

    /// The upstream's request `method` (its id `id`) during the call: put to the consumer
    /// on this stream when it declared what the request needs (under an id of hal0's; its
    /// answer comes back as a POST, [`Proxy::wire`]), else answered by hal0 as rmcp's path
    /// would.
    fn asked(&mut self, method: &str, id: &RawValue, params: Option<&RawValue>, secrets: &[String]) {
        let (wire, session) = (self.end.wire.clone(), self.end.session.clone());
        let up_id = id.get().to_string();
        let can = match method {
            "sampling/createMessage" => session.can[0],
            "elicitation/create" => session.can[1],
            "roots/list" => session.can[2],
            _ => false,
        };
        if !can {
            wire.answer(up_id, refusal(method));
            return;
        }
        let n = session.next_ask.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let ask = format!("hal0-ask-{n}");
        let request = serde_json::json!({"jsonrpc": "2.0", "id": ask, "method": method, "params": params});
        let request = request.to_string();
        let Some(text) = masked(&request, secrets) else {
            let e = serde_json::json!({"code": -32600, "message": "hal0's proxy: the request carried a credential; withheld"});
            wire.answer(up_id, format!(r#""error":{e}"#));
            return;
        };
        let (tx, rx) = oneshot::channel();
        lock(&session.asks).insert(ask.clone(), tx);
        if let Ok(key) = serde_json::from_str::<Value>(&up_id) {
            let key = key_of(&key);
            let to = self.withdrawn.get_or_insert_with(|| {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                Withdrawals { tx, rx }
            });
            self.end.relay.watch_withdrawal(key.clone(), to.tx.clone());
            self.asked.insert(key, ask.clone());
        }
        self.out.push_back(event(&text));
        let wait = Duration::from_secs(self.end.timeout_secs);
        tokio::spawn(async move {
            match tokio::time::timeout(wait, rx).await {
                Ok(Ok(outcome)) => wire.answer(up_id, outcome),
                // The upstream withdrew it: nothing to answer.
                Ok(Err(_)) => {}
                Err(_) => {
                    lock(&session.asks).remove(&ask);
                    let e = serde_json::json!({"code": -32001, "message": "hal0's proxy: the client did not answer in time"});
                    wire.answer(up_id, format!(r#""error":{e}"#));
                }
            }
        });
    }

    /// One message of the upstream's answer stream.
    fn message(&mut self, data: &str) {
        if self.end.done {
            return;
        }
        let Ok(env) = serde_json::from_str::<Envelope>(data) else { return };
        let secrets = &self.end.served.secrets;
        match (env.method.as_deref(), env.id) {
            (Some(method), Some(id)) => {
                let served = self.end.served.clone();
                self.asked(method, id, env.params, &served.secrets)
            }
            (Some("notifications/progress"), None) => {
                let Some(token) = self.end.token.clone() else { return };
                let Some(Ok(mut p)) = env.params.map(|p| serde_json::from_str::<Map<String, Value>>(p.get())) else {
                    return;
                };
                if p.get("progressToken").and_then(Value::as_str) != Some(self.end.up_id.as_str()) {
                    return;
                }
                p.insert("progressToken".into(), token);
                let n = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": p});
                if let Some(text) = masked(&n.to_string(), secrets) {
                    self.out.push_back(event(&text));
                }
            }
            // The upstream withdrew a request of its own on the call's stream.
            (Some("notifications/cancelled"), None) => {
                let Some(Ok(p)) = env.params.map(|p| serde_json::from_str::<Map<String, Value>>(p.get())) else {
                    return;
                };
                let Some(id) = p.get("requestId").map(key_of) else { return };
                self.upstream_withdrew(&id, p.get("reason").cloned().unwrap_or(Value::Null));
            }
            (Some(_), None) => {
                if let Some(text) = masked(data, secrets) {
                    self.out.push_back(event(&text));
                }
            }
            (None, Some(id)) => {
                if serde_json::from_str::<Cow<str>>(id.get()).ok().as_deref() != Some(self.end.up_id.as_str()) {
                    return;
                }
                if let Some(result) = env.result {
                    let (ev, code) = self.answer(result.get());
                    self.end.finish(code);
                    self.answered = true;
                    self.withdraw_asks();
                    self.out.push_back(ev);
                } else if self.end.purpose != Purpose::Call {
                    // Any other request gets the server's error as the server gave it.
                    const NONE: &str =
                        r#"{"code":-32603,"message":"the server answered with neither a result nor an error"}"#;
                    const HIDDEN: &str = r#"{"code":-32603,"message":"hal0's proxy: the server's error carried a credential; withheld"}"#;
                    let e = env.error.map_or(NONE, |e| e.get());
                    let e = masked(e, secrets).unwrap_or(Cow::Borrowed(HIDDEN));
                    let ev = event(&format!(r#"{{"jsonrpc":"2.0","id":{},"error":{e}}}"#, self.end.consumer_id));
                    self.end.finish(Some("mcp.upstream_error"));
                    self.answered = true;
                    self.withdraw_asks();
                    self.out.push_back(ev);
                } else {
                    let e = env
                        .error
                        .and_then(|e| serde_json::from_str::<rmcp::ErrorData>(e.get()).ok())
                        .map(|e| rmcp::ServiceError::McpError(e).to_string())
                        .unwrap_or_else(|| "an answer with neither a result nor an error".into());
                    let msg = mask_in(e, secrets).unwrap_or_default();
                    let ev = self.end.fail(&upstream_error(&self.end.served.record, &msg));
                    self.withdraw_asks();
                    self.out.push_back(ev);
                }
            }
            (None, None) => {}
        }
    }

    /// The consumer's answer carrying the upstream's `result`, shaped for the request's
    /// purpose and masked, and the code the call's outcome is recorded with.
    fn answer(&mut self, result: &str) -> (Bytes, Option<&'static str>) {
        let end = &self.end;
        let shaped: Option<Cow<str>> = match end.purpose {
            Purpose::Call | Purpose::TaskResult => Some(with_result_type(result)),
            Purpose::TaskCall => {
                if let Some(id) = super::tasks::created(result) {
                    end.session.note_task(id);
                }
                Some(Cow::Borrowed(result))
            }
            Purpose::Tools => {
                super::tasks::offered(&end.served.record, &end.wire, &end.pins, &end.store, result).map(Cow::Owned)
            }
            Purpose::TaskList => super::tasks::own(&end.session, result).map(Cow::Owned),
            Purpose::Task => Some(Cow::Borrowed(result)),
        };
        let code = match end.purpose {
            Purpose::Call => {
                let shallow: Shallow = serde_json::from_str(result).unwrap_or_default();
                (shallow.is_error == Some(true)).then_some("mcp.upstream_tool_error")
            }
            _ => None,
        };
        match shaped.and_then(|s| masked(&s, &end.served.secrets).map(Cow::into_owned)) {
            Some(res) => (event(&format!(r#"{{"jsonrpc":"2.0","id":{},"result":{res}}}"#, end.consumer_id)), code),
            None => {
                let e = Error::new(
                    "mcp.result_withheld",
                    crate::base::error::Kind::BadGateway,
                    "the result carried a credential (or could not be read); hal0 withheld it",
                );
                (end.error_answer(&e), Some(e.code))
            }
        }
    }

    /// The upstream withdrew its request `id` (JSON text) for `reason`: if the consumer was
    /// asked, it is told (with the id it knows the request by).
    fn upstream_withdrew(&mut self, id: &str, reason: Value) {
        let Some(ask) = self.asked.remove(id) else { return };
        self.end.relay.unwatch_withdrawal(id);
        lock(&self.end.session.asks).remove(&ask);
        let n = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                   "params": {"requestId": ask, "reason": reason}});
        if let Some(text) = masked(&n.to_string(), &self.end.served.secrets) {
            self.out.push_back(event(&text));
        }
    }

    /// The call ended while requests of the upstream were still put to the consumer: they
    /// can no longer be answered, so the consumer is told they were withdrawn (rmcp's path
    /// does the same).
    fn withdraw_asks(&mut self) {
        for (id, ask) in self.asked.drain() {
            self.end.relay.unwatch_withdrawal(&id);
            if lock(&self.end.session.asks).remove(&ask).is_none() {
                continue;
            }
            let n = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                       "params": {"requestId": ask, "reason": "the call it belonged to ended"}});
            self.out.push_back(event(&n.to_string()));
        }
    }
}

/// hal0's answer (`"result":…` or `"error":…`) to an upstream request of `method` made
/// during a wire-path call and not put to the consumer (it did not declare what the
/// request needs, or the request is not one a client answers).
fn refusal(method: &str) -> String {
    let (code, message) = match method {
        "ping" => return r#""result":{}"#.to_string(),
        "roots/list" => return r#""result":{"roots":[]}"#.to_string(),
        "sampling/createMessage" | "elicitation/create" => (
            -32600,
            format!(
                "hal0's proxy: the client that made this call did not declare the `{}` capability, so hal0 cannot put \
                 the request to it",
                if method == "elicitation/create" { "elicitation" } else { "sampling" }
            ),
        ),
        _ => (-32601, format!("hal0's proxy: `{method}` is not relayed to the client of this call")),
    };
    format!(r#""error":{}"#, serde_json::json!({"code": code, "message": message}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_gets_its_result_type_once() {
        assert_eq!(with_result_type(r#"{"content":[]}"#), r#"{"resultType":"complete","content":[]}"#);
        assert_eq!(with_result_type(r#" { } "#), r#"{"resultType":"complete"}"#);
        let has = r#"{"resultType":"complete","content":[]}"#;
        assert_eq!(with_result_type(has), has);
        let v: Value = serde_json::from_str(&with_result_type(r#"{"content":[{"type":"text","text":"x"}]}"#)).unwrap();
        assert_eq!(v["resultType"], "complete");
    }

    #[test]
    fn an_event_keeps_a_pretty_printed_message_in_one_event() {
        let json = "{\n  \"a\": 1\r\n}";
        let ev = event(json);
        let mut p = SseParser::new();
        let got = p.push(&ev).unwrap();
        assert_eq!(got.len(), 1);
        let v: Value = serde_json::from_str(&got[0].data).unwrap();
        assert_eq!(v["a"], 1);
    }

    #[test]
    fn secrets_are_masked_and_a_broken_mask_withholds() {
        let secrets = vec!["s3cr3t-value".to_string()];
        let text = r#"{"content":[{"type":"text","text":"token s3cr3t-value"}]}"#;
        let out = masked(text, &secrets).unwrap();
        assert!(!out.contains("s3cr3t-value") && out.contains(crate::base::redact::MASK), "{out}");
        assert!(matches!(masked(r#"{"a":1}"#, &secrets), Some(Cow::Borrowed(_))));
        assert!(masked("not json s3cr3t-value", &secrets).is_none());
    }

    #[test]
    fn upstream_requests_get_the_answer_rmcps_path_gives() {
        assert_eq!(refusal("ping"), r#""result":{}"#);
        assert_eq!(refusal("roots/list"), r#""result":{"roots":[]}"#);
        let v: Value = serde_json::from_str(&format!("{{{}}}", refusal("sampling/createMessage"))).unwrap();
        assert_eq!(v["error"]["code"], -32600);
        assert!(v["error"]["message"].as_str().unwrap().contains("`sampling` capability"));
        let v: Value = serde_json::from_str(&format!("{{{}}}", refusal("tasks/get"))).unwrap();
        assert_eq!(v["error"]["code"], -32601);
    }
}
