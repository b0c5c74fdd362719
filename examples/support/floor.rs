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
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// Re-execute this example with `--floor UPSTREAM`; the child and the URL it serves.
pub fn spawn(upstream: &str) -> (super::child::KillOnDrop, String, u32) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--floor", upstream])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = loop {
        let l = lines.next().expect("the floor relay exited before printing its URL").unwrap();
        if let Some(u) = l.strip_prefix("FLOOR ") {
            break u.to_string();
        }
    };
    (super::child::KillOnDrop(child), url, pid)
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

/// This example re-executed with `--floor UPSTREAM`: serve the relay, print `FLOOR <url>`,
/// and stop when stdin closes (the parent exited or dropped it).
pub fn main(upstream: String) {
    std::thread::spawn(|| {
        use std::io::Read;
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let http = reqwest::Client::builder().tcp_nodelay(true).no_proxy().build().unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("FLOOR http://{}/mcp", listener.local_addr().unwrap());
        let app = axum::Router::new().fallback(move |req: Request| relay(http.clone(), upstream.clone(), req));
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app).await.unwrap();
    });
}
