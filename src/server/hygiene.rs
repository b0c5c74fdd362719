//! Request hygiene applied by the guard before any handler runs: the Host and Origin
//! allowlists (every route but `/api/health`), the media type of state-changing REST bodies
//! (JSON only, so a cross-site "simple" request can never carry one), and the body read
//! with a size cap and a deadline (a client that trickles its body is cut off).

use super::AppState;
use crate::error::{Error, Kind};
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{Method, header};
use std::time::Duration;

/// The one route any Host and any Origin may reach (liveness probes, load balancers).
pub const OPEN_PATH: &str = "/api/health";

/// The largest request body hal0 reads (REST bodies and MCP messages alike).
pub const MAX_BODY: usize = 16 * 1024 * 1024;

/// Why a request was turned away before reaching its handler.
pub enum Refusal {
    /// A Host this box does not answer to (DNS rebinding): a bare 421.
    Host,
    /// Anything else, as hal0's JSON error.
    Error(Error),
}

/// The `Host` the client named: the header, or the authority of an absolute-form URI.
fn host_of(req: &Request) -> Option<String> {
    req.headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()))
}

/// The Host and Origin checks. Browsers send `Origin` on every cross-origin request that
/// could change state, so a foreign page is refused here whatever it sends; a foreign Host
/// is a DNS-rebinding attempt and gets no answer at all.
pub fn check_origin(state: &AppState, req: &Request) -> Result<(), Refusal> {
    let path = req.uri().path();
    if path == OPEN_PATH {
        return Ok(());
    }
    let host = host_of(req);
    if !state.hosts.host_allowed(host.as_deref()) {
        tracing::info!(path, host = host.as_deref().unwrap_or(""), "refused: host not allowed");
        return Err(Refusal::Host);
    }
    let origin = req.headers().get(header::ORIGIN).map(|v| v.to_str().unwrap_or("\u{0}"));
    if !state.hosts.origin_allowed(origin) {
        tracing::info!(path, "refused: origin not allowed");
        return Err(Refusal::Error(Error::forbidden(
            "this Origin is not allowed: hal0 answers pages served from this box only (add an origin to \
             HAL0_MCP_ALLOWED_ORIGINS to allow another)",
        )));
    }
    Ok(())
}

/// Whether a request of this method may change state.
fn writes(m: &Method) -> bool {
    matches!(*m, Method::POST | Method::PUT | Method::PATCH | Method::DELETE)
}

/// Whether the request says it carries a body.
fn has_body(req: &Request) -> bool {
    let h = req.headers();
    h.contains_key(header::TRANSFER_ENCODING)
        || h.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).is_some_and(|v| v.trim() != "0")
}

/// `application/json` or any `application/<x>+json`, parameters allowed.
pub fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// A state-changing REST request carries JSON or nothing: a `text/plain` or form body (what
/// a cross-site page can send without a CORS preflight) is refused before it is read.
pub fn check_media_type(req: &Request) -> Result<(), Error> {
    let path = req.uri().path();
    if !path.starts_with("/api/") || !writes(req.method()) {
        return Ok(());
    }
    let ct = req.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap_or(""));
    match ct {
        Some(ct) if is_json(ct) => Ok(()),
        None if !has_body(req) => Ok(()),
        Some(ct) => Err(unsupported(&format!("`{ct}`"))),
        None => Err(unsupported("no Content-Type")),
    }
}

fn unsupported(what: &str) -> Error {
    Error::new(
        "request.unsupported_media_type",
        Kind::UnsupportedMedia,
        format!("this route takes a JSON body; the request had {what} (send Content-Type: application/json)"),
    )
}

/// Read the whole body within `deadline` (`[limits].body_timeout_secs`) and [`MAX_BODY`]
/// and put it back, so no handler (nor rmcp) ever waits on a client that trickles bytes.
pub async fn buffer_body(req: Request, deadline: Duration) -> Result<Request, Error> {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) && !has_body(&req) {
        return Ok(req);
    }
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    let (parts, body) = req.into_parts();
    let bytes: Bytes = match tokio::time::timeout(deadline, axum::body::to_bytes(body, MAX_BODY)).await {
        Err(_) => {
            return Err(Error::new(
                "request.body_timeout",
                Kind::RequestTimeout,
                format!("the request body did not arrive within {} s", deadline.as_secs()),
            ));
        }
        Ok(Err(e)) => {
            let limit = std::error::Error::source(&e)
                .is_some_and(|s| s.downcast_ref::<http_body_util::LengthLimitError>().is_some())
                || e.to_string().contains("length limit");
            return Err(if limit {
                too_large()
            } else {
                Error::invalid("request.body_unreadable", format!("the request body could not be read: {e}"))
            });
        }
        Ok(Ok(b)) => b,
    };
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

fn too_large() -> Error {
    Error::new(
        "request.too_large",
        Kind::TooLarge,
        format!("the request body is larger than hal0 accepts ({} MiB)", MAX_BODY / (1024 * 1024)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(5);

    fn req(method: Method, path: &str, headers: &[(&str, &str)]) -> Request {
        let mut b = axum::http::Request::builder().method(method).uri(path);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(Body::empty()).unwrap()
    }

    #[test]
    fn json_media_types() {
        for ok in
            ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"]
        {
            assert!(is_json(ok), "{ok}");
        }
        for bad in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "json"] {
            assert!(!is_json(bad), "{bad}");
        }
    }

    #[test]
    fn writes_need_json_or_nothing() {
        let plain = req(Method::POST, "/api/mcp/install", &[("content-type", "text/plain"), ("content-length", "5")]);
        assert_eq!(check_media_type(&plain).unwrap_err().code, "request.unsupported_media_type");
        let form = req(Method::PUT, "/api/settings", &[("content-type", "application/x-www-form-urlencoded")]);
        assert_eq!(check_media_type(&form).unwrap_err().status(), 415);
        let untyped = req(Method::PATCH, "/api/mcp/x/tools", &[("content-length", "12")]);
        assert!(check_media_type(&untyped).is_err());
        let chunked = req(Method::DELETE, "/api/mcp/x", &[("transfer-encoding", "chunked")]);
        assert!(check_media_type(&chunked).is_err());
        assert!(check_media_type(&req(Method::POST, "/api/mcp/x/start", &[])).is_ok());
        assert!(check_media_type(&req(Method::POST, "/api/mcp/x/start", &[("content-length", "0")])).is_ok());
        let json =
            req(Method::POST, "/api/mcp/install", &[("content-type", "application/json"), ("content-length", "2")]);
        assert!(check_media_type(&json).is_ok());
        // Reads and the MCP mounts (rmcp checks its own media types) are not this rule's.
        assert!(check_media_type(&req(Method::GET, "/api/status", &[("content-type", "text/plain")])).is_ok());
        assert!(check_media_type(&req(Method::POST, "/mcp/agents/mcp", &[("content-type", "text/plain")])).is_ok());
    }

    #[tokio::test]
    async fn oversized_bodies_are_refused_before_reading() {
        let big = req(Method::POST, "/api/x", &[("content-length", &(MAX_BODY + 1).to_string())]);
        assert_eq!(buffer_body(big, T).await.unwrap_err().code, "request.too_large");
        let chunks = futures::stream::iter(
            (0..(MAX_BODY / 65536 + 2)).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![b'x'; 65536]))),
        );
        let streamed = axum::http::Request::builder()
            .method(Method::POST)
            .uri("/api/x")
            .header("transfer-encoding", "chunked")
            .body(Body::from_stream(chunks))
            .unwrap();
        let e = buffer_body(streamed, T).await.unwrap_err();
        assert_eq!((e.code, e.status()), ("request.too_large", 413));
        let small = axum::http::Request::builder()
            .method(Method::POST)
            .uri("/api/x")
            .header("content-length", "2")
            .body(Body::from("{}"))
            .unwrap();
        let back = buffer_body(small, T).await.unwrap();
        assert_eq!(axum::body::to_bytes(back.into_body(), 10).await.unwrap(), Bytes::from_static(b"{}"));
    }
}
