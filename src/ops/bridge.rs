//! Bridge clients: list, add (with the default scopes), replace scopes, rotate, revoke.
//! The key of an added or rotated client is in that answer only.

use super::{Ctx, NoArgs};
use crate::auth::bridge::{self, Scope};

pub use crate::auth::bridge::Client;
use crate::base::error::Result;
/// How each MCP client is configured for a key (`hal0 bridge add --client KIND`).
pub use crate::connect::clients::{KEY_VAR, KINDS, Server, key_prompt, snippet};
use serde::Serialize;
use std::collections::BTreeSet;

/// `bridge_client_list`: every client, never a key.
pub async fn list(ctx: &Ctx, _: NoArgs) -> Result<Vec<Client>> {
    ctx.store.call(bridge::list).await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// Client name: lower-case letters, digits, _ and -, at most 32.
    pub name: String,
    /// A note for people (what and where this client is).
    #[serde(default)]
    pub note: String,
    /// Scopes to grant: agents, memory, admin, relay (agents is always held, except by a relay-only bot). Default: agents, memory.
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// A new or rotated key, shown once, with what to paste on the remote machine: one
/// `claude mcp add` line per server the key opens and, for a relay bot, its `.env` lines and
/// `mcp_servers` entry. The same from every front.
#[derive(Debug, Serialize)]
pub struct Keyed {
    pub name: String,
    pub key: String,
    pub scopes: BTreeSet<Scope>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub claude_mcp_add: Vec<String>,
    /// The servers the key opens and their URLs (what `hal0 bridge add --client` writes
    /// a client's config for).
    pub servers: Vec<crate::connect::clients::Server>,
    /// For a client holding `relay` while the relay is on: a hermes-bridge bot's setup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relay_bot: Option<RelayBot>,
    /// The base URL the lines name, and why it may not work as printed.
    pub base_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// What a hermes-bridge bot needs to join this relay.
#[derive(Debug, Serialize)]
pub struct RelayBot {
    /// The lines of its `.env`.
    pub env: Vec<String>,
    /// Its `mcp_servers` entry (YAML).
    pub config_yaml: String,
}

impl Keyed {
    /// The key of `client` with everything to paste, for `cfg`.
    pub fn of(cfg: &crate::config::Config, client: Client, key: String) -> Keyed {
        let (base, warning) = crate::connect::base_url(cfg);
        let servers: Vec<crate::connect::clients::Server> = crate::connect::urls_for(&base, cfg, &client.scopes)
            .into_iter()
            .map(|(name, url)| crate::connect::clients::Server { name: name.to_string(), url })
            .collect();
        let claude_mcp_add = servers.iter().map(|s| crate::connect::claude_line(&s.name, &s.url, &key)).collect();
        let relay_bot = (client.scopes.contains(&Scope::Relay) && cfg.relay.enabled).then(|| {
            let (env, config_yaml) = crate::connect::relay_bot_setup(&base, &key);
            RelayBot { env, config_yaml }
        });
        Keyed {
            name: client.name,
            key,
            scopes: client.scopes,
            claude_mcp_add,
            servers,
            relay_bot,
            base_url: base,
            warning,
        }
    }
}

/// The scopes of a new client: the ones asked for, or `agents` and `memory`.
pub fn requested_scopes(names: &[String]) -> Result<BTreeSet<Scope>> {
    if names.is_empty() { bridge::parse_scopes(&["agents", "memory"]) } else { bridge::parse_scopes(names) }
}

/// `bridge_client_add`: a new client and its key, with its `claude mcp add` lines.
pub async fn add(ctx: &Ctx, a: AddArgs) -> Result<Keyed> {
    let scopes = requested_scopes(&a.scopes)?;
    bridge::validate_name(&a.name)?;
    let (cfg, paths) = (ctx.config(), ctx.paths.clone());
    ctx.store
        .call(move |s| {
            let (c, key) = bridge::add(s, &a.name, &a.note, scopes)?;
            crate::connect::clients::refresh(&paths, &cfg);
            Ok(Keyed::of(&cfg, c, key))
        })
        .await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct ScopesArgs {
    /// The client's name.
    pub name: String,
    /// The new scope list: agents, memory, admin, relay (agents is always held, except by a relay-only bot).
    pub scopes: Vec<String>,
}

/// `bridge_client_scopes`: replace a client's scope set.
pub async fn set_scopes(ctx: &Ctx, a: ScopesArgs) -> Result<Client> {
    let scopes = bridge::parse_scopes(&a.scopes)?;
    ctx.store.call(move |s| bridge::set_scopes(s, &a.name, scopes)).await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct NameArgs {
    /// The client's name.
    pub name: String,
}

/// `bridge_client_rotate`: a new key (the old one stops at once), with what to paste.
pub async fn rotate(ctx: &Ctx, a: NameArgs) -> Result<Keyed> {
    let cfg = ctx.config();
    ctx.store
        .call(move |s| {
            let (c, key) = bridge::rotate(s, &a.name)?;
            Ok(Keyed::of(&cfg, c, key))
        })
        .await
}

/// `bridge_client_purge`: a revoked client's name is freed, with everything held under it.
pub async fn purge(ctx: &Ctx, a: NameArgs) -> Result<bridge::Purged> {
    ctx.store.call(move |s| bridge::purge(s, &a.name)).await
}

/// `bridge_client_revoke`: the key ends, the name stays reserved.
pub async fn revoke(ctx: &Ctx, a: NameArgs) -> Result<Client> {
    ctx.store.call(move |s| bridge::revoke(s, &a.name)).await
}

/// Bridge client `name` (never its key), or `bridge.client_not_found`.
pub fn get(ctx: &Ctx, name: &str) -> Result<Client> {
    bridge::get(&ctx.store, name)
}
