//! OAuth operations, for the OAuth endpoints (`server::oauth`), the consent page and
//! `hal0 oauth`: register a client, begin an authorization request, let a person approve or
//! deny it, exchange and refresh tokens, revoke, and the operator's list and remove. Every
//! change is audited before it runs (surface `oauth` over the network, `cli` at the
//! shell) and its outcome after, as [`super::call`] does for the route-table ops.

use super::Ctx;
use crate::approvals;
use crate::auth::oauth::clients::{self, Client};

pub use crate::auth::oauth::clients::Registration;
use crate::auth::oauth::grants::{self, AuthorizeQuery, GrantRow, Refusal, RequestView, Tokens};
use crate::auth::oauth::{self, Issuer, cimd};
use crate::base::error::{Error, Result};
use crate::base::ssrf::Guard;
use serde_json::{Value, json};

fn issuer(ctx: &Ctx) -> Result<Issuer> {
    Issuer::of(&ctx.svc.config())
}

/// Run a change `f` on the store's thread, audited as `tool` with `args` ([`super::audited`]).
async fn audited<T: Send + 'static>(
    ctx: &Ctx,
    tool: &'static str,
    args: Value,
    f: impl FnOnce(&crate::store::Store) -> Result<T> + Send + 'static,
) -> Result<T> {
    let store = ctx.svc.store.clone();
    super::audited(ctx, tool, args, store.call(f)).await
}

/// RFC 8414 metadata of this box's authorization server.
pub fn metadata(ctx: &Ctx) -> Result<Value> {
    Ok(issuer(ctx)?.metadata())
}

/// RFC 9728 metadata of one OAuth mount (`oauth.off` for a mount not served).
pub fn resource_metadata(ctx: &Ctx, mount: &str) -> Result<Value> {
    let i = issuer(ctx)?;
    let m = crate::connect::Mount::named(mount).filter(|m| m.enabled(&ctx.svc.config()));
    match (oauth::mount_scope(mount), m) {
        (Some(_), Some(_)) => Ok(i.resource_metadata_doc(mount)),
        _ => Err(Error::not_found("oauth.unknown_resource", "no OAuth resource at this path")),
    }
}

/// The RFC 7591 answer for a client (with what it is told once).
fn registration_json(i: &Issuer, c: &Client, secret: Option<&str>, token: Option<&str>) -> Value {
    let issued = time::OffsetDateTime::parse(&c.created_at, &time::format_description::well_known::Rfc3339)
        .map(|t| t.unix_timestamp())
        .unwrap_or(0);
    let mut v = json!({
        "client_id": c.client_id,
        "client_id_issued_at": issued,
        "client_name": c.name,
        "redirect_uris": c.redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": c.auth_method,
        "registration_client_uri": i.url(&format!("/oauth/register/{}", c.client_id)),
    });
    if let Some(s) = secret {
        v["client_secret"] = json!(s);
        v["client_secret_expires_at"] = json!(0);
    }
    if let Some(t) = token {
        v["registration_access_token"] = json!(t);
    }
    v
}

/// Register a client: `dynamic` over the network (RFC 7591), `operator` at the shell.
pub async fn register(ctx: &Ctx, reg: Registration) -> Result<Value> {
    let i = issuer(ctx)?;
    let kind = if ctx.from_shell { "operator" } else { "dynamic" };
    let by = ctx.identity.to_string();
    let args = json!({"client_name": reg.client_name, "redirect_uris": reg.redirect_uris, "kind": kind});
    let r = audited(ctx, "oauth_client_register", args, move |s| clients::register(s, &reg, kind, &by)).await?;
    Ok(registration_json(&i, &r.client, r.secret.as_deref(), r.registration_token.as_deref()))
}

/// RFC 7592 read of a self-registered client, with its registration token.
pub async fn registration(ctx: &Ctx, client_id: String, token: String) -> Result<Value> {
    let i = issuer(ctx)?;
    let c = ctx.svc.store.call(move |s| clients::by_registration_token(s, &client_id, &token)).await?;
    Ok(registration_json(&i, &c, None, None))
}

/// RFC 7592 delete of a self-registered client, with its registration token.
pub async fn unregister(ctx: &Ctx, client_id: String, token: String) -> Result<()> {
    issuer(ctx)?;
    let args = json!({"client_id": client_id});
    audited(ctx, "oauth_client_remove", args, move |s| {
        clients::by_registration_token(s, &client_id, &token)?;
        clients::remove(s, &client_id, "the client deleted its registration")
    })
    .await?;
    Ok(())
}

/// The operator's list of clients.
pub async fn clients(ctx: &Ctx) -> Result<Vec<Client>> {
    ctx.svc.store.call(clients::list).await
}

/// The operator removes a client: its grants end.
pub async fn remove_client(ctx: &Ctx, client_id: String) -> Result<Client> {
    let args = json!({"client_id": client_id});
    audited(ctx, "oauth_client_remove", args, move |s| clients::remove(s, &client_id, "an operator removed the client"))
        .await
}

/// Grants (`all`: ended ones too).
pub async fn grants(ctx: &Ctx, all: bool) -> Result<Vec<GrantRow>> {
    ctx.svc.store.call(move |s| grants::list(s, all)).await
}

/// The operator ends one grant.
pub async fn end_grant(ctx: &Ctx, id: String) -> Result<()> {
    let args = json!({"grant_id": id});
    audited(ctx, "oauth_grant_revoke", args, move |s| grants::end(s, &id, "an operator ended it")).await
}

/// Check an authorization request and keep it for a person; the id of the consent page. A
/// `client_id` that is an https URL is a client metadata document: fetched (behind the SSRF
/// guard) unless a fresh copy is kept.
pub async fn begin(ctx: &Ctx, q: AuthorizeQuery) -> std::result::Result<String, Refusal> {
    let page = |error| Refusal { error, back: None };
    let i = issuer(ctx).map_err(page)?;
    if let Some(url) = q.client_id.clone().filter(|c| cimd::is_url(c)) {
        let u = url.clone();
        let kept = ctx.svc.store.call(move |s| cimd::cached(s, &u)).await.map_err(page)?;
        if kept.is_none() {
            let reg = cimd::fetch(&Guard::for_daemon(), &url, Guard::daemon_ca_file()).await.map_err(page)?;
            ctx.svc.store.call(move |s| cimd::keep(s, &url, &reg)).await.map_err(page)?;
        }
    }
    let id = ctx
        .svc
        .store
        .call(move |s| {
            // Cards of requests that expired undecided leave the inbox first (before
            // `begin` forgets old requests), so pending cards never outnumber the live
            // requests (at most 200).
            for card in grants::expired_cards(s)? {
                approvals::withdraw(s, &card, "the authorization request expired undecided")?;
            }
            Ok(grants::begin(s, &i, &q))
        })
        .await
        .map_err(page)??;
    // The request also waits as a card in the inbox, for a person not at that browser.
    let i = issuer(ctx).map_err(page)?;
    let rid = id.clone();
    let queued = ctx
        .svc
        .store
        .call(move |s| {
            let v = grants::view(s, &i, &rid)?;
            let preview = format!(
                "OAuth client \u{201c}{}\u{201d} ({}) asks to use {} as a bridge client, scope {}; the browser goes back \
                 to {}. Approving grants the {} scope only; the page where it asked carries on.",
                v.client_name, v.client_kind, v.server, v.scopes.join(" "), v.redirect_to, v.scopes[0]
            );
            let card = approvals::create(
                s,
                approvals::NewApproval {
                    kind: approvals::ApprovalKind::OauthConsent,
                    client: &crate::base::actor::Actor::Oauth(oauth::shown(&v.client_id, 200)).to_string(),
                    tool: "oauth_consent",
                    arguments: json!({"request_id": v.id, "client_id": v.client_id, "client_name": v.client_name,
                                      "server": v.server, "scopes": v.scopes, "redirect_to": v.redirect_to}),
                    preview,
                    run_id: None,
                },
            )?;
            grants::set_card(s, &rid, &card.id)
        })
        .await;
    if let Err(e) = queued {
        tracing::warn!(code = e.code, "an OAuth request has no inbox card: {}", e.message);
    }
    Ok(id)
}

/// A request decided on its card in the inbox as denied is recorded as denied.
fn follow_card(s: &crate::store::Store, i: &Issuer, id: &str) -> Result<()> {
    let v = grants::view(s, i, id)?;
    let Some(card) = v.approval_id.filter(|_| v.status == "pending") else { return Ok(()) };
    let row = approvals::get(s, &card)?;
    if row.status == approvals::Status::Denied {
        grants::deny(s, i, id, row.decided_by.as_deref().unwrap_or("a person"))?;
    }
    Ok(())
}

/// Withdraw a request's card once the person decided on the consent page.
fn withdraw_card(s: &crate::store::Store, i: &Issuer, id: &str) {
    if let Ok(Some(card)) = grants::view(s, i, id).map(|v| v.approval_id)
        && let Err(e) = approvals::withdraw(s, &card, "decided on the consent page")
    {
        tracing::warn!(code = e.code, "cannot withdraw the card of an OAuth request: {}", e.message);
    }
}

/// The browser that asked comes back for a request decided in the inbox: the redirect
/// (with the code, issued now, or the denial).
pub async fn resume(ctx: &Ctx, id: String) -> Result<String> {
    let i = issuer(ctx)?;
    ctx.svc
        .store
        .call(move |s| {
            follow_card(s, &i, &id)?;
            grants::resume(s, &i, &id)
        })
        .await
}

/// A request as the consent page shows it.
pub async fn request(ctx: &Ctx, id: String) -> Result<RequestView> {
    let i = issuer(ctx)?;
    ctx.svc
        .store
        .call(move |s| {
            follow_card(s, &i, &id)?;
            grants::view(s, &i, &id)
        })
        .await
}

/// A person approves a request with the scopes they ticked; the redirect back.
pub async fn approve(ctx: &Ctx, id: String, scopes: Vec<String>) -> Result<String> {
    let i = issuer(ctx)?;
    let by = ctx.identity.to_string();
    let args = json!({"request_id": id, "scopes": scopes});
    audited(ctx, "oauth_consent_approve", args, move |s| {
        let back = grants::approve(s, &i, &id, &scopes, &by)?;
        withdraw_card(s, &i, &id);
        Ok(back)
    })
    .await
}

/// A person denies a request; the redirect back.
pub async fn deny(ctx: &Ctx, id: String) -> Result<String> {
    let i = issuer(ctx)?;
    let by = ctx.identity.to_string();
    let args = json!({"request_id": id});
    audited(ctx, "oauth_consent_deny", args, move |s| {
        let back = grants::deny(s, &i, &id, &by)?;
        withdraw_card(s, &i, &id);
        Ok(back)
    })
    .await
}

/// The token endpoint's form, after client authentication was read from it or the
/// `Authorization: Basic` header.
#[derive(Debug, Default)]
pub struct TokenRequest {
    pub grant_type: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub scope: Option<String>,
    pub resource: Option<String>,
}

fn missing(what: &str) -> Error {
    Error::invalid("oauth.invalid_request", format!("{what} is missing"))
}

/// The token endpoint: an authorization code or a refresh token for tokens.
pub async fn token(ctx: &Ctx, t: TokenRequest) -> Result<Tokens> {
    let i = issuer(ctx)?;
    let cfg = ctx.svc.config().oauth.clone();
    if t.client_id.is_empty() {
        return Err(missing("client_id"));
    }
    let tool = match t.grant_type.as_str() {
        "authorization_code" => "oauth_token_code",
        "refresh_token" => "oauth_token_refresh",
        "" => return Err(missing("grant_type")),
        other => {
            return Err(Error::invalid(
                "oauth.unsupported_grant_type",
                format!(
                    "grant_type `{}` is not offered: use authorization_code or refresh_token",
                    oauth::shown(other, 60)
                ),
            ));
        }
    };
    let args = json!({"client_id": t.client_id, "grant_type": t.grant_type, "resource": t.resource});
    audited(ctx, tool, args, move |s| {
        let client = clients::authenticate(s, &t.client_id, t.client_secret.as_deref())?;
        if tool == "oauth_token_code" {
            let code = t.code.as_deref().ok_or_else(|| missing("code"))?;
            let verifier = t.code_verifier.as_deref().ok_or_else(|| missing("code_verifier (PKCE)"))?;
            let x = grants::CodeExchange {
                code,
                redirect_uri: t.redirect_uri.as_deref(),
                verifier,
                resource: t.resource.as_deref(),
            };
            grants::exchange(s, &i, &cfg, &client, &x)
        } else {
            let r = t.refresh_token.as_deref().ok_or_else(|| missing("refresh_token"))?;
            grants::refresh(s, &i, &cfg, &client, r, t.scope.as_deref(), t.resource.as_deref())
        }
    })
    .await
}

/// RFC 7009 revocation: the token's grant ends. Unknown tokens are not an error.
pub async fn revoke(ctx: &Ctx, client_id: String, secret: Option<String>, token: String) -> Result<()> {
    issuer(ctx)?;
    let args = json!({"client_id": client_id});
    audited(ctx, "oauth_token_revoke", args, move |s| {
        let client = clients::authenticate(s, &client_id, secret.as_deref())?;
        grants::revoke(s, &client, &token).map(|_| ())
    })
    .await
}

/// What an operator needs to connect an OAuth client: the URL to paste per mount.
pub fn urls(ctx: &Ctx) -> Result<Value> {
    let i = issuer(ctx)?;
    let mounts: Vec<Value> = oauth::MOUNTS
        .iter()
        .filter(|(m, _)| crate::connect::Mount::named(m).is_some_and(|x| x.enabled(&ctx.svc.config())))
        .map(|(m, _)| json!({"server": format!("hal0-{m}"), "url": i.resource(m)}))
        .collect();
    Ok(json!({"issuer": i.issuer(), "mounts": mounts}))
}
