//! `GET /bridge/connect`: a bot's WebSocket to the relay, wire-compatible with the
//! hermes-bridge adapter. Relay → bot: wake frames (JSON text). Bot → relay: heartbeats
//! `{"type":"heartbeat","request_id"}` (text or binary); anything else is ignored. The
//! relay pings every `[relay].ping_secs` and drops a socket that has not answered the
//! previous ping (a half-open connection); the socket closes at once when its key is revoked
//! or rotated, and when hal0 stops, even while a send is stuck on a bot that stopped reading.
//! A bot that takes no frame for 10 s, or whose unsent wakes pass
//! [`crate::relay::MAX_QUEUED_BYTES`], is dropped (its asks fail `agent_disconnected`).

use super::AppState;
use super::guard::Caller;
use crate::auth::Credential;
use crate::relay::Outbound;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Request, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::{SinkExt, StreamExt};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Close code sent when the bot's key stopped working: 4401, as the spec names it (bots
/// written against it reconnect with the new key).
const CLOSE_REVOKED: u16 = 4401;

/// The upgrade handler; the guard already checked the key (a bridge key with `relay`).
pub async fn connect(State(state): State<Arc<AppState>>, req: Request) -> Response {
    let auth = req.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_string);
    let Some(caller) = req.extensions().get::<Caller>().cloned() else {
        return crate::base::error::Error::forbidden("the relay answers bots only").into_response();
    };
    let Credential::Bridge(client) = caller.cred.clone() else {
        return crate::base::error::Error::forbidden("the relay answers bots: a bridge key holding the relay scope")
            .into_response();
    };
    let cancel = state.cancel.clone();
    let (mut parts, _) = req.into_parts();
    let ws = match WebSocketUpgrade::from_request_parts(&mut parts, &state).await {
        Ok(ws) => ws,
        Err(rejection) => return rejection.into_response(),
    };
    // Online before the bot reads the 101: an ask sent the moment its socket opens finds it.
    let (generation, outbound) = match state.relay.connected(&client.name).await {
        Ok(x) => x,
        Err(e) => return e.into_response(),
    };
    let online = Online { relay: state.relay.clone(), name: client.name, generation, armed: true };
    // Frames from bots are heartbeats: small. Wakes to bots are checked before sending.
    ws.max_message_size(64 * 1024)
        .on_upgrade(move |socket| run(state, online, outbound, auth, (caller.cred, caller.seen), socket, cancel))
}

/// A bot registered online; dropped without [`Online::close`] (the upgrade never completed),
/// it goes offline in the background.
struct Online {
    relay: Arc<crate::relay::Relay>,
    name: String,
    generation: u64,
    armed: bool,
}

impl Online {
    async fn close(mut self) {
        self.armed = false;
        self.relay.disconnected(&self.name, self.generation).await;
    }
}

impl Drop for Online {
    fn drop(&mut self) {
        if self.armed {
            let (relay, name, generation) = (self.relay.clone(), std::mem::take(&mut self.name), self.generation);
            tokio::spawn(async move { relay.disconnected(&name, generation).await });
        }
    }
}

use axum::extract::FromRequestParts;

async fn run(
    state: Arc<AppState>,
    online: Online,
    mut outbound: crate::relay::Outgoing,
    auth: Option<String>,
    cred: (Credential, u64),
    socket: WebSocket,
    cancel: CancellationToken,
) {
    let relay = state.relay.clone();
    // At shutdown the daemon waits (bounded) for this socket's close frame to go out.
    let _held = relay.hold();
    let _counted = crate::base::observe::metrics::websocket();
    let (name, generation) = (online.name.clone(), online.generation);
    tracing::info!(bot = name, generation, "relay: bot connected");
    let (mut sink, mut stream) = socket.split();
    let every = Duration::from_secs(state.config().relay.ping_secs);
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut unanswered = false;
    let revoked = super::revoke::until_revoked(state.clone(), auth, cred.0, cred.1);
    tokio::pin!(revoked);
    let kick = outbound.kick.clone();
    let why = loop {
        tokio::select! {
            out = outbound.recv() => match out {
                Some(Outbound::Text(t)) => {
                    // A bot that stops reading stalls this send: it must not hold revocation,
                    // shutdown or the queue's bound (the frame is dropped with the socket).
                    tokio::select! {
                        sent = tokio::time::timeout(SEND_STALL, sink.send(Message::Text(t.into()))) => match sent {
                            Ok(Ok(())) => {}
                            Ok(Err(e)) => break format!("send failed: {e}"),
                            Err(_) => break format!("the bot took no frame for {} s", SEND_STALL.as_secs()),
                        },
                        _ = &mut revoked => break "key revoked (the bot was not reading)".into(),
                        _ = cancel.cancelled() => break "hal0 is stopping (the bot was not reading)".into(),
                        _ = kick.cancelled() => break kicked(),
                    }
                }
                None => {
                    let _ = sink.send(close(1001, "the relay is stopping")).await;
                    break "the relay dropped the connection".into();
                }
            },
            frame = stream.next() => match frame {
                Some(Ok(Message::Text(t))) => heartbeat(&relay, &name, t.as_bytes()),
                Some(Ok(Message::Binary(b))) => heartbeat(&relay, &name, &b),
                Some(Ok(Message::Pong(_))) => unanswered = false,
                Some(Ok(Message::Ping(_))) => {} // answered by the WebSocket layer
                Some(Ok(Message::Close(_))) | None => break "closed by the bot".into(),
                Some(Err(e)) => break format!("read failed: {e}"),
            },
            _ = ping.tick() => {
                if unanswered {
                    break format!("no pong within {} s", every.as_secs());
                }
                unanswered = true;
                if let Err(e) = sink.send(Message::Ping(Default::default())).await {
                    break format!("ping failed: {e}");
                }
            }
            _ = kick.cancelled() => {
                let _ = tokio::time::timeout(Duration::from_secs(1), sink.send(close(CLOSE_BEHIND, "too far behind: read your socket"))).await;
                break kicked();
            }
            _ = &mut revoked => {
                let _ = sink.send(close(CLOSE_REVOKED, "the key was revoked or rotated")).await;
                break "key revoked".into();
            }
            _ = cancel.cancelled() => {
                let _ = sink.send(close(1001, "hal0 is stopping")).await;
                break "hal0 is stopping".into();
            }
        }
    };
    online.close().await;
    tracing::info!(bot = name, generation, "relay: bot disconnected ({why})");
}

/// How long one frame may wait for a bot to take it before the socket is dropped.
const SEND_STALL: Duration = Duration::from_secs(10);

/// Close code sent to a bot whose unsent wakes passed the relay's bound.
const CLOSE_BEHIND: u16 = 4002;

fn kicked() -> String {
    format!("its unsent wakes passed {} MiB", crate::relay::MAX_QUEUED_BYTES >> 20)
}

fn close(code: u16, reason: &'static str) -> Message {
    Message::Close(Some(CloseFrame { code, reason: reason.into() }))
}

/// A frame from the bot: a heartbeat re-arms the ask it names, if that ask waits for this
/// bot; anything else is ignored, as the hermes-bridge relay does.
fn heartbeat(relay: &crate::relay::Relay, name: &str, frame: &[u8]) {
    #[derive(serde::Deserialize)]
    struct Frame {
        #[serde(rename = "type")]
        kind: Option<String>,
        request_id: Option<String>,
    }
    let Ok(f) = serde_json::from_slice::<Frame>(frame) else { return };
    if f.kind.as_deref() == Some("heartbeat")
        && let Some(id) = f.request_id
        && !relay.heartbeat(name, &id)
    {
        tracing::debug!(bot = name, request_id = id, "relay: heartbeat for no ask of this bot, ignored");
    }
}
