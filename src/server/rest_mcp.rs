//! `GET /api/mcp/stream`: the `mcp.tool.*` event stream, the one registry route that is not
//! an operation (it answers for as long as the client listens).

use super::AppState;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;

/// How often the event stream looks for new audit rows.
const STREAM_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// `GET /api/mcp/stream`: SSE of `mcp.tool.<verdict>` events, one per new MCP audit row.
pub async fn stream(State(state): State<Arc<AppState>>) -> Response {
    use axum::response::sse::{Event, KeepAlive, Sse};
    let store = state.store.clone();
    crate::audit::flush(&store).await;
    let start = match store.call(crate::audit::last_id).await {
        Ok(n) => n,
        Err(e) => return e.into_response(),
    };
    let s = futures::stream::unfold(
        (store, start, std::collections::VecDeque::new()),
        |(store, mut last, mut q)| async move {
            loop {
                if let Some(row) = q.pop_front() {
                    return Some((Ok::<Event, std::convert::Infallible>(row), (store, last, q)));
                }
                tokio::time::sleep(STREAM_POLL).await;
                let after = last;
                let rows = store
                    .call(move |s| crate::audit::by_surface(s, "mcp:", Some(after), 200))
                    .await
                    .unwrap_or_default();
                for r in rows {
                    last = last.max(r.id);
                    let mut v = json!(r);
                    crate::base::redact::redact_json(&mut v);
                    let ev = Event::default()
                        .event(format!("mcp.tool.{}", r.verdict))
                        .id(r.id.to_string())
                        .data(v.to_string());
                    q.push_back(ev);
                }
            }
        },
    );
    Sse::new(s).keep_alive(KeepAlive::default()).into_response()
}
