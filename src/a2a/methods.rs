//! A2A's task methods over the agent bridge: `SendMessage` starts a run (or answers the
//! question of the task it names), `GetTask`, `ListTasks` and `CancelTask` read and stop
//! runs. Only translation lives here: who may see which run, the per-client cap,
//! idempotency and redaction are the bridge's ([`crate::bridge::Bridge`]).

use super::rpc::{RpcError, RpcResult};
use super::task::{self, State};
use crate::base::progress::Progress;
use crate::bridge::ledger::{Cursor, Query, Run};
use crate::bridge::{Asker, Bridge, StartRequest};
use serde::Deserialize;
use serde_json::{Value, json};

/// How long a blocking `SendMessage` waits for the task to end or ask before it answers
/// with the task still working (under the 60 s after which common clients give up; the
/// client then polls `GetTask` or subscribes).
pub const BLOCK_S: u64 = crate::bridge::WAIT_DEFAULT_QUIET_S;
/// How long `CancelTask` waits for the run to end before it answers.
const CANCEL_WAIT_S: u64 = 10;
/// `ListTasks`' page size: the default and the most.
const PAGE_DEFAULT: i64 = 50;
const PAGE_MAX: i64 = 100;

/// One caller's view of one agent: the bridge, who asks, and the agent (`hermes` or
/// `hermes/<profile>`) whose interface was called.
pub struct Face {
    pub bridge: Bridge,
    pub asker: Asker,
    pub agent: String,
}

impl Face {
    /// A run of this caller on this agent; a run of another agent is not found here.
    async fn run(&self, id: &str) -> RpcResult<Run> {
        Ok(self.bridge.run_on(&self.asker, &self.agent, id).await?)
    }

    /// Wait until `run` ends or asks (at most `secs`), then read it again.
    async fn settle(&self, run: Run, secs: u64) -> RpcResult<Run> {
        if task::state(&run).ends_stream() {
            return Ok(run);
        }
        self.bridge.wait(&self.asker, &run.run_id, Some(secs), &Progress::none()).await?;
        self.run(&run.run_id).await
    }
}

pub(super) fn params<T: serde::de::DeserializeOwned>(v: Value) -> RpcResult<T> {
    serde_json::from_value(v).map_err(|e| RpcError::invalid("a2a.invalid_params", format!("{e}")))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SendParams {
    message: Option<Message>,
    #[serde(default)]
    configuration: Configuration,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Configuration {
    #[serde(default)]
    return_immediately: bool,
    #[serde(default)]
    history_length: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Message {
    #[serde(default)]
    message_id: String,
    #[serde(default)]
    pub(super) context_id: Option<String>,
    #[serde(default)]
    pub(super) task_id: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    parts: Vec<Value>,
}

impl Message {
    /// The message's text: its text parts, one after another. hal0 hands Hermes text only.
    pub(super) fn text(&self) -> RpcResult<String> {
        let mut out = Vec::new();
        for p in &self.parts {
            match p.get("text").and_then(Value::as_str) {
                Some(t) => out.push(t),
                None => {
                    let kind = ["raw", "url", "data"].into_iter().find(|k| p.get(*k).is_some()).unwrap_or("unknown");
                    return Err(RpcError::content_type(format!(
                        "hal0 passes text to Hermes; this message has a `{kind}` part (send the content as text)"
                    )));
                }
            }
        }
        let text = out.join("\n");
        if text.trim().is_empty() {
            return Err(RpcError::invalid("a2a.empty_message", "the message has no text: send at least one text part"));
        }
        Ok(text)
    }
}

/// A `historyLength`: 0 or more (hal0 keeps no history, so any such length is met).
fn history(h: Option<i64>) -> RpcResult<()> {
    match h {
        Some(h) if h < 0 => Err(RpcError::invalid("a2a.invalid_params", "historyLength must be 0 or more")),
        _ => Ok(()),
    }
}

/// The message of a send, checked: present, from the user, with an id.
pub(super) fn message(p: SendParams) -> RpcResult<(Message, Configuration)> {
    let Some(m) = p.message else {
        return Err(RpcError::invalid("a2a.invalid_params", "params.message is required"));
    };
    if m.role.as_deref().is_some_and(|r| !matches!(r, "ROLE_USER" | "ROLE_UNSPECIFIED")) {
        return Err(RpcError::invalid("a2a.invalid_params", "a message to an agent has role ROLE_USER"));
    }
    if m.message_id.is_empty() {
        return Err(RpcError::invalid("a2a.invalid_params", "message.messageId is required (a unique id per message)"));
    }
    history(p.configuration.history_length)?;
    Ok((m, p.configuration))
}

/// Deliver `m`: start a run for a new task, or give the message to the task it names (the
/// bridge decides what it is: the answer to its question, or guidance while it works).
/// The run as it stands after.
async fn deliver(face: &Face, m: Message) -> RpcResult<Run> {
    let text = m.text()?;
    let Some(task_id) = m.task_id.as_deref().filter(|t| !t.is_empty()) else {
        // The message id is the start's idempotency key, so a client that sends the same
        // message again gets the same task; a context made up for it is derived from it too.
        let context = match m.context_id.filter(|c| !c.is_empty()) {
            Some(c) => c,
            None => {
                let seed = format!("{}:{}", face.asker.client, m.message_id);
                format!("ctx-{}", &crate::base::token::sha256_hex(&seed)[..16])
            }
        };
        let req = StartRequest {
            agent: face.agent.clone(),
            input: text,
            session_key: Some(context),
            idempotency_key: Some(m.message_id),
            ..Default::default()
        };
        let view = face.bridge.start(&face.asker, req, &Progress::none()).await?;
        let id = view["run_id"].as_str().unwrap_or_default().to_string();
        return face.run(&id).await;
    };
    let run = face.run(task_id).await?;
    if let Some(c) = m.context_id.filter(|c| !c.is_empty())
        && c != task::context_id(&run)
    {
        return Err(RpcError::invalid("a2a.context_mismatch", "contextId is not the context of the task named"));
    }
    Ok(face.bridge.message(&face.asker, &face.agent, task_id, &text).await?)
}

/// `SendMessage`: deliver the message and, unless `returnImmediately`, wait (at most
/// [`BLOCK_S`]) until the task ends or asks. `{task}`.
pub async fn send(face: &Face, p: Value) -> RpcResult<Value> {
    let (m, config) = message(params(p)?)?;
    let run = deliver(face, m).await?;
    let run = if config.return_immediately { run } else { face.settle(run, BLOCK_S).await? };
    Ok(json!({"task": task::task(&run, true)}))
}

/// `SendStreamingMessage`: deliver the message; the stream follows the run.
pub async fn send_for_stream(face: &Face, p: Value) -> RpcResult<Run> {
    let (m, _) = message(params(p)?)?;
    deliver(face, m).await
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct IdParams {
    #[serde(default)]
    id: String,
    #[serde(default)]
    history_length: Option<i64>,
}

fn id_params(p: Value) -> RpcResult<IdParams> {
    let p: IdParams = params(p)?;
    if p.id.is_empty() {
        return Err(RpcError::invalid("a2a.invalid_params", "params.id (the task's id) is required"));
    }
    history(p.history_length)?;
    Ok(p)
}

/// `GetTask`: the task with its output.
pub async fn get(face: &Face, p: Value) -> RpcResult<Value> {
    let p = id_params(p)?;
    Ok(task::task(&face.run(&p.id).await?, true))
}

/// `SubscribeToTask`: the run to stream, while it has not ended.
pub async fn subscribable(face: &Face, p: Value) -> RpcResult<Run> {
    let p = id_params(p)?;
    let run = face.run(&p.id).await?;
    if task::state(&run).is_terminal() {
        return Err(RpcError::unsupported("a2a.task_ended", "the task has ended; GetTask reads it"));
    }
    Ok(run)
}

/// `CancelTask`: stop the run and wait briefly for it to end. A task that has ended cannot
/// be cancelled.
pub async fn cancel(face: &Face, p: Value) -> RpcResult<Value> {
    let p = id_params(p)?;
    let run = face.run(&p.id).await?;
    let state = task::state(&run);
    if state.is_terminal() {
        return Err(RpcError::not_cancelable(format!("the task has ended ({})", state.wire())));
    }
    face.bridge.stop(&face.asker, &p.id).await?;
    let run = face.settle(face.run(&p.id).await?, CANCEL_WAIT_S).await?;
    Ok(task::task(&run, true))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListParams {
    #[serde(default)]
    context_id: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    page_size: Option<i64>,
    #[serde(default)]
    page_token: Option<String>,
    #[serde(default)]
    history_length: Option<i64>,
    #[serde(default)]
    status_timestamp_after: Option<String>,
    #[serde(default)]
    include_artifacts: bool,
}

/// A page token: where the last page ended, as `<row>~<created_at>`.
fn token(c: &Cursor) -> String {
    format!("{}~{}", c.rowid, c.created_at)
}

fn cursor(t: &str) -> RpcResult<Cursor> {
    t.split_once('~')
        .and_then(|(row, at)| Some(Cursor { rowid: row.parse().ok()?, created_at: at.to_string() }))
        .ok_or_else(|| {
            RpcError::invalid("a2a.invalid_page_token", "pageToken is not one hal0 gave (use nextPageToken)")
        })
}

/// `ListTasks`: this caller's tasks on this agent, newest first, filtered by context and
/// state, a page at a time (`nextPageToken` empty on the last page).
pub async fn list(face: &Face, p: Value) -> RpcResult<Value> {
    let p: ListParams = params(p)?;
    let size = p.page_size.filter(|s| *s != 0).unwrap_or(PAGE_DEFAULT);
    if !(1..=PAGE_MAX).contains(&size) {
        return Err(RpcError::invalid("a2a.invalid_params", format!("pageSize must be 1 to {PAGE_MAX}")));
    }
    history(p.history_length)?;
    let statuses = match p.status.as_deref().filter(|s| !s.is_empty() && *s != "TASK_STATE_UNSPECIFIED") {
        None => None,
        Some(s) => match State::parse(s) {
            Some(state) => Some(state.statuses().iter().map(|x| x.to_string()).collect()),
            // A state hal0 never reports (rejected, auth-required): no task has it.
            None if s.starts_with("TASK_STATE_") => Some(Vec::new()),
            None => return Err(RpcError::invalid("a2a.invalid_params", format!("status `{s}` is not a task state"))),
        },
    };
    let updated_after = match p.status_timestamp_after.as_deref() {
        None => None,
        Some(t) => Some(stamp(t)?),
    };
    let session_key = p.context_id.filter(|c| !c.is_empty()).map(|c| Bridge::session_key_of(&face.asker, &c));
    let q = Query {
        agent: Some(face.agent.clone()),
        statuses,
        session_key,
        updated_after,
        after: p.page_token.as_deref().filter(|t| !t.is_empty()).map(cursor).transpose()?,
        limit: size,
        ..Default::default()
    };
    let (page, total) = face.bridge.runs(&face.asker, q).await?;
    let next = if page.len() as i64 == size { page.last().map(|(_, c)| token(c)) } else { None };
    let tasks: Vec<Value> = page.iter().map(|(r, _)| task::task(r, p.include_artifacts)).collect();
    Ok(json!({
        "tasks": tasks,
        "nextPageToken": next.unwrap_or_default(),
        "pageSize": size,
        "totalSize": total,
    }))
}

/// An RFC 3339 time as the ledger writes its stamps (UTC, whole seconds).
fn stamp(t: &str) -> RpcResult<String> {
    use time::format_description::well_known::Rfc3339;
    let at = time::OffsetDateTime::parse(t, &Rfc3339).map_err(|_| {
        RpcError::invalid("a2a.invalid_params", format!("statusTimestampAfter `{t}` is not an RFC 3339 time"))
    })?;
    let at = at.to_offset(time::UtcOffset::UTC);
    Ok(at.replace_nanosecond(0).unwrap_or(at).format(&Rfc3339).unwrap_or_default())
}
