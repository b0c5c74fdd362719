//! What an installed server sends back to hal0 besides answers, and where it goes: the
//! proxy's MCP client handler ([`Relay`]). Owns the routing of
//!
//! - `notifications/progress` to the consumer whose call the upstream token belongs to (rmcp
//!   gives every upstream request a token of its own; the consumer's token is put back);
//! - logging, resource-updated and list-changed notifications to the consumer that owns the
//!   upstream session (an http server gets one upstream session per consumer session), while
//!   the server is still served and, for an update, the resource still allowed; a stdio
//!   child's connection is shared by every consumer, so these go nowhere;
//! - the upstream's own requests (`sampling/createMessage`, `elicitation/create`,
//!   `roots/list`, `ping`) to the consumer whose call they belong to, through that call's task
//!   so they ride the call's response stream, and only when the consumer declared the
//!   capability (else a clean MCP error back to the upstream). On a shared connection a
//!   request must name its call (the response stream it came on); a stdio child's cannot, so
//!   it is refused rather than guessed (another consumer's call could be behind it).
//!   When the upstream cancels such a request, the consumer is sent `notifications/cancelled`
//!   for it.
//!
//! Everything relayed has the record's secret values masked, like a tool result.
//!
//! [`CallGuard`] registers one forwarded call and tells the upstream when the consumer gave
//! up on it (`notifications/cancelled`, also when the call's future is dropped).
//! [`InOrder`] wraps the upstream transport so progress is relayed in arrival order, before
//! the answer behind it: rmcp hands each notification to a task of its own, which can run
//! after the answer has gone back (the consumer then drops the late progress).

// The proxy relays what upstream servers still speak: logging, roots, sampling and
// subscriptions are deprecated in the newest protocol (SEP-2577), not gone.
#![allow(deprecated)]

use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientCapabilities, ClientConfig, ClientNotification,
    ClientResult, ErrorData, Implementation, ListRootsResult, ProgressToken, RequestId, ServerNotification,
    ServerRequest,
};
use rmcp::service::{InboundStreamOrigin, NotificationContext, Peer, RequestContext, Service};
use rmcp::{RoleClient, RoleServer};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// A request of the upstream that a consumer's call task is to put to its consumer.
pub struct Inbound {
    pub request: ServerRequest,
    pub reply: oneshot::Sender<Result<ClientResult, ErrorData>>,
    /// Cancelled when the upstream gives up on its request (`notifications/cancelled`).
    pub cancelled: tokio_util::sync::CancellationToken,
}

/// Where the upstream's messages about one forwarded call go.
struct Route {
    consumer: Peer<RoleServer>,
    /// The consumer's own progress token of the call, if it sent one.
    token: Option<ProgressToken>,
    inbound: mpsc::Sender<Inbound>,
}

#[derive(Default)]
struct Routes {
    /// The consumer session this upstream session serves (http servers), and how to look
    /// up the record again; `None` for a connection shared by every consumer (stdio
    /// servers) or a probe.
    owner: Option<(Peer<RoleServer>, Owner)>,
    /// The record's secret values, masked in everything relayed.
    secrets: Mutex<Vec<String>>,
    /// Upstream request id → route.
    calls: Mutex<HashMap<RequestId, Arc<Route>>>,
    /// Upstream progress token → route.
    tokens: Mutex<HashMap<ProgressToken, Arc<Route>>>,
    /// URIs the owner subscribed to through the proxy (policy checked then).
    subscribed: Mutex<HashSet<String>>,
    /// Requests of the upstream that a wire-path call put to its consumer, by the upstream's
    /// id (JSON text): where the upstream's withdrawal of one goes. rmcp's server sends that
    /// `notifications/cancelled` on the session's own stream, not the call's (it looks the
    /// id up among its client's requests), so it arrives here rather than in the call's
    /// answer stream.
    withdrawals: Mutex<HashMap<String, mpsc::UnboundedSender<Withdrawn>>>,
}

/// The upstream withdrew its request (the id as JSON text), for the reason it gave.
pub type Withdrawn = (String, Option<String>);

/// The proxy's client handler of one upstream connection.
#[derive(Clone, Default)]
pub struct Relay(Arc<Routes>);

/// `m` locked, also after a holder panicked (the maps it guards stay usable).
pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where an owned relay finds its record (through the proxy's stamp-checked cache): to drop
/// what a disabled or uninstalled server, or a resource the operator no longer allows, still
/// sends.
pub struct Owner {
    pub proxy: super::Proxy,
    pub id: String,
}

impl Relay {
    /// The handler of an upstream session that serves consumer session `owner` only.
    pub fn owned_by(owner: Peer<RoleServer>, record: Owner, secrets: Vec<String>) -> Relay {
        Relay(Arc::new(Routes { owner: Some((owner, record)), secrets: Mutex::new(secrets), ..Default::default() }))
    }

    /// Send the upstream's withdrawal of its request `id` (JSON text) to `to`, if it comes
    /// on the session's own stream.
    pub(super) fn watch_withdrawal(&self, id: String, to: mpsc::UnboundedSender<Withdrawn>) {
        lock(&self.0.withdrawals).insert(id, to);
    }

    /// The request `id` (JSON text) was answered, withdrawn, or its call ended.
    pub(super) fn unwatch_withdrawal(&self, id: &str) {
        lock(&self.0.withdrawals).remove(id);
    }

    /// Mask `secrets` in what this connection relays from now on.
    pub fn set_secrets(&self, secrets: &[String]) {
        let mut cur = lock(&self.0.secrets);
        if cur.as_slice() != secrets {
            *cur = secrets.to_vec();
        }
    }

    /// `v` with the record's secret values masked; `None` when it no longer reads back.
    fn masked<T: serde::Serialize + serde::de::DeserializeOwned>(&self, v: T) -> Option<T> {
        super::mask_in(v, &lock(&self.0.secrets))
    }

    /// The owner, while its server is still served and (for `uri`) the resource allowed.
    fn owner_for(&self, uri: Option<&str>) -> Option<Peer<RoleServer>> {
        let (peer, o) = self.0.owner.as_ref()?;
        let s = o.proxy.record(&o.id).ok()?;
        if let Some(uri) = uri
            && s.record.resource_access.verdict(uri) != crate::registry::policy::Verdict::Allow
        {
            return None;
        }
        Some(peer.clone())
    }

    /// Route the upstream's messages about call `id` (progress token `upstream_token`) to
    /// `consumer` until the guard is dropped; the receiver gets the upstream's requests.
    pub fn track(
        &self,
        upstream: Peer<RoleClient>,
        id: RequestId,
        upstream_token: ProgressToken,
        consumer: Peer<RoleServer>,
        token: Option<ProgressToken>,
    ) -> (CallGuard, mpsc::Receiver<Inbound>) {
        let (tx, rx) = mpsc::channel(4);
        let route = Arc::new(Route { consumer, token, inbound: tx });
        lock(&self.0.calls).insert(id.clone(), route.clone());
        lock(&self.0.tokens).insert(upstream_token.clone(), route);
        (CallGuard { relay: self.clone(), upstream, id, token: upstream_token, answered: false }, rx)
    }

    /// Connect as the MCP client of `transport`, its progress relayed in order ([`InOrder`]).
    pub async fn serve_over<T>(
        self,
        transport: T,
    ) -> Result<super::upstream::Client, rmcp::service::ClientInitializeError>
    where
        T: rmcp::transport::Transport<RoleClient> + 'static,
    {
        use rmcp::ServiceExt;
        let ordered = InOrder::new(transport, self.clone());
        self.serve(ordered).await
    }

    /// Relay an upstream progress notification to the consumer of the call its token
    /// belongs to, under the consumer's own token (dropped when the consumer sent none).
    async fn progress(&self, mut p: rmcp::model::ProgressNotificationParam) {
        let route = lock(&self.0.tokens).get(&p.progress_token).cloned();
        let Some(route) = route else { return };
        let Some(token) = route.token.clone() else { return };
        p.progress_token = token;
        let n = ServerNotification::ProgressNotification(rmcp::model::ProgressNotification::new(p));
        if let Some(n) = self.masked(n) {
            let _ = route.consumer.send_notification(n).await;
        }
    }

    /// Note that the owner subscribed to (or unsubscribed from) `uri`.
    pub fn subscribed(&self, uri: &str, on: bool) {
        let mut s = lock(&self.0.subscribed);
        if on {
            s.insert(uri.to_string());
        } else {
            s.remove(uri);
        }
    }

    /// The route of a request the upstream sent: the call whose response stream it came on;
    /// without that association, on an owned session, any call in flight (they are all the
    /// owner's). A shared connection's unassociated request has no route.
    fn route_of_request(&self, ctx: &RequestContext<RoleClient>) -> Option<Arc<Route>> {
        let calls = lock(&self.0.calls);
        if let Some(InboundStreamOrigin::OutboundRequest(id)) = ctx.extensions.get::<InboundStreamOrigin>()
            && let Some(r) = calls.get(id)
        {
            return Some(r.clone());
        }
        if self.0.owner.is_some() {
            return calls.values().next().cloned();
        }
        None
    }
}

/// Whether `consumer` declared what `request` needs, as an MCP error for the upstream when not.
fn capable(consumer: &Peer<RoleServer>, request: &ServerRequest) -> Result<(), ErrorData> {
    let caps = consumer.peer_info().map(|i| i.capabilities.clone()).unwrap_or_default();
    let (has, what) = match request {
        ServerRequest::CreateMessageRequest(_) => (caps.sampling.is_some(), "sampling"),
        ServerRequest::ElicitRequest(_) => (caps.elicitation.is_some(), "elicitation"),
        _ => (true, ""),
    };
    if has {
        Ok(())
    } else {
        Err(ErrorData::invalid_request(
            format!(
                "hal0's proxy: the client that made this call did not declare the `{what}` capability, so hal0 \
                 cannot put the request to it"
            ),
            None,
        ))
    }
}

/// Put an upstream request to `consumer` (run inside the consumer's call task, so it rides
/// that call's response stream) and send its answer back. When the upstream cancels its
/// request first, the consumer is sent `notifications/cancelled` for it.
pub async fn serve_inbound(consumer: &Peer<RoleServer>, inbound: Inbound) {
    let Inbound { request, reply, cancelled } = inbound;
    let out = match capable(consumer, &request) {
        Err(e) => Err(e),
        Ok(()) => ask(consumer, request, &cancelled).await,
    };
    let _ = reply.send(out);
}

async fn ask(
    consumer: &Peer<RoleServer>,
    request: ServerRequest,
    cancelled: &tokio_util::sync::CancellationToken,
) -> Result<ClientResult, ErrorData> {
    let failed = |e: rmcp::ServiceError| match e {
        rmcp::ServiceError::McpError(d) => d,
        other => ErrorData::internal_error(
            format!(
                "hal0's proxy could not get an answer from its client: {}",
                crate::base::redact::redact(&other.to_string())
            ),
            None,
        ),
    };
    let handle = consumer
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .map_err(failed)?;
    let mut asked = Asked { consumer: consumer.clone(), id: Some(handle.id.clone()) };
    tokio::select! {
        out = handle.await_response() => {
            asked.id = None;
            out.map_err(failed)
        }
        () = cancelled.cancelled() => {
            // Told from this task, so the cancellation rides the call's response stream.
            if let Some(id) = asked.id.take() {
                tell_cancelled(consumer, id).await;
            }
            Err(ErrorData::invalid_request(format!("hal0's proxy: {ASKER_CANCELLED}"), None))
        }
    }
}

const ASKER_CANCELLED: &str = "the server that asked cancelled its request";

async fn tell_cancelled(consumer: &Peer<RoleServer>, id: RequestId) {
    let p = CancelledNotificationParam::new(Some(id), Some(ASKER_CANCELLED.into()));
    if let Err(e) = consumer.notify_cancelled(p).await {
        tracing::debug!("cannot tell the client of a cancelled request: {e}");
    }
}

/// A request put to the consumer and not answered yet. Dropped unanswered (the call it
/// belongs to ended first, typically because the server gave up on it and answered the
/// call), the consumer is told the request is cancelled.
struct Asked {
    consumer: Peer<RoleServer>,
    id: Option<RequestId>,
}

impl Drop for Asked {
    fn drop(&mut self) {
        if let Some(id) = self.id.take()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            let consumer = self.consumer.clone();
            rt.spawn(async move { tell_cancelled(&consumer, id).await });
        }
    }
}

/// The upstream transport `T` with its progress notifications relayed by [`Relay`] as they
/// arrive, ahead of every later message (they never reach rmcp's handler).
pub struct InOrder<T> {
    inner: T,
    relay: Relay,
}

impl<T> InOrder<T> {
    pub fn new(inner: T, relay: Relay) -> InOrder<T> {
        InOrder { inner, relay }
    }
}

impl<T: rmcp::transport::Transport<RoleClient>> rmcp::transport::Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        loop {
            let m = self.inner.receive().await?;
            if let rmcp::model::JsonRpcMessage::Notification(n) = &m
                && let ServerNotification::ProgressNotification(p) = &n.notification
            {
                self.relay.progress(p.params.clone()).await;
                continue;
            }
            return Some(m);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// One forwarded call while it is in flight: its routes, and a `notifications/cancelled` to
/// the upstream when it ends without an answer.
pub struct CallGuard {
    relay: Relay,
    upstream: Peer<RoleClient>,
    id: RequestId,
    token: ProgressToken,
    answered: bool,
}

impl CallGuard {
    /// The upstream answered: nothing to cancel.
    pub fn answered(&mut self) {
        self.answered = true;
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        lock(&self.relay.0.calls).remove(&self.id);
        lock(&self.relay.0.tokens).remove(&self.token);
        if !self.answered {
            let (peer, id) = (self.upstream.clone(), self.id.clone());
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    let p = CancelledNotificationParam::new(Some(id), Some("the client cancelled the call".into()));
                    let _ = peer
                        .send_notification(ClientNotification::CancelledNotification(CancelledNotification::new(p)))
                        .await;
                });
            }
        }
    }
}

impl Service<RoleClient> for Relay {
    async fn handle_request(
        &self,
        request: ServerRequest,
        context: RequestContext<RoleClient>,
    ) -> Result<ClientResult, ErrorData> {
        if let ServerRequest::PingRequest(_) = request {
            return Ok(ClientResult::empty(()));
        }
        let Some(route) = self.route_of_request(&context) else {
            if let ServerRequest::ListRootsRequest(_) = request {
                return Ok(ClientResult::ListRootsResult(ListRootsResult::default()));
            }
            let why = if self.0.owner.is_some() {
                "this request belongs to no call in flight, so there is no client to put it to"
            } else {
                "this server's connection is shared by every client (a stdio server), so hal0 cannot tell whose \
                 call this request belongs to and puts it to none"
            };
            return Err(ErrorData::invalid_request(format!("hal0's proxy: {why}"), None));
        };
        let Some(request) = self.masked(request) else {
            return Err(ErrorData::invalid_request("hal0's proxy: the request carried a credential; withheld", None));
        };
        let (reply, answer) = oneshot::channel();
        let inbound = Inbound { request, reply, cancelled: context.ct.clone() };
        if route.inbound.send(inbound).await.is_err() {
            return Err(ErrorData::invalid_request("hal0's proxy: the call this request belongs to has ended", None));
        }
        answer.await.unwrap_or_else(|_| {
            Err(ErrorData::invalid_request("hal0's proxy: the call this request belongs to has ended", None))
        })
    }

    async fn handle_notification(
        &self,
        notification: ServerNotification,
        _context: NotificationContext<RoleClient>,
    ) -> Result<(), ErrorData> {
        let (to, n) = match notification {
            ServerNotification::ProgressNotification(n) => {
                // Normally relayed by `InOrder` already; a transport without it lands here.
                self.progress(n.params).await;
                return Ok(());
            }
            // The upstream withdrew a request a wire-path call put to its consumer (rmcp's
            // path hears of it through the request's own cancellation token).
            ServerNotification::CancelledNotification(n) => {
                let Some(id) = n.params.request_id.and_then(|id| serde_json::to_string(&id).ok()) else {
                    return Ok(());
                };
                if let Some(to) = lock(&self.0.withdrawals).remove(&id) {
                    let _ = to.send((id, n.params.reason));
                }
                return Ok(());
            }
            ServerNotification::ResourceUpdatedNotification(n) => {
                if !lock(&self.0.subscribed).contains(&n.params.uri) {
                    return Ok(());
                }
                (self.owner_for(Some(&n.params.uri)), ServerNotification::ResourceUpdatedNotification(n))
            }
            // A task's status (protocol 2025-11-25): the tasks of this upstream session are
            // its consumer's (a stdio server's shared connection has no owner).
            ServerNotification::CustomNotification(n) if n.method == "notifications/tasks/status" => {
                (self.owner_for(None), ServerNotification::CustomNotification(n))
            }
            n @ (ServerNotification::LoggingMessageNotification(_)
            | ServerNotification::ResourceListChangedNotification(_)
            | ServerNotification::ToolListChangedNotification(_)
            | ServerNotification::PromptListChangedNotification(_)) => (self.owner_for(None), n),
            // SEP-2663 task status and other custom notifications are not relayed.
            _ => return Ok(()),
        };
        if let (Some(to), Some(n)) = (to, self.masked(n)) {
            let _ = to.send_notification(n).await;
        }
        Ok(())
    }

    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.sampling = Some(Default::default());
        caps.elicitation = Some(Default::default());
        caps.roots = Some(Default::default());
        ClientConfig::new(caps, Implementation::new("hal0-proxy", env!("CARGO_PKG_VERSION")))
    }
}
