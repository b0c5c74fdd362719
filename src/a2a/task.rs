//! A hal0 run as an A2A 1.0 `Task` (ProtoJSON: camelCase fields, SCREAMING_SNAKE enums):
//! the run's id is the task's, its session key the context, its status the task state, its
//! output the one artifact. Every text passes the bridge's view (the redactor) first.

use crate::bridge::ledger::{Run, RunStatus};
use crate::bridge::view;
use serde_json::{Value, json};

/// The id of the one artifact a task has: the run's output.
pub const ARTIFACT_ID: &str = "output";

/// A2A's task states, as the wire spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Submitted,
    Working,
    InputRequired,
    Completed,
    Failed,
    Canceled,
}

impl State {
    pub fn wire(self) -> &'static str {
        match self {
            State::Submitted => "TASK_STATE_SUBMITTED",
            State::Working => "TASK_STATE_WORKING",
            State::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            State::Completed => "TASK_STATE_COMPLETED",
            State::Failed => "TASK_STATE_FAILED",
            State::Canceled => "TASK_STATE_CANCELED",
        }
    }

    /// A state from the wire (`ListTasks`' filter); `None` for one hal0 never reports.
    pub fn parse(s: &str) -> Option<State> {
        [State::Submitted, State::Working, State::InputRequired, State::Completed, State::Failed, State::Canceled]
            .into_iter()
            .find(|x| x.wire() == s)
    }

    /// The run statuses this state covers (for filtering the ledger).
    pub fn statuses(self) -> &'static [&'static str] {
        match self {
            State::Submitted => &["queued"],
            State::Working => &["running", "stopping", "waiting_for_approval"],
            State::InputRequired => &["waiting_for_clarify"],
            State::Completed => &["completed"],
            State::Failed => &["failed", "interrupted"],
            State::Canceled => &["cancelled"],
        }
    }

    /// A state after which the task takes no more messages and its stream ends.
    pub fn is_terminal(self) -> bool {
        matches!(self, State::Completed | State::Failed | State::Canceled)
    }

    /// A state that ends a stream or a blocking send: terminal, or waiting on the client.
    pub fn ends_stream(self) -> bool {
        self.is_terminal() || self == State::InputRequired
    }
}

/// The A2A state of a run. A run waiting for a person's approval is still working (A2A has
/// no state for "waits on someone else"); its status message says which card waits.
pub fn state(run: &Run) -> State {
    match run.status {
        RunStatus::Queued => State::Submitted,
        RunStatus::Running | RunStatus::Stopping | RunStatus::WaitingForApproval => State::Working,
        RunStatus::WaitingForClarify => State::InputRequired,
        RunStatus::Completed => State::Completed,
        RunStatus::Failed | RunStatus::Interrupted => State::Failed,
        RunStatus::Cancelled => State::Canceled,
        // A state a newer Hermes reports that hal0 does not know: still going, unless it ended.
        RunStatus::Other(_) if run.finished => State::Failed,
        RunStatus::Other(_) => State::Working,
    }
}

/// The client's context for a run: the session key it gave (without hal0's `<client>:`
/// prefix), else the run itself.
pub fn context_id(run: &Run) -> String {
    run.session().unwrap_or(&run.run_id).to_string()
}

/// What the agent says with the status, when there is something to say: the question it
/// asks, the approval the run waits on, why it failed.
fn status_message(run: &Run, ctx: &str) -> Option<Value> {
    let pending = view::pending(run);
    let text = match (&run.status, pending["kind"].as_str()) {
        (RunStatus::WaitingForClarify, _) => {
            let mut q = pending["question"].as_str().unwrap_or("The agent asks a question.").to_string();
            if let Some(choices) = pending["choices"].as_array().filter(|c| !c.is_empty()) {
                let list: Vec<&str> = choices.iter().filter_map(Value::as_str).collect();
                q.push_str(&format!("\nChoices: {}", list.join(" | ")));
            }
            q
        }
        (RunStatus::WaitingForApproval, Some("approval")) => format!(
            "Waiting for a person to approve `{}` in the hal0 approvals inbox (card {}; on the box: hal0 approvals approve|deny {}).",
            pending["command"].as_str().unwrap_or("a command"),
            pending["approval_id"].as_str().unwrap_or("?"),
            pending["approval_id"].as_str().unwrap_or("ID"),
        ),
        (RunStatus::Interrupted, _) => "hal0 lost this run before it ended (Hermes restarted or forgot it).".into(),
        _ => match &run.error {
            Some(e) if run.finished => view::text(e),
            _ => return None,
        },
    };
    Some(json!({
        "messageId": format!("{}-status-{}", run.run_id, run.last_seq),
        "role": "ROLE_AGENT",
        "taskId": run.run_id,
        "contextId": ctx,
        "parts": [{"text": text}],
    }))
}

/// The task's status: its state, what the agent says with it, and when it last changed.
pub fn status(run: &Run) -> Value {
    let ctx = context_id(run);
    let mut s = json!({"state": state(run).wire(), "timestamp": run.updated_at});
    if let Some(m) = status_message(run, &ctx) {
        s["message"] = m;
    }
    s
}

/// hal0's own facts about the run, under `metadata.hal0`: the agent, the run's own
/// status, and the pending request (a question's `request_id`, an approval's card).
fn metadata(run: &Run) -> Value {
    json!({"hal0": {"agent": run.agent, "run_status": run.status, "pending": view::pending(run)}})
}

/// The output artifact with `text` (the whole output, or a chunk of it in a stream).
pub fn artifact(text: &str) -> Value {
    json!({"artifactId": ARTIFACT_ID, "name": "output", "parts": [{"text": text}]})
}

/// The run as a task. `artifacts`: include the output (absent while there is none).
/// hal0 keeps no message history (the ledger holds a preview of the input), so `history`
/// is always empty.
pub fn task(run: &Run, artifacts: bool) -> Value {
    let mut t = json!({
        "id": run.run_id,
        "contextId": context_id(run),
        "status": status(run),
        "metadata": metadata(run),
    });
    if artifacts && !run.output.is_empty() {
        t["artifacts"] = json!([artifact(&view::whole_output(run))]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(status: RunStatus, finished: bool) -> Run {
        Run {
            run_id: "run_1".into(),
            client: "ci".into(),
            session_key: Some("ci:ctx-9".into()),
            status,
            finished,
            ..Run::queued("2026-12-07T00:00:00Z".into())
        }
    }

    #[test]
    fn every_run_status_has_a_state_and_filters_back_to_it() {
        let cases = [
            (RunStatus::Queued, false, State::Submitted),
            (RunStatus::Running, false, State::Working),
            (RunStatus::Stopping, false, State::Working),
            (RunStatus::WaitingForApproval, false, State::Working),
            (RunStatus::WaitingForClarify, false, State::InputRequired),
            (RunStatus::Completed, true, State::Completed),
            (RunStatus::Failed, true, State::Failed),
            (RunStatus::Interrupted, true, State::Failed),
            (RunStatus::Cancelled, true, State::Canceled),
            (RunStatus::Other("paused".into()), false, State::Working),
            (RunStatus::Other("exploded".into()), true, State::Failed),
        ];
        for (status, finished, want) in cases {
            let r = run(status.clone(), finished);
            assert_eq!(state(&r), want, "{status}");
            if !matches!(status, RunStatus::Other(_)) {
                assert!(want.statuses().contains(&status.to_string().as_str()), "{status} filters as {want:?}");
            }
            assert_eq!(State::parse(want.wire()), Some(want));
        }
        assert_eq!(State::parse("TASK_STATE_REJECTED"), None);
    }

    #[test]
    fn the_context_is_the_session_key_without_the_client_prefix() {
        assert_eq!(context_id(&run(RunStatus::Running, false)), "ctx-9");
        let r = Run { session_key: None, ..run(RunStatus::Running, false) };
        assert_eq!(context_id(&r), "run_1");
    }

    #[test]
    fn a_question_is_the_status_message_and_its_secrets_are_masked() {
        let key = "hal0ak_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz1234567";
        let r = Run {
            pending: Some(json!({"kind": "clarify", "request_id": "q1", "question": format!("use {key}?"),
                                 "choices": ["yes", "no"]})),
            ..run(RunStatus::WaitingForClarify, false)
        };
        let t = task(&r, true);
        let text = t["status"]["message"]["parts"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("use ") && text.contains("Choices: yes | no"), "{text}");
        assert!(!t.to_string().contains(key), "{t}");
        assert_eq!(t["metadata"]["hal0"]["pending"]["request_id"], "q1");
        assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        assert!(t.get("artifacts").is_none(), "no output, no artifact");
    }
}
