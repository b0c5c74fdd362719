//! A relay bot as an A2A agent: an A2A message to `/a2a/relay/<bot>` is an ask, with the
//! relay's semantics (the bot woken over its socket, the ask window its heartbeats re-arm,
//! the conversation of the pair, the history), answered with the bot's reply as an A2A
//! `Message` (no task: an ask has no life of its own to follow). The caller is a bot too:
//! a bridge key holding the `relay` scope. Only the bots an operator lists in
//! `[relay].a2a_bots` have a public card.

use super::methods::message;
use super::rpc::{RpcError, RpcResult};
use crate::base::progress::Progress;
use crate::ops::relay::{Asker, Failure, Refusal};
use crate::server::AppState;
use serde_json::{Value, json};

/// The path of bot `bot`'s JSON-RPC interface.
pub fn interface_path(bot: &str) -> String {
    format!("/a2a/relay/{bot}")
}

/// Bot `bot`'s card, its interface under `base`.
pub fn card(bot: &str, base: &str) -> Value {
    json!({
        "name": format!("hal0 relay bot {bot}"),
        "description": format!(
            "The bot {bot} on this box's hal0 relay. A message is a question to it; its reply is the answer \
             (a message, no task). Send the reply's contextId back to continue the conversation."
        ),
        "supportedInterfaces": [{
            "url": format!("{base}{}", interface_path(bot)),
            "protocolBinding": "JSONRPC",
            "protocolVersion": super::VERSION,
        }],
        "provider": {"organization": "hal0", "url": base},
        "version": env!("CARGO_PKG_VERSION"),
        "capabilities": {"streaming": false, "pushNotifications": false, "extendedAgentCard": false},
        "securitySchemes": {super::card::SCHEME: {"httpAuthSecurityScheme": {
            "scheme": "Bearer",
            "description": "A hal0 bridge key holding the relay scope (on the box: hal0 bridge add NAME --scope relay).",
        }}},
        "securityRequirements": [{"schemes": {super::card::SCHEME: {"list": []}}}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{
            "id": "ask",
            "name": "Ask",
            "description": format!("Ask {bot} a question in plain text; the answer comes back as a message."),
            "tags": ["relay"],
        }],
    })
}

/// A relay refusal in A2A's terms: a bad argument is invalid params; anything else keeps
/// the relay's failure as hal0's code (`relay.agent_offline`, `relay.timeout`, …).
fn refusal(r: Refusal) -> RpcError {
    let code = format!("relay.{}", r.error.as_str());
    match r.error {
        Failure::InvalidArgument => RpcError::invalid_owned(code, r.detail),
        _ => RpcError::server(code, r.detail),
    }
}

/// `SendMessage` to bot `bot`: ask it and answer with its reply.
pub async fn send(state: &AppState, asker: &Asker, bot: &str, p: Value) -> RpcResult<Value> {
    let (m, _) = message(super::methods::params(p)?)?;
    if m.task_id.as_deref().is_some_and(|t| !t.is_empty()) {
        return Err(RpcError::unsupported(
            "a2a.no_tasks",
            "a relay bot answers with a message and keeps no tasks: send the message without taskId",
        ));
    }
    let text = m.text()?;
    let context = m.context_id.filter(|c| !c.is_empty());
    match crate::ops::relay::ask(state, asker, bot, &text, context.as_deref(), &Progress::none()).await? {
        Ok(answered) => Ok(json!({"message": {
            "messageId": crate::base::token::uuid4()?,
            "role": "ROLE_AGENT",
            "contextId": answered.conversation_id,
            "parts": [{"text": answered.answer}],
        }})),
        Err(r) => Err(refusal(r)),
    }
}
