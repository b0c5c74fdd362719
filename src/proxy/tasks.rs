//! Task-augmented calls through hal0's proxy (the experimental tasks of protocol 2025-11-25,
//! which the TypeScript SDK and server-everything speak), carried on the wire path
//! ([`super::wire_path`]) because rmcp's typed model has no room for them:
//! - `initialize`: the proxy declares the `tasks` capability (list, cancel, task-augmented
//!   `tools/call`) to a consumer that negotiated 2025-11-25 with a streamable-HTTP server;
//! - `tools/list` goes to the upstream as bytes, so each tool keeps what rmcp's `Tool` does
//!   not model (`execution.taskSupport`, new fields), under the same policy as rmcp's path;
//! - a `tools/call` with `task` of an allowed tool is forwarded with it and audited like any
//!   call; the task it creates is remembered for the consumer session that made it;
//! - `tasks/get`, `tasks/result` and `tasks/cancel` reach the server only for a task of the
//!   asking session (any other id is `mcp.task_unknown`, and nothing is sent), and
//!   `tasks/list` shows that session's tasks only. A request the server makes while a
//!   `tasks/result` is open (an elicitation for an `input_required` task) is put to the
//!   consumer like one made during a call.
//!
//! Not covered: a gated tool as a task (`mcp.task_gated`: the person's approval and the
//! task's life would have to be joined), stdio and legacy-SSE servers (rmcp's path drops
//! `task`), and the SEP-2663 tasks of protocol 2026-07-28.

use super::upstream::Upstream;
use super::wire::Wire;
use super::wire_path::{Answer, Ending, Purpose, Session, refused};
use super::{Proxy, Served, offer_tools, upstream_error};
use crate::base::error::{Error, Kind};
use crate::registry::record::Record;
use axum::body::Bytes;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// What the proxy declares of tasks: what server-everything declares.
const TASKS: &str = r#""tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}"#;
/// The protocol whose tasks the proxy relays.
const TASKS_VERSION: &str = r#""protocolVersion":"2025-11-25""#;

/// The refusal of a task-augmented call of gated `tool` on `id`.
pub(super) fn gated(id: &str, tool: &str) -> Error {
    Error::new(
        "mcp.task_gated",
        Kind::Forbidden,
        format!(
            "`{tool}` on `{id}` waits for a person's approval, and hal0 does not run a gated tool as a task; call it \
             without `task`, or an operator can allow it: hal0 mcp allow {id} {tool}"
        ),
    )
}

fn unknown(task: Option<&str>) -> Error {
    let msg = match task {
        Some(t) => format!(
            "task `{t}` was not created by a call of this session through hal0's proxy; a session can ask only about \
             its own tasks"
        ),
        None => "the request names no task: `taskId` (a string) is required".to_string(),
    };
    Error::new("mcp.task_unknown", Kind::Invalid, msg)
}

/// The id of the task a task-augmented call's `result` created.
pub(super) fn created(result: &str) -> Option<String> {
    let v: Value = serde_json::from_str(result).ok()?;
    v.get("task")?.get("taskId")?.as_str().map(str::to_string)
}

/// The server's `tools/list` `result` as the consumer sees it under `record`'s policy (each
/// shown tool as the server described it, but for a gated one's note; none quarantined:
/// see [`crate::registry::pins`]); `wire` learns which tools want parameter headers. `None` when the
/// result is not a tool list.
pub(super) fn offered(
    record: &Record,
    wire: &Wire,
    pins: &crate::registry::pins::Quarantine,
    store: &crate::store::Store,
    result: &str,
) -> Option<String> {
    let mut v: Map<String, Value> = serde_json::from_str(result).ok()?;
    let Some(Value::Array(tools)) = v.remove("tools") else { return None };
    wire.note_listed(&tools);
    let maps = tools
        .into_iter()
        .filter_map(|t| match t {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .collect();
    let shown: Vec<Value> = offer_tools(pins, store, record, maps).into_iter().map(Value::Object).collect();
    v.insert("tools".into(), Value::Array(shown));
    Some(Value::Object(v).to_string())
}

/// The server's `tasks/list` `result` with only `session`'s own tasks.
pub(super) fn own(session: &Session, result: &str) -> Option<String> {
    let mut v: Map<String, Value> = serde_json::from_str(result).ok()?;
    if let Some(Value::Array(tasks)) = v.get_mut("tasks") {
        tasks.retain(|t| t.get("taskId").and_then(Value::as_str).is_some_and(|id| session.made_task(id)));
    }
    Some(Value::Object(v).to_string())
}

/// Whether `body` is an `initialize` request.
pub fn is_initialize(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Method>(body).is_ok_and(|m| m.method.as_deref() == Some("initialize"))
}

/// A piece of the proxy's answer to `initialize`, with the `tasks` capability declared when
/// it is the result and the consumer negotiated the protocol whose tasks hal0 relays.
pub fn declare_tasks(chunk: Bytes) -> Bytes {
    const CAPS: &str = r#""capabilities":{"#;
    let Ok(text) = std::str::from_utf8(&chunk) else { return chunk };
    // A key can appear only outside strings (quotes inside a JSON string are escaped).
    if !text.contains(TASKS_VERSION) || text.contains(r#""tasks":"#) {
        return chunk;
    }
    let Some(at) = text.find(CAPS).map(|i| i + CAPS.len()) else { return chunk };
    let rest = &text[at..];
    let comma = if rest.trim_start().starts_with('}') { "" } else { "," };
    Bytes::from(format!("{}{TASKS}{comma}{rest}", &text[..at]))
}

/// A request's `params` as an object (none is an empty one); `None` when they are no object
/// (rmcp's path then refuses the request).
fn params_of(params: Option<&RawValue>) -> Option<Map<String, Value>> {
    match params {
        Some(p) if p.get() != "null" => serde_json::from_str(p.get()).ok(),
        _ => Some(Map::new()),
    }
}

/// `end`'s request of `method` with the consumer's params `p` (its progress token swapped
/// for hal0's id) and the `_meta` members the upstream's protocol wants.
fn request(end: &mut Ending, method: &str, mut p: Map<String, Value>, meta: &Map<String, Value>) -> String {
    let mut m = match p.remove("_meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    end.relay_token(&mut m);
    m.extend(meta.clone());
    if !m.is_empty() {
        p.insert("_meta".into(), Value::Object(m));
    }
    json!({"jsonrpc": "2.0", "id": end.up_id(), "method": method, "params": p}).to_string()
}

/// A request of the consumer sent on the wire path, and the upstream session it went to.
type Sent = (Result<Answer, (Ending, tokio_util::sync::CancellationToken)>, Arc<Upstream>);

impl Proxy {
    /// Send the consumer's request `id` of `method` with params `p` (for `purpose`) to the
    /// session's upstream session; `None` when the wire path cannot reach the server.
    async fn send(
        &self,
        served: &Arc<Served>,
        session: &Arc<Session>,
        purpose: Purpose,
        method: &str,
        id: &RawValue,
        p: Map<String, Value>,
    ) -> Option<Sent> {
        let up = self.wire_upstream(served, session).await?;
        let wire = up.wire.clone()?;
        let mut end = Ending::new(self, served, &up, session, purpose, method, id)?;
        let body = request(&mut end, method, p, wire.meta());
        Some((end.carry(body, method, None).await, up))
    }

    /// `tools/list` on the wire path; `None` leaves it to rmcp's path.
    pub(super) async fn wire_list(
        &self,
        served: &Arc<Served>,
        session: Arc<Session>,
        id: &RawValue,
        params: Option<&RawValue>,
    ) -> Option<Answer> {
        let p = params_of(params)?;
        let (sent, up) = self.send(served, &session, Purpose::Tools, "tools/list", id, p).await?;
        match sent {
            Ok(answer) => Some(answer),
            // The upstream session expired: rmcp's path reconnects and lists.
            Err((mut end, ct)) => {
                end.finish(None);
                self.drop_client(served, &session.consumer(None, ct), &up).await;
                None
            }
        }
    }

    /// `tasks/get`, `tasks/result`, `tasks/cancel` or `tasks/list` (`method`) on the wire
    /// path, for the session's own tasks only.
    pub(super) async fn wire_task(
        &self,
        served: &Arc<Served>,
        session: Arc<Session>,
        method: &str,
        id: &RawValue,
        params: Option<&RawValue>,
    ) -> Option<Answer> {
        let p = params_of(params);
        if method != "tasks/list" {
            let task = p.as_ref().and_then(|p| p.get("taskId")).and_then(Value::as_str);
            if !task.is_some_and(|t| session.made_task(t)) {
                return Some(refused(id, &unknown(task)));
            }
        }
        let purpose = match method {
            "tasks/result" => Purpose::TaskResult,
            "tasks/list" => Purpose::TaskList,
            _ => Purpose::Task,
        };
        let (sent, up) = self.send(served, &session, purpose, method, id, p?).await?;
        match sent {
            Ok(answer) => Some(answer),
            Err((mut end, ct)) => {
                self.drop_client(served, &session.consumer(None, ct), &up).await;
                let e = upstream_error(&served.record, "its session ended, and the tasks it held with it");
                Some(Answer::Events(super::wire_path::one(end.fail(&e))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capability_is_declared_once_and_only_on_2025_11_25() {
        let ev = |v: &str, caps: &str| {
            Bytes::from(format!(
                "data: {{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{{\"protocolVersion\":\"{v}\",\"capabilities\":{caps},\"serverInfo\":{{\"name\":\"x\",\"version\":\"1\"}}}}}}\n\n"
            ))
        };
        let parsed = |b: &Bytes| -> Value {
            let s = std::str::from_utf8(b).unwrap();
            serde_json::from_str(s.trim().strip_prefix("data: ").unwrap()).unwrap()
        };
        let out = declare_tasks(ev("2025-11-25", r#"{"tools":{}}"#));
        let v = parsed(&out);
        assert_eq!(v["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"], json!({}));
        assert_eq!(v["result"]["capabilities"]["tools"], json!({}));
        assert_eq!(declare_tasks(out.clone()), out, "declared once");
        let empty = parsed(&declare_tasks(ev("2025-11-25", "{}")));
        assert!(empty["result"]["capabilities"]["tasks"]["list"].is_object());
        let older = ev("2025-06-18", r#"{"tools":{}}"#);
        assert_eq!(declare_tasks(older.clone()), older);
        assert!(!declare_tasks(Bytes::from_static(b"\xff\xfe")).is_empty());
    }

    #[test]
    fn a_listing_shows_what_the_policy_offers_as_the_server_described_it() {
        let mut r =
            Record::new("ev", "Everything", "http://127.0.0.1:9/mcp", crate::registry::Transport::StreamableHttp);
        r.tools.allow = vec!["research".into()];
        r.tools.gated = vec!["maybe".into(), "must".into()];
        let wire = Wire::new(
            "http://127.0.0.1:9/mcp",
            reqwest::Client::new(),
            &Default::default(),
            Default::default(),
            &rmcp::model::ProtocolVersion::V_2025_06_18,
            &Default::default(),
        )
        .unwrap();
        let (_d, store) = crate::store::scratch();
        let task = |support: &str| json!({"taskSupport": support});
        let listed = json!({"nextCursor": "c2", "tools": [
            {"name": "research", "inputSchema": {"type": "object"}, "execution": task("required"), "icons": [{"src": "x"}]},
            {"name": "maybe", "description": "Maybe.", "inputSchema": {"type": "object"}, "execution": task("optional"),
             "outputSchema": {"type": "object"}},
            {"name": "must", "inputSchema": {"type": "object"}, "execution": task("required")},
            {"name": "hidden", "inputSchema": {"type": "object"}},
            "not a tool",
        ]});
        let out: Value =
            serde_json::from_str(&offered(&r, &wire, &Default::default(), &store, &listed.to_string()).unwrap())
                .unwrap();
        assert_eq!(out["nextCursor"], "c2");
        let tools = out["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["research", "maybe", "must"]);
        // Allowed: untouched, fields hal0 does not model included.
        assert_eq!(tools[0], listed["tools"][0]);
        // Gated: the note, no output schema, optional task support dropped, required kept.
        assert!(tools[1]["description"].as_str().unwrap().starts_with("Maybe. (hal0:"), "{out}");
        assert!(tools[1].get("outputSchema").is_none() && tools[1].get("execution").is_none(), "{out}");
        assert_eq!(tools[2]["execution"]["taskSupport"], "required");
        assert!(offered(&r, &wire, &Default::default(), &store, r#"{"tools": 5}"#).is_none());
        assert!(offered(&r, &wire, &Default::default(), &store, "[]").is_none());
    }

    #[test]
    fn a_created_task_is_read_from_the_result() {
        assert_eq!(created(r#"{"task":{"taskId":"t-1","status":"working"}}"#).as_deref(), Some("t-1"));
        assert_eq!(created(r#"{"content":[]}"#), None);
        assert_eq!(created("not json"), None);
    }

    #[test]
    fn an_initialize_request_is_told_apart() {
        assert!(is_initialize(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#));
        assert!(!is_initialize(br#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#));
        assert!(!is_initialize(b"nonsense"));
    }

    #[test]
    fn the_refusals_name_their_codes_and_the_way_out() {
        let e = gated("ev", "slow-tool");
        assert_eq!(e.code, "mcp.task_gated");
        assert!(e.message.contains("hal0 mcp allow ev slow-tool"), "{}", e.message);
        assert_eq!(unknown(Some("t-9")).code, "mcp.task_unknown");
        assert!(unknown(None).message.contains("taskId"));
    }
}
