//! The listener of `hal0 serve`: the accept loop, TCP_NODELAY on every connection, a cap
//! on open connections, https when a certificate is configured (`tls`), the HTTP/1 header read deadline (a client that trickles its
//! headers is cut off; the body deadline is the guard's), and a graceful drain on shutdown.
//!
//! axum's own `serve` sets no timer, so hyper's header timeout never fires there: 300
//! sockets sending a header byte now and then were enough to hold a default install.

use axum::Router;
use axum::extract::connect_info::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// The listener's bounds, and its certificate when it speaks https.
#[derive(Clone)]
pub struct Limits {
    /// Open connections at most; past it, new ones wait in the kernel's backlog.
    pub max_connections: usize,
    /// Time a client has to send a request's headers (also an idle keep-alive's next one).
    pub header_timeout: Duration,
    /// https: the live certificate; plain http is then answered for loopback peers only.
    pub tls: Option<Arc<super::tls::Reloader>>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_connections: 512, header_timeout: Duration::from_secs(10), tls: None }
    }
}

/// Serve `app` on `listener` until `shutdown` fires, then let open requests finish.
pub async fn serve(listener: TcpListener, app: Router, limits: Limits, shutdown: CancellationToken) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).keep_alive(true);
    let http = Arc::new(http);
    let mut full_warned = false;
    loop {
        if slots.available_permits() == 0 && !full_warned {
            tracing::warn!(max = limits.max_connections, "connection cap reached; new connections wait");
            full_warned = true;
        }
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
            _ = shutdown.cancelled() => break,
        };
        let (tcp, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = shutdown.cancelled() => break,
        };
        if slots.available_permits() > 0 {
            full_warned = false;
        }
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!("cannot set TCP_NODELAY: {e}");
        }
        let (app, http, stop, tls, deadline) =
            (app.clone(), http.clone(), shutdown.clone(), limits.tls.clone(), limits.header_timeout);
        tokio::spawn(async move {
            let _permit = permit;
            let Some(tls) = tls else {
                return serve_conn(TokioIo::new(tcp), app, peer, &http, stop).await;
            };
            // The first byte tells a TLS handshake (0x16) from plain http.
            let mut first = [0u8; 1];
            match tokio::time::timeout(deadline, tcp.peek(&mut first)).await {
                Ok(Ok(1)) if first[0] == 0x16 => {
                    let accepting = tls.acceptor().accept(tcp);
                    match tokio::time::timeout(deadline, accepting).await {
                        Ok(Ok(stream)) => serve_conn(TokioIo::new(stream), app, peer, &http, stop).await,
                        Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
                Ok(Ok(1)) if peer.ip().is_loopback() => serve_conn(TokioIo::new(tcp), app, peer, &http, stop).await,
                Ok(Ok(1)) => {
                    use tokio::io::AsyncWriteExt;
                    let mut tcp = tcp;
                    let _ = tokio::time::timeout(deadline, tcp.write_all(super::tls::PLAIN_REFUSED)).await;
                }
                _ => {}
            }
        });
    }
    // Wait (bounded by the caller) for the connections to drain.
    let _ = slots.acquire_many(limits.max_connections.max(1) as u32).await;
}

/// Serve one connection (plain or TLS) until it ends, or drain it when `stop` fires.
async fn serve_conn<I>(
    io: I,
    app: Router,
    peer: SocketAddr,
    http: &hyper::server::conn::http1::Builder,
    stop: CancellationToken,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let svc = app.map_request(move |mut req: axum::http::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        req.map(axum::body::Body::new)
    });
    let conn = http.serve_connection(io, TowerToHyperService::new(svc)).with_upgrades();
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = stop.cancelled() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}
