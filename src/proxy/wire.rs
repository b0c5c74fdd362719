//! The upstream half of the proxy's wire path: how to post a JSON-RPC message straight to
//! the upstream session an rmcp client opened (same URL, headers, session and protocol
//! metadata as rmcp would send), so an allowed `tools/call` reaches the server without a
//! second rmcp stack and without re-encoding its arguments. Built for streamable-HTTP
//! upstreams only; the call path that uses it is [`super::wire_path`].

use super::tap::SessionNote;
use axum::body::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{ClientConfig, ProtocolVersion, Tool};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One upstream session, as the wire path posts to it.
pub struct Wire {
    url: Arc<str>,
    http: reqwest::Client,
    /// The record's headers (a bare `Authorization` token as `Bearer`), the media types and
    /// the negotiated `MCP-Protocol-Version`.
    headers: HeaderMap,
    session: SessionNote,
    /// The per-request `_meta` members of a protocol without `initialize` (SEP-2567);
    /// none for a protocol with a handshake.
    meta: Map<String, Value>,
    /// Whether the protocol wants the standard request headers (SEP-2243).
    standard_headers: bool,
    /// Tools whose input schema asks for `Mcp-Param-*` headers: rmcp computes those, so
    /// their calls stay on rmcp's path.
    param_tools: Mutex<HashSet<String>>,
    next: AtomicU64,
    /// Connections this task drives itself, for a plain-http upstream ([`super::conn`]).
    direct: Option<Arc<super::conn::Pool>>,
}

/// An upstream's answer to a call: its status, whether it is one JSON message (else an SSE
/// stream), and its body.
pub struct Sent {
    pub status: reqwest::StatusCode,
    pub json: bool,
    pub body: Reply,
}

/// The body of an answer, over whichever client carried the call.
pub enum Reply {
    Direct(super::conn::Live),
    Reqwest(reqwest::Response),
    /// Handed to whoever reads the rest (an empty body here).
    Gone,
}

impl Reply {
    /// The next piece of the body; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, String> {
        match self {
            Reply::Direct(l) => l.chunk().await,
            Reply::Reqwest(r) => r.chunk().await.map_err(|e| crate::base::outbound::chain(&e)),
            Reply::Gone => Ok(None),
        }
    }
}

/// The names of those `tools` (name, input schema as JSON text) that want parameter headers.
fn wanting_headers<'t>(tools: impl Iterator<Item = (&'t str, String)>) -> impl Iterator<Item = String> {
    tools.filter(|(_, schema)| schema.contains("\"x-mcp-header\"")).map(|(n, _)| n.to_string())
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

impl Wire {
    /// The wire target of a connected streamable-HTTP upstream: `hdrs` are the record's
    /// headers, `version` what the handshake (or discovery) settled, `me` what hal0's
    /// client declared.
    pub fn new(
        url: &str,
        http: reqwest::Client,
        hdrs: &HashMap<String, String>,
        session: SessionNote,
        version: &ProtocolVersion,
        me: &ClientConfig,
    ) -> Option<Wire> {
        let mut headers = HeaderMap::new();
        for (k, v) in hdrs {
            let value = if k.eq_ignore_ascii_case("authorization") {
                format!("Bearer {}", v.strip_prefix("Bearer ").unwrap_or(v))
            } else {
                v.clone()
            };
            headers.insert(HeaderName::from_bytes(k.as_bytes()).ok()?, HeaderValue::from_str(&value).ok()?);
        }
        headers.insert(reqwest::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(reqwest::header::ACCEPT, HeaderValue::from_static("text/event-stream, application/json"));
        headers.insert("mcp-protocol-version", HeaderValue::from_str(version.as_str()).ok()?);
        let mut meta = Map::new();
        if !version.has_initialize() {
            meta.insert("io.modelcontextprotocol/protocolVersion".into(), serde_json::to_value(version).ok()?);
            meta.insert("io.modelcontextprotocol/clientInfo".into(), serde_json::to_value(&me.client_info).ok()?);
            meta.insert(
                "io.modelcontextprotocol/clientCapabilities".into(),
                serde_json::to_value(&me.capabilities).ok()?,
            );
        }
        Some(Wire {
            url: url.into(),
            http,
            headers,
            session,
            meta,
            standard_headers: *version >= ProtocolVersion::STANDARD_HEADERS,
            param_tools: Mutex::default(),
            next: AtomicU64::new(0),
            direct: super::conn::Pool::shared(url),
        })
    }

    /// Remember which of the server's `tools` want parameter headers.
    pub fn note_tools(&self, tools: &[Tool]) {
        let all = tools.iter().map(|t| (t.name.as_ref(), serde_json::to_string(&t.input_schema).unwrap_or_default()));
        let mut set = self.param_tools.lock().unwrap_or_else(|p| p.into_inner());
        *set = wanting_headers(all).collect();
    }

    /// Add those of one page of the server's `tools/list` answer, as JSON (a page is not
    /// the whole list, so nothing is forgotten here).
    pub fn note_listed(&self, tools: &[Value]) {
        let page = tools.iter().map(|t| {
            let name = t.get("name").and_then(Value::as_str).unwrap_or("");
            (name, t.get("inputSchema").map(Value::to_string).unwrap_or_default())
        });
        self.param_tools.lock().unwrap_or_else(|p| p.into_inner()).extend(wanting_headers(page));
    }

    /// Whether a call of `tool` can go over the wire path exactly as rmcp would send it.
    pub fn carries(&self, tool: &str) -> bool {
        if !self.standard_headers {
            return true;
        }
        // `Mcp-Name` as a plain header value (rmcp would Base64-wrap anything else).
        let plain = !tool.is_empty()
            && tool.bytes().all(|b| (0x20..0x7f).contains(&b))
            && !tool.starts_with([' ', '\t'])
            && !tool.ends_with([' ', '\t'])
            && !tool.starts_with("=?base64?");
        plain && !self.param_tools.lock().unwrap_or_else(|p| p.into_inner()).contains(tool)
    }

    /// A fresh request id of hal0's own on this upstream (rmcp's client numbers its ids, so
    /// a string never collides with them).
    pub fn next_id(&self) -> String {
        format!("hal0-{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// The `_meta` members the protocol wants on every request (empty when none).
    pub fn meta(&self) -> &Map<String, Value> {
        &self.meta
    }

    /// POST `body` (one JSON-RPC message: a request or notification of `method` about
    /// `name`, or an answer) to the upstream session.
    pub async fn post(
        &self,
        body: String,
        method: Option<&str>,
        name: Option<&str>,
    ) -> reqwest::Result<reqwest::Response> {
        let headers = self.headers_for(method, name);
        self.http.post(&*self.url).headers(headers).body(body).send().await
    }

    /// Send request `body` of `method` (about `name`): over a connection of this task's own
    /// for a plain-http upstream, else through reqwest.
    pub async fn send(&self, body: String, method: &str, name: Option<&str>) -> Result<Sent, super::conn::Failed> {
        use super::conn::Failed;
        let headers = self.headers_for(Some(method), name);
        if let Some(pool) = &self.direct {
            let (parts, live) = pool.post(&headers, body).await?;
            return Ok(Sent { status: parts.status, json: is_json(&parts.headers), body: Reply::Direct(live) });
        }
        match self.http.post(&*self.url).headers(headers).body(body).send().await {
            Ok(r) => Ok(Sent { status: r.status(), json: is_json(r.headers()), body: Reply::Reqwest(r) }),
            Err(e) if e.is_connect() => Err(Failed::NotSent(crate::base::outbound::chain(&e))),
            Err(e) => Err(Failed::Broken(crate::base::outbound::chain(&e))),
        }
    }

    /// The headers of a message of `method` about `name` on this upstream session.
    fn headers_for(&self, method: Option<&str>, name: Option<&str>) -> HeaderMap {
        let mut headers = self.headers.clone();
        if let Some(s) = self.session.get()
            && let Ok(v) = HeaderValue::from_str(&s)
        {
            headers.insert("mcp-session-id", v);
        }
        if self.standard_headers {
            if let Some(v) = method.and_then(|m| HeaderValue::from_str(m).ok()) {
                headers.insert("mcp-method", v);
            }
            if let Some(v) = name.and_then(|n| HeaderValue::from_str(n).ok()) {
                headers.insert("mcp-name", v);
            }
        }
        headers
    }

    /// Tell the upstream, in the background, that hal0 gave up on its request `id`.
    pub fn cancel(self: &Arc<Self>, id: String, reason: &'static str) {
        // Called from drops too: outside a runtime (shutdown) there is nobody left to tell.
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        let me = self.clone();
        rt.spawn(async move {
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": reason},
            });
            let _ = me.post(body.to_string(), Some("notifications/cancelled"), None).await;
        });
    }

    /// Answer, in the background, the upstream's request `id` (its JSON text) with `outcome`
    /// (`"result":…` or `"error":…` members).
    pub fn answer(self: &Arc<Self>, id: String, outcome: String) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        let me = self.clone();
        rt.spawn(async move {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},{outcome}}}"#);
            let _ = me.post(body, None, None).await;
        });
    }
}
