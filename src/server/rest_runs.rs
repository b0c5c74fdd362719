//! `GET /api/runs/{run_id}/stream`: one run followed live as server-sent events, for the
//! dashboard's Runs page (and `curl -N`). Everything in it passes the same redactor as
//! `run_get` and `run_events`:
//!
//! - `status`: the run view without its output, first and whenever it changes;
//! - `output`: `{offset, text, next}`, the redacted output from byte `offset` on, in 16 KiB
//!   windows (`next` is where the following window starts);
//! - `events`: `{events, last_seq}`, stored events after the last one sent;
//! - `end`: the run has finished and everything stored was sent; the stream closes.
//!
//! `?offset=` and `?since=` resume a stream (an `EventSource` that reconnects starts over).

use super::AppState;
use crate::base::error::{Error, Result};
use crate::bridge::{ledger, view};
use axum::extract::{Path, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// How often the stream reads the ledger when nothing woke it (a change made by another
/// process does not notify this one).
const POLL: Duration = Duration::from_millis(500);
/// Events read per step.
const EVENTS_PAGE: i64 = 200;

#[derive(Debug, Default, serde::Deserialize)]
pub struct Resume {
    #[serde(default)]
    offset: Option<String>,
    #[serde(default)]
    since: Option<String>,
}

fn number(name: &str, v: Option<&str>) -> Result<i64> {
    match v {
        None | Some("") => Ok(0),
        Some(t) => t.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
            Error::invalid("runs.invalid_filter", format!("{name} must be a whole number, 0 or more (got `{t}`)"))
        }),
    }
}

/// Where a stream is: the output sent up to `offset`, events up to `since`, the last status.
struct Cursor {
    run_id: String,
    offset: i64,
    since: i64,
    status: Option<Value>,
    done: bool,
}

/// What changed since `c`: the events to send (in order) and the cursor moved past them.
fn step(store: &crate::store::Store, c: &mut Cursor) -> Result<Vec<Event>> {
    let run = crate::bridge::load_any(store, &c.run_id)?;
    let mut out = Vec::new();
    let v = view::status_view(&run);
    if c.status.as_ref() != Some(&v) {
        out.push(Event::default().event("status").data(v.to_string()));
        c.status = Some(v);
    }
    while (c.offset as usize) < run.output.len() {
        let w = view::run_view(&run, c.offset)?;
        let next = w["next_offset"].as_i64().unwrap_or(run.output.len() as i64);
        if next <= c.offset {
            break;
        }
        out.push(
            Event::default()
                .event("output")
                .data(json!({"offset": w["output_offset"], "text": w["output"], "next": next}).to_string()),
        );
        c.offset = next;
    }
    loop {
        let evs = ledger::events(store, &run.run_id, c.since, EVENTS_PAGE)?;
        if evs.is_empty() {
            break;
        }
        let views = view::events_view(store, &run, &evs)?;
        c.since = evs.last().map_or(c.since, |e| e.seq);
        out.push(Event::default().event("events").data(json!({"events": views, "last_seq": c.since}).to_string()));
        if (evs.len() as i64) < EVENTS_PAGE {
            break;
        }
    }
    if run.finished {
        out.push(Event::default().event("end").data(json!({"status": run.status}).to_string()));
        c.done = true;
    }
    Ok(out)
}

/// `GET /api/runs/{run_id}/stream`: the run as SSE until it finishes or the client leaves.
pub async fn stream(
    State(state): State<Arc<AppState>>,
    Path(run_id): Path<String>,
    Query(q): Query<Resume>,
) -> Response {
    let cursor = match (number("offset", q.offset.as_deref()), number("since", q.since.as_deref())) {
        (Ok(offset), Ok(since)) => Cursor { run_id, offset, since, status: None, done: false },
        (Err(e), _) | (_, Err(e)) => return e.into_response(),
    };
    // The first step answers a missing run or a bad id with its error, not an empty stream.
    let store = state.store.clone();
    let (first, cursor) = match store
        .call(move |s| {
            let mut c = cursor;
            step(s, &mut c).map(|evs| (evs, c))
        })
        .await
    {
        Ok(x) => x,
        Err(e) => return e.into_response(),
    };
    let watch = state.bridge.get().map(|b| b.subscribe(&cursor.run_id));
    let cancel = state.cancel.clone();
    let s = futures::stream::unfold(
        (store, cursor, VecDeque::from(first), watch, cancel),
        |(store, cursor, mut queue, mut watch, cancel)| async move {
            let mut cursor = cursor;
            loop {
                if let Some(ev) = queue.pop_front() {
                    return Some((Ok::<Event, Infallible>(ev), (store, cursor, queue, watch, cancel)));
                }
                if cursor.done {
                    return None;
                }
                let woke = async {
                    match watch.as_mut() {
                        Some(w) => w.changed().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = cancel.cancelled() => return None,
                    _ = tokio::time::timeout(POLL, woke) => {}
                }
                let (evs, c) = match store.call(move |s| step(s, &mut cursor).map(|evs| (evs, cursor))).await {
                    Ok(x) => x,
                    // The run was pruned, or the store failed: the stream ends.
                    Err(e) => {
                        tracing::debug!(code = e.code, "run stream ends: {}", e.message);
                        return None;
                    }
                };
                cursor = c;
                queue.extend(evs);
            }
        },
    );
    let mut r = Sse::new(s).keep_alive(KeepAlive::default()).into_response();
    r.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-store"));
    r
}
