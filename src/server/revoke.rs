//! Ending open streams when their key stops working: a watcher bumps an epoch whenever
//! `api.env` or the store changes (also from another process, such as the CLI), and each
//! open SSE response re-checks its credential then, closing with `event: revoked`.

use super::AppState;
use crate::auth::Credential;
use crate::store::Store;
use axum::body::{Body, Bytes};
use axum::response::Response;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const POLL: Duration = Duration::from_millis(250);

/// Start the change watcher; the receiver's value changes on every observed change.
pub fn spawn_watcher(api_env: PathBuf, store: Store, cancel: CancellationToken) -> tokio::sync::watch::Receiver<u64> {
    let (tx, rx) = tokio::sync::watch::channel(0u64);
    std::thread::Builder::new()
        .name("hal0-revoke-watch".into())
        .spawn(move || {
            let conn = rusqlite::Connection::open(store.path()).ok();
            let version = |c: &Option<rusqlite::Connection>| {
                c.as_ref().and_then(|c| c.pragma_query_value(None, "data_version", |r| r.get::<_, i64>(0)).ok())
            };
            let mut last = (crate::base::filewatch::stamp(&api_env), version(&conn));
            let mut n = 0u64;
            while !cancel.is_cancelled() && !tx.is_closed() {
                std::thread::sleep(POLL);
                let cur = (crate::base::filewatch::stamp(&api_env), version(&conn));
                if cur != last {
                    last = cur;
                    n += 1;
                    let _ = tx.send(n);
                }
            }
        })
        .expect("spawn watcher thread");
    rx
}

fn same(a: &Credential, b: &Credential) -> bool {
    match (a, b) {
        (Credential::Bridge(x), Credential::Bridge(y)) => x.name == y.name && x.scopes == y.scopes,
        (Credential::Grant(x), Credential::Grant(y)) => x.id == y.id && x.scopes == y.scopes,
        (Credential::Consumer(x), Credential::Consumer(y)) => x.server == y.server && x.name == y.name,
        _ => a == b,
    }
}

/// The change count now: read it before a credential is resolved and hand it to
/// [`until_revoked`], so a change made while resolving is not missed.
pub fn seen(state: &AppState) -> u64 {
    *state.epoch.borrow()
}

/// Resolves once the credential sent as `auth` stops resolving to the same principal as
/// `cred` (its key was revoked or rotated, or its scopes changed); never otherwise. `seen`
/// is the change count `cred` was resolved under: the credential is checked again only
/// after a later change (a clone of the state's receiver would report every change since
/// the daemon started, and each stream would resolve its key once more for nothing).
pub async fn until_revoked(state: Arc<AppState>, auth: Option<String>, cred: Credential, seen: u64) {
    let mut epoch = state.epoch.clone();
    let mut pending = *epoch.borrow_and_update() != seen;
    loop {
        if !std::mem::take(&mut pending) && epoch.changed().await.is_err() {
            futures::future::pending::<()>().await;
        }
        match super::guard::resolve(&state, auth.clone()).await {
            Ok((now, _)) if same(&now, &cred) => continue,
            Ok(_) => return,
            Err(_) => continue,
        }
    }
}

/// Wrap an SSE response so it ends with `event: revoked` once its credential stops
/// resolving to the same principal.
pub fn wrap_stream(
    state: Arc<AppState>,
    auth: Option<String>,
    cred: Credential,
    seen: u64,
    resp: Response,
) -> Response {
    let (parts, inner) = resp.into_parts();
    let body = Revocable { inner, watch: Box::pin(until_revoked(state, auth, cred, seen)), ended: false };
    Response::from_parts(parts, Body::new(body))
}

const REVOKED: &[u8] = b"event: revoked\ndata: {\"error\":{\"code\":\"auth.revoked\",\"message\":\"the key of this stream was rotated or revoked; reconnect with the new key\"}}\n\n";

/// An SSE body that ends with `event: revoked` once its credential stops resolving.
struct Revocable {
    inner: Body,
    /// Resolves when the credential stops resolving ([`until_revoked`]); polled only while
    /// the stream waits for its next frame.
    watch: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    ended: bool,
}

impl http_body::Body for Revocable {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        use std::task::Poll;
        let this = &mut *self;
        if this.ended {
            return Poll::Ready(None);
        }
        if let Poll::Ready(frame) = std::pin::Pin::new(&mut this.inner).poll_frame(cx) {
            this.ended = frame.is_none();
            return Poll::Ready(frame);
        }
        if this.watch.as_mut().poll(cx).is_ready() {
            this.ended = true;
            return Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from_static(REVOKED)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }
}
