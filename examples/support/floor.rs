//! The floor of any HTTP proxy on the benchmark's machine: a reverse proxy that relays each
//! request's bytes to the upstream and streams the answer back, with no MCP, no policy, no
//! key check and no audit (axum server, reqwest client with kept-alive connections,
//! `TCP_NODELAY` on both sides). `bench_proxy` re-executes itself with `--floor URL` to run
//! it in a process of its own, so what hal0 costs on top of merely relaying is measured in
//! the same run rather than argued.
#![allow(dead_code)]

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, StatusCode, header};
use axum::response::Response;

/// Re-execute this example with `--floor UPSTREAM`; the child, the URL it serves, its pid.
pub fn spawn(upstream: &str) -> (super::child::KillOnDrop, String, u32) {
    let (child, addr) = super::child::spawn_self(&["--floor", upstream], "FLOOR ");
    let pid = child.0.id();
    (child, format!("http://{addr}/mcp"), pid)
}

/// Headers that belong to one hop, not to the message.
const HOP: [HeaderName; 4] = [header::HOST, header::CONNECTION, header::TRANSFER_ENCODING, header::CONTENT_LENGTH];

fn status(s: StatusCode) -> Response {
    Response::builder().status(s).body(Body::empty()).unwrap()
}

async fn relay(http: reqwest::Client, upstream: String, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else { return status(StatusCode::BAD_REQUEST) };
    let mut headers = parts.headers;
    for h in HOP {
        headers.remove(h);
    }
    let sent = http.request(parts.method, &upstream).headers(headers).body(body).send().await;
    let Ok(r) = sent else { return status(StatusCode::BAD_GATEWAY) };
    let mut out = Response::builder().status(r.status());
    for (k, v) in r.headers().iter().filter(|(k, _)| !HOP.contains(k)) {
        out = out.header(k, v);
    }
    out.body(Body::from_stream(r.bytes_stream())).unwrap()
}

/// This example re-executed with `--floor UPSTREAM`: serve the relay until stdin closes.
pub fn main(upstream: String) {
    let http = reqwest::Client::builder().tcp_nodelay(true).no_proxy().build().unwrap();
    let app = axum::Router::new().fallback(move |req: Request| relay(http.clone(), upstream.clone(), req));
    super::child::serve_child("FLOOR", app);
}
