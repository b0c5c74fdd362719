//! Kept-alive HTTP/1.1 connections to a plain-http upstream that the task making a call
//! drives itself: hyper's connection future is polled in place, not spawned, so a wire-path
//! call ([`super::wire_path`]) crosses no task (and so no thread) between the consumer's request
//! and the upstream's answer. reqwest, which the wire path uses otherwise, runs each
//! connection in a task of its own and hands every request and body chunk across.
//!
//! Only for `http://` URLs reached directly: https upstreams, and any when the environment
//! names an HTTP proxy (which reqwest honours), stay on reqwest. Sockets get TCP_NODELAY.
//! An idle connection is checked before reuse (a server that closed it is noticed then),
//! and a response whose body is read to its end returns its connection to the pool.

use axum::body::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::{Connection, SendRequest};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use tokio::net::TcpStream;

/// Most idle connections kept per upstream.
const IDLE_MAX: usize = 64;

type Driver = Pin<Box<Connection<TokioIo<TcpStream>, Full<Bytes>>>>;

/// One connection: the handle requests go in by, and the future that does its I/O.
struct Conn {
    tx: SendRequest<Full<Bytes>>,
    io: Driver,
}

/// The idle connections to one upstream's host and port.
pub struct Pool {
    /// `host:port` to connect to.
    addr: String,
    /// The `Host` header.
    authority: String,
    /// Path and query of the endpoint.
    path: String,
    idle: Mutex<Vec<Conn>>,
}

/// Why a request got no answer.
pub enum Failed {
    /// It never left hal0 (no connection, or the connection closed before it was written):
    /// safe to send again another way.
    NotSent(String),
    /// It may have reached the server.
    Broken(String),
}

impl Pool {
    /// The pool of `url`, shared by every upstream session on it (connections carry no MCP
    /// session), when this client can reach it: plain http, no proxy set.
    pub fn shared(url: &str) -> Option<Arc<Pool>> {
        use std::sync::{LazyLock, Weak};
        static POOLS: LazyLock<Mutex<HashMap<String, Weak<Pool>>>> = LazyLock::new(Default::default);
        let mut m = POOLS.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = m.get(url).and_then(Weak::upgrade) {
            return Some(p);
        }
        let p = Arc::new(Pool::for_url(url)?);
        m.retain(|_, w| w.strong_count() > 0);
        m.insert(url.to_string(), Arc::downgrade(&p));
        Some(p)
    }

    /// A pool of its own for `url` when this client can reach it.
    fn for_url(url: &str) -> Option<Pool> {
        let proxied = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
            .iter()
            .any(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()));
        if proxied {
            return None;
        }
        let u = url::Url::parse(url).ok()?;
        if u.scheme() != "http" || !u.username().is_empty() || u.password().is_some() {
            return None;
        }
        let host = u.host_str()?;
        let port = u.port_or_known_default()?;
        let authority = match u.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let mut path = u.path().to_string();
        if let Some(q) = u.query() {
            path.push('?');
            path.push_str(q);
        }
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addr = if bare.contains(':') { format!("[{bare}]:{port}") } else { format!("{bare}:{port}") };
        Some(Pool { addr, authority, path, idle: Mutex::default() })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Conn>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An idle connection that is still open, or a new one.
    async fn checkout(&self) -> Result<Conn, Failed> {
        loop {
            let Some(mut c) = self.lock().pop() else { break };
            // A closed connection's future is ready (the server's FIN or an error).
            if futures::poll!(c.io.as_mut()).is_pending() && c.tx.is_ready() {
                return Ok(c);
            }
        }
        let tcp = TcpStream::connect(&self.addr).await.map_err(|e| Failed::NotSent(format!("connect: {e}")))?;
        let _ = tcp.set_nodelay(true);
        let (tx, io) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| Failed::NotSent(format!("handshake: {e}")))?;
        Ok(Conn { tx, io: Box::pin(io) })
    }

    /// POST `body` with `headers`: the answer's status and headers, and its body to read.
    pub async fn post(
        self: &Arc<Self>,
        headers: &reqwest::header::HeaderMap,
        body: String,
    ) -> Result<(hyper::http::response::Parts, Live), Failed> {
        let mut c = self.checkout().await?;
        let mut req = hyper::Request::post(self.path.as_str())
            .header(hyper::header::HOST, self.authority.as_str())
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| Failed::NotSent(e.to_string()))?;
        for (k, v) in headers {
            req.headers_mut().insert(k.clone(), v.clone());
        }
        let answer = c.tx.send_request(req);
        tokio::pin!(answer);
        let mut io_done = false;
        let resp = tokio::select! {
            r = &mut answer => r,
            // The connection ended first; the request's own future says how.
            _ = c.io.as_mut() => {
                io_done = true;
                answer.await
            }
        };
        let resp =
            resp.map_err(
                |e| {
                    if e.is_canceled() { Failed::NotSent(e.to_string()) } else { Failed::Broken(e.to_string()) }
                },
            )?;
        let (parts, body) = resp.into_parts();
        Ok((parts, Live { conn: (!io_done).then_some(c), body, pool: self.clone() }))
    }
}

/// An answer's body being read, with the connection it comes over.
pub struct Live {
    /// `None` once the connection ended (the body then ends or fails too).
    conn: Option<Conn>,
    body: Incoming,
    pool: Arc<Pool>,
}

impl Live {
    /// The next piece of the body; `None` at its end (the connection goes back to the pool).
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, String> {
        loop {
            let Live { conn, body, .. } = self;
            let frame = match conn {
                Some(c) => tokio::select! {
                    f = body.frame() => f,
                    r = c.io.as_mut() => {
                        *conn = None;
                        if let Err(e) = r {
                            return Err(e.to_string());
                        }
                        continue;
                    }
                },
                None => body.frame().await,
            };
            match frame {
                None => {
                    if let Some(c) = self.conn.take() {
                        let mut idle = self.pool.lock();
                        if idle.len() < IDLE_MAX {
                            idle.push(c);
                        }
                    }
                    return Ok(None);
                }
                Some(Ok(f)) => {
                    if let Ok(data) = f.into_data() {
                        return Ok(Some(data));
                    }
                }
                Some(Err(e)) => return Err(e.to_string()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn only_plain_http_urls_get_a_pool() {
        let p = Pool::for_url("http://127.0.0.1:8123/mcp?x=1").unwrap();
        assert_eq!(
            (p.addr.as_str(), p.authority.as_str(), p.path.as_str()),
            ("127.0.0.1:8123", "127.0.0.1:8123", "/mcp?x=1")
        );
        let p = Pool::for_url("http://[::1]/mcp").unwrap();
        assert_eq!((p.addr.as_str(), p.authority.as_str()), ("[::1]:80", "[::1]"));
        assert!(Pool::for_url("https://example.com/mcp").is_none());
        assert!(Pool::for_url("http://user:pw@127.0.0.1/mcp").is_none());
        assert!(Pool::for_url("not a url").is_none());
    }

    /// A tiny HTTP/1.1 server on loopback: answers every request `ok` (closing the
    /// connection after each answer when `close`); counts the connections it accepted.
    async fn server(close: bool) -> (String, Arc<AtomicUsize>) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", l.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let n = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                n.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        let Ok(k) = s.read(&mut chunk).await else { return };
                        if k == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..k]);
                        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
                        let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
                        let len: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map_or(0, |v| v.trim().parse().unwrap());
                        if buf.len() < end + 4 + len {
                            continue;
                        }
                        buf.drain(..end + 4 + len);
                        let conn = if close { "connection: close\r\n" } else { "" };
                        let answer = format!("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n{conn}\r\nok");
                        if s.write_all(answer.as_bytes()).await.is_err() || close {
                            return;
                        }
                    }
                });
            }
        });
        (url, accepted)
    }

    async fn read_all(live: &mut Live) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(b) = live.chunk().await.unwrap() {
            out.extend_from_slice(&b);
        }
        out
    }

    #[tokio::test]
    async fn a_read_answer_gives_its_connection_back_and_a_closed_one_is_not_reused() {
        let (url, accepted) = server(false).await;
        let pool = Arc::new(Pool::for_url(&url).unwrap());
        for _ in 0..3 {
            let (parts, mut live) = pool.post(&Default::default(), "{}".into()).await.ok().unwrap();
            assert_eq!(parts.status, 200);
            assert_eq!(read_all(&mut live).await, b"ok");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "one kept-alive connection served all three");

        let (url, accepted) = server(true).await;
        let pool = Arc::new(Pool::for_url(&url).unwrap());
        for _ in 0..3 {
            let (_, mut live) = pool.post(&Default::default(), "{}".into()).await.ok().unwrap();
            assert_eq!(read_all(&mut live).await, b"ok");
            // Let the server's close arrive before the next checkout looks.
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 3, "a closed connection is replaced, not reused");
    }

    #[tokio::test]
    async fn nothing_listening_is_not_sent() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", l.local_addr().unwrap());
        drop(l);
        let pool = Arc::new(Pool::for_url(&url).unwrap());
        assert!(matches!(pool.post(&Default::default(), "{}".into()).await, Err(Failed::NotSent(_))));
    }
}
