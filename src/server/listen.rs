//! The listener of `hal0 serve`: the accept loop, TCP_NODELAY on every connection, a cap
//! on open connections, the HTTP/1 header read deadline (a client that trickles its
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

/// The listener's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Open connections at most; past it, new ones wait in the kernel's backlog.
    pub max_connections: usize,
    /// Time a client has to send a request's headers (also an idle keep-alive's next one).
    pub header_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_connections: 512, header_timeout: Duration::from_secs(10) }
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
        let svc = app.clone().map_request(move |mut req: axum::http::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            req.map(axum::body::Body::new)
        });
        let conn = http.serve_connection(TokioIo::new(tcp), TowerToHyperService::new(svc)).with_upgrades();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    // Wait (bounded by the caller) for the connections to drain.
    let _ = slots.acquire_many(limits.max_connections.max(1) as u32).await;
}

/// The address a request came from, as the listener saw it.
pub fn peer(req: &axum::extract::Request) -> Option<SocketAddr> {
    req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0)
}
