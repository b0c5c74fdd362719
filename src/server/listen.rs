//! The listener of `hal0 serve`: the accept loop, TCP_NODELAY on every connection, a cap
//! on open connections and on one peer's share of them, room kept for callers with a
//! credential, https when a certificate is configured (`tls`), the HTTP/1 header read
//! deadline (a client that trickles its headers, or holds an idle keep-alive connection, is
//! cut off; the body deadline is the guard's), and a graceful drain on shutdown.
//!
//! axum's own `serve` sets no timer, so hyper's header timeout never fires there: 300
//! sockets sending a header byte now and then were enough to hold a default install, and
//! 520 idle keep-alive sockets from one address held every slot.
//!
//! - **One peer's share:** a peer address holding `max_connections_per_peer` connections
//!   has its next one answered `503 request.too_many_connections` and closed. A loopback
//!   address has a share of its own, `max_connections_per_local_peer` (as many as the whole
//!   daemon by default): the box's bots and agents, and a reverse proxy's clients, all
//!   arrive from it, and a Python MCP client answering wakes concurrently opens a connection
//!   per call in flight.
//! - **Room for credentials:** once fewer than an eighth of the slots are free, a request
//!   carrying no credential (no `Authorization`, no cookie) is answered `503 request.busy`
//!   and its connection closed, so anonymous callers cannot take the last slots.

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
    /// Open connections of one peer address at most.
    pub max_per_peer: usize,
    /// Open connections of one loopback address at most.
    pub max_per_local_peer: usize,
    /// Time a client has to send a request's headers (also an idle keep-alive's next one).
    pub header_timeout: Duration,
    /// https: the live certificate; plain http is then answered for loopback peers only.
    pub tls: Option<Arc<super::tls::Reloader>>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 512,
            max_per_peer: 64,
            max_per_local_peer: 512,
            header_timeout: Duration::from_secs(10),
            tls: None,
        }
    }
}

/// Serve `app` on `listener` until `shutdown` fires, then let open requests finish.
pub async fn serve(listener: TcpListener, app: Router, limits: Limits, shutdown: CancellationToken) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let peers = Peers::default();
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
        let local = peer.ip().to_canonical().is_loopback();
        let Some(share) = peers.take(peer.ip(), if local { limits.max_per_local_peer } else { limits.max_per_peer })
        else {
            drop(permit);
            let plain = limits.tls.is_none();
            tokio::spawn(refuse_peer(tcp, peer, local, plain, limits.header_timeout));
            continue;
        };
        let room = Room { slots: slots.clone(), reserve: (limits.max_connections / 8).max(1) };
        let (app, http, stop, tls, deadline) =
            (app.clone(), http.clone(), shutdown.clone(), limits.tls.clone(), limits.header_timeout);
        tokio::spawn(async move {
            let _permit = permit;
            let _share = share;
            let Some(tls) = tls else {
                return serve_conn(TokioIo::new(tcp), (app, room), peer, &http, stop).await;
            };
            // The first byte tells a TLS handshake (0x16) from plain http.
            let mut first = [0u8; 1];
            match tokio::time::timeout(deadline, tcp.peek(&mut first)).await {
                Ok(Ok(1)) if first[0] == 0x16 => {
                    let accepting = tls.acceptor().accept(tcp);
                    match tokio::time::timeout(deadline, accepting).await {
                        Ok(Ok(stream)) => serve_conn(TokioIo::new(stream), (app, room), peer, &http, stop).await,
                        Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
                Ok(Ok(1)) if peer.ip().is_loopback() => {
                    serve_conn(TokioIo::new(tcp), (app, room), peer, &http, stop).await
                }
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
    (app, room): (Router, Room),
    peer: SocketAddr,
    http: &hyper::server::conn::http1::Builder,
    stop: CancellationToken,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let svc = tower::service_fn(move |mut req: axum::http::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        let req = req.map(axum::body::Body::new);
        let (app, turned_away) = (app.clone(), room.turn_away(&req));
        async move {
            match turned_away {
                Some(resp) => Ok(resp),
                None => app.oneshot(req).await,
            }
        }
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

/// Open connections per peer address.
#[derive(Clone, Default)]
struct Peers(Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>);

/// One connection's count in [`Peers`], given back when it drops.
struct Share {
    peers: Peers,
    ip: std::net::IpAddr,
}

impl Peers {
    /// Count a connection of `ip`, unless it already holds `max`.
    fn take(&self, ip: std::net::IpAddr, max: usize) -> Option<Share> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let n = m.entry(ip).or_default();
        if *n >= max.max(1) {
            return None;
        }
        *n += 1;
        Some(Share { peers: self.clone(), ip })
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut m = self.peers.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = m.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.ip);
            }
        }
    }
}

/// An answer written straight to a socket (no request was read): status line, JSON error
/// body in hal0's shape, and `Connection: close`.
fn raw_answer(code: &str, message: &str) -> Vec<u8> {
    let body = serde_json::json!({"error": {"code": code, "message": message}}).to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 5\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Refuse a connection of a peer that holds its share: answered in plain http (a TLS
/// listener just closes it), then closed.
async fn refuse_peer(tcp: tokio::net::TcpStream, peer: SocketAddr, local: bool, plain: bool, deadline: Duration) {
    use tokio::io::AsyncWriteExt;
    tracing::debug!(%peer, "connection refused: the peer holds its share of connections");
    if !plain {
        return;
    }
    let mut tcp = tcp;
    let key = if local { "max_connections_per_local_peer" } else { "max_connections_per_peer" };
    let msg = format!(
        "this address holds as many connections to hal0 as one peer may ([limits].{key}): close idle ones or reuse \
         them, then retry"
    );
    let _ = tokio::time::timeout(deadline, tcp.write_all(&raw_answer("request.too_many_connections", &msg))).await;
    let _ = tcp.shutdown().await;
}

/// The slots left for callers with a credential: when fewer than `reserve` are free, a
/// request without one is turned away (`503 request.busy`) and its connection closed.
#[derive(Clone)]
struct Room {
    slots: Arc<Semaphore>,
    reserve: usize,
}

impl Room {
    /// The answer to `req` when it is turned away: no credential while the slots run short.
    fn turn_away<B>(&self, req: &axum::http::Request<B>) -> Option<axum::response::Response> {
        if self.slots.available_permits() >= self.reserve {
            return None;
        }
        let h = req.headers();
        if h.contains_key(axum::http::header::AUTHORIZATION) || h.contains_key(axum::http::header::COOKIE) {
            return None;
        }
        let e = crate::base::error::Error::unavailable(
            "request.busy",
            "hal0 is near its connection cap and keeps the rest for callers with a key: retry shortly, or send your key",
        );
        let mut resp = axum::response::IntoResponse::into_response(e);
        resp.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
        resp.headers_mut().insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from_static("5"));
        Some(resp)
    }
}
