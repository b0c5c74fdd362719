//! The agent relay as an operator sees it: the bots (with whether they are connected now)
//! and the history of exchanges.

use super::{Ctx, NoArgs};
use crate::error::Result;
use crate::relay::history::{self, Exchange, Filter};
use serde::Serialize;

/// A bot as the operator lists it.
#[derive(Debug, Serialize)]
pub struct BotView {
    pub name: String,
    pub online: bool,
    /// When its current connection opened (RFC 3339), while online.
    pub connected_at: Option<String>,
    pub last_seen: Option<String>,
}

/// `relay_agents`: every bridge client holding the `relay` scope, by name. Presence comes
/// from the store, so the CLI sees the daemon's connections.
pub async fn agents(ctx: &Ctx, _: NoArgs) -> Result<Vec<BotView>> {
    ctx.store
        .call(|s| {
            let present: std::collections::HashMap<String, String> = history::present(s)?.into_iter().collect();
            Ok(crate::auth::bridge::list(s)?
                .into_iter()
                .filter(|c| !c.revoked && c.scopes.contains(&crate::auth::bridge::Scope::Relay))
                // A profile's own client asks as its profile, which runs answer: no socket.
                .filter(|c| !crate::relay::local::is_profile_client(&c.name))
                .map(|c| BotView {
                    online: present.contains_key(&c.name),
                    connected_at: present.get(&c.name).cloned(),
                    last_seen: c.last_seen,
                    name: c.name,
                })
                .collect())
        })
        .await
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
}

/// `relay_exchanges`: the history, newest first (in the daemon, including the exchanges
/// still queued for the store).
pub async fn exchanges(ctx: &Ctx, a: ExchangesArgs) -> Result<Vec<Exchange>> {
    crate::audit::flush(&ctx.store).await;
    let since = a.since.as_deref().map(crate::audit::parse_since).transpose()?;
    let f = Filter { agent: a.agent, since, limit: a.limit.unwrap_or(100) };
    ctx.store.call(move |s| history::list(s, &f)).await
}
