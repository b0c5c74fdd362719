//! A gated proxied call on protocol 2026-07-28, where no request is held open while a
//! person decides: the call is queued as a card and answered at once with a multi
//! round-trip `input_required` result (SEP-2322) whose input request points the person to
//! the card (URL-mode elicitation when the client has it, else a form that says where the
//! card is) and whose `requestState` names the card. Each retry carrying that state gets
//! the card's outcome: still `input_required` while it waits, the approved call's result
//! once it ran, or why it did not run (denied, expired, withdrawn; a caller that declines
//! the input request withdraws its card). The state is only a handle: a retry must come
//! from the same caller, for the same server, tool and arguments.
//!
//! Protocols before 2026-07-28 keep the held request (`Waiting::Hold`).

use super::{Call, KIND, Proxy, error_result};
use crate::approvals::{self, Status};
use crate::base::error::{Error, Kind};
use crate::base::progress::Progress;
use crate::registry::record::Record;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, InputRequest, InputRequests, InputRequiredResult,
    InputResponses,
};
use serde_json::{Value, json};
use std::time::Duration;

/// What a `requestState` of hal0's starts with; the card's id follows.
const STATE: &str = "hal0-approval:";
/// The key of the one input request hal0 makes.
const KEY: &str = "approval";

/// How the consumer of a gated call waits for a person.
pub enum Waiting<'a> {
    /// Held open (reporting to this progress) up to `[mcp].gate_wait_secs`.
    Hold(&'a Progress),
    /// Answered at once, round by round (2026-07-28).
    Rounds(Rounds),
}

/// How the client can be asked to bring a person to the card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elicit {
    /// URL-mode elicitation: the client opens the card's address for its person.
    Url,
    /// A form with no fields whose message names the card's address.
    Form,
    /// No elicitation: `requestState` only (the client retries on its own).
    Nothing,
}

/// One round of a 2026-07-28 call: what the client echoed and what it can be asked.
#[derive(Debug, Clone)]
pub struct Rounds {
    pub request_state: Option<String>,
    pub responses: Option<InputResponses>,
    pub elicit: Elicit,
}

impl Elicit {
    /// What a client declaring `caps` can be asked.
    pub fn of(caps: Option<&ClientCapabilities>) -> Elicit {
        match caps.and_then(|c| c.elicitation.as_ref()) {
            Some(e) if e.url.is_some() => Elicit::Url,
            Some(_) => Elicit::Form,
            None => Elicit::Nothing,
        }
    }
}

/// Whether a request of `context` is on protocol 2026-07-28 or later, where no request is
/// held open for a person.
pub fn modern(context: &rmcp::service::RequestContext<rmcp::RoleServer>) -> bool {
    context.protocol_version().is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28)
}

/// The card a `requestState` of hal0's names (`None`: not one hal0 gave).
pub fn card_of(state: &str) -> Option<&str> {
    state.strip_prefix(STATE).filter(|id| !id.is_empty())
}

/// Whether the client's person declined or cancelled hal0's input request.
pub fn declined(responses: Option<&InputResponses>) -> bool {
    responses
        .and_then(|r| r.get(KEY))
        .and_then(|v| v["action"].as_str())
        .is_some_and(|a| a == "decline" || a == "cancel")
}

impl Rounds {
    /// The round `params` is, from a client declaring `caps`.
    pub fn of(params: &CallToolRequestParams, caps: Option<&ClientCapabilities>) -> Rounds {
        Rounds {
            request_state: params.request_state.clone(),
            responses: params.input_responses.clone(),
            elicit: Elicit::of(caps),
        }
    }

    fn declined(&self) -> bool {
        declined(self.responses.as_ref())
    }
}

/// An `input_required` result that brings a person to card `id` (`what` says why it
/// waits), in the form the client takes; its `requestState` names the card.
pub fn ask_for_card(cfg: &crate::config::Config, id: &str, what: &str, elicit: Elicit) -> CallToolResponse {
    let url = crate::connect::card_url(cfg, id);
    let message = format!(
        "{what}: approval {id} waits in hal0's approvals inbox at {url} (or at the shell: hal0 approvals approve {id})."
    );
    let params = match elicit {
        Elicit::Url => Some(json!({"mode": "url", "message": message, "url": url, "elicitationId": id})),
        Elicit::Form => Some(json!({
            "mode": "form",
            "message": format!("{message} Answer once a person has decided."),
            "requestedSchema": {"type": "object", "properties": {}},
        })),
        Elicit::Nothing => None,
    };
    let requests: Option<InputRequests> = params
        .and_then(|p| serde_json::from_value::<InputRequest>(json!({"method": "elicitation/create", "params": p})).ok())
        .map(|r| [(KEY.to_string(), r)].into());
    InputRequiredResult::new(requests, Some(format!("{STATE}{id}"))).into()
}

/// Why a gated call's card waits.
fn why(tool: &str, server: &str) -> String {
    format!("A person must approve `{tool}` on `{server}` before it runs")
}

fn state_invalid(why: &str) -> Error {
    Error::new(
        "mcp.request_state_invalid",
        Kind::Invalid,
        format!("this retry's requestState {why}; call the tool again without it"),
    )
}

impl Proxy {
    /// Queue gated call `c` and answer at once with where its card is.
    pub(super) async fn ask_person(&self, r: &Record, c: &Call<'_>, rounds: &Rounds) -> CallToolResponse {
        match self.queue(r, c).await {
            Ok(row) => ask_for_card(&self.config(), &row.id, &why(c.tool, &r.id), rounds.elicit),
            Err(refusal) => refusal.into(),
        }
    }

    /// A retry whose `requestState` is not its own: refused (and audited), nothing runs.
    async fn refuse_state(&self, c: &Call<'_>, why: &str) -> CallToolResponse {
        let e = state_invalid(why);
        self.audit(c, crate::audit::Verdict::Refused, Some(e.code), None).await;
        error_result(&e).into()
    }

    /// A retry of queued call `c` carrying `state`: what became of its card.
    pub(super) async fn resume(&self, r: &Record, c: &Call<'_>, state: &str, rounds: &Rounds) -> CallToolResponse {
        let Some(id) = card_of(state).map(str::to_string) else {
            return self.refuse_state(c, "is not one hal0 gave").await;
        };
        let card = {
            let id = id.clone();
            self.store.call(move |s| approvals::get(s, &id)).await
        };
        let Ok(card) = card else { return self.refuse_state(c, "names no approval").await };
        let args = Value::Object(c.args.clone().unwrap_or_default());
        let bound = card.kind == KIND
            && card.client == c.who.client
            && card.arguments["server"] == json!(r.id)
            && card.arguments["tool"] == json!(c.tool)
            && approvals::digest(&card.arguments["arguments"]) == approvals::digest(&args);
        if !bound {
            return self.refuse_state(c, "names an approval of another call").await;
        }
        // Still waiting (and not given up on by the caller's person): ask again. Anything
        // else, [`Proxy::decision`] reads and says (a call being run: within its time limit).
        let mut waiting = card.status == Status::Pending;
        if waiting && rounds.declined() {
            let id = id.clone();
            if let Err(e) = self.store.call(move |s| approvals::withdraw(s, &id, "the caller declined to wait")).await {
                return error_result(&e).into();
            }
            waiting = false;
        }
        if waiting {
            return ask_for_card(&self.config(), &id, &why(c.tool, &r.id), rounds.elicit);
        }
        let run = Duration::from_secs(self.config().mcp.call_timeout_secs);
        self.decision(&id, c.tool, Duration::ZERO, run).await.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_request_names_the_card_in_the_form_the_client_takes() {
        let cfg = crate::config::Config::default();
        let url = crate::connect::card_url(&cfg, "ap_1");
        assert!(url.ends_with("/ui/#ap-ap_1"), "{url}");
        for (elicit, mode) in [(Elicit::Url, Some("url")), (Elicit::Form, Some("form")), (Elicit::Nothing, None)] {
            let CallToolResponse::InputRequired(r) = ask_for_card(&cfg, "ap_1", &why("rm", "files"), elicit) else {
                panic!("not input_required")
            };
            let v = serde_json::to_value(&r).unwrap();
            assert_eq!(v["resultType"], "input_required");
            assert_eq!(v["requestState"], "hal0-approval:ap_1");
            assert_eq!(v["inputRequests"][KEY]["params"]["mode"].as_str(), mode, "{v}");
            if mode.is_some() {
                assert_eq!(v["inputRequests"][KEY]["method"], "elicitation/create");
                let message = v["inputRequests"][KEY]["params"]["message"].as_str().unwrap();
                assert!(message.contains(&url) && message.contains("`rm` on `files`"), "{v}");
            }
        }
        let declined = Rounds {
            request_state: None,
            responses: Some([(KEY.to_string(), json!({"action": "decline"}))].into()),
            elicit: Elicit::Url,
        };
        assert!(declined.declined());
        let accepted = Rounds { responses: Some([(KEY.to_string(), json!({"action": "accept"}))].into()), ..declined };
        assert!(!accepted.declined());
    }
}
