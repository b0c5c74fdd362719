//! `GET /metrics`: the daemon's Prometheus metrics (admin tier, like every other route but
//! the open ones), with what is read at scrape time taken from the store
//! ([`crate::ops::status::metrics_text`]) and the session table first. The metrics
//! themselves live in `crate::base::observe::metrics`.

use super::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

pub async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    match crate::ops::status::metrics_text(&state.store, state.sessions.count()).await {
        Ok(text) => ([(header::CONTENT_TYPE, crate::base::observe::metrics::CONTENT_TYPE)], text).into_response(),
        Err(e) => e.into_response(),
    }
}
