//! `GET /metrics`: the daemon's Prometheus metrics (admin tier, like every other route but
//! the open ones), with what is read at scrape time taken from the store and the session
//! table first. The metrics themselves live in `crate::metrics`.

use super::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Pending approvals and runs by status, counted in the store.
fn counts(s: &crate::store::Store) -> crate::error::Result<(i64, Vec<(String, i64)>)> {
    s.with(|c| {
        let pending: i64 = c.query_row("SELECT COUNT(*) FROM approvals WHERE status = 'pending'", [], |r| r.get(0))?;
        let mut st = c.prepare_cached("SELECT status, COUNT(*) FROM runs GROUP BY status ORDER BY status")?;
        let runs = st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok((pending, runs))
    })
}

pub async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let (approvals_pending, runs) = match state.store.call(counts).await {
        Ok(x) => x,
        Err(e) => return e.into_response(),
    };
    let now = crate::metrics::Snapshot { sessions: state.sessions.count(), approvals_pending, runs };
    ([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], crate::metrics::render(now)).into_response()
}
