//! The policy on the call path: what hal0's proxy (`/mcp/proxy/<id>/mcp`) does with each
//! request of a consumer. `tools/list` shows the allowed and gated tools only; an allowed
//! call is forwarded with the record's headers; a gated call becomes an approvals-inbox row
//! and waits (bounded by `[mcp].gate_wait_secs`, reporting progress to a consumer that asked
//! for it) for a person, then answers with the result of the one execution, a denial, or
//! `pending_approval`; blocked and unlisted tools are
//! refused and never reach the server. Every decision is written to the audit log with the
//! policy in force. The record file is read on every call, so a policy edit applies at once.

pub mod conn;
pub mod inbound;
pub mod passthrough;
pub mod probe;
pub mod rounds;
pub mod sse_client;
pub mod supervisor;
pub mod tap;
pub mod tasks;
pub mod upstream;
pub mod wire;
pub mod wire_path;

pub use self::rounds::{Elicit, Rounds, Waiting};
use self::upstream::Pool;
use crate::approvals::{self, NewApproval};
use crate::audit::Verdict as Logged;
use crate::base::error::{Error, Kind, Result};
use crate::base::filewatch::version;
use crate::base::paths::Paths;
use crate::base::progress::Progress;
use crate::config::Config;
use crate::registry::policy::Verdict;
use crate::registry::record::Record;
use crate::registry::{Registry, Transport};
use crate::store::Store;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ProgressToken, Tool};
use rmcp::{RoleServer, service::Peer};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The approvals-inbox kind of a gated proxied call.
pub const KIND: approvals::ApprovalKind = approvals::ApprovalKind::McpCall;
/// Appended to a gated tool's description in the consumer's `tools/list`.
const GATED_NOTE: &str = "(hal0: each call of this tool waits for a person's approval)";
/// How often a waiting gated call looks at its row.
const POLL: Duration = Duration::from_millis(200);
/// Bytes of a gated call shown in the approvals inbox.
const PREVIEW_MAX: usize = 400;

/// One consumer call as the audit log describes it.
pub(super) struct Call<'a> {
    /// `mcp:proxy/<id>`.
    pub(super) surface: String,
    pub(super) tool: &'a str,
    pub(super) who: &'a Who,
    pub(super) args: Option<Map<String, Value>>,
    /// `policy: <verdict>`, the policy in force.
    pub(super) policy: String,
}

impl Call<'_> {
    /// The audit entry of this call with `args` (its arguments as a value).
    fn entry<'e>(
        &'e self,
        args: &'e Value,
        verdict: Logged,
        result_code: Option<&'e str>,
        approval_id: Option<&'e str>,
    ) -> crate::audit::Entry<'e> {
        crate::audit::Entry {
            surface: &self.surface,
            tool: self.tool,
            identity: &self.who.identity,
            arguments: args,
            verdict,
            result_code,
            approval_id,
            detail: Some(&self.policy),
        }
    }
}

/// The consumer behind one request: its session's handle (where the upstream's progress,
/// logging and requests go), its progress token, its cancellation, and its session's own
/// upstream sessions.
#[derive(Clone)]
pub struct Consumer {
    pub peer: Peer<RoleServer>,
    pub token: Option<ProgressToken>,
    pub ct: tokio_util::sync::CancellationToken,
    pub link: Arc<Link>,
}

/// The upstream sessions of one consumer session: an http server gets one upstream MCP
/// session per consumer session, so its per-session state (log level, subscriptions,
/// session resources) and its notifications belong to that consumer alone. Keyed by server
/// id; a record change (another fingerprint) opens a new one.
#[derive(Default)]
pub struct Link(pub(super) tokio::sync::Mutex<HashMap<String, (String, Arc<upstream::Upstream>)>>);

/// The upstream session of `s` in a locked [`Link`], while it is current: opened for the
/// record as it is now (same fingerprint) and not closed.
pub(super) fn current(
    link: &HashMap<String, (String, Arc<upstream::Upstream>)>,
    s: &Served,
) -> Option<Arc<upstream::Upstream>> {
    let (fp, up) = link.get(&s.record.id)?;
    (*fp == s.fingerprint && !up.client.is_closed()).then(|| up.clone())
}

/// Who is calling through the proxy.
#[derive(Debug, Clone)]
pub struct Who {
    /// Audit identity: `consumer:<name>` or `admin:<agent>`.
    pub identity: String,
    /// The name an approval row shows as its client.
    pub client: String,
}

/// A record the proxy serves, with what its calls need resolved once: the headers'
/// fingerprint (which pooled connection) and the secret values (masked in results).
pub struct Served {
    pub record: Record,
    pub(super) fingerprint: String,
    pub(super) secrets: Vec<String>,
    /// The stamp of the OAuth account's file when the record has `[oauth]` (a connect,
    /// refresh or disconnect changes it, and with it the token sent); for a delegated
    /// server, the file of the consumer's own account (`record.oauth.holder`).
    pub(super) account: Option<Stamp>,
    /// Why no call can go upstream: the OAuth account is missing or must be connected again.
    pub(super) account_error: Option<Error>,
    /// The record gates the first call of an account (`gate_first_call`) and no call of
    /// this one was approved yet: allowed tools wait for a person too.
    pub(super) first_call: bool,
}

impl Served {
    /// The policy's verdict on `tool`, with an unvetted account's first call gated.
    pub(super) fn verdict(&self, tool: &str) -> Verdict {
        match self.record.tools.verdict(tool) {
            Verdict::Allow if self.first_call => Verdict::Gated,
            v => v,
        }
    }
}

/// What a file was when the cache entry was made ([`crate::base::filewatch::version`]: a count of
/// changes while watched, else its stat; a missing file is a version of its own, so a record
/// that went misses the cache; `None`: it cannot be looked at).
type Stamp = Option<crate::base::filewatch::Version>;
/// The served-record cache: id (or `id\0holder` for a consumer of a delegated server) →
/// (record file stamp, api.env stamp, what was resolved).
type ServedCache = Arc<Mutex<HashMap<String, (Stamp, Stamp, Arc<Served>)>>>;

/// The proxy of one hal0 installation.
#[derive(Clone)]
pub struct Proxy {
    paths: Paths,
    live: Arc<crate::config::live::Live>,
    pub(super) store: Store,
    pool: Pool,
    /// Consumer sessions the wire path ([`self::wire_path`]) may serve.
    wire_sessions: Arc<self::wire_path::Table>,
    /// Served records by id, valid while the record file and api.env keep their stamps: a
    /// call costs two `stat`s instead of reading and parsing both files.
    served: ServedCache,
    /// What is quarantined because it drifted from its pin ([`crate::registry::pins`]).
    pub(super) pins: Arc<crate::registry::pins::Quarantine>,
}

/// An error as the consumer sees it: a tool result with `isError` and `code: message`.
pub fn error_result(e: &Error) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("{}: {}", e.code, crate::base::redact::redact(&e.message)))])
}

/// A refusal or failure of a proxied request other than `tools/call`, as an MCP error whose
/// message starts with the stable code and whose data names it.
pub fn error_data(e: &Error) -> rmcp::ErrorData {
    let message = format!("{}: {}", e.code, crate::base::redact::redact(&e.message));
    let data = Some(json!({"code": e.code}));
    match e.kind {
        Kind::Forbidden | Kind::Invalid | Kind::NotFound => rmcp::ErrorData::invalid_params(message, data),
        _ => rmcp::ErrorData::internal_error(message, data),
    }
}

/// Whether the consumer is shown `tool` (one entry of the server's `tools/list`, as JSON)
/// under `record`'s policy: allowed ones as they are; gated ones with a note on the wait and
/// without an output schema (a gated call may answer `pending_approval`, which the schema
/// does not describe, and clients that validate would reject it), and without an optional
/// task support (a gated tool is not run as a task, so the consumer calls it plainly; one
/// that requires a task keeps saying so, and its call is refused at once); no other.
pub(super) fn offer_tool(record: &Record, tool: &mut Map<String, Value>) -> bool {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    match record.tools.verdict(name) {
        Verdict::Allow => true,
        Verdict::Gated => {
            let d = tool.get("description").and_then(Value::as_str).unwrap_or("").trim();
            let d = if d.is_empty() { GATED_NOTE.to_string() } else { format!("{d} {GATED_NOTE}") };
            tool.insert("description".into(), Value::String(d));
            tool.remove("outputSchema");
            let support = tool.get("execution").and_then(|e| e.get("taskSupport")).and_then(Value::as_str);
            if support == Some("optional") {
                tool.remove("execution");
            }
            true
        }
        _ => false,
    }
}

/// The tools of a server's list (`tools`, as the server sent them) that a consumer is
/// offered: compared with their pins first (as the server describes them), quarantined
/// ones dropped, the rest shaped by [`offer_tool`].
pub(super) fn offer_tools(
    pins: &crate::registry::pins::Quarantine,
    store: &Store,
    record: &Record,
    tools: Vec<Map<String, Value>>,
) -> Vec<Map<String, Value>> {
    use crate::registry::pins::Item;
    let offered: Vec<Map<String, Value>> = tools
        .into_iter()
        .filter(|m| {
            let name = m.get("name").and_then(Value::as_str).unwrap_or("");
            matches!(record.tools.verdict(name), Verdict::Allow | Verdict::Gated)
        })
        .collect();
    let held = pins.observe(store, &record.id, Item::Tool, &offered);
    offered
        .into_iter()
        .filter(|m| !crate::registry::pins::key_of(Item::Tool, m).is_some_and(|n| held.contains(n)))
        .filter_map(|mut m| offer_tool(record, &mut m).then_some(m))
        .collect()
}

/// Replace every resolved secret value of the record found in `result` with the mask.
fn mask_secrets(result: CallToolResult, secrets: &[String]) -> CallToolResult {
    mask_in(result, secrets).unwrap_or_else(|| {
        CallToolResult::error(vec![ContentBlock::text("mcp.result_withheld: the result carried a credential")])
    })
}

/// `value` with every one of `secrets` (the needles of [`crate::registry::mask::needles`]) masked by
/// the proxy's one rule ([`crate::registry::mask`]: in what the consumer decodes, across content
/// blocks); `None` when the masked value no longer reads back as a `T` (the caller
/// withholds the answer).
pub(super) fn mask_in<T: serde::Serialize + serde::de::DeserializeOwned>(value: T, secrets: &[String]) -> Option<T> {
    if secrets.is_empty() {
        return Some(value);
    }
    let Ok(text) = serde_json::to_string(&value) else { return Some(value) };
    match crate::registry::mask::mask_json(&text, secrets)? {
        std::borrow::Cow::Borrowed(_) => Some(value),
        std::borrow::Cow::Owned(masked) => serde_json::from_str(&masked).ok(),
    }
}

fn refused(code: &'static str, msg: String) -> Error {
    Error::new(code, Kind::Forbidden, msg)
}

impl Proxy {
    pub fn new(paths: Paths, live: Arc<crate::config::live::Live>, store: Store) -> Proxy {
        Proxy {
            paths,
            live,
            store,
            pool: Pool::default(),
            wire_sessions: Arc::default(),
            served: Default::default(),
            pins: Arc::default(),
        }
    }

    /// The configuration in use now (a reload may change the call timeouts and waits).
    pub(super) fn config(&self) -> Arc<Config> {
        self.live.get()
    }

    fn account_stamp(&self, id: &str, holder: Option<&str>) -> Stamp {
        version(
            &crate::registry::oauth::vault::dir(&self.paths).join(crate::registry::oauth::account::name(id, holder)),
        )
    }

    /// The cached entry `key` of server `id`, while its files keep their stamps.
    fn cached(&self, key: &str, id: &str, reg: &Registry) -> Option<Arc<Served>> {
        let m = self.served.lock().unwrap_or_else(|p| p.into_inner());
        // Only ids that passed `serving` are cached, so the path below is a valid one.
        let (rs, es, s) = m.get(key)?;
        (*rs == version(&reg.path_of(id))
            && *es == version(&self.paths.api_env())
            && s.account.as_ref().is_none_or(|a| {
                *a == self.account_stamp(id, s.record.oauth.as_ref().and_then(|o| o.holder.as_deref()))
            }))
        .then(|| s.clone())
    }

    /// The record behind `/mcp/proxy/<id>/mcp`: installed, enabled, reachable over http.
    /// A server with delegated accounts served this way (no consumer named) has no
    /// account to call with: see [`Proxy::record_as`].
    pub fn record(&self, id: &str) -> Result<Arc<Served>> {
        self.record_as(id, None)
    }

    /// [`Proxy::record`] as consumer `holder` sees it: for a server with delegated
    /// accounts, calls with `holder`'s own account (each holder has its own entry, with its
    /// own upstream sessions, token and secrets to mask); for any other, the same as
    /// [`Proxy::record`].
    pub fn record_as(&self, id: &str, holder: Option<&str>) -> Result<Arc<Served>> {
        let reg = Registry::new(&self.paths);
        let own_key = |h: &str| format!("{id}\0{h}");
        if let Some(s) = self.cached(id, id, &reg) {
            match (s.record.oauth.as_ref().is_some_and(|o| o.delegated()), holder) {
                (true, Some(h)) => {
                    if let Some(s) = self.cached(&own_key(h), id, &reg) {
                        return Ok(s);
                    }
                }
                _ => return Ok(s),
            }
        }
        // Watched from the first resolve on: later looks cost no stat.
        crate::base::filewatch::watch(&reg.path_of(id));
        crate::base::filewatch::watch(&self.paths.api_env());
        let (rs, es) = (version(&reg.path_of(id)), version(&self.paths.api_env()));
        let mut record = serving(&reg, id)?;
        let key = match (&mut record.oauth, holder) {
            (Some(o), Some(h)) if o.delegated() => {
                o.holder = Some(h.to_string());
                own_key(h)
            }
            _ => id.to_string(),
        };
        let holder = record.oauth.as_ref().and_then(|o| o.holder.clone());
        // Only a server with an account pays for its file's stamp on each request.
        let account = record.oauth.as_ref().map(|_| self.account_stamp(id, holder.as_deref()));
        let (hdrs, account_error) = upstream::headers_or_account_error(&record, &self.paths)?;
        let secrets = upstream::secrets_in(&record, &hdrs);
        let fingerprint = upstream::fingerprint(&record, &hdrs);
        let first_call = record.oauth.as_ref().is_some_and(|o| o.gate_first_call)
            && account_error.is_none()
            && crate::registry::oauth::account::unvetted(&self.paths, id, holder.as_deref());
        let served = Arc::new(Served { fingerprint, secrets, record, account, account_error, first_call });
        let mut m = self.served.lock().unwrap_or_else(|p| p.into_inner());
        // A consumer's entry goes with its server's: one shared entry (cheap) tells later
        // requests that the server is delegated.
        if key != id && !m.contains_key(id) {
            drop(m);
            let _ = self.record_as(id, None);
            m = self.served.lock().unwrap_or_else(|p| p.into_inner());
        }
        m.insert(key, (rs, es, served.clone()));
        Ok(served)
    }

    /// The account error of `s` as its consumer gets it: for a consumer of a delegated
    /// server, with a link that starts connecting its own account (fresh each time).
    fn account_error(&self, s: &Served, e: &Error) -> Error {
        let Some(h) = s.record.oauth.as_ref().and_then(|o| o.holder.as_deref()) else { return e.clone() };
        match crate::registry::oauth::flow::start_link(&self.paths, &self.config(), &s.record.id, h) {
            Ok(link) => Error::new(
                e.code,
                e.kind,
                format!(
                    "{} To connect your own account, open this link in a browser within {} minutes: {link}",
                    e.message,
                    crate::registry::oauth::flow::START_LINK_SECS / 60
                ),
            ),
            Err(_) => e.clone(),
        }
    }

    /// The connection a consumer's request uses: a stdio server's one child (shared), an
    /// http server's upstream session of this consumer session (opened on first use).
    pub(super) async fn client(&self, s: &Served, who: &Consumer) -> Result<Arc<upstream::Upstream>> {
        if let Some(e) = &s.account_error {
            return Err(self.account_error(s, e));
        }
        if s.record.transport == Transport::Stdio {
            let up = self.pool.client(&s.record, &s.fingerprint, &self.paths).await?;
            up.relay().set_secrets(&s.secrets);
            return Ok(up);
        }
        let mut link = who.link.0.lock().await;
        if let Some(up) = current(&link, s) {
            return Ok(up);
        }
        // A server that just refused a connect is not tried again by every request.
        self.pool.recent_failure(&s.record.id, &s.fingerprint)?;
        let owner = self::inbound::Owner { proxy: self.clone(), id: s.record.id.clone() };
        let relay = self::inbound::Relay::owned_by(who.peer.clone(), owner, s.secrets.clone());
        let (up, fingerprint) = match upstream::connect(&s.record, &self.paths, "mcp.upstream_failed", relay).await {
            Ok((up, _)) => (Arc::new(up), s.fingerprint.clone()),
            Err(e) if upstream::token_refused(&e) => {
                // The account's token was refused (expired early, revoked): refresh it once
                // and connect with the new one, or say that a person must connect it again.
                let id = &s.record.id;
                let holder = s.record.oauth.as_ref().and_then(|o| o.holder.clone());
                let holder = holder.as_deref();
                if let Err(e) =
                    crate::registry::oauth::flow::refresh(&self.paths, s.record.ca_file.as_deref(), id, holder).await
                {
                    if e.code == "mcp.reauth_required" {
                        crate::registry::oauth::card::raise(&self.store, id, holder, &e.message);
                    }
                    return Err(self.account_error(s, &e));
                }
                let s = self.record_as(id, holder)?;
                let relay = self::inbound::Relay::owned_by(
                    who.peer.clone(),
                    self::inbound::Owner { proxy: self.clone(), id: id.clone() },
                    s.secrets.clone(),
                );
                match upstream::connect(&s.record, &self.paths, "mcp.upstream_failed", relay).await {
                    Ok((up, _)) => (Arc::new(up), s.fingerprint.clone()),
                    Err(e) => {
                        let e = if upstream::token_refused(&e) {
                            let why = "the server refused a fresh token";
                            crate::registry::oauth::account::mark_reauth(&self.paths, id, holder, why)?;
                            crate::registry::oauth::card::raise(&self.store, id, holder, why);
                            self.account_error(&s, &crate::registry::oauth::account::reauth(id, holder, why))
                        } else {
                            e
                        };
                        self.pool.note_failure(id, &s.fingerprint, &e);
                        return Err(e);
                    }
                }
            }
            Err(e) => {
                self.pool.note_failure(&s.record.id, &s.fingerprint, &e);
                return Err(e);
            }
        };
        link.insert(s.record.id.clone(), (fingerprint, up.clone()));
        Ok(up)
    }

    /// Forget connection `up` of `s` that `who` used (it broke), unless another request
    /// already replaced it.
    pub(super) async fn drop_client(&self, s: &Served, who: &Consumer, up: &Arc<upstream::Upstream>) {
        if s.record.transport == Transport::Stdio {
            self.pool.evict_if(&s.record.id, up);
            return;
        }
        let mut link = who.link.0.lock().await;
        if link.get(&s.record.id).is_some_and(|(_, cur)| Arc::ptr_eq(cur, up)) {
            link.remove(&s.record.id);
        }
    }

    /// `start`, `stop` or `restart` a stdio server's child (`POST /api/mcp/{id}/{action}`);
    /// http servers run on their own and are not hal0's to start.
    pub async fn action(&self, id: &str, action: &str) -> Result<Value> {
        if !["start", "stop", "restart"].contains(&action) {
            return Err(Error::not_found(
                "mcp.unknown_action",
                format!("unknown action `{action}`: use start, stop or restart"),
            ));
        }
        let s = self.record(id)?;
        if s.record.transport != Transport::Stdio {
            return Err(Error::conflict(
                "mcp.not_supervised",
                format!("`{id}` is an http server: it runs on its own, hal0 only connects to it"),
            ));
        }
        if action != "start" {
            self.pool.evict(id);
        }
        if action == "stop" {
            return Ok(json!({"server": id, "state": "stopped"}));
        }
        let up = self.pool.client(&s.record, &s.fingerprint, &self.paths).await?;
        Ok(json!({"server": id, "state": "running", "pid": up.child.as_ref().and_then(|c| c.pid())}))
    }

    /// The running child's connection of a stdio server, if hal0 has one open. Never starts
    /// anything: a probe from the API must not run a program the gated `start` did not.
    pub fn running(&self, id: &str) -> Option<Arc<upstream::Upstream>> {
        self.pool.current(id)
    }

    /// `running` with its pid when a stdio server's child is up, else `stopped`.
    pub fn child_state(&self, id: &str) -> (&'static str, Option<u32>) {
        match self.pool.current(id) {
            Some(up) => ("running", up.child.as_ref().and_then(|c| c.pid())),
            None => ("stopped", None),
        }
    }

    /// The consumer's view of the server's tools: allowed and gated only, none quarantined,
    /// in the server's order.
    pub async fn list_tools(&self, s: &Served, who: &Consumer) -> Result<Vec<Tool>> {
        let all = self.list_upstream(s, who).await?;
        let maps = all
            .into_iter()
            .filter_map(|t| match serde_json::to_value(&t) {
                Ok(Value::Object(m)) => Some(m),
                _ => None,
            })
            .collect();
        Ok(offer_tools(&self.pins, &self.store, &s.record, maps)
            .into_iter()
            .filter_map(|m| serde_json::from_value(Value::Object(m)).ok())
            .collect())
    }

    async fn list_upstream(&self, s: &Served, who: &Consumer) -> Result<Vec<Tool>> {
        self.ask(s, who, "tools/list", |c| async move {
            let tools = c.client.list_all_tools().await;
            if let (Ok(t), Some(w)) = (&tools, &c.wire) {
                w.note_tools(t);
            }
            tools
        })
        .await
    }

    /// Let the wire path serve consumer session `id` of server `record_id` (the session's
    /// handler holds the registration while it lives).
    pub fn register_session(
        &self,
        id: &str,
        record_id: &str,
        who: Who,
        link: Arc<Link>,
        peer: Peer<RoleServer>,
    ) -> self::wire_path::Registration {
        self.wire_sessions.register(id, record_id, who, link, peer)
    }

    /// One request `what` of `who` to the server of `s` (bounded by the call timeout),
    /// tried once more on a fresh connection when the first one broke. An MCP error of the
    /// server comes back as `mcp.upstream_error` with its text.
    pub(super) async fn ask<T, F, Fut>(&self, s: &Served, who: &Consumer, what: &str, f: F) -> Result<T>
    where
        F: Fn(Arc<upstream::Upstream>) -> Fut,
        Fut: std::future::Future<Output = std::result::Result<T, rmcp::ServiceError>>,
    {
        let r = &s.record;
        let timeout = Duration::from_secs(self.config().mcp.call_timeout_secs);
        for attempt in 0..2 {
            let c = self.client(s, who).await?;
            match tokio::time::timeout(timeout, f(c.clone())).await {
                Ok(Ok(t)) => return Ok(t),
                Ok(Err(e)) if attempt == 0 && retryable(&e) => self.drop_client(s, who, &c).await,
                Ok(Err(rmcp::ServiceError::McpError(e))) => {
                    // The server's refusal of the request itself (not found, bad params, no
                    // such method) is the consumer's to mend: invalid, not a bad gateway.
                    let kind =
                        if [-32602, -32601, -32002].contains(&e.code.0) { Kind::Invalid } else { Kind::BadGateway };
                    let msg = mask_in(e.message.to_string(), &s.secrets).unwrap_or_default();
                    return Err(Error::new(
                        "mcp.upstream_error",
                        kind,
                        format!(
                            "`{}` answered {what} with an error ({}): {}",
                            r.id,
                            e.code.0,
                            crate::base::redact::redact(&msg)
                        ),
                    ));
                }
                Ok(Err(e)) => return Err(upstream_error(r, &e.to_string())),
                Err(_) => return Err(upstream_error(r, &format!("{what} timed out"))),
            }
        }
        Err(upstream_error(r, "the connection broke twice"))
    }

    /// One `tools/call` from a consumer to the served record `served` (which the guard
    /// resolved for this request). Policy refusals and upstream failures come back as
    /// `isError` results (the model reads them); a tool the policy does not list (so
    /// `tools/list` does not show it) is `Err` with `mcp.unknown_tool`, which the MCP front
    /// answers as every mount does. The audit log gets one row per decision. A gated
    /// call waits for a person as `waiting` says: held open (reporting progress), or on
    /// protocol 2026-07-28 answered at once with an `input_required` result that names the
    /// card, each retry (its `requestState`) asking again until the card is decided.
    pub async fn call(
        &self,
        served: &Served,
        tool: &str,
        args: Option<Map<String, Value>>,
        who: &Who,
        waiting: Waiting<'_>,
        consumer: &Consumer,
    ) -> Result<CallToolResponse> {
        let r = &served.record;
        let id = r.id.as_str();
        let mut verdict = served.verdict(tool);
        let mut policy = format!("policy: {}", verdict.as_str());
        // A standing rule a person chose (this caller, this tool, maybe these arguments)
        // lets a gated call run as an allowed one.
        if verdict == Verdict::Gated
            && let Some(rule) = self.standing_rule(id, tool, &who.client, args.as_ref()).await
        {
            verdict = Verdict::Allow;
            policy = format!("policy: gated; allowed by rule {} of {}", rule.id, rule.created_by);
        }
        let c = Call { surface: format!("mcp:proxy/{id}"), tool, who, args, policy };
        // A retry of a call that was queued already: its card says what became of it (the
        // policy now, or a standing rule chosen with the approval, does not run it again).
        if let Waiting::Rounds(rounds) = &waiting
            && let Some(state) = &rounds.request_state
        {
            return Ok(self.resume(r, &c, state, rounds).await);
        }
        // A tool whose definition drifted from its pin is refused until a person accepts it.
        // (A hash lookup; the store is read only for a held name or a server not seen yet.)
        if matches!(verdict, Verdict::Allow | Verdict::Gated)
            && let Err(e) = self.pins.check(&self.store, id, crate::registry::pins::Item::Tool, tool)
        {
            self.audit(&c, Logged::Refused, Some(e.code), None).await;
            return Ok(error_result(&e).into());
        }
        match verdict {
            Verdict::Allow => {
                // The entry is stored before the call goes upstream: a call whose entry
                // cannot be stored is refused, so no upstream change goes unrecorded.
                let entry_id = match self.begin(&c).await {
                    Ok(id) => id,
                    Err(e) => return Ok(error_result(&e).into()),
                };
                let out = self.forward(served, tool, c.args.clone(), consumer).await;
                let code = outcome_code(&out);
                crate::base::observe::metrics::proxy_verdict(&c.surface, Logged::Allow.as_str());
                crate::base::observe::metrics::proxy_forwarded(&c.surface, "rmcp");
                let outcome = crate::audit::Outcome {
                    id: entry_id,
                    verdict: Logged::Allow,
                    result_code: code.map(str::to_string),
                    approval_id: None,
                };
                crate::audit::finish(&self.store, outcome);
                Ok(out.unwrap_or_else(|e| error_result(&e)).into())
            }
            Verdict::Gated => match waiting {
                Waiting::Hold(progress) => Ok(self.gated(r, &c, progress).await.into()),
                Waiting::Rounds(rounds) => Ok(self.ask_person(r, &c, &rounds).await),
            },
            Verdict::Blocked => {
                let e = refused(
                    "mcp.tool_blocked",
                    format!("the operator blocked `{tool}` on `{id}`; hal0 did not forward the call"),
                );
                self.audit(&c, Logged::Blocked, Some(e.code), None).await;
                Ok(error_result(&e).into())
            }
            Verdict::UnknownTool | Verdict::UnknownServer => {
                let e = refused(
                    "mcp.unknown_tool",
                    format!(
                        "`{tool}` is not on `{id}`'s tool policy, and unlisted tools are denied; hal0 did not forward \
                         the call (an operator can allow it: hal0 mcp allow {id} {tool})"
                    ),
                );
                self.audit(&c, Logged::Refused, Some(e.code), None).await;
                Err(e)
            }
        }
    }

    pub(super) async fn forward(
        &self,
        s: &Served,
        tool: &str,
        args: Option<Map<String, Value>>,
        who: &Consumer,
    ) -> Result<CallToolResult> {
        let (r, secrets) = (&s.record, &s.secrets);
        let timeout = Duration::from_secs(self.config().mcp.call_timeout_secs);
        for attempt in 0..2 {
            let c = self.client(s, who).await?;
            let mut p = CallToolRequestParams::new(tool.to_string());
            if let Some(a) = args.clone() {
                p = p.with_arguments(a);
            }
            // The upstream call is a CLIENT child of the served call's span; its
            // traceparent goes upstream in the request's `_meta` (SEP-414).
            let mut span = crate::base::observe::telemetry::Span::start(
                format!("tools/call {tool}"),
                crate::base::observe::telemetry::Kind::Client,
                crate::base::observe::telemetry::current(),
            );
            if let Some(s) = span.as_mut() {
                s.attr("mcp.method.name", "tools/call");
                s.attr("gen_ai.tool.name", tool);
                s.attr("gen_ai.operation.name", "execute_tool");
                s.attr("hal0.mcp.upstream", r.id.clone());
                p.meta = Some(s.meta());
            }
            let answered = tokio::time::timeout(timeout, relayed_call(&c, p, who)).await;
            if let Some(mut s) = span {
                match &answered {
                    Ok(Ok(res)) if res.is_error == Some(true) => s.fail("tool_error", None),
                    Ok(Ok(_)) => {}
                    Ok(Err(rmcp::ServiceError::Cancelled { .. })) => s.fail("cancelled", None),
                    Ok(Err(e)) => {
                        s.fail("upstream_error", Some(crate::base::redact::redact(&e.to_string()).into_owned()))
                    }
                    Err(_) => s.fail("timeout", None),
                }
                s.end();
            }
            match answered {
                Ok(Ok(res)) => return Ok(complete(mask_secrets(res, secrets))),
                Ok(Err(rmcp::ServiceError::Cancelled { .. })) => {
                    return Err(Error::new(
                        "mcp.call_cancelled",
                        Kind::Conflict,
                        format!("the client cancelled the call of `{tool}`; hal0 told `{}`", r.id),
                    ));
                }
                Ok(Err(e)) if attempt == 0 && retryable(&e) => self.drop_client(s, who, &c).await,
                Ok(Err(e)) => return Err(upstream_error(r, &e.to_string())),
                Err(_) => {
                    return Err(upstream_error(r, &format!("`{tool}` did not answer within {} s", timeout.as_secs())));
                }
            }
        }
        Err(upstream_error(r, "the connection broke twice"))
    }

    /// Queue gated call `c` on `r` as a card bound to its arguments and the policy in force
    /// (audited `gated`); the refusal to give the caller when it cannot be queued.
    pub(super) async fn queue(
        &self,
        r: &Record,
        c: &Call<'_>,
    ) -> std::result::Result<approvals::Approval, CallToolResult> {
        let tool = c.tool;
        let arguments = Value::Object(c.args.clone().unwrap_or_default());
        let preview = gated_preview(&r.id, tool, &arguments);
        let stored = json!({"server": r.id, "tool": tool, "arguments": arguments});
        let (client, tool_s) = (c.who.client.clone(), tool.to_string());
        let version = policy_version(r);
        let expire = i64::from(self.config().approvals.expire_hours) * 3600;
        let row = self
            .store
            .call(move |s| {
                approvals::create_bound(
                    s,
                    NewApproval {
                        kind: KIND,
                        client: &client,
                        tool: &tool_s,
                        arguments: stored,
                        preview,
                        run_id: None,
                    },
                    Some(&version),
                    Some(expire),
                )
            })
            .await;
        match row {
            Ok(row) => {
                self.audit(c, Logged::Gated, None, Some(&row.id)).await;
                Ok(row)
            }
            Err(e) => {
                self.audit(c, Logged::Error, Some(e.code), None).await;
                Err(error_result(&e))
            }
        }
    }

    /// A gated call held open while a person decides (protocols before 2026-07-28).
    async fn gated(&self, r: &Record, c: &Call<'_>, progress: &Progress) -> CallToolResult {
        let row = match self.queue(r, c).await {
            Ok(row) => row,
            Err(refusal) => return refusal,
        };
        let (gate, run) = (
            Duration::from_secs(self.config().mcp.gate_wait_secs),
            Duration::from_secs(self.config().mcp.call_timeout_secs),
        );
        let what = format!("waiting for a person to approve `{}` (approval {})", c.tool, row.id);
        progress.during(gate + run, &what, self.decision(&row.id, c.tool, gate, run)).await
    }

    /// Watch approval `id` of a gated call of `tool` until a person decides (within `gate`)
    /// and an approved call has run (within `run` more): its result, or what became of it.
    pub(super) async fn decision(&self, id: &str, tool: &str, gate: Duration, run: Duration) -> CallToolResult {
        let decided_by = Instant::now() + gate;
        let executed_by = decided_by + run;
        loop {
            let id = id.to_string();
            let cur = self.store.call(move |s| approvals::get(s, &id)).await;
            let now = Instant::now();
            match cur {
                Ok(cur) => match cur.status.as_str() {
                    "executed" => return stored_result(&cur),
                    "failed" => {
                        let msg = cur.result.as_ref().map(|v| v["error"]["message"].clone()).unwrap_or_default();
                        return error_result(&Error::new(
                            "mcp.approved_call_failed",
                            Kind::BadGateway,
                            format!(
                                "approval {} was approved but the call failed: {}",
                                cur.id,
                                msg.as_str().unwrap_or("")
                            ),
                        ));
                    }
                    "denied" => {
                        let why = cur.reason.map(|r| format!(": {r}")).unwrap_or_default();
                        return error_result(&refused(
                            "mcp.call_denied",
                            format!("a person denied this call of `{tool}` (approval {}){why}", cur.id),
                        ));
                    }
                    "withdrawn" | "expired" => {
                        let why = cur.reason.map(|r| format!(" ({r})")).unwrap_or_default();
                        return error_result(&refused(
                            "mcp.call_withdrawn",
                            format!("approval {} was {}{why}; the call was not made", cur.id, cur.status),
                        ));
                    }
                    "pending" if now >= decided_by => return pending(&cur.id, self.config().mcp.gate_wait_secs),
                    "approved" if now >= executed_by => return pending(&cur.id, self.config().mcp.gate_wait_secs),
                    _ => {}
                },
                Err(e) if now >= decided_by => return error_result(&e),
                Err(_) => {}
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The live standing rule that lets `client` call `tool` on `server` with `args`.
    async fn standing_rule(
        &self,
        server: &str,
        tool: &str,
        client: &str,
        args: Option<&Map<String, Value>>,
    ) -> Option<approvals::rules::Rule> {
        let digest = approvals::digest(&Value::Object(args.cloned().unwrap_or_default()));
        let (server, tool, client) = (server.to_string(), tool.to_string(), client.to_string());
        let out = self.store.call(move |s| approvals::rules::matching(s, &server, &tool, &client, &digest)).await;
        out.unwrap_or_else(|e| {
            tracing::warn!(code = e.code, "cannot read the standing rules: {}", e.message);
            None
        })
    }

    /// The `started` audit row of call `c`, stored before it goes upstream.
    pub(super) async fn begin(&self, c: &Call<'_>) -> Result<i64> {
        let args = Value::Object(c.args.clone().unwrap_or_default());
        crate::audit::begin(&self.store, &c.entry(&args, Logged::Started, None, None)).await
    }

    /// The audit row of one decision about call `c`.
    pub(super) async fn audit(&self, c: &Call<'_>, verdict: Logged, code: Option<&str>, approval: Option<&str>) {
        crate::base::observe::metrics::proxy_verdict(&c.surface, verdict.as_str());
        let args = Value::Object(c.args.clone().unwrap_or_default());
        let out = crate::audit::record_async(&self.store, &c.entry(&args, verdict, code, approval)).await;
        if let Err(err) = out {
            tracing::warn!("cannot record the audit entry: {}", err.message);
        }
    }

    /// Forget the pooled connection of `id` (after an uninstall or a record change).
    pub fn evict(&self, id: &str) {
        self.pool.evict(id);
    }
}

/// `tools/call` `p` on connection `c` for consumer `who`: the upstream's progress goes to the
/// consumer under its own token, the upstream's requests about the call are put to the
/// consumer from this task (so they ride the call's response stream), and a consumer that
/// cancels (`ServiceError::Cancelled`; or goes away: the future is dropped) has the upstream
/// told.
async fn relayed_call(
    c: &upstream::Upstream,
    p: CallToolRequestParams,
    who: &Consumer,
) -> std::result::Result<CallToolResult, rmcp::ServiceError> {
    use futures::StreamExt;
    use rmcp::model::{ClientRequest, Request, ServerResult};
    let peer = c.client.peer();
    let handle =
        peer.send_request_with_option(ClientRequest::CallToolRequest(Request::new(p)), Default::default()).await?;
    let (mut guard, mut inbound) = c.relay().track(
        peer.clone(),
        handle.id.clone(),
        handle.progress_token.clone(),
        who.peer.clone(),
        who.token.clone(),
    );
    let mut answer = handle.rx;
    let mut serving = futures::stream::FuturesUnordered::new();
    let out = loop {
        tokio::select! {
            a = &mut answer => break a,
            Some(req) = inbound.recv() => serving.push(self::inbound::serve_inbound(&who.peer, req)),
            Some(()) = serving.next(), if !serving.is_empty() => {}
            _ = who.ct.cancelled() => return Err(rmcp::ServiceError::Cancelled { reason: None }),
        }
    };
    guard.answered();
    match out {
        Ok(Ok(ServerResult::CallToolResult(r))) => Ok(r),
        Ok(Ok(_)) => Err(rmcp::ServiceError::UnexpectedResponse),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(rmcp::ServiceError::TransportClosed),
    }
}

fn pending(id: &str, waited: u64) -> CallToolResult {
    let v = json!({
        "status": "pending_approval",
        "approval_id": id,
        "detail": format!(
            "no decision within {waited} s; the call waits in hal0's approvals inbox and runs once when a person approves it"
        ),
    });
    CallToolResult::structured(v)
}

/// The result an approved call stored on its row (redacted when it was stored).
fn stored_result(row: &approvals::Approval) -> CallToolResult {
    let v = row.result.as_ref().map(|r| r["result"].clone()).unwrap_or(Value::Null);
    serde_json::from_value(v).map(complete).unwrap_or_else(|_| {
        CallToolResult::error(vec![ContentBlock::text(format!(
            "mcp.approved_call_failed: approval {} ran, but its stored result cannot be read",
            row.id
        ))])
    })
}

/// A result as this hal0 answers it: an upstream on an older protocol sends no
/// `resultType`, which consumers on 2026-07-28 require.
fn complete(mut r: CallToolResult) -> CallToolResult {
    r.result_type.get_or_insert(rmcp::model::ResultType::COMPLETE);
    r
}

fn retryable(e: &rmcp::ServiceError) -> bool {
    match e {
        rmcp::ServiceError::TransportClosed => true,
        rmcp::ServiceError::TransportSend(t) => {
            let s = t.to_string().to_lowercase();
            s.contains("session") || s.contains("404") || s.contains("closed")
        }
        _ => false,
    }
}

/// The audit `result_code` of a forwarded call: none for a result, else why it failed.
pub(super) fn outcome_code(out: &Result<CallToolResult>) -> Option<&'static str> {
    match out {
        Ok(res) if res.is_error == Some(true) => Some("mcp.upstream_tool_error"),
        Ok(_) => None,
        Err(e) => Some(e.code),
    }
}

/// A failure of server `r` to answer (`what` is redacted), as `mcp.upstream_failed`.
pub(super) fn upstream_error(r: &Record, what: &str) -> Error {
    upstream::failed(
        "mcp.upstream_failed",
        format!("`{}` ({}): {}", r.id, r.url.as_deref().unwrap_or("-"), crate::base::redact::redact(what)),
    )
}

/// The version of `r`'s tool policy an approval is bound to: the start of the SHA-256 of
/// its canonical JSON (any edit of allow, gate or block changes it).
pub fn policy_version(r: &Record) -> String {
    let v = serde_json::to_value(&r.tools).unwrap_or(Value::Null);
    approvals::digest(&v)[..16].to_string()
}

/// Why a waiting `mcp_call` card can no longer be approved as it stands: its server is
/// gone, or its policy changed since the card was queued. `None`: it still holds.
pub fn staleness(paths: &Paths, row: &approvals::Approval) -> Option<String> {
    if row.kind != KIND {
        return None;
    }
    let bound = row.binding.policy_version.as_deref()?;
    let server = row.arguments["server"].as_str().unwrap_or_default();
    match Registry::new(paths).get(server) {
        Err(_) => Some(format!("`{server}` is no longer installed")),
        Ok(r) => {
            let now = policy_version(&r);
            (now != bound).then(|| {
                format!("the tool policy of `{server}` changed while this card waited (version {bound}, now {now}): ask for the call again")
            })
        }
    }
}

/// The record `id` if hal0 serves it through the proxy.
pub fn serving(reg: &Registry, id: &str) -> Result<Record> {
    let r = reg.get(id)?;
    if !r.enabled {
        return Err(Error::not_found("mcp.server_disabled", format!("`{id}` is installed but disabled")));
    }
    if r.transport == Transport::Stdio {
        r.start_command()?;
    }
    Ok(r)
}

/// Carry out an approved `mcp_call` row: the record must still be served and the tool still
/// gated or allowed; then exactly one call on a fresh connection, no retry.
pub async fn execute_approved(paths: &Paths, config: &Config, row: &approvals::Approval) -> Result<Value> {
    let server = row.arguments["server"].as_str().unwrap_or_default();
    let tool = row.arguments["tool"].as_str().unwrap_or_default();
    let mut r = serving(&Registry::new(paths), server)?;
    // A delegated server's approved call goes as the account of the consumer who made it.
    if let Some(o) = r.oauth.as_mut().filter(|o| o.delegated()) {
        o.holder = Some(row.client.clone());
    }
    match r.tools.verdict(tool) {
        Verdict::Allow | Verdict::Gated => {}
        v => {
            return Err(refused(
                "mcp.tool_blocked",
                format!("`{tool}` on `{server}` is now {} by the policy; the approved call was not made", v.as_str()),
            ));
        }
    }
    let (up, _) = upstream::connect(&r, paths, "mcp.upstream_failed", Default::default()).await?;
    let (client, _child) = (up.client, up.child);
    let mut p = CallToolRequestParams::new(tool.to_string());
    if let Some(a) = row.arguments["arguments"].as_object() {
        p = p.with_arguments(a.clone());
    }
    let timeout = Duration::from_secs(config.mcp.call_timeout_secs);
    let out = tokio::time::timeout(timeout, client.call_tool(p)).await;
    let _ = client.cancel().await;
    let res = out
        .map_err(|_| upstream_error(&r, &format!("`{tool}` did not answer within {} s", timeout.as_secs())))?
        .map_err(|e| upstream_error(&r, &e.to_string()))?;
    // A person approved a call made with this account: its next calls need no approval.
    if let Some(o) = r.oauth.as_ref().filter(|o| o.gate_first_call) {
        crate::registry::oauth::account::vet(paths, &r.id, o.holder.as_deref())?;
    }
    let (hdrs, _) = upstream::headers(&r, paths)?;
    let res = mask_secrets(res, &upstream::secrets_in(&r, &hdrs));
    serde_json::to_value(res).map_err(|e| Error::internal(e.to_string()))
}

/// The approvals-inbox preview of a gated call: `server: tool {arguments}`, at most
/// [`PREVIEW_MAX`] bytes (then `…`), redacted as part of the whole text so a secret the cut
/// splits is masked rather than shown by its start.
fn gated_preview(server: &str, tool: &str, arguments: &Value) -> String {
    let (head, cut) = crate::base::redact::redact_head(&format!("{server}: {tool} {arguments}"), PREVIEW_MAX, false);
    if cut { format!("{head}…") } else { head }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gated_preview_never_shows_the_start_of_a_cut_secret() {
        let key = "ghp_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv";
        for pad in 330..380 {
            let args = serde_json::json!({"a_note": "x".repeat(pad), "z": key});
            let p = gated_preview("files", "write", &args);
            assert!(!p.contains("ghp_Ab"), "{pad}: {}", &p[p.len().saturating_sub(60)..]);
            assert_eq!(p.ends_with('…'), format!("files: write {args}").len() > PREVIEW_MAX, "{pad}");
        }
        let p = gated_preview("files", "write", &serde_json::json!({"k": key}));
        assert_eq!(p, format!("files: write {{\"k\":\"{}\"}}", crate::base::redact::MASK));
    }

    #[test]
    fn secrets_are_masked_in_results() {
        let r = CallToolResult::success(vec![ContentBlock::text("token is s3cr3t-value, \"quoted\"")]);
        let out = mask_secrets(r, &["s3cr3t-value".into()]);
        let text = serde_json::to_string(&out).unwrap();
        assert!(!text.contains("s3cr3t-value"), "{text}");
        assert!(text.contains(crate::base::redact::MASK), "{text}");
        let r = CallToolResult::success(vec![ContentBlock::text("nothing here")]);
        assert_eq!(mask_secrets(r.clone(), &["s3cr3t-value".into()]), r);
    }
}
