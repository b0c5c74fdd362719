//! OAuth accounts at installed servers (hal0 as the OAuth client): start a connect (from
//! the shell, or from a start link a consumer of a delegated server got in its error),
//! take the authorization server's callback, disconnect (revoking upstream), list, choose
//! box-wide or delegated accounts, and the daemon's refresh of tokens about to expire. Every change is audited before it runs and
//! its outcome after (surface `cli` at the shell, `oauth` for the callback and the
//! daemon's refresh); no token is ever in an argument, an answer or a row.

use super::{Ctx, audited};
use crate::base::error::{Error, Result};
use crate::registry::Registry;
use crate::registry::oauth::{account, card, flow};
use serde_json::{Value, json};

/// What `hal0 mcp connect` is given.
#[derive(Debug, Clone, Default)]
pub struct ConnectArgs {
    pub server_id: String,
    /// A client id the operator registered at the authorization server.
    pub client_id: Option<String>,
    /// The api.env key of that client's secret.
    pub client_secret_key: Option<String>,
    pub scope: Option<String>,
    /// The consumer whose own account this is (servers with delegated accounts).
    pub holder: Option<String>,
}

/// The holder a connect of `r` names, checked against the record's mode: a delegated
/// server needs one (a consumer of it, or `admin:NAME`), a box-wide one takes none.
fn holder_for(ctx: &Ctx, r: &crate::registry::Record, holder: Option<&str>) -> Result<Option<String>> {
    let delegated = r.oauth.as_ref().is_some_and(|o| o.delegated());
    match (delegated, holder) {
        (false, None) => Ok(None),
        (false, Some(h)) => Err(Error::invalid(
            "mcp.oauth_holder_unexpected",
            format!(
                "`{}` has one box-wide account, not one per consumer, so `{h}` cannot have its own: drop --for, or \
                 make its accounts delegated (hal0 mcp accounts {} --mode delegated)",
                r.id, r.id
            ),
        )),
        (true, None) => Err(Error::invalid(
            "mcp.oauth_holder_required",
            format!(
                "`{}` has delegated accounts (one per consumer): name whose with --for CONSUMER (hal0 mcp keys list \
                 {} shows them)",
                r.id, r.id
            ),
        )),
        (true, Some(h)) => {
            if let Some(agent) = h.strip_prefix("admin:") {
                if crate::auth::principal::valid_agent(agent) {
                    return Ok(Some(h.to_string()));
                }
            } else {
                let known = crate::auth::consumers::list(&ctx.svc.store, Some(&r.id))?
                    .into_iter()
                    .any(|c| c.name == h && !c.revoked);
                if known {
                    return Ok(Some(h.to_string()));
                }
            }
            Err(Error::not_found(
                "mcp.oauth_holder_unknown",
                format!(
                    "`{h}` is not a consumer of `{}`: name one of hal0 mcp keys list {} (or admin:AGENT for callers \
                     with the admin key)",
                    r.id, r.id
                ),
            ))
        }
    }
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
                      "scope": a.scope, "for": a.holder});
    audited(ctx, "mcp_account_connect", args, begin_connect(ctx, &a)).await
}

/// [`connect`] without its audit row (the route table's front audits its calls itself).
async fn begin_connect(ctx: &Ctx, a: &ConnectArgs) -> Result<flow::Begun> {
    {
        let reg = Registry::new(&ctx.paths);
        let r = reg.get(&a.server_id)?;
        let holder = holder_for(ctx, &r, a.holder.as_deref())?;
        let client_id = a.client_id.clone().or_else(|| r.oauth.as_ref().and_then(|o| o.client_id.clone()));
        let secret_key = a.client_secret_key.clone().or_else(|| r.oauth.as_ref().and_then(|o| o.client_secret.clone()));
        let client_secret = match &secret_key {
            None => None,
            Some(k) => Some(crate::base::envfile::get_var(&ctx.paths.api_env(), k)?.ok_or_else(|| {
                Error::invalid(
                    "mcp.oauth_client_secret_missing",
                    format!("api.env has no `{k}`: put the client secret there first (hal0 mcp secret set … or edit api.env)"),
                )
            })?),
        };
        let o = flow::Options { client_id, client_secret, scope: a.scope.clone(), holder };
        let begun = flow::begin(&ctx.paths, &ctx.config(), &r, &o, &ctx.identity).await?;
        // Record what was found (and the operator's client, if given now).
        let mut need = r.oauth.clone().unwrap_or_else(|| crate::registry::record::OauthNeed {
            accounts: crate::registry::record::BOX_ACCOUNTS.into(),
            ..Default::default()
        });
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
    }
}

/// The callback from an authorization server (`GET /upstream-oauth/callback`): finish the connect
/// its `state` names. Answers the server id.
pub async fn callback(ctx: &Ctx, q: flow::Callback) -> Result<String> {
    // The state is the connect's secret: the audit row names its digest's start only.
    let digest = q.state.as_deref().map(|s| crate::base::token::sha256_hex(s)[..8].to_string());
    let args = json!({"connect": digest, "error": q.error.as_deref().map(|e| crate::auth::oauth::shown(e, 80))});
    audited(ctx, "mcp_account_callback", args, async {
        let a = flow::finish(&ctx.paths, ca_of(ctx), &q).await?;
        ctx.proxy.evict(&a.server);
        if a.holder.is_none() {
            card::withdraw(&ctx.svc.store, &a.server, "the account was connected again");
        }
        Ok(a.server)
    })
    .await
}

/// A start link opened (`GET /upstream-oauth/start/<token>`): begin connecting the
/// account of the consumer it names, at the server it names; answers where the browser
/// goes next. The server must still have delegated accounts and the consumer still be one.
pub async fn start(ctx: &Ctx, token: &str) -> Result<flow::Begun> {
    let (server, holder) = flow::open_start_link(&ctx.paths, token)?;
    let mut ctx = ctx.clone();
    ctx.identity = crate::base::actor::Actor::Link(holder.clone()).into();
    let a = ConnectArgs { server_id: server, holder: Some(holder), ..Default::default() };
    connect(&ctx, a).await
}

/// How connect `connect_id` ended, once it did.
pub fn outcome(ctx: &Ctx, connect_id: &str) -> Result<Option<flow::Outcome>> {
    if connect_id.len() != 32 || !connect_id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::invalid("mcp.oauth_state_unknown", "a connect id is 32 hex digits"));
    }
    flow::outcome(&ctx.paths, connect_id)
}

/// Disconnect server `id`'s account (`holder`'s, for a server with delegated accounts):
/// its tokens revoked at the upstream where it offers revocation, then forgotten here.
pub async fn disconnect(ctx: &Ctx, id: &str, holder: Option<&str>) -> Result<Value> {
    audited(ctx, "mcp_account_disconnect", json!({"server_id": id, "for": holder}), end_account(ctx, id, holder)).await
}

/// [`disconnect`] without its audit row.
async fn end_account(ctx: &Ctx, id: &str, holder: Option<&str>) -> Result<Value> {
    {
        let r = Registry::new(&ctx.paths).get(id)?;
        let holder = holder_or_any(ctx, &r, holder)?;
        let (had, revoked) = flow::disconnect(&ctx.paths, r.ca_file.as_deref(), id, holder.as_deref()).await?;
        ctx.proxy.evict(id);
        if holder.is_none() {
            card::withdraw(&ctx.svc.store, id, "the account was disconnected");
        }
        if !had {
            return Err(Error::not_found(
                "mcp.account_required",
                format!("`{id}` has no connected account for {}", account::whose(holder.as_deref())),
            ));
        }
        Ok(json!({"server": id, "for": holder, "disconnected": true, "revoked_upstream": revoked}))
    }
}

/// What the route table's account routes take: a server, and whose account.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct AccountArgs {
    /// The server id.
    pub server_id: String,
    /// The consumer whose own account it is (servers with delegated accounts).
    #[serde(default, rename = "for")]
    pub holder: Option<String>,
    /// Scopes to ask for, space-separated (connect only; default: what the server names).
    #[serde(default)]
    pub scope: Option<String>,
}

/// `mcp_account_connect` (`POST /api/mcp/{server_id}/connect`): start connecting an OAuth
/// account; answers the authorization URL a person opens (the dashboard sends its browser
/// there) and the connect id.
pub async fn connect_route(ctx: &Ctx, a: AccountArgs) -> Result<flow::Begun> {
    let args = ConnectArgs { server_id: a.server_id, holder: a.holder, scope: a.scope, ..Default::default() };
    begin_connect(ctx, &args).await
}

/// `mcp_account_disconnect` (`POST /api/mcp/{server_id}/disconnect`).
pub async fn disconnect_route(ctx: &Ctx, a: AccountArgs) -> Result<Value> {
    end_account(ctx, &a.server_id, a.holder.as_deref()).await
}

/// `mcp_account_list` (`GET /api/mcp/{server_id}/accounts`).
pub async fn list_route(ctx: &Ctx, a: super::mcp::IdArgs) -> Result<Value> {
    list(ctx, &a.id)
}

/// [`holder_for`], except that a consumer that is gone may still be named (to disconnect
/// or refresh an account it left behind).
fn holder_or_any(ctx: &Ctx, r: &crate::registry::Record, holder: Option<&str>) -> Result<Option<String>> {
    match holder_for(ctx, r, holder) {
        Err(e) if e.code == "mcp.oauth_holder_unknown" => Ok(holder.map(str::to_string)),
        other => other,
    }
}

/// Refresh server `id`'s access token now (the daemon does before it expires).
pub async fn refresh(ctx: &Ctx, id: &str, holder: Option<&str>) -> Result<account::View> {
    audited(ctx, "mcp_account_refresh", json!({"server_id": id, "for": holder}), async {
        let r = Registry::new(&ctx.paths).get(id)?;
        let holder = holder_or_any(ctx, &r, holder)?;
        let a = flow::refresh(&ctx.paths, r.ca_file.as_deref(), id, holder.as_deref()).await;
        ctx.proxy.evict(id);
        if let Err(e) = &a
            && e.code == "mcp.reauth_required"
        {
            card::raise(&ctx.svc.store, id, holder.as_deref(), &e.message);
        }
        Ok(a?.view())
    })
    .await
}

/// The accounts of server `id` (box-wide and delegated), as may be shown: never a token.
pub fn list(ctx: &Ctx, id: &str) -> Result<Value> {
    let r = Registry::new(&ctx.paths).get(id)?;
    let mode = r.oauth.as_ref().map(|o| o.accounts.clone());
    let gate = r.oauth.as_ref().map(|o| o.gate_first_call);
    Ok(json!({"server": id, "accounts_mode": mode, "gate_first_call": gate,
              "accounts": account::views_of(&ctx.paths, id)}))
}

/// Choose whose account server `id`'s calls go upstream as: `box` (one for every
/// consumer) or `delegated` (each consumer's own), and whether an account's first call
/// waits for a person (`gate_first_call`). Accounts of the other kind stay until
/// disconnected, unused.
pub async fn set_mode(ctx: &Ctx, id: &str, mode: Option<&str>, gate_first_call: Option<bool>) -> Result<Value> {
    use crate::registry::record::{BOX_ACCOUNTS, DELEGATED_ACCOUNTS};
    let args = json!({"server_id": id, "mode": mode, "gate_first_call": gate_first_call});
    audited(ctx, "mcp_account_mode", args, async {
        if let Some(mode) = mode
            && mode != BOX_ACCOUNTS
            && mode != DELEGATED_ACCOUNTS
        {
            return Err(Error::invalid(
                "mcp.oauth_mode_invalid",
                format!(
                    "accounts mode `{mode}` is not known: use box (one for every consumer) or delegated (each its own)"
                ),
            ));
        }
        let r = Registry::new(&ctx.paths).get(id)?;
        let Some(mut need) = r.oauth.clone() else {
            return Err(Error::conflict(
                "mcp.oauth_not_needed",
                format!("`{id}` is not known to want OAuth (hal0 mcp test {id} finds out): it has no accounts"),
            ));
        };
        let before = need.clone();
        if let Some(m) = mode {
            need.accounts = m.to_string();
        }
        if let Some(g) = gate_first_call {
            need.gate_first_call = g;
        }
        let changed = need != before;
        let (mode, gate) = (need.accounts.clone(), need.gate_first_call);
        if changed {
            let paths = ctx.paths.clone();
            let rid = id.to_string();
            crate::ops::blocking(move || Registry::new(&paths).set_oauth(&rid, Some(&need)).map(|_| ())).await?;
            ctx.proxy.evict(id);
        }
        let unused = account::views_of(&ctx.paths, id)
            .into_iter()
            .filter(|v| v.holder.is_some() != (mode == DELEGATED_ACCOUNTS))
            .count();
        Ok(json!({"server": id, "accounts_mode": mode, "gate_first_call": gate, "changed": changed,
                  "unused_accounts": unused}))
    })
    .await
}

/// Forget (and revoke upstream) every account of a server being uninstalled; answers
/// whether the upstream took every revocation (`None`: it had none, or offers none).
pub async fn forget(ctx: &Ctx, id: &str, ca: Option<&std::path::Path>) -> Option<bool> {
    card::withdraw(&ctx.svc.store, id, "the server was uninstalled");
    let mut all: Option<bool> = None;
    for (doc, a) in account::docs_of(&ctx.paths, id) {
        let holder = a.as_ref().and_then(|a| a.holder.clone());
        match flow::disconnect(&ctx.paths, ca, id, holder.as_deref()).await {
            Ok((_, Some(r))) => all = Some(all.unwrap_or(true) && r),
            Ok((_, None)) => {}
            Err(_) => {}
        }
        // A document that did not open (another key) still goes.
        let _ = crate::registry::oauth::vault::remove(&ctx.paths, &doc);
    }
    all
}

/// Refresh every connected account that expires within `margin` seconds, each refresh
/// audited; a refused one puts its account in `reauth_required`.
pub async fn refresh_due(ctx: &Ctx, margin: i64) {
    let ca = ca_of(ctx);
    for (server, holder) in flow::due(&ctx.paths, margin) {
        let ca = ca(&server);
        let out = audited(ctx, "mcp_account_refresh", json!({"server_id": server, "for": holder}), async {
            flow::refresh(&ctx.paths, ca.as_deref(), &server, holder.as_deref()).await
        })
        .await;
        ctx.proxy.evict(&server);
        if let Err(e) = out {
            if e.code == "mcp.reauth_required" {
                card::raise(&ctx.svc.store, &server, holder.as_deref(), &e.message);
            }
            tracing::warn!(code = e.code, "{}", crate::base::redact::redact(&e.message));
        }
    }
}

/// Carry out an approved `account_reauth` card: start connecting the server's box-wide
/// account again, as the person who approved. Answers the authorization URL (shown to that
/// person once; the row keeps the rest).
pub async fn reconnect_approved(
    svc: &std::sync::Arc<super::Services>,
    row: &crate::approvals::Approval,
) -> Result<Value> {
    let server = row.arguments["server"].as_str().unwrap_or_default().to_string();
    let by = row.decided_by.clone().unwrap_or_else(|| "a person".into());
    let ctx = Ctx::remote(svc.clone(), by);
    let b = begin_connect(&ctx, &ConnectArgs { server_id: server.clone(), ..Default::default() }).await?;
    Ok(json!({"server": server, "authorize_url": b.authorize_url, "connect_id": b.connect_id,
              "expires_at": b.expires_at, "next": "open the authorization URL; the account is connected when it comes back"}))
}

pub use crate::registry::oauth::account::View;

/// Server `id`'s OAuth account (`holder`'s, for a delegated server), as it may be shown:
/// never a token. `None`: not connected.
pub fn view(ctx: &Ctx, id: &str, holder: Option<&str>) -> Option<View> {
    account::view(&ctx.paths, id, holder)
}
