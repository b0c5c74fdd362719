//! Consumer keys of hal0's MCP proxy as an operator manages them: list, mint (the key is in
//! that answer only, with its proxy URL and `claude mcp add` line), revoke. The rules of a
//! key live in `auth::consumers`; the CLI (`hal0 mcp keys`), REST and the dashboard call
//! these.

use super::{Ctx, blocking};
use crate::auth::consumers;
use crate::base::error::Result;
use crate::registry::Registry;
use serde_json::{Value, json};

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ListArgs {
    /// Only this installed server's consumers.
    #[serde(default, rename = "server_id")]
    pub server: Option<String>,
}

/// `mcp_key_list`: consumers by server then name, with their keys' state; never a key.
pub async fn list(ctx: &Ctx, a: ListArgs) -> Result<Vec<consumers::Consumer>> {
    let (paths, store) = (ctx.paths.clone(), ctx.store.clone());
    blocking(move || {
        if let Some(id) = &a.server {
            Registry::new(&paths).get(id)?;
        }
        consumers::list(&store, a.server.as_deref())
    })
    .await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// The installed server the key opens.
    #[serde(rename = "server_id")]
    pub server: String,
    /// The consumer's name: 1 to 64 of a-z A-Z 0-9 _ - (an existing name gets a new key).
    pub name: String,
    /// A note for people (what and where this consumer is).
    #[serde(default)]
    pub note: String,
}

/// `mcp_key_add`: a new key for consumer `name` on a served server (it replaces the name's
/// old key), shown in this answer only, with the proxy URL and its `claude mcp add` line.
pub async fn add(ctx: &Ctx, a: AddArgs) -> Result<Value> {
    let (paths, store, cfg) = (ctx.paths.clone(), ctx.store.clone(), ctx.config());
    blocking(move || {
        crate::proxy::serving(&Registry::new(&paths), &a.server)?;
        let (c, key) = consumers::mint(&store, &a.server, &a.name, &a.note)?;
        let url = crate::connect::proxy_url(&cfg, &a.server, crate::connect::Reach::Remote);
        let line = crate::connect::claude_line(&a.server, &url, &key);
        Ok(json!({"consumer": c, "key": key, "url": url, "claude_mcp_add": line}))
    })
    .await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct RevokeArgs {
    /// The server the key opens.
    #[serde(rename = "server_id")]
    pub server: String,
    /// The consumer's name.
    pub name: String,
}

/// `mcp_key_revoke`: the key stops working at once; `revoked` is false when it was not live.
pub async fn revoke(ctx: &Ctx, a: RevokeArgs) -> Result<Value> {
    let store = ctx.store.clone();
    blocking(move || {
        consumers::get(&store, &a.server, &a.name)?;
        let revoked = consumers::revoke(&store, &a.server, &a.name)?;
        Ok(json!({"server": a.server, "name": a.name, "revoked": revoked}))
    })
    .await
}

/// Consumer `name`'s key on server `id` (never the key itself), or `mcp.consumer_not_found`.
pub fn get(ctx: &Ctx, id: &str, name: &str) -> Result<consumers::Consumer> {
    consumers::get(&ctx.store, id, name)
}
