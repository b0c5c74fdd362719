//! Request hygiene applied by the guard before any handler runs: the Host and Origin
//! allowlists (every route but `/api/health`), the media type of state-changing REST bodies
//! (JSON only, so a cross-site "simple" request can never carry one), and the body read
//! with a size cap and a deadline (a client that trickles its body is cut off).

use super::AppState;
use crate::base::error::{Error, Kind};
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// The one route any Host and any Origin may reach (liveness probes, load balancers).
pub const OPEN_PATH: &str = "/api/health";

/// The largest request body hal0 reads (REST bodies and MCP messages alike). The router's
/// body limit (axum's, 2 MiB by default) and rmcp's (4 MiB by default) are set to this same
/// figure, so the one that answers is hal0's `413 request.too_large`.
pub const MAX_BODY: usize = 4 * 1024 * 1024;

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
        tracing::info!(
            path,
            host = host.as_deref().unwrap_or(""),
            "refused: host not allowed (to answer it: add it to [network].allowed_hosts in hal0.toml and restart)"
        );
        return Err(Refusal::Host);
    }
    let origin = req.headers().get(header::ORIGIN).map(|v| v.to_str().unwrap_or("\u{0}"));
    if !state.hosts.origin_allowed(origin) {
        tracing::info!(
            path,
            "refused: origin not allowed (to allow a page: add it to [network].allowed_origins in hal0.toml and restart)"
        );
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

/// A state-changing REST (or A2A) request carries JSON or nothing: a `text/plain` or form body (what
/// a cross-site page can send without a CORS preflight) is refused before it is read.
pub fn check_media_type(req: &Request) -> Result<(), Error> {
    let path = req.uri().path();
    let json_only = path.starts_with("/api/") || path.starts_with("/a2a/");
    if !json_only || !writes(req.method()) {
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
/// and put it back, so no handler (nor rmcp) ever waits on a client that trickles bytes;
/// returns the bytes too (a shared handle, not a copy).
pub async fn buffer_body(req: Request, deadline: Duration) -> Result<(Request, Bytes), Error> {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) && !has_body(&req) {
        return Ok((req, Bytes::new()));
    }
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    let (parts, body) = req.into_parts();
    // A small body has usually arrived with the headers: read it without arming a timer.
    let read = axum::body::to_bytes(body, MAX_BODY);
    tokio::pin!(read);
    let read = match futures::poll!(&mut read) {
        std::task::Poll::Ready(r) => Ok(r),
        std::task::Poll::Pending => tokio::time::timeout(deadline, read).await,
    };
    let bytes: Bytes = match read {
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
    Ok((Request::from_parts(parts, Body::from(bytes.clone())), bytes))
}

fn too_large() -> Error {
    Error::new(
        "request.too_large",
        Kind::TooLarge,
        format!("the request body is larger than hal0 accepts ({} MiB)", MAX_BODY / (1024 * 1024)),
    )
}

/// What to tell a client that looks for OAuth (an MCP client given no key, or a refused
/// one, tries OAuth discovery, then dynamic client registration at `/register`). hal0
/// takes bearer keys only and serves no OAuth metadata: the metadata paths are 404, and a
/// registration gets RFC 7591's error shape with what to do instead, which clients show.
pub fn no_oauth(path: &str) -> Option<Response> {
    let advice = "hal0 does not do OAuth: it takes a bearer key. Make one on the box (hal0 bridge add NAME \
                  --scope agents, memory or admin) and send it as `Authorization: Bearer <key>`; with Claude Code: \
                  claude mcp add --transport http NAME URL --header \"Authorization: Bearer <key>\"";
    if path.starts_with("/.well-known/oauth") || path.starts_with("/.well-known/openid") {
        let body = serde_json::json!({"error": {"code": "auth.no_oauth", "message": advice}});
        return Some((StatusCode::NOT_FOUND, axum::Json(body)).into_response());
    }
    if matches!(path, "/register" | "/authorize" | "/token") {
        let body = serde_json::json!({"error": "invalid_client_metadata", "error_description": advice});
        return Some((StatusCode::BAD_REQUEST, axum::Json(body)).into_response());
    }
    None
}

/// rmcp refuses a POST body it cannot read as a JSON-RPC message with a bare 415 and a
/// line of text, which clients cannot read. Answer as JSON-RPC says instead: `-32700`
/// (parse error) for a body that is not JSON, `-32600` (invalid request) for JSON that is
/// not a JSON-RPC message; HTTP 400, `id` null, hal0's code and serde's detail in `data`.
/// Any other response is returned as it is.
pub async fn jsonrpc_refusal(resp: Response, body: &Bytes) -> Response {
    if resp.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return resp;
    }
    let (parts, inner) = resp.into_parts();
    let text = axum::body::to_bytes(inner, 64 * 1024).await.unwrap_or_default();
    if !text.starts_with(b"fail to deserialize") {
        return Response::from_parts(parts, Body::from(text));
    }
    let (code, hal0, message) = match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        Err(e) => (-32700, "mcp.parse_error", format!("Parse error: the body is not JSON ({e})")),
        Ok(_) => {
            let detail = String::from_utf8_lossy(&text)
                .trim_start_matches("fail to deserialize request body")
                .trim()
                .to_string();
            (
                -32600,
                "mcp.invalid_request",
                format!("Invalid Request: the body is not a JSON-RPC 2.0 message ({detail})"),
            )
        }
    };
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message, "data": {"code": hal0}},
    });
    (StatusCode::BAD_REQUEST, axum::Json(answer)).into_response()
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
        let (back, kept) = buffer_body(small, T).await.unwrap();
        assert_eq!(kept, Bytes::from_static(b"{}"));
        assert_eq!(axum::body::to_bytes(back.into_body(), 10).await.unwrap(), Bytes::from_static(b"{}"));
    }
}
