//! One id per HTTP request: taken from the caller's `X-Request-Id` when it is a plain token
//! (at most 64 of `A-Z a-z 0-9 . _ -`), otherwise made here. Every log line written while
//! the request is handled carries it (the `req{id=…}` span), and the response returns it in
//! `X-Request-Id`, so an operator can match a client's report to `journalctl -u hal0`.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use tracing::Instrument;

pub const HEADER: &str = "x-request-id";

/// A caller's id is used as is only when it is a short plain token (nothing to escape in
/// a log line or a header).
fn usable(v: &HeaderValue) -> Option<&str> {
    let s = v.to_str().ok()?;
    (!s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))).then_some(s)
}

/// A new id: this process's random prefix and a counter (unique per daemon start, cheap).
fn fresh() -> String {
    static PREFIX: OnceLock<u32> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let prefix = PREFIX.get_or_init(|| {
        let mut b = [0u8; 4];
        let _ = getrandom::fill(&mut b);
        u32::from_le_bytes(b)
    });
    format!("{prefix:08x}-{:x}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The middleware: run the request inside its span and return the id.
pub async fn layer(req: Request, next: Next) -> Response {
    let id = req.headers().get(HEADER).and_then(usable).map(str::to_owned).unwrap_or_else(fresh);
    let span = tracing::info_span!("req", id = %id);
    let mut resp = next.run(req).instrument(span).await;
    if let Ok(v) = HeaderValue::from_str(&id) {
        resp.headers_mut().insert(HEADER, v);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_tokens_are_taken_from_the_caller() {
        assert_eq!(usable(&HeaderValue::from_static("ci-run_42.7")), Some("ci-run_42.7"));
        for bad in ["", "a b", "x\"y", "{json}", "a/b"] {
            assert_eq!(usable(&HeaderValue::from_str(bad).unwrap()), None, "{bad:?}");
        }
        assert_eq!(usable(&HeaderValue::from_str(&"a".repeat(65)).unwrap()), None);
        let (a, b) = (fresh(), fresh());
        assert_ne!(a, b);
        assert!(usable(&HeaderValue::from_str(&a).unwrap()).is_some());
    }
}
