//! A task followed as server-sent events (`SendStreamingMessage`, `SubscribeToTask`): each
//! event's data is an A2A `StreamResponse` (in the JSON-RPC binding, as the result of a
//! JSON-RPC response). First the
//! task; then, as the run goes, its output as artifact chunks (the bridge's redacted
//! windows, so a secret split across chunks is still masked) and a status update whenever
//! its state or status message changes. The stream ends after the update that shows the
//! task ended or waits for input, when the client leaves, or when the daemon stops.

use super::methods::Face;
use super::task;
use crate::bridge::ledger::Run;
use crate::bridge::{Asker, Bridge, view};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the stream reads the run when nothing woke it (a change another process
/// made does not notify this one).
const POLL: Duration = Duration::from_millis(500);

/// Where a stream is.
struct Cursor {
    bridge: Bridge,
    asker: Asker,
    run_id: String,
    /// Output bytes sent as artifact chunks.
    offset: i64,
    /// The state and status message last sent.
    shown: Value,
    /// Whether a chunk of the output was sent (the next one appends).
    chunked: bool,
    done: bool,
}

/// The part of a status that a client is told about again when it changes (not the time).
fn shown(run: &Run) -> Value {
    let s = task::status(run);
    json!([s["state"], s["message"]["parts"]])
}

/// The stream responses `run` calls for since `c`, and the cursor moved past them.
fn step(c: &mut Cursor, run: &Run) -> crate::base::error::Result<Vec<Value>> {
    let (id, ctx) = (run.run_id.clone(), task::context_id(run));
    let mut out = Vec::new();
    let state = task::state(run);
    let ended = run.finished || state.is_terminal();
    while (c.offset as usize) < run.output.len() {
        let w = view::run_view(run, c.offset)?;
        let next = w["next_offset"].as_i64().unwrap_or(run.output.len() as i64);
        if next <= c.offset {
            break;
        }
        let last = ended && next as usize >= run.output.len();
        out.push(json!({"artifactUpdate": {
            "taskId": id, "contextId": ctx, "artifact": task::artifact(w["output"].as_str().unwrap_or_default()),
            "append": c.chunked, "lastChunk": last,
        }}));
        c.chunked = true;
        c.offset = next;
    }
    // Everything was sent before the run ended: the last chunk is an empty one.
    if ended && c.chunked && !out.iter().any(|e| e["artifactUpdate"]["lastChunk"] == true) {
        out.push(json!({"artifactUpdate": {
            "taskId": id, "contextId": ctx, "artifact": task::artifact(""), "append": true, "lastChunk": true,
        }}));
    }
    let now = shown(run);
    if now != c.shown || ended {
        out.push(json!({"statusUpdate": {"taskId": id, "contextId": ctx, "status": task::status(run)}}));
        c.shown = now;
    }
    c.done = ended || state.ends_stream();
    Ok(out)
}

/// One event: a JSON-RPC response answering `rpc_id`, or (HTTP+JSON) the bare result.
fn event(rpc_id: &Option<Value>, result: Value) -> Event {
    let data = match rpc_id {
        Some(id) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        None => result,
    };
    Event::default().data(data.to_string())
}

/// The SSE response following `run` for `face`'s caller.
pub fn stream(face: &Face, run: Run, rpc_id: Option<Value>, cancel: CancellationToken) -> Response {
    let mut c = Cursor {
        bridge: face.bridge.clone(),
        asker: face.asker.clone(),
        run_id: run.run_id.clone(),
        offset: 0,
        shown: shown(&run),
        chunked: false,
        done: false,
    };
    let mut first = VecDeque::from([event(&rpc_id, json!({"task": task::task(&run, false)}))]);
    match step(&mut c, &run) {
        Ok(evs) => first
            .extend(evs.into_iter().filter(|e| e.get("statusUpdate").is_none() || c.done).map(|e| event(&rpc_id, e))),
        Err(e) => tracing::debug!(code = e.code, "A2A stream: {}", e.message),
    }
    let watch = c.bridge.subscribe(&c.run_id);
    let s = futures::stream::unfold(
        (c, first, watch, cancel, rpc_id),
        |(mut c, mut queue, mut watch, cancel, rpc_id)| async move {
            loop {
                if let Some(ev) = queue.pop_front() {
                    return Some((Ok::<Event, Infallible>(ev), (c, queue, watch, cancel, rpc_id)));
                }
                if c.done {
                    return None;
                }
                tokio::select! {
                    _ = cancel.cancelled() => return None,
                    _ = tokio::time::timeout(POLL, watch.changed()) => {}
                }
                let run = match c.bridge.run(&c.asker, &c.run_id).await {
                    Ok(r) => r,
                    // The run was pruned, or the store failed: the stream ends.
                    Err(e) => {
                        tracing::debug!(code = e.code, "A2A stream ends: {}", e.message);
                        return None;
                    }
                };
                match step(&mut c, &run) {
                    Ok(evs) => queue.extend(evs.into_iter().map(|e| event(&rpc_id, e))),
                    Err(e) => {
                        tracing::debug!(code = e.code, "A2A stream ends: {}", e.message);
                        return None;
                    }
                }
            }
        },
    );
    let mut r = Sse::new(s).keep_alive(KeepAlive::default()).into_response();
    r.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-store"));
    r
}
