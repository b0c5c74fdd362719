//! The agent relay as an operator sees it: the bots (with whether they are connected now),
//! the history of exchanges, and the A2A agents elsewhere that bots may ask (peers).

use super::{Ctx, NoArgs};
use crate::base::error::Result;
use crate::relay::history::{Exchange, Filter};
use crate::relay::peers::{self, Peer};
use serde::Serialize;

/// A bot as the operator lists it.
#[derive(Debug, Serialize)]
pub struct BotView {
    pub name: String,
    pub online: bool,
    /// When its current connection opened (RFC 3339), while online.
    pub connected_at: Option<String>,
    /// The relay it is connected to, when several share a database.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub last_seen: Option<String>,
}

/// `relay_agents`: every bridge client holding the `relay` scope, by name. Presence comes
/// from the store, so the CLI sees the daemon's connections.
pub async fn agents(ctx: &Ctx, _: NoArgs) -> Result<Vec<BotView>> {
    let mut present = ctx.relay.presence().await?;
    let clients = ctx.store.call(crate::auth::bridge::list).await?;
    let mut out: Vec<BotView> = clients
        .into_iter()
        .filter(crate::relay::is_listed_bot)
        .map(|c| {
            let (connected_at, node) = present.remove(&c.name).unzip();
            BotView {
                online: connected_at.is_some(),
                connected_at,
                node: node.flatten(),
                last_seen: c.last_seen,
                name: c.name,
            }
        })
        .collect();
    // With a cluster: bots connected to another relay whose keys this box does not hold.
    out.extend(present.into_iter().filter(|(_, (_, node))| node.is_some()).map(|(name, (at, node))| BotView {
        name,
        online: true,
        connected_at: Some(at),
        node,
        last_seen: None,
    }));
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ExchangesArgs {
    /// Only exchanges this bot asked or was asked.
    #[serde(default)]
    pub agent: Option<String>,
    /// RFC 3339 time or a duration back from now (30m, 1h, 7d).
    #[serde(default)]
    pub since: Option<String>,
    /// At most this many (default 100, at most 10000).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub limit: Option<i64>,
    /// Only this exchange (its `request_id`).
    #[serde(default)]
    pub request_id: Option<String>,
    /// Cut each message and answer to this many bytes (at least 64), marking what was cut
    /// with the whole length; whole when absent. A page of history asks for heads and reads
    /// one exchange whole when it is opened.
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub text_max: Option<i64>,
}

/// `relay_exchanges`: the history, newest first (in the daemon, including the exchanges
/// still queued for the store).
pub async fn exchanges(ctx: &Ctx, a: ExchangesArgs) -> Result<Vec<Exchange>> {
    let since = a.since.as_deref().map(crate::audit::parse_since).transpose()?;
    let text_max = match a.text_max {
        None => None,
        Some(n) if n >= 64 => Some(n as usize),
        Some(n) => {
            return Err(crate::base::error::Error::invalid(
                "relay.invalid_filter",
                format!("text_max {n} is too small: ask for at least 64 bytes of each message, or leave it out"),
            ));
        }
    };
    let f = Filter { agent: a.agent, since, limit: a.limit.unwrap_or(100), request_id: a.request_id, text_max };
    ctx.relay.exchanges(f).await
}

#[derive(Default, serde::Deserialize, schemars::JsonSchema)]
pub struct PeerAddArgs {
    /// The A2A agent's URL: its base (the card is under `/.well-known/agent-card.json`) or
    /// its card's own URL.
    pub url: String,
    /// Its name here (bots ask `a2a/<name>`); default: made from the card's name.
    #[serde(default)]
    pub name: Option<String>,
    /// The bearer credential it takes; kept in api.env (`HAL0_A2A_PEER_<NAME>`), never in
    /// the store, the audit log or an answer.
    #[serde(default)]
    pub token: Option<String>,
}

/// A peer name made from a card's name: lower case, other characters as `-`, at most 32.
fn name_from(card_name: &str) -> String {
    let mut out = String::new();
    for c in card_name.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' { c } else { '-' };
        if !(c == '-' && (out.is_empty() || out.ends_with('-'))) {
            out.push(c);
        }
    }
    out.trim_end_matches('-').chars().take(32).collect::<String>().trim_end_matches('-').to_string()
}

/// `relay_peer_add`: fetch an A2A agent's card (behind the SSRF guard, trusting the host
/// given) and keep it, so bots may ask it as `a2a/<name>`. Audited.
pub async fn peer_add(ctx: &Ctx, a: PeerAddArgs) -> Result<Peer> {
    let args = serde_json::json!({"url": a.url, "name": a.name, "token": a.token.as_ref().map(|_| "(given)")});
    super::audited(ctx, "relay_peer_add", args, async {
        if let Some(n) = &a.name {
            peers::check_name(n)?;
        }
        if let Some(t) = &a.token {
            crate::auth::secrets::validate_value(t)?;
        }
        let card = peers::fetch_card(&a.url).await?;
        let name = match a.name {
            Some(n) => n,
            None => {
                let n = name_from(card.card["name"].as_str().unwrap_or_default());
                peers::check_name(&n).map_err(|_| {
                    crate::base::error::Error::invalid(
                        "relay.invalid_peer_name",
                        "the card's name makes no peer name: give one with --name",
                    )
                })?;
                n
            }
        };
        let api_env = ctx.paths.api_env();
        ctx.store.call(move |s| peers::add(s, &api_env, &name, &card, a.token.as_deref())).await
    })
    .await
}

/// `relay_peer_list`: the A2A agents bots may ask, by name.
pub async fn peer_list(ctx: &Ctx, _: NoArgs) -> Result<Vec<Peer>> {
    ctx.store.call(peers::list).await
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct PeerNameArgs {
    /// The peer's name (as `relay peer list` shows it).
    pub name: String,
}

/// `relay_peer_remove`: forget a peer (asks to it fail `unknown_agent` from then on). Audited.
pub async fn peer_remove(ctx: &Ctx, a: PeerNameArgs) -> Result<serde_json::Value> {
    let args = serde_json::json!({"name": a.name});
    super::audited(ctx, "relay_peer_remove", args, async {
        let (name, api_env) = (a.name.clone(), ctx.paths.api_env());
        if !ctx.store.call(move |s| peers::forget(s, &api_env, &name)).await? {
            return Err(crate::base::error::Error::not_found(
                "relay.peer_not_found",
                format!("no peer named {} (hal0 relay peer list shows them)", crate::base::term::safe_line(&a.name)),
            ));
        }
        Ok(serde_json::json!({"removed": a.name}))
    })
    .await
}

/// Whether relay bot `bot` has a public A2A card: listed in `[relay].a2a_bots`, and a bot
/// (a live bridge client holding the `relay` scope).
pub async fn published(svc: &super::Services, bot: &str) -> Result<bool> {
    if !svc.config().relay.a2a_bots.iter().any(|b| b == bot) {
        return Ok(false);
    }
    let name = bot.to_string();
    let clients = svc.store.call(crate::auth::bridge::list).await?;
    Ok(clients.iter().any(|c| c.name == name && crate::relay::is_listed_bot(c)))
}

pub use crate::relay::peers::CARD_PATH;
pub use crate::relay::{Agent, Answered, Asker, Failure, Refusal};

/// `ask_agent`: ask bot `to` (`conversation`: continue one you have with it) and wait for
/// its answer, with progress while it waits. `Ok(Err(_))`: the relay's refusal, for the
/// asker to read (`unknown_agent`, `timeout`, …).
pub async fn ask(
    svc: &super::Services,
    from: &Asker,
    to: &str,
    message: &str,
    conversation: Option<&str>,
    progress: &crate::base::progress::Progress,
) -> Result<std::result::Result<Answered, Refusal>> {
    svc.relay.ask(from, to, message, conversation, progress).await
}

/// Why an ask its asker stopped waiting for (the call was cancelled, or the connection
/// went) ended: `relay_stopping` while hal0 stops, else `asker_gone`.
pub fn cut_short(svc: &super::Services) -> Refusal {
    if svc.relay.is_stopping() {
        Refusal { error: Failure::RelayStopping, detail: "hal0 is stopping".into() }
    } else {
        Refusal { error: Failure::AskerGone, detail: "the call was cancelled".into() }
    }
}

/// `reply`: bot `from` answers the ask `request_id` that waits for it.
pub fn reply(svc: &super::Services, from: &str, request_id: &str, answer: String) -> std::result::Result<(), Refusal> {
    svc.relay.reply(from, request_id, answer)
}

/// `list_agents`: every bot a bot may ask, by name, with whether it is connected.
pub async fn list_agents(svc: &super::Services) -> Result<Vec<Agent>> {
    svc.relay.agents().await
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_peer_name_is_made_from_the_cards_name() {
        assert_eq!(super::name_from("hal0 hermes"), "hal0-hermes");
        assert_eq!(super::name_from("  Research Agent (EU)!"), "research-agent-eu");
        assert_eq!(super::name_from("ÉÉÉ"), "");
        assert_eq!(super::name_from(&"a".repeat(40)).len(), 32);
    }
}
