//! The MCP side of [`crate::base::progress`]: a request whose `_meta` carries a `progressToken`
//! gets its long waits reported as `notifications/progress` for that token, on the request's
//! own stream, every `[mcp].progress_secs`. A request without a token gets none (the spec
//! allows progress only for a token the client chose).

use crate::base::progress::{Listener, Progress};
use futures::future::BoxFuture;
use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use std::sync::Arc;
use std::time::Duration;

struct PeerProgress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl Listener for PeerProgress {
    fn report(&self, progress: f64, total: f64, message: String) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let p =
                ProgressNotificationParam::new(self.token.clone(), progress).with_total(total).with_message(message);
            if let Err(e) = self.peer.notify_progress(p).await {
                tracing::debug!("cannot send a progress notification: {e}");
            }
        })
    }
}

/// The progress reporting the request behind `ctx` asked for, a report at least `every`
/// (`[mcp].progress_secs`).
pub fn of(ctx: &RequestContext<RoleServer>, every: Duration) -> Progress {
    match ctx.meta.get_progress_token() {
        Some(token) => Progress::to(Arc::new(PeerProgress { peer: ctx.peer.clone(), token }), every),
        None => Progress::none(),
    }
}
