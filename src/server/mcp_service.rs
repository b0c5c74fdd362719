//! The tower service behind each MCP mount: one rmcp `StreamableHttpService` shared by
//! reference. axum clones a nested service for every request (several times, through its
//! boxed layers), and rmcp's own `Service::call` clones it once more; each clone copies its
//! configuration (the allowed-origin strings). Here a clone is one reference count.

use super::AppState;
use axum::extract::Request;
use futures::future::BoxFuture;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio_util::sync::CancellationToken;

type Rmcp<H> = Arc<StreamableHttpService<H, LocalSessionManager>>;

/// An MCP server's streamable-HTTP endpoint, cheap to clone: the sessions of MCP clients,
/// and (on hal0's own mounts) a sessionless JSON answer for a plain HTTP client.
pub struct McpService<H> {
    sessions: Rmcp<H>,
    /// Serves a POST without a session from a client that takes no event stream (the
    /// spec's `curl … tools/list` check): a fresh server for that one request, answered
    /// as JSON.
    plain: Option<Rmcp<H>>,
}

impl<H> Clone for McpService<H> {
    fn clone(&self) -> Self {
        McpService { sessions: self.sessions.clone(), plain: self.plain.clone() }
    }
}

impl<H: ServerHandler + Send + 'static> McpService<H> {
    /// The endpoint of the server `make` builds for each new session, with hal0's sessions
    /// and configuration, which also answers a plain JSON POST without a session.
    pub fn new(state: &Arc<AppState>, cancel: &CancellationToken, make: fn(Arc<AppState>) -> H) -> Self {
        let mut svc = Self::sessions_only(state, cancel, make);
        let st = state.clone();
        let cfg = super::mcp_config(state, cancel).with_legacy_session_mode(false).with_json_response(true);
        svc.plain =
            Some(Arc::new(StreamableHttpService::new(move || Ok(make(st.clone())), state.sessions.manager(), cfg)));
        svc
    }

    /// The endpoint with sessions only (the proxy: a consumer's calls belong to its session).
    pub fn sessions_only(state: &Arc<AppState>, cancel: &CancellationToken, make: fn(Arc<AppState>) -> H) -> Self {
        let st = state.clone();
        let svc = StreamableHttpService::new(
            move || Ok(make(st.clone())),
            state.sessions.manager(),
            super::mcp_config(state, cancel),
        );
        McpService { sessions: Arc::new(svc), plain: None }
    }
}

/// A POST with no session from a client that does not take an event stream: it gets the
/// sessionless answer, its `Accept` completed as rmcp wants it (JSON comes back unless the
/// call streams).
fn plain_request(req: &mut Request) -> bool {
    use axum::http::header::ACCEPT;
    let h = req.headers();
    let sse = h.get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok()).any(|v| v.contains("text/event-stream"));
    if req.method() != axum::http::Method::POST || h.contains_key("mcp-session-id") || sse {
        return false;
    }
    req.headers_mut().insert(ACCEPT, axum::http::HeaderValue::from_static("application/json, text/event-stream"));
    true
}

/// The proxy's mount (`/mcp/proxy/<id>/mcp`): a consumer's POST that the wire path
/// ([`crate::proxy::wire_path`]) serves is answered there; every other request goes to the
/// consumer's rmcp session.
#[derive(Clone)]
pub struct ProxyMount {
    inner: McpService<crate::mcp::proxy::ProxyServer>,
    state: Arc<AppState>,
}

impl ProxyMount {
    pub fn new(state: &Arc<AppState>, cancel: &CancellationToken) -> Self {
        ProxyMount {
            inner: McpService::sessions_only(state, cancel, crate::mcp::proxy::ProxyServer::new),
            state: state.clone(),
        }
    }
}

type Answer = axum::response::Response;

/// Whether rmcp would take `h` at the HTTP level: a JSON body, an `Accept` naming JSON
/// and SSE, a known `MCP-Protocol-Version` if any. Anything else is left to rmcp, which
/// answers it with its own refusal (406, 415, 400), as on every mount.
fn well_formed(h: &axum::http::HeaderMap) -> bool {
    use axum::http::header::{ACCEPT, CONTENT_TYPE};
    let essence = |v: &str| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let json = h.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| essence(v) == "application/json");
    let accepts: Vec<String> =
        h.get_all(ACCEPT).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).map(essence).collect();
    let accepted = ["application/json", "text/event-stream"].iter().all(|m| accepts.iter().any(|a| a == m));
    let version = h.get("mcp-protocol-version").is_none_or(|v| {
        v.to_str().is_ok_and(|v| rmcp::model::ProtocolVersion::KNOWN_VERSIONS.iter().any(|k| k.as_str() == v))
    });
    json && accepted && version
}

/// What rmcp is to be given: the request, and whether its answer is the `initialize`
/// result that gets the `tasks` capability ([`crate::proxy::tasks`]).
struct ForRmcp(Request, bool);

/// The wire path's answer to `req`, or `req` back for rmcp.
async fn wire(state: &AppState, req: Request) -> Result<Answer, ForRmcp> {
    use crate::proxy::wire_path::Answer as Wire;
    let sid = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    let target = req.extensions().get::<crate::mcp::proxy::ProxyTarget>().cloned();
    let post = req.method() == axum::http::Method::POST && well_formed(req.headers());
    let (Some(sid), Some(target), true) = (sid, target.clone(), post) else {
        let http = target.is_some_and(|t| t.0.record.transport == crate::registry::Transport::StreamableHttp);
        // A request of a protocol without sessions names its version; an `initialize` of
        // 2025-11-25 names none, or that one.
        let version = req.headers().get("mcp-protocol-version").and_then(|v| v.to_str().ok());
        if !(http && post && version.is_none_or(|v| v == "2025-11-25")) {
            return Err(ForRmcp(req, false));
        }
        // A session's first request: is it the `initialize` whose answer declares tasks?
        let (parts, body) = req.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
            return Err(ForRmcp(Request::from_parts(parts, axum::body::Body::empty()), false));
        };
        let init = crate::proxy::tasks::is_initialize(&bytes);
        return Err(ForRmcp(Request::from_parts(parts, axum::body::Body::from(bytes)), init));
    };
    let who = crate::mcp::proxy::who_of(req.extensions().get::<super::guard::Caller>());
    let (parts, body) = req.into_parts();
    // The guard has read the body already: this is a copy out of memory.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Err(ForRmcp(Request::from_parts(parts, axum::body::Body::empty()), false));
    };
    match state.proxy.wire(&target.0, &sid, &who.identity, &bytes).await {
        None => Err(ForRmcp(Request::from_parts(parts, axum::body::Body::from(bytes)), false)),
        Some(Wire::Accepted) => {
            let mut r = axum::response::Response::new(axum::body::Body::empty());
            *r.status_mut() = axum::http::StatusCode::ACCEPTED;
            Ok(r)
        }
        Some(Wire::Events(events)) => {
            use futures::StreamExt;
            let body = axum::body::Body::from_stream(events.map(Ok::<_, Infallible>));
            let mut r = axum::response::Response::new(body);
            let h = r.headers_mut();
            h.insert(axum::http::header::CONTENT_TYPE, axum::http::HeaderValue::from_static("text/event-stream"));
            h.insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-cache"));
            Ok(r)
        }
    }
}

impl tower_service::Service<Request> for ProxyMount {
    type Response = Answer;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let (svc, state) = (self.inner.sessions.clone(), self.state.clone());
        Box::pin(async move {
            match wire(&state, req).await {
                Ok(answer) => Ok(answer),
                Err(ForRmcp(req, false)) => Ok(svc.handle(req).await.map(axum::body::Body::new)),
                Err(ForRmcp(req, true)) => {
                    use futures::StreamExt;
                    let answer = svc.handle(req).await.map(axum::body::Body::new);
                    Ok(answer.map(|b| {
                        let chunks = b.into_data_stream().map(|c| c.map(crate::proxy::tasks::declare_tasks));
                        axum::body::Body::from_stream(chunks)
                    }))
                }
            }
        })
    }
}

impl<H: ServerHandler + Send + 'static> tower_service::Service<Request> for McpService<H> {
    type Response = axum::response::Response<http_body_util::combinators::BoxBody<axum::body::Bytes, Infallible>>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        let svc = match &self.plain {
            Some(plain) if plain_request(&mut req) => plain.clone(),
            _ => self.sessions.clone(),
        };
        Box::pin(async move { Ok(svc.handle(req).await) })
    }
}
