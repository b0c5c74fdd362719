//! OAuth accounts at installed servers (hal0 as the OAuth client): start a connect, take
//! the authorization server's callback, disconnect (revoking upstream), list, and the
//! daemon's refresh of tokens about to expire. Every change is audited before it runs and
//! its outcome after (surface `cli` at the shell, `oauth` for the callback and the
//! daemon's refresh); no token is ever in an argument, an answer or a row.

use super::Ctx;
use crate::audit::{self, Entry, Outcome, Verdict};
use crate::error::{Error, Result};
use crate::registry::Registry;
use crate::registry::oauth::{account, flow};
use serde_json::{Value, json};

/// Run `f`, audited as `tool` with `args`.
async fn audited<T>(ctx: &Ctx, tool: &'static str, args: Value, f: impl Future<Output = Result<T>>) -> Result<T> {
    let store = ctx.svc.store.clone();
    let surface = if ctx.from_shell { "cli" } else { "oauth" };
    let entry = Entry {
        surface,
        tool,
        identity: &ctx.identity,
        arguments: &args,
        verdict: Verdict::Ok,
        result_code: None,
        approval_id: None,
        detail: None,
    };
    let id = audit::begin(&store, &entry).await?;
    let out = f.await;
    let (verdict, result_code) = match &out {
        Ok(_) => (Verdict::Ok, None),
        Err(e) => (Verdict::Error, Some(e.code.to_string())),
    };
    audit::finish(&store, Outcome { id, verdict, result_code, approval_id: None });
    if ctx.from_shell {
        audit::flush(&store).await;
    }
    out
}

/// What `hal0 mcp connect` is given.
#[derive(Debug, Clone, Default)]
pub struct ConnectArgs {
    pub server_id: String,
    /// A client id the operator registered at the authorization server.
    pub client_id: Option<String>,
    /// The api.env key of that client's secret.
    pub client_secret_key: Option<String>,
    pub scope: Option<String>,
}

fn ca_of(ctx: &Ctx) -> impl Fn(&str) -> Option<std::path::PathBuf> + use<> {
    let paths = ctx.paths.clone();
    move |id: &str| Registry::new(&paths).get(id).ok().and_then(|r| r.ca_file)
}

/// Ask server `id` whether it wants OAuth and record the answer in its `[oauth]` table
/// (set when it does, removed when it answers without asking). Answers the table.
pub async fn discover(ctx: &Ctx, id: &str) -> Result<Option<crate::registry::record::OauthNeed>> {
    let reg = Registry::new(&ctx.paths);
    let r = reg.get(id)?;
    let need = flow::probe(&r).await?.map(|d| flow::need_of(&d, r.oauth.as_ref()));
    if need != r.oauth && (need.is_some() || r.oauth.is_some()) {
        let n = need.clone();
        let paths = ctx.paths.clone();
        let id = id.to_string();
        crate::ops::blocking(move || Registry::new(&paths).set_oauth(&id, n.as_ref()).map(|_| ())).await?;
    }
    Ok(need)
}

/// Start connecting server `a.server_id`'s account: the URL a person opens (the server's
/// `[oauth]` table is written from what was discovered).
pub async fn connect(ctx: &Ctx, a: ConnectArgs) -> Result<flow::Begun> {
    let args = json!({"server_id": a.server_id, "client_id": a.client_id, "client_secret_key": a.client_secret_key,
                      "scope": a.scope});
    audited(ctx, "mcp_account_connect", args, async {
        let reg = Registry::new(&ctx.paths);
        let r = reg.get(&a.server_id)?;
        let client_id = a.client_id.clone().or_else(|| r.oauth.as_ref().and_then(|o| o.client_id.clone()));
        let secret_key = a.client_secret_key.clone().or_else(|| r.oauth.as_ref().and_then(|o| o.client_secret.clone()));
        let client_secret = match &secret_key {
            None => None,
            Some(k) => Some(crate::envfile::get_var(&ctx.paths.api_env(), k)?.ok_or_else(|| {
                Error::invalid(
                    "mcp.oauth_client_secret_missing",
                    format!("api.env has no `{k}`: put the client secret there first (hal0 mcp secret set … or edit api.env)"),
                )
            })?),
        };
        let o = flow::Options { client_id, client_secret, scope: a.scope.clone() };
        let begun = flow::begin(&ctx.paths, &ctx.config, &r, &o, &ctx.identity).await?;
        // Record what was found (and the operator's client, if given now).
        let mut need = r.oauth.clone().unwrap_or_default();
        need.accounts = "box".into();
        need.issuer = begun.issuer.clone();
        if need.resource_metadata.is_empty() {
            need.resource_metadata = begun.issuer.clone();
        }
        if a.client_id.is_some() {
            need.client_id = a.client_id.clone();
            need.client_secret = a.client_secret_key.clone();
        }
        if a.scope.is_some() {
            need.scope = a.scope.clone();
        }
        if r.oauth.as_ref() != Some(&need) {
            let paths = ctx.paths.clone();
            let id = r.id.clone();
            crate::ops::blocking(move || Registry::new(&paths).set_oauth(&id, Some(&need)).map(|_| ())).await?;
        }
        Ok(begun)
    })
    .await
}

/// The callback from an authorization server (`GET /upstream-oauth/callback`): finish the connect
/// its `state` names. Answers the server id.
pub async fn callback(ctx: &Ctx, q: flow::Callback) -> Result<String> {
    // The state is the connect's secret: the audit row names its digest's start only.
    let digest = q.state.as_deref().map(|s| crate::auth::token::sha256_hex(s)[..8].to_string());
    let args = json!({"connect": digest, "error": q.error.as_deref().map(|e| crate::auth::oauth::shown(e, 80))});
    audited(ctx, "mcp_account_callback", args, async {
        let a = flow::finish(&ctx.paths, ca_of(ctx), &q).await?;
        ctx.proxy.evict(&a.server);
        Ok(a.server)
    })
    .await
}

/// How connect `connect_id` ended, once it did.
pub fn outcome(ctx: &Ctx, connect_id: &str) -> Result<Option<flow::Outcome>> {
    if connect_id.len() != 32 || !connect_id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::invalid("mcp.oauth_state_unknown", "a connect id is 32 hex digits"));
    }
    flow::outcome(&ctx.paths, connect_id)
}

/// Disconnect server `id`'s account: its tokens revoked at the upstream where it offers
/// revocation, then forgotten here.
pub async fn disconnect(ctx: &Ctx, id: &str) -> Result<Value> {
    audited(ctx, "mcp_account_disconnect", json!({"server_id": id}), async {
        let r = Registry::new(&ctx.paths).get(id)?;
        let (had, revoked) = flow::disconnect(&ctx.paths, r.ca_file.as_deref(), id).await?;
        ctx.proxy.evict(id);
        if !had {
            return Err(Error::not_found("mcp.account_required", format!("`{id}` has no connected account")));
        }
        Ok(json!({"server": id, "disconnected": true, "revoked_upstream": revoked}))
    })
    .await
}

/// Refresh server `id`'s access token now (the daemon does before it expires).
pub async fn refresh(ctx: &Ctx, id: &str) -> Result<account::View> {
    audited(ctx, "mcp_account_refresh", json!({"server_id": id}), async {
        let r = Registry::new(&ctx.paths).get(id)?;
        let a = flow::refresh(&ctx.paths, r.ca_file.as_deref(), id).await;
        ctx.proxy.evict(id);
        Ok(a?.view())
    })
    .await
}

/// Forget (and revoke upstream) the account of a server being uninstalled; nothing when
/// it has none.
pub async fn forget(ctx: &Ctx, id: &str, ca: Option<&std::path::Path>) -> Option<bool> {
    flow::disconnect(&ctx.paths, ca, id).await.ok().and_then(|(_, revoked)| revoked)
}

/// Refresh every connected account that expires within `margin` seconds, each refresh
/// audited; a refused one puts its account in `reauth_required`.
pub async fn refresh_due(ctx: &Ctx, margin: i64) {
    let ca = ca_of(ctx);
    for server in flow::due(&ctx.paths, margin) {
        let ca = ca(&server);
        let out = audited(ctx, "mcp_account_refresh", json!({"server_id": server}), async {
            flow::refresh(&ctx.paths, ca.as_deref(), &server).await
        })
        .await;
        ctx.proxy.evict(&server);
        if let Err(e) = out {
            tracing::warn!(code = e.code, "{}", crate::redact::redact(&e.message));
        }
    }
}
