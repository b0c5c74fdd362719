//! The legacy HTTP+SSE client transport (MCP 2024-11-05) for installed servers whose record
//! says `transport = "sse"`; rmcp has no client for it. Owns: opening `GET <url>` as an event
//! stream, waiting (bounded) for the `endpoint` event, resolving that endpoint against the
//! stream's URL and refusing one on another origin (the record's headers must not leak), the
//! and [`SseClientTransport`], an rmcp
//! `Transport<RoleClient>`: every `event: message` of the stream is a received JSON-RPC
//! message, every sent one is a `POST` to the endpoint. The record's headers go on the `GET`
//! and on every `POST`; redirects are followed only within the same origin. When the stream
//! ends (or breaks, or the server forgets the session) the transport closes, so rmcp sees the
//! connection closed. Usage: `().serve(connect(url, &headers, code).await?).await`.

use crate::base::error::{Error, Kind, Result};
pub use crate::base::sse::{MAX_EVENT_BYTES, Oversize, SseEvent, SseParser};
use futures::StreamExt;
use reqwest::header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{StatusCode, Url};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

/// How long the `GET` may take to answer and the server to send its `endpoint` event.
pub const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one `POST` of a message may take.
pub const POST_TIMEOUT: Duration = Duration::from_secs(30);
/// Received messages buffered ahead of rmcp.
const INBOX: usize = 64;
/// Same-origin redirects followed per request.
const MAX_REDIRECTS: usize = 5;

/// A failed send on the transport (what rmcp reports for that request).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SseTransportError(String);

/// A connected legacy-SSE session: give it to `().serve(..)`.
pub struct SseClientTransport {
    http: reqwest::Client,
    endpoint: Url,
    headers: HeaderMap,
    inbox: mpsc::Receiver<ServerJsonRpcMessage>,
    /// Cancelled when the stream ends or the transport closes; stops the reader task.
    stop: CancellationToken,
    _guard: DropGuard,
}

impl std::fmt::Debug for SseClientTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseClientTransport").field("endpoint", &self.endpoint.as_str()).finish_non_exhaustive()
    }
}

impl SseClientTransport {
    /// The URL messages are posted to (from the server's `endpoint` event).
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }
}

impl Transport<RoleClient> for SseClientTransport {
    type Error = SseTransportError;

    fn name() -> std::borrow::Cow<'static, str> {
        "legacy-sse".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = std::result::Result<(), Self::Error>> + Send + 'static {
        let req = self
            .http
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .timeout(POST_TIMEOUT);
        let stop = self.stop.clone();
        async move {
            if stop.is_cancelled() {
                return Err(SseTransportError("the SSE stream is closed".into()));
            }
            let body =
                serde_json::to_vec(&item).map_err(|e| SseTransportError(format!("cannot encode the message: {e}")))?;
            let resp = req.body(body).send().await.map_err(|e| {
                SseTransportError(format!(
                    "POST to the message endpoint failed: {}",
                    crate::base::redact::redact(&error_chain(&e))
                ))
            })?;
            let status = resp.status();
            if status.is_success() {
                return Ok(());
            }
            if matches!(status, StatusCode::NOT_FOUND | StatusCode::GONE) {
                // The server no longer knows this session: the connection is over. Close a
                // moment later, so rmcp hands this error to the caller before it sees the close.
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    stop.cancel();
                });
            }
            let text = resp.text().await.unwrap_or_default();
            let text: String = text.chars().take(200).collect();
            Err(SseTransportError(format!(
                "the message endpoint answered {status}: {}",
                crate::base::redact::redact(text.trim())
            )))
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.inbox.recv()
    }

    async fn close(&mut self) -> std::result::Result<(), Self::Error> {
        self.stop.cancel();
        self.inbox.close();
        Ok(())
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

/// The record's headers as a header map (names and values checked).
fn header_map(headers: &HashMap<String, String>) -> Result<HeaderMap> {
    let mut out = HeaderMap::new();
    for (k, v) in headers {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| Error::invalid("mcp.invalid_header", format!("`{k}` is not a valid header name")))?;
        let mut value = HeaderValue::from_str(v).map_err(|_| {
            Error::invalid("mcp.invalid_header", format!("the value of `{k}` is not a valid header value"))
        })?;
        value.set_sensitive(true);
        out.insert(name, value);
    }
    Ok(out)
}

/// Resolve the `endpoint` event's data against the SSE URL; it must stay on the same origin.
pub fn resolve_endpoint(sse_url: &Url, data: &str, code: &'static str) -> Result<Url> {
    let data = data.trim();
    if data.is_empty() {
        return Err(Error::new(code, Kind::BadGateway, format!("{sse_url} sent an empty endpoint event")));
    }
    let endpoint = sse_url.join(data).map_err(|e| {
        Error::new(code, Kind::BadGateway, format!("{sse_url} sent an endpoint that is not a URL ({e})"))
    })?;
    if endpoint.origin() != sse_url.origin() {
        return Err(Error::new(
            code,
            Kind::BadGateway,
            format!(
                "{sse_url} told us to post messages to another origin ({}); refused, so the server's \
                 headers and credentials are not sent there",
                endpoint.origin().ascii_serialization()
            ),
        ));
    }
    Ok(endpoint)
}

/// An HTTP client with hal0's TLS trust (and the record's `ca_file`) that follows
/// redirects only within the origin a request started on.
fn http_client(ca_file: Option<&std::path::Path>) -> Result<reqwest::Client> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
        if same && attempt.previous().len() <= MAX_REDIRECTS { attempt.follow() } else { attempt.stop() }
    });
    crate::base::outbound::build(
        crate::base::outbound::builder(ca_file)?.redirect(policy).connect_timeout(ENDPOINT_TIMEOUT),
    )
}

/// The JSON-RPC messages in one `message` event (a single message or a batch); anything else
/// is logged and dropped.
fn decode(data: &str) -> Vec<ServerJsonRpcMessage> {
    if let Ok(m) = serde_json::from_str::<ServerJsonRpcMessage>(data) {
        return vec![m];
    }
    match serde_json::from_str::<Vec<ServerJsonRpcMessage>>(data) {
        Ok(batch) => batch,
        Err(e) => {
            tracing::warn!(bytes = data.len(), error = %e, "dropped an SSE message that is not JSON-RPC");
            Vec::new()
        }
    }
}

/// Read the stream until it ends, breaks, or `stop`; then cancel `stop` (the transport is
/// closed from then on) and drop `inbox`, so rmcp's receive sees the end.
async fn read_stream(
    resp: reqwest::Response,
    mut endpoint: Option<oneshot::Sender<String>>,
    inbox: mpsc::Sender<ServerJsonRpcMessage>,
    stop: CancellationToken,
    url: String,
) {
    let pump = async {
        let mut bytes = resp.bytes_stream();
        let mut parser = SseParser::new();
        loop {
            let chunk = match bytes.next().await {
                None => {
                    tracing::info!(url = %url, "the SSE stream ended");
                    return;
                }
                Some(Err(e)) => {
                    tracing::warn!(url = %url, error = %error_chain(&e), "the SSE stream broke");
                    return;
                }
                Some(Ok(c)) => c,
            };
            // Past the limit: the events completed before it are still delivered, then the stream closes.
            let (events, oversize) = match parser.push(&chunk) {
                Ok(events) => (events, false),
                Err(o) => (o.before, true),
            };
            for ev in events {
                match ev.event.as_str() {
                    "endpoint" => match endpoint.take() {
                        Some(tx) => {
                            let _ = tx.send(ev.data);
                        }
                        None => tracing::debug!(url = %url, "ignored a repeated endpoint event"),
                    },
                    "message" => {
                        for m in decode(&ev.data) {
                            if inbox.send(m).await.is_err() {
                                return;
                            }
                        }
                    }
                    other => tracing::debug!(url = %url, event = %other, "ignored an SSE event"),
                }
            }
            if oversize {
                tracing::warn!(url = %url, limit = MAX_EVENT_BYTES, "an SSE event was too large; closing");
                return;
            }
        }
    };
    tokio::select! {
        _ = pump => {}
        _ = stop.cancelled() => {}
    }
    stop.cancel();
}

/// Open the SSE stream at `url` with `headers` (sent on the `GET` and on every `POST`), wait up
/// to [`ENDPOINT_TIMEOUT`] for the `endpoint` event and return the transport. Failures of the
/// server carry `code` (e.g. `mcp.probe_failed`, `mcp.upstream_failed`; 502); a bad URL is
/// `mcp.invalid_url` and a bad header `mcp.invalid_header` (400).
pub async fn connect(
    url: &str,
    headers: &HashMap<String, String>,
    code: &'static str,
    ca_file: Option<&std::path::Path>,
) -> Result<SseClientTransport> {
    connect_within(url, headers, code, ENDPOINT_TIMEOUT, ca_file).await
}

async fn connect_within(
    url: &str,
    headers: &HashMap<String, String>,
    code: &'static str,
    wait: Duration,
    ca_file: Option<&std::path::Path>,
) -> Result<SseClientTransport> {
    let sse_url =
        Url::parse(url).ok().filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some()).ok_or_else(
            || Error::invalid("mcp.invalid_url", format!("`{url}` is not an http:// or https:// URL with a host")),
        )?;
    let hdrs = header_map(headers)?;
    let http = http_client(ca_file)?;
    let fail = |what: String| Error::new(code, Kind::BadGateway, format!("{sse_url} {what}"));
    let stop = CancellationToken::new();
    // Any early return below drops the guard, which stops the reader task.
    let guard = stop.clone().drop_guard();
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let (inbox_tx, inbox) = mpsc::channel(INBOX);
    let opening = async {
        let resp = http
            .get(sse_url.clone())
            .headers(hdrs.clone())
            .header(ACCEPT, "text/event-stream")
            .header(CACHE_CONTROL, "no-cache")
            .send()
            .await
            .map_err(|e| {
                let text = error_chain(&e);
                crate::base::outbound::tls_error(sse_url.as_str(), &text).unwrap_or_else(|| {
                    fail(format!(
                        "does not answer (is the server running? is the url right?): {}",
                        crate::base::redact::redact(&text)
                    ))
                })
            })?;
        let status = resp.status();
        if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            return Err(fail(format!("refused our credentials ({status}; check the record's [secrets] and api.env)")));
        }
        if !status.is_success() {
            return Err(fail(format!("answered {status} to the SSE GET (is this a legacy SSE endpoint?)")));
        }
        let ctype = resp.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        if !ctype.to_ascii_lowercase().starts_with("text/event-stream") {
            return Err(fail(format!(
                "did not answer with an SSE stream (content-type `{ctype}`); if it is a streamable-http \
                 server, install it with that transport"
            )));
        }
        tokio::spawn(read_stream(resp, Some(endpoint_tx), inbox_tx, stop.clone(), sse_url.to_string()));
        endpoint_rx.await.map_err(|_| fail("closed the SSE stream before sending its endpoint event".into()))
    };
    let data = tokio::time::timeout(wait, opening).await.map_err(|_| {
        let secs = wait.as_secs_f64();
        fail(format!("did not send its endpoint event within {secs} s (is this a legacy SSE endpoint?)"))
    })??;
    let endpoint = resolve_endpoint(&sse_url, &data, code)?;
    tracing::debug!(url = %sse_url, endpoint = %endpoint, "legacy SSE session open");
    Ok(SseClientTransport { http, endpoint, headers: hdrs, inbox, stop, _guard: guard })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::{Body, Bytes};
    use axum::extract::{Query, State};
    use axum::http::{HeaderMap as AxHeaders, StatusCode as AxStatus};
    use axum::response::{IntoResponse, Response};
    use axum::routing::{get, post};
    use futures::channel::mpsc as fmpsc;
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use serde_json::{Value, json};
    use std::sync::{Arc, Mutex};

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.push(c).unwrap());
        }
        out
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent { event: event.into(), data: data.into() }
    }

    #[test]
    fn parser_line_endings_comments_and_multiline_data() {
        let text = b": keep-alive\r\n\r\nevent: endpoint\r\ndata: /messages/?session_id=1\r\n\r\n\
                     data:{\"a\":\ndata:  1}\n\n:ping\r\revent:message\rdata: x\r\r";
        let want = vec![ev("endpoint", "/messages/?session_id=1"), ev("message", "{\"a\":\n 1}"), ev("message", "x")];
        assert_eq!(all(&[text]), want);
        // The same bytes one at a time (every `\r` | `\n` split between chunks).
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(all(&bytes), want);
        // And in uneven chunks.
        let bytes: Vec<&[u8]> = text.chunks(7).collect();
        assert_eq!(all(&bytes), want);
    }

    #[test]
    fn parser_edge_cases() {
        // No data: not dispatched, and the event type does not leak into the next event.
        assert_eq!(all(&[b"event: endpoint\n\ndata: y\n\n"]), vec![ev("message", "y")]);
        // An empty `data` line is an event with empty data; a field without a colon is empty.
        assert_eq!(all(&[b"data\n\ndata:\n\n"]), vec![ev("message", ""), ev("message", "")]);
        // id / retry / unknown fields ignored; only one leading space stripped.
        assert_eq!(all(&[b"id: 7\nretry: 10\nfoo: bar\ndata:   two\n\n"]), vec![ev("message", "  two")]);
        // A BOM at the start (even split) is skipped; elsewhere it is data.
        assert_eq!(all(&[b"\xEF\xBB", b"\xBFdata: a\n\n"]), vec![ev("message", "a")]);
        assert_eq!(all(&[b"\xEFdata: a\n\n"]), vec![]);
        // An incomplete event at the end is not dispatched.
        assert_eq!(all(&[b"data: a\n"]), vec![]);
        // Garbage: invalid UTF-8, NULs, lone CRs; no panic, lossy text.
        let out = all(&[b"\xFF\xFE\x00\r\n\r\ndata: \xC3\n\n\r\r\r"]);
        assert_eq!(out, vec![ev("message", "\u{FFFD}")]);
        // Oversize lines are refused, not buffered forever.
        let mut p = SseParser::new();
        let big = vec![b'x'; MAX_EVENT_BYTES / 4 + 1];
        let mut refused = false;
        for _ in 0..5 {
            if p.push(&big).is_err() {
                refused = true;
                break;
            }
        }
        assert!(refused);
    }

    #[test]
    fn endpoint_resolution_and_origin() {
        let sse = Url::parse("http://127.0.0.1:9000/a/sse?x=1").unwrap();
        let r = |d: &str| resolve_endpoint(&sse, d, "mcp.probe_failed");
        assert_eq!(r("/messages/?session_id=ab").unwrap().as_str(), "http://127.0.0.1:9000/messages/?session_id=ab");
        assert_eq!(r("messages?s=1").unwrap().as_str(), "http://127.0.0.1:9000/a/messages?s=1");
        assert_eq!(r(" http://127.0.0.1:9000/m ").unwrap().as_str(), "http://127.0.0.1:9000/m");
        for bad in ["http://evil.example/m", "//evil.example/m", "https://127.0.0.1:9000/m", "http://127.0.0.1:9001/m"]
        {
            let e = r(bad).unwrap_err();
            assert_eq!(e.code, "mcp.probe_failed");
            assert!(e.message.contains("another origin"), "{bad}: {}", e.message);
        }
        assert!(r("").unwrap_err().message.contains("empty"));
        assert!(r("http://[::1").is_err());
    }

    // --- A tiny legacy-SSE MCP server ---------------------------------------------------

    #[derive(Clone, Copy, PartialEq)]
    enum Mode {
        /// A working server (endpoint relative, keep-alives, multi-line data, garbage).
        Good,
        /// Endpoint on another origin.
        CrossOrigin,
        /// Keep-alives only, never an endpoint.
        Silent,
        /// A JSON answer, not an event stream.
        NotSse,
    }

    struct Srv {
        mode: Mode,
        stream: Option<fmpsc::UnboundedSender<std::result::Result<Bytes, std::io::Error>>>,
        /// (method, authorization, x-api-key) of every request.
        seen: Vec<(String, Option<String>, Option<String>)>,
        posts: usize,
        /// Answer every POST 404 (the session is gone) while the stream stays open.
        forgotten: bool,
    }

    type Shared = Arc<Mutex<Srv>>;

    fn note(s: &Shared, method: &str, h: &AxHeaders) {
        let get = |n: &str| h.get(n).and_then(|v| v.to_str().ok()).map(str::to_string);
        s.lock().unwrap().seen.push((method.into(), get("authorization"), get("x-api-key")));
    }

    async fn sse_get(State(s): State<Shared>, h: AxHeaders) -> Response {
        note(&s, "GET", &h);
        let (tx, rx) = fmpsc::unbounded();
        let mode = s.lock().unwrap().mode;
        let first: &[u8] = match mode {
            Mode::NotSse => return axum::Json(json!({"not": "sse"})).into_response(),
            Mode::Good => {
                b"\xEF\xBB\xBF: hello\r\n\r\nretry: 100\r\nevent: endpoint\r\ndata: messages?session=1\r\n\r\n"
            }
            Mode::CrossOrigin => b"event: endpoint\ndata: http://other.invalid:9/messages?session=1\n\n",
            Mode::Silent => b": ping\n\n",
        };
        // Split the opening bytes so a chunk boundary falls inside `\r\n`.
        for c in first.chunks(5) {
            tx.unbounded_send(Ok(Bytes::copy_from_slice(c))).unwrap();
        }
        s.lock().unwrap().stream = Some(tx);
        Response::builder().header("content-type", "text/event-stream").body(Body::from_stream(rx)).unwrap()
    }

    fn answer(req: &Value) -> Option<Value> {
        let id = req.get("id")?.clone();
        let result = match req["method"].as_str()? {
            "initialize" => json!({
                "protocolVersion": "2024-11-05",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "tiny-sse", "version": "1.0"}
            }),
            "tools/list" => json!({"tools": [{
                "name": "echo",
                "description": "echo\nwith a newline",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}
            }]}),
            "tools/call" => json!({"content": [{"type": "text", "text": req["params"]["arguments"]["text"]}]}),
            _ => return Some(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})),
        };
        Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    async fn sse_post(
        State(s): State<Shared>,
        Query(q): Query<HashMap<String, String>>,
        h: AxHeaders,
        body: String,
    ) -> AxStatus {
        note(&s, "POST", &h);
        if q.get("session").map(String::as_str) != Some("1") || s.lock().unwrap().forgotten {
            return AxStatus::NOT_FOUND;
        }
        let Ok(req) = serde_json::from_str::<Value>(&body) else { return AxStatus::BAD_REQUEST };
        let mut g = s.lock().unwrap();
        g.posts += 1;
        let Some(tx) = g.stream.clone() else { return AxStatus::NOT_FOUND };
        if let Some(resp) = answer(&req) {
            // Garbage first, then the answer as multi-line data with mixed line ends, in
            // small chunks, with keep-alives around it.
            let mut out = b"event: message\ndata: {not json\n\nevent: surprise\ndata: x\n\n: keep-alive\n\n".to_vec();
            out.extend_from_slice(b"event: message\r\n");
            let pretty = serde_json::to_string_pretty(&resp).unwrap();
            for (i, line) in pretty.lines().enumerate() {
                out.extend_from_slice(format!("data: {line}{}", if i % 2 == 0 { "\r\n" } else { "\n" }).as_bytes());
            }
            out.extend_from_slice(b"\r\n: after\n\n");
            for c in out.chunks(11) {
                let _ = tx.unbounded_send(Ok(Bytes::copy_from_slice(c)));
            }
        }
        AxStatus::ACCEPTED
    }

    async fn tiny(mode: Mode) -> (String, Shared) {
        let s: Shared = Arc::new(Mutex::new(Srv { mode, stream: None, seen: Vec::new(), posts: 0, forgotten: false }));
        let app =
            axum::Router::new().route("/sse", get(sse_get)).route("/messages", post(sse_post)).with_state(s.clone());
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/sse", l.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
        (url, s)
    }

    fn creds() -> HashMap<String, String> {
        HashMap::from([("Authorization".to_string(), "Bearer t0k".to_string()), ("X-API-Key".into(), "k1".into())])
    }

    #[tokio::test]
    async fn rmcp_client_over_a_tiny_sse_server() {
        let (url, s) = tiny(Mode::Good).await;
        let t = connect(&url, &creds(), "mcp.probe_failed", None).await.unwrap();
        assert_eq!(t.endpoint().path(), "/messages");
        let client = tokio::time::timeout(Duration::from_secs(10), ().serve(t)).await.unwrap().unwrap();
        assert_eq!(client.peer_info().unwrap().server_info.as_ref().unwrap().name, "tiny-sse");
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].description.as_deref(), Some("echo\nwith a newline"));
        let args = json!({"text": "hi over sse"}).as_object().unwrap().clone();
        let r = client.call_tool(CallToolRequestParams::new("echo").with_arguments(args)).await.unwrap();
        assert_eq!(r.content[0].as_text().unwrap().text, "hi over sse");

        {
            let g = s.lock().unwrap();
            assert!(g.posts >= 4, "initialize, initialized, tools/list, tools/call: {}", g.posts);
            assert!(g.seen.iter().any(|(m, ..)| m == "GET") && g.seen.iter().any(|(m, ..)| m == "POST"));
            for (m, auth, key) in &g.seen {
                assert_eq!(auth.as_deref(), Some("Bearer t0k"), "{m}");
                assert_eq!(key.as_deref(), Some("k1"), "{m}");
            }
        }

        // The server ends the stream: rmcp sees the connection closed.
        s.lock().unwrap().stream = None;
        let quit = tokio::time::timeout(Duration::from_secs(5), client.waiting()).await.expect("closed");
        assert!(matches!(quit, Ok(rmcp::service::QuitReason::Closed)), "{quit:?}");
    }

    #[tokio::test]
    async fn a_forgotten_session_closes_the_transport() {
        let (url, s) = tiny(Mode::Good).await;
        let client = ().serve(connect(&url, &HashMap::new(), "mcp.probe_failed", None).await.unwrap()).await.unwrap();
        // The server forgets the session (its stream stays open): the next POST is 404, the
        // call fails with that status, and the transport closes.
        s.lock().unwrap().forgotten = true;
        let e = client.list_all_tools().await.unwrap_err().to_string();
        assert!(e.contains("404") || e.to_lowercase().contains("closed"), "{e}");
        let quit = tokio::time::timeout(Duration::from_secs(5), client.waiting()).await.expect("closed");
        assert!(matches!(quit, Ok(rmcp::service::QuitReason::Closed)), "{quit:?}");
        assert!(s.lock().unwrap().stream.is_some());
    }

    #[tokio::test]
    async fn cross_origin_endpoint_is_refused() {
        let (url, s) = tiny(Mode::CrossOrigin).await;
        let e = connect(&url, &creds(), "mcp.probe_failed", None).await.unwrap_err();
        assert_eq!((e.code, e.status()), ("mcp.probe_failed", 502));
        assert!(e.message.contains("another origin") && e.message.contains("http://other.invalid:9"), "{}", e.message);
        assert!(!e.message.contains("t0k"), "{}", e.message);
        assert_eq!(s.lock().unwrap().posts, 0);
    }

    #[tokio::test]
    async fn clear_errors() {
        let (url, _s) = tiny(Mode::Silent).await;
        let e = connect_within(&url, &HashMap::new(), "mcp.upstream_failed", Duration::from_millis(300), None).await;
        let e = e.unwrap_err();
        assert_eq!(e.code, "mcp.upstream_failed");
        assert!(e.message.contains("endpoint event within"), "{}", e.message);

        let (url, _s) = tiny(Mode::NotSse).await;
        let e = connect(&url, &HashMap::new(), "mcp.probe_failed", None).await.unwrap_err();
        assert!(e.message.contains("content-type `application/json`"), "{}", e.message);

        let e = connect(&url.replace("/sse", "/nope"), &HashMap::new(), "mcp.probe_failed", None).await.unwrap_err();
        assert!(e.message.contains("404"), "{}", e.message);

        let e = connect("http://127.0.0.1:1/sse", &HashMap::new(), "mcp.probe_failed", None).await.unwrap_err();
        assert!(e.message.contains("does not answer"), "{}", e.message);

        assert_eq!(connect("ftp://x/sse", &HashMap::new(), "c", None).await.unwrap_err().code, "mcp.invalid_url");
        let bad = HashMap::from([("bad header".to_string(), "v".to_string())]);
        assert_eq!(connect(&url, &bad, "c", None).await.unwrap_err().code, "mcp.invalid_header");
        let bad = HashMap::from([("X-Ok".to_string(), "line\nbreak".to_string())]);
        assert_eq!(connect(&url, &bad, "c", None).await.unwrap_err().code, "mcp.invalid_header");
    }
}
