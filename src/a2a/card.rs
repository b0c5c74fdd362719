//! Agent Cards (A2A 1.0 `AgentCard` in ProtoJSON): one per Hermes profile, at
//! `/a2a/hermes[/<profile>]/.well-known/agent-card.json`, and the default profile's at the
//! box's own `/.well-known/agent-card.json`. A card is public (a client reads it before it
//! holds a key), so it says only what the profile is called, where to send tasks and
//! which credential to send: never a capability, model or tool of the profile.

use crate::hermes::Profile;
use serde_json::{Value, json};

/// The name of the bearer scheme in every card's `securitySchemes`.
pub const SCHEME: &str = "hal0BridgeKey";

/// The path of `agent`'s JSON-RPC interface (`hermes` or `hermes/<profile>`).
pub fn interface_path(agent: &str) -> String {
    format!("/a2a/{agent}")
}

/// The card of profile `p`, its interface under `base` (the URL this box is reached at).
pub fn card(p: &Profile, base: &str) -> Value {
    let agent = &p.agent_id;
    let description = format!(
        "The Hermes agent on this box ({agent}), reached through hal0. A task is a hal0 run of this profile: \
         the same ledger, per-client limits and approvals inbox as hal0-agents. A question from the agent is \
         input-required (answer it with a message naming the task); a command that waits for a person's approval \
         stays working and says which card waits."
    );
    json!({
        "name": format!("hal0 {agent}"),
        "description": description,
        "supportedInterfaces": [
            {"url": format!("{base}{}", interface_path(agent)), "protocolBinding": "JSONRPC", "protocolVersion": super::VERSION},
            {"url": format!("{base}{}", super::rest::base_path(agent)), "protocolBinding": "HTTP+JSON", "protocolVersion": super::VERSION},
        ],
        "provider": {"organization": "hal0", "url": base},
        "version": env!("CARGO_PKG_VERSION"),
        "capabilities": {"streaming": true, "pushNotifications": false, "extendedAgentCard": false},
        "securitySchemes": {SCHEME: {"httpAuthSecurityScheme": {
            "scheme": "Bearer",
            "description": "A hal0 bridge key (on the box: hal0 bridge add NAME), sent as Authorization: Bearer <key>.",
        }}},
        "securityRequirements": [{"schemes": {SCHEME: {"list": []}}}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{
            "id": "delegate",
            "name": "Delegate a task",
            "description": format!("Hand {agent} a task in plain text; its answer is the task's output artifact."),
            "tags": ["hermes", "delegation"],
            "examples": ["Summarise the open issues in the repository and propose an order to work on them."],
        }],
    })
}
