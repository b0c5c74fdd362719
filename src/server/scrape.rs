//! `GET /metrics`: the daemon's Prometheus metrics (admin tier, like every other route but
//! the open ones), with what is read at scrape time taken from the store and the session
//! table first. The metrics themselves live in `crate::observe::metrics`.

use super::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

pub async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let counts = state
        .store
        .call(|s| Ok((crate::approvals::count_pending(s)?, crate::bridge::ledger::count_by_status(s)?)))
        .await;
    let (approvals_pending, runs) = match counts {
        Ok(x) => x,
        Err(e) => return e.into_response(),
    };
    let now = crate::observe::metrics::Snapshot { sessions: state.sessions.count(), approvals_pending, runs };
    ([(header::CONTENT_TYPE, crate::observe::metrics::CONTENT_TYPE)], crate::observe::metrics::render(now))
        .into_response()
}
