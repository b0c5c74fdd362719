//! The floor of any agent relay on the benchmark's machine: the cheapest relay that speaks
//! what `bench_relay`'s clients speak, and nothing more. One axum server: `POST /mcp`
//! answers `initialize` without a session, `ask_agent` by sending the wake over the bot's
//! WebSocket and waiting for its `reply`, and `reply` by handing the answer to the waiting
//! ask, each as one JSON body; `GET /bridge/connect` holds a bot's socket. No schema, no
//! audit, no history, no limits, no progress, no SSE. `bench_relay` re-executes itself with
//! `--relay-floor` to run it in a process of its own, so what a relay costs on top of merely
//! passing the messages is measured in the same run rather than argued.

use axum::body::Bytes;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// The bots' keys: `bot-a` and `bot-b`, as `bench_relay`'s other relays have them.
pub const KEYS: [(&str, &str); 2] = [("floor-a", "bot-a"), ("floor-b", "bot-b")];

/// Re-execute this example with `--relay-floor`; the child and the port it serves.
pub fn spawn() -> (super::child::KillOnDrop, u16) {
    let (child, addr) = super::child::spawn_self(&["--relay-floor"], "RELAY-FLOOR ");
    (child, addr.parse::<std::net::SocketAddr>().unwrap().port())
}

#[derive(Default)]
struct Relay {
    /// Each connected bot's outbox.
    bots: Mutex<HashMap<&'static str, mpsc::UnboundedSender<String>>>,
    /// Asks waiting for their reply, by request id.
    waiting: Mutex<HashMap<String, oneshot::Sender<String>>>,
    next: AtomicU64,
}

type Shared = Arc<Relay>;

fn bot_of(h: &HeaderMap) -> Option<&'static str> {
    let key = h.get(header::AUTHORIZATION)?.to_str().ok()?.strip_prefix("Bearer ")?;
    KEYS.iter().find(|(k, _)| *k == key).map(|(_, name)| *name)
}

/// A JSON-RPC result whose tool content is `text`.
fn tool_result(id: &Value, text: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}});
    ([(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

async fn mcp(State(relay): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    if bot_of(&headers).is_none() {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else { return StatusCode::BAD_REQUEST.into_response() };
    let id = &msg["id"];
    match msg["method"].as_str() {
        Some("initialize") => {
            let result = json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                "serverInfo": {"name": "relay-floor", "version": "0"}});
            let body = json!({"jsonrpc": "2.0", "id": id, "result": result});
            ([(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
        }
        Some("tools/call") => {
            let args = &msg["params"]["arguments"];
            match msg["params"]["name"].as_str() {
                Some("ask_agent") => {
                    let request_id = relay.next.fetch_add(1, Ordering::Relaxed).to_string();
                    let wake = json!({"request_id": request_id, "conversation_id": "c", "from": "bot-a",
                                      "message": args["message"]})
                    .to_string();
                    let (done, answer) = oneshot::channel();
                    relay.waiting.lock().unwrap().insert(request_id.clone(), done);
                    let to = args["to"].as_str().unwrap_or_default();
                    let sent = relay.bots.lock().unwrap().get(to).is_some_and(|tx| tx.send(wake).is_ok());
                    if !sent {
                        relay.waiting.lock().unwrap().remove(&request_id);
                        return tool_result(id, r#"{"ok":false,"error":"agent_offline"}"#.into());
                    }
                    match answer.await {
                        Ok(a) => tool_result(id, json!({"ok": true, "answer": a}).to_string()),
                        Err(_) => tool_result(id, r#"{"ok":false,"error":"agent_disconnected"}"#.into()),
                    }
                }
                Some("reply") => {
                    let waiting = args["request_id"].as_str().and_then(|r| relay.waiting.lock().unwrap().remove(r));
                    let ok =
                        waiting.is_some_and(|w| w.send(args["answer"].as_str().unwrap_or_default().into()).is_ok());
                    tool_result(id, json!({"ok": ok}).to_string())
                }
                _ => StatusCode::BAD_REQUEST.into_response(),
            }
        }
        _ => StatusCode::ACCEPTED.into_response(),
    }
}

async fn connect(State(relay): State<Shared>, ws: WebSocketUpgrade, req: Request) -> Response {
    let Some(bot) = bot_of(req.headers()) else { return StatusCode::UNAUTHORIZED.into_response() };
    ws.on_upgrade(move |socket| hold(relay, bot, socket))
}

/// Send the bot its wakes until either side ends; frames from the bot are ignored.
async fn hold(relay: Shared, bot: &'static str, mut socket: WebSocket) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    relay.bots.lock().unwrap().insert(bot, tx);
    loop {
        tokio::select! {
            wake = rx.recv() => match wake {
                Some(w) => if socket.send(Message::Text(w.into())).await.is_err() { break },
                None => break,
            },
            frame = socket.recv() => if !matches!(frame, Some(Ok(_))) { break },
        }
    }
    relay.bots.lock().unwrap().remove(bot);
}

/// This example re-executed with `--relay-floor`: serve until stdin closes.
pub fn main() {
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(mcp))
        .route("/bridge/connect", axum::routing::get(connect))
        .route("/health", axum::routing::get(|| async { "ok" }))
        .with_state(Shared::default());
    super::child::serve_child("RELAY-FLOOR", app);
}
