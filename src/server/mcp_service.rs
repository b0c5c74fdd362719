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

/// An MCP server's streamable-HTTP endpoint, cheap to clone.
pub struct McpService<H>(Arc<StreamableHttpService<H, LocalSessionManager>>);

impl<H> Clone for McpService<H> {
    fn clone(&self) -> Self {
        McpService(self.0.clone())
    }
}

impl<H: ServerHandler + Send + 'static> McpService<H> {
    /// The endpoint of the server `make` builds for each new session, with hal0's sessions
    /// and configuration.
    pub fn new(state: &Arc<AppState>, cancel: &CancellationToken, make: fn(Arc<AppState>) -> H) -> Self {
        let st = state.clone();
        let svc = StreamableHttpService::new(
            move || Ok(make(st.clone())),
            state.sessions.manager(),
            super::mcp_config(state, cancel),
        );
        McpService(Arc::new(svc))
    }
}

impl<H: ServerHandler + Send + 'static> tower_service::Service<Request> for McpService<H> {
    type Response = axum::response::Response<http_body_util::combinators::BoxBody<axum::body::Bytes, Infallible>>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let svc = self.0.clone();
        Box::pin(async move { Ok(svc.handle(req).await) })
    }
}
