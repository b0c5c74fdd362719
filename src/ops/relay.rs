//! The agent relay as an operator sees it: the bots (with whether they are connected now)
//! and the history of exchanges.

use super::{Ctx, NoArgs};
use crate::error::Result;
use crate::relay::history::{Exchange, Filter};
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
            return Err(crate::error::Error::invalid(
                "relay.invalid_filter",
                format!("text_max {n} is too small: ask for at least 64 bytes of each message, or leave it out"),
            ));
        }
    };
    let f = Filter { agent: a.agent, since, limit: a.limit.unwrap_or(100), request_id: a.request_id, text_max };
    ctx.relay.exchanges(f).await
}
