//! A connection that cannot be reused says so. When hal0 answers before it has read a
//! request's body (a refusal at the guard, a 404 for a POST), hyper closes the connection
//! after the answer, without a `Connection: close` header; a client that sends its next
//! request on that pooled connection at that moment sees it dropped with no response
//! (httpx: "Server disconnected without sending a response"). This layer watches whether
//! the body was read to its end and, when it was not, adds `Connection: close`, so the
//! client opens a new connection instead.

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The layer (outside the guard, so its refusals are covered too).
pub async fn layer(req: Request, next: Next) -> Response {
    let h = req.headers();
    let has_body = h.contains_key(header::TRANSFER_ENCODING)
        || h.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).is_some_and(|v| v.trim() != "0");
    if !has_body {
        return next.run(req).await;
    }
    let read = Arc::new(AtomicBool::new(false));
    let (parts, body) = req.into_parts();
    let seen = read.clone();
    let mut data = body.into_data_stream();
    let watched = futures::stream::poll_fn(move |cx| {
        let polled = data.poll_next_unpin(cx);
        if let std::task::Poll::Ready(None) = polled {
            seen.store(true, Ordering::Release);
        }
        polled
    });
    let mut resp = next.run(Request::from_parts(parts, axum::body::Body::from_stream(watched))).await;
    if !read.load(Ordering::Acquire) {
        resp.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}
