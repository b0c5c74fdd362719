//! The authorization code flow with a person in it: an authorization request is checked
//! and kept ([`begin`]); a person reads it on hal0's consent page and approves it with the
//! scopes they tick, or denies it ([`approve`], [`deny`]); approving makes (or reuses) the
//! client's bridge client and issues a one-time code bound to the client, its redirect URI,
//! its PKCE S256 challenge and one mount; the code buys a grant's first tokens
//! ([`exchange`]); refresh tokens rotate on every use and a reused one ends the grant
//! ([`refresh`]). An access token resolves to its [`Grant`] ([`lookup_access`]) only while
//! the grant, its OAuth client and its bridge client are all live.

use super::clients::Client;
use super::{ACCESS_PREFIX, CODE_PREFIX, Issuer, REFRESH_PREFIX, mount_scope, shown};
use crate::auth::bridge::{self, Scope};
use crate::base::error::{Error, Result};
use crate::base::token::{random_base62, sha256_hex};
use crate::store::Store;
use base64::Engine;
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use std::collections::BTreeSet;
use time::OffsetDateTime;

/// How long an authorization request waits for a person.
pub const REQUEST_MINUTES: i64 = 10;
/// How long a code may wait to be exchanged.
pub const CODE_SECS: i64 = 60;
/// Undecided requests kept at most (older ones expire first).
const MAX_PENDING: i64 = 200;

/// What an access token opens: one mount, with the scopes a person granted, as one bridge
/// client.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    pub id: String,
    pub client_id: String,
    pub mount: String,
    pub scopes: BTreeSet<Scope>,
    /// The bridge client the grant acts as (its name is the caller's identity).
    pub bridge: bridge::Client,
    /// When the access token it was resolved from expires.
    pub expires_at: String,
}

/// The query of `GET /oauth/authorize`.
#[derive(Debug, Default, Clone, serde::Deserialize)]
pub struct AuthorizeQuery {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub scope: Option<String>,
    pub resource: Option<String>,
}

/// Why an authorization request is refused. With `back`, the refusal goes back to the
/// client at its (registered) redirect URI; without it (unknown client, unregistered
/// redirect URI) the page says it and sends the browser nowhere.
#[derive(Debug)]
pub struct Refusal {
    pub error: Error,
    pub back: Option<String>,
}

/// An authorization request as the consent page shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RequestView {
    pub id: String,
    pub client_id: String,
    /// The name the client gave itself (unverified).
    pub client_name: String,
    /// `dynamic` (registered itself) or `operator`.
    pub client_kind: String,
    pub redirect_uri: String,
    /// Where the browser goes afterwards: the redirect URI's scheme and host.
    pub redirect_to: String,
    pub mount: String,
    pub server: String,
    pub resource: String,
    /// The scopes asked (the mount's own first).
    pub scopes: Vec<String>,
    /// `pending`, `approved`, `denied` or `expired`.
    pub status: String,
    /// Whether the code of an approved request was issued (a request approved in the
    /// inbox waits for its browser to come back for it).
    pub code_issued: bool,
    /// The card of this request in the approvals inbox, if one was queued.
    pub approval_id: Option<String>,
    pub expires_at: String,
}

/// Tokens issued to a client.
#[derive(Debug, Clone, Serialize)]
pub struct Tokens {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
    pub refresh_token: String,
    pub scope: String,
}

fn stamp(t: OffsetDateTime) -> String {
    t.replace_nanosecond(0).unwrap_or(t).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

fn oauth(code: &'static str, msg: impl Into<String>) -> Error {
    Error::invalid(code, msg)
}

fn scopes_text(s: &BTreeSet<Scope>) -> String {
    s.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(" ")
}

fn scopes_of(text: &str) -> BTreeSet<Scope> {
    text.split_whitespace().filter_map(|p| Scope::parse(p).ok()).collect()
}

/// Parse a `scope` parameter: names from [`super::SCOPES`], space-separated.
fn parse_scope(scope: Option<&str>) -> Result<BTreeSet<Scope>> {
    let mut set = BTreeSet::new();
    for p in scope.unwrap_or("").split_whitespace() {
        if !super::SCOPES.contains(&p) {
            return Err(oauth(
                "oauth.invalid_scope",
                format!("scope `{}` is not offered here: ask agents, memory or admin", shown(p, 40)),
            ));
        }
        set.extend(Scope::parse(p));
    }
    Ok(set)
}

/// Append query parameters to a redirect URI.
fn redirect_with(uri: &str, pairs: &[(&str, &str)]) -> String {
    match url::Url::parse(uri) {
        Ok(mut u) => {
            {
                let mut q = u.query_pairs_mut();
                for (k, v) in pairs {
                    q.append_pair(k, v);
                }
            }
            u.to_string()
        }
        Err(_) => uri.to_string(),
    }
}

/// The RFC 6749 `error` value of an `oauth.*` code.
pub fn error_name(code: &str) -> &str {
    match code.strip_prefix("oauth.") {
        Some(
            n @ ("invalid_request"
            | "invalid_client"
            | "invalid_grant"
            | "unauthorized_client"
            | "unsupported_grant_type"
            | "invalid_scope"
            | "access_denied"
            | "unsupported_response_type"
            | "invalid_target"
            | "invalid_redirect_uri"
            | "invalid_client_metadata"
            | "invalid_token"),
        ) => n,
        _ if code == "oauth.too_many_clients" || code == "oauth.too_many_requests" => "temporarily_unavailable",
        _ => "server_error",
    }
}

/// Check an authorization request and keep it for a person to decide. Returns its id.
pub fn begin(store: &Store, issuer: &Issuer, q: &AuthorizeQuery) -> std::result::Result<String, Refusal> {
    let page = |error: Error| Refusal { error, back: None };
    let client_id = q.client_id.as_deref().unwrap_or("");
    if client_id.is_empty() {
        return Err(page(oauth("oauth.invalid_request", "client_id is missing")));
    }
    let client = super::clients::find(store, client_id)
        .map_err(page)?
        .ok_or_else(|| page(super::clients::unknown(client_id)))?;
    let redirect = match (&q.redirect_uri, client.redirect_uris.as_slice()) {
        (Some(r), uris) if uris.iter().any(|u| u == r) => r.clone(),
        (None, [only]) => only.clone(),
        (None, _) => {
            return Err(page(oauth(
                "oauth.invalid_request",
                "redirect_uri is missing and the client registered more than one",
            )));
        }
        (Some(r), _) => {
            return Err(page(oauth(
                "oauth.invalid_redirect_uri",
                format!(
                    "redirect_uri `{}` is not one this client registered; hal0 sends the browser only to a \
                     registered one",
                    shown(r, 200)
                ),
            )));
        }
    };
    let state = q.state.clone().filter(|s| !s.is_empty());
    let back = |error: Error| {
        let mut pairs = vec![("error", error_name(error.code)), ("error_description", error.message.as_str())];
        let iss = issuer.issuer();
        if let Some(s) = &state {
            pairs.push(("state", s));
        }
        pairs.push(("iss", &iss));
        let url = redirect_with(&redirect, &pairs);
        Refusal { error, back: Some(url) }
    };
    if q.response_type.as_deref() != Some("code") {
        return Err(back(oauth(
            "oauth.unsupported_response_type",
            "response_type must be `code` (the authorization code flow)",
        )));
    }
    if state.as_ref().is_some_and(|s| s.len() > 1000) {
        return Err(back(oauth("oauth.invalid_request", "state is longer than 1000 bytes")));
    }
    let challenge = q.code_challenge.as_deref().unwrap_or("");
    match q.code_challenge_method.as_deref() {
        Some("S256") => {}
        Some(m) => {
            return Err(back(oauth(
                "oauth.invalid_request",
                format!("code_challenge_method `{}` is refused: hal0 takes S256 only", shown(m, 20)),
            )));
        }
        None => return Err(back(oauth("oauth.invalid_request", "PKCE is required: send code_challenge_method=S256"))),
    }
    let b64 = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if challenge.len() != 43 || !challenge.chars().all(b64) {
        return Err(back(oauth(
            "oauth.invalid_request",
            "code_challenge must be the 43-character base64url SHA-256 of the code verifier",
        )));
    }
    let asked = parse_scope(q.scope.as_deref()).map_err(back)?;
    let mount = match q.resource.as_deref() {
        Some(r) => issuer.mount_of_resource(r).ok_or_else(|| {
            back(oauth(
                "oauth.invalid_target",
                format!(
                    "resource `{}` is not one of this box's OAuth resources ({})",
                    shown(r, 200),
                    super::MOUNTS.iter().map(|(m, _)| issuer.resource(m)).collect::<Vec<_>>().join(", ")
                ),
            ))
        })?,
        None => {
            let mounts: Vec<&str> = super::MOUNTS.iter().filter(|(_, s)| asked.contains(s)).map(|(m, _)| *m).collect();
            match mounts.as_slice() {
                [one] => *one,
                _ => {
                    return Err(back(oauth(
                        "oauth.invalid_target",
                        "send `resource`: the URL of the MCP server the token is for (e.g. <box>/oauth/memory/mcp)",
                    )));
                }
            }
        }
    };
    let mut asked = asked;
    asked.extend(mount_scope(mount));
    let id = format!("oar_{}", random_base62(22).map_err(page)?);
    let t = now();
    store
        .with(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let stale = stamp(t - time::Duration::days(1));
            tx.execute("DELETE FROM oauth_requests WHERE expires_at < ?1 AND grant_id IS NULL", [stale])?;
            let live: i64 = tx.query_row(
                "SELECT count(*) FROM oauth_requests WHERE decision IS NULL AND expires_at > ?1",
                [stamp(t)],
                |r| r.get(0),
            )?;
            if live >= MAX_PENDING {
                return Err(Error::new(
                    "oauth.too_many_requests",
                    crate::base::error::Kind::TooMany,
                    format!("{MAX_PENDING} authorization requests already wait for a person; try again later"),
                ));
            }
            tx.execute(
                "INSERT INTO oauth_requests (id, client_id, redirect_uri, state, code_challenge, mount, scopes,
                                             created_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    id,
                    client.client_id,
                    redirect,
                    state,
                    challenge,
                    mount,
                    scopes_text(&asked),
                    stamp(t),
                    stamp(t + time::Duration::minutes(REQUEST_MINUTES))
                ],
            )?;
            tx.commit()?;
            Ok(())
        })
        .map_err(back)?;
    Ok(id)
}

struct Row {
    client: Client,
    redirect_uri: String,
    state: Option<String>,
    mount: String,
    scopes: BTreeSet<Scope>,
    expires_at: String,
    decision: Option<String>,
    code_issued: bool,
    approval_id: Option<String>,
}

fn request_row(store: &Store, id: &str) -> Result<Row> {
    let unknown =
        || Error::not_found("oauth.request_unknown", "no such authorization request: start again from the client");
    if !id.starts_with("oar_") || id.len() > 40 {
        return Err(unknown());
    }
    let row = store.with(|c| {
        Ok(c.query_row(
            "SELECT client_id, redirect_uri, state, mount, scopes, expires_at, decision, code_sha256 IS NOT NULL,
                    approval_id
               FROM oauth_requests WHERE id = ?1",
            [id],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, Option<String>>(6)?,
                    r.get::<_, bool>(7)?,
                    r.get::<_, Option<String>>(8)?,
                ))
            },
        )
        .optional()?)
    })?;
    let (client_id, redirect_uri, state, mount, scopes, expires_at, decision, code_issued, approval_id) =
        row.ok_or_else(unknown)?;
    let client = super::clients::get(store, &client_id)?;
    Ok(Row {
        client,
        redirect_uri,
        state,
        mount,
        scopes: scopes_of(&scopes),
        expires_at,
        decision,
        code_issued,
        approval_id,
    })
}

/// Carry out an approved `oauth_consent` card: the request it names is approved (the
/// mount's own scope) as the person who decided the card.
pub fn execute_approved(
    store: &Store,
    _config: &crate::config::Config,
    row: &crate::approvals::Approval,
) -> Result<serde_json::Value> {
    let id = row.arguments["request_id"].as_str().unwrap_or_default();
    let by = row.decided_by.as_deref().unwrap_or("a person");
    approve_later(store, id, by)?;
    Ok(serde_json::json!({"request_id": id, "approved": true, "next": "the browser that asked continues by itself"}))
}

/// The inbox cards of requests that expired undecided, unlinked from them (the caller
/// withdraws them), so no card outlives its request.
pub fn expired_cards(store: &Store) -> Result<Vec<String>> {
    let t = stamp(now());
    store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let cards = {
            let mut st = tx.prepare(
                "SELECT approval_id FROM oauth_requests
                  WHERE decision IS NULL AND expires_at <= ?1 AND approval_id IS NOT NULL",
            )?;
            st.query_map([&t], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?
        };
        tx.execute(
            "UPDATE oauth_requests SET approval_id = NULL
              WHERE decision IS NULL AND expires_at <= ?1 AND approval_id IS NOT NULL",
            [&t],
        )?;
        tx.commit()?;
        Ok(cards)
    })
}

/// Link a request to its card in the approvals inbox.
pub fn set_card(store: &Store, id: &str, approval_id: &str) -> Result<()> {
    store.with(|c| {
        c.execute("UPDATE oauth_requests SET approval_id = ?1 WHERE id = ?2", params![approval_id, id])?;
        Ok(())
    })
}

/// An authorization request as the consent page shows it.
pub fn view(store: &Store, issuer: &Issuer, id: &str) -> Result<RequestView> {
    let r = request_row(store, id)?;
    let status = match r.decision.as_deref() {
        Some(d) => d.to_string(),
        None if r.expires_at <= stamp(now()) => "expired".into(),
        None => "pending".into(),
    };
    let redirect_to = url::Url::parse(&r.redirect_uri)
        .map(|u| match u.host_str() {
            Some(h) => format!("{}://{h}", u.scheme()),
            None => format!("{}:", u.scheme()),
        })
        .unwrap_or_default();
    let own = mount_scope(&r.mount);
    let mut scopes: Vec<String> = own.iter().map(|s| s.as_str().to_string()).collect();
    scopes.extend(r.scopes.iter().filter(|s| Some(**s) != own).map(|s| s.as_str().to_string()));
    Ok(RequestView {
        id: id.to_string(),
        client_id: r.client.client_id,
        client_name: r.client.name,
        client_kind: r.client.kind,
        redirect_uri: r.redirect_uri,
        redirect_to,
        server: format!("hal0-{}", r.mount),
        resource: issuer.resource(&r.mount),
        mount: r.mount,
        scopes,
        status,
        code_issued: r.code_issued,
        approval_id: r.approval_id,
        expires_at: r.expires_at,
    })
}

/// Decide a pending, unexpired request inside one transaction; `f` runs with it and
/// returns the redirect.
fn decide(
    store: &Store,
    id: &str,
    f: impl FnOnce(&rusqlite::Transaction<'_>, &Row, &str) -> Result<String>,
) -> Result<String> {
    let row = request_row(store, id)?;
    let t = stamp(now());
    store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let (decision, expires): (Option<String>, String) =
            tx.query_row("SELECT decision, expires_at FROM oauth_requests WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        if let Some(d) = decision {
            return Err(Error::conflict(
                "oauth.request_decided",
                format!("this request was {d} already; start again from the client for a new one"),
            ));
        }
        if expires <= t {
            return Err(Error::conflict(
                "oauth.request_expired",
                format!("this request waited more than {REQUEST_MINUTES} minutes; start again from the client"),
            ));
        }
        let out = f(&tx, &row, &t)?;
        tx.commit()?;
        Ok(out)
    })
}

/// The bridge client of an OAuth client: its live one, or a new one named after it.
fn bridge_client_for(tx: &rusqlite::Connection, client: &Client, scopes: &BTreeSet<Scope>, by: &str) -> Result<String> {
    let origin = crate::base::actor::Actor::Oauth(client.client_id.clone()).to_string();
    let live: Option<(String, String)> = tx
        .query_row("SELECT name, scopes FROM bridge_clients WHERE origin = ?1 AND revoked_at IS NULL", [&origin], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    if let Some((name, held)) = live {
        let mut all = scopes_of(&held);
        all.extend(scopes.iter().copied());
        bridge::set_scopes_in(tx, &name, &all)?;
        return Ok(name);
    }
    let slug: String = client
        .name
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    let base: String = format!("oauth-{}", if slug.is_empty() { "client" } else { &slug }).chars().take(26).collect();
    let base = base.trim_end_matches('-').to_string();
    let taken = |n: &str| -> Result<bool> {
        Ok(tx.query_row("SELECT 1 FROM bridge_clients WHERE name = ?1", [n], |_| Ok(())).optional()?.is_some())
    };
    let mut name = base.clone();
    let mut i = 2;
    while taken(&name)? {
        name = format!("{base}-{i}");
        i += 1;
    }
    let note: String = format!("OAuth client \u{201c}{}\u{201d}, approved by {by}", client.name)
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    bridge::insert_oauth(tx, &name, &note, scopes, &origin)?;
    Ok(name)
}

/// A person approves a request with the scopes they ticked (a subset of those asked that
/// holds the mount's own). Returns the redirect that carries the code back to the client.
pub fn approve(store: &Store, issuer: &Issuer, id: &str, ticked: &[String], by: &str) -> Result<String> {
    let out = decide(store, id, |tx, row, t| {
        let chosen = chosen_scopes(row, ticked)?;
        let name = bridge_client_for(tx, &row.client, &chosen, by)?;
        tx.execute(
            "UPDATE oauth_requests SET decision = 'approved', decided_at = ?1, decided_by = ?2, granted = ?3 WHERE id = ?4",
            params![t, by, format!("{name} {}", scopes_text(&chosen)), id],
        )?;
        issue_code(tx, issuer, row, id, t)
    })?;
    crate::auth::keycache::bump(store);
    Ok(out)
}

/// A person approves a request from the approvals inbox, not at the browser that asked:
/// the grant holds the mount's own scope, and the code is issued when that browser comes
/// back for it ([`resume`]).
pub fn approve_later(store: &Store, id: &str, by: &str) -> Result<()> {
    decide(store, id, |tx, row, t| {
        let own = mount_scope(&row.mount).ok_or_else(|| Error::internal("a request names no OAuth mount"))?;
        let chosen = chosen_scopes(row, &[own.as_str().to_string()])?;
        let name = bridge_client_for(tx, &row.client, &chosen, by)?;
        tx.execute(
            "UPDATE oauth_requests SET decision = 'approved', decided_at = ?1, decided_by = ?2, granted = ?3 WHERE id = ?4",
            params![t, by, format!("{name} {}", scopes_text(&chosen)), id],
        )?;
        Ok(String::new())
    })?;
    crate::auth::keycache::bump(store);
    Ok(())
}

/// The browser that asked comes back for a request decided in the inbox: the code (issued
/// now, once) or the denial, as the redirect to the client.
pub fn resume(store: &Store, issuer: &Issuer, id: &str) -> Result<String> {
    let row = request_row(store, id)?;
    let t = stamp(now());
    store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let (decision, code): (Option<String>, Option<String>) =
            tx.query_row("SELECT decision, code_sha256 FROM oauth_requests WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let out = match (decision.as_deref(), code) {
            (Some("approved"), None) => issue_code(&tx, issuer, &row, id, &t)?,
            (Some("denied"), _) => denial(issuer, &row),
            (None, _) => {
                return Err(Error::conflict(
                    "oauth.request_pending",
                    "nobody has decided this request yet: approve it on this page or in the approvals inbox",
                ));
            }
            _ => {
                return Err(Error::conflict(
                    "oauth.request_decided",
                    "this request's code was issued already; start again from the client for a new one",
                ));
            }
        };
        tx.commit()?;
        Ok(out)
    })
}

/// The scopes a person chose: a subset of those asked that holds the mount's own.
fn chosen_scopes(row: &Row, ticked: &[String]) -> Result<BTreeSet<Scope>> {
    let mut chosen = BTreeSet::new();
    for s in ticked {
        let s = Scope::parse(s)?;
        if !row.scopes.contains(&s) {
            return Err(oauth(
                "oauth.invalid_scope",
                format!("the client did not ask the `{}` scope; tick only what it asked", s.as_str()),
            ));
        }
        chosen.insert(s);
    }
    let own = mount_scope(&row.mount).ok_or_else(|| Error::internal("a request names no OAuth mount"))?;
    if !chosen.contains(&own) {
        return Err(oauth(
            "oauth.invalid_scope",
            format!("a grant for hal0-{} holds the `{}` scope: tick it, or deny the request", row.mount, own.as_str()),
        ));
    }
    Ok(chosen)
}

/// Issue an approved request's one code (inside the caller's transaction); the redirect
/// that carries it back.
fn issue_code(tx: &rusqlite::Connection, issuer: &Issuer, row: &Row, id: &str, t: &str) -> Result<String> {
    let code = format!("{CODE_PREFIX}{}", random_base62(43)?);
    tx.execute(
        "UPDATE oauth_requests SET code_sha256 = ?1, code_at = ?2 WHERE id = ?3",
        params![sha256_hex(&code), t, id],
    )?;
    let mut pairs = vec![("code", code.as_str())];
    if let Some(s) = &row.state {
        pairs.push(("state", s));
    }
    let iss = issuer.issuer();
    pairs.push(("iss", &iss));
    Ok(redirect_with(&row.redirect_uri, &pairs))
}

/// The redirect that tells the client a person said no.
fn denial(issuer: &Issuer, row: &Row) -> String {
    let mut pairs = vec![("error", "access_denied"), ("error_description", "the person at the box said no")];
    if let Some(s) = &row.state {
        pairs.push(("state", s));
    }
    let iss = issuer.issuer();
    pairs.push(("iss", &iss));
    redirect_with(&row.redirect_uri, &pairs)
}

/// A person denies a request. Returns the redirect that tells the client so.
pub fn deny(store: &Store, issuer: &Issuer, id: &str, by: &str) -> Result<String> {
    decide(store, id, |tx, row, t| {
        tx.execute(
            "UPDATE oauth_requests SET decision = 'denied', decided_at = ?1, decided_by = ?2 WHERE id = ?3",
            params![t, by, id],
        )?;
        Ok(denial(issuer, row))
    })
}

/// Whether `verifier` is the PKCE S256 verifier of `challenge`.
pub fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let ok = (43..=128).contains(&verifier.len())
        && verifier.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~'));
    if !ok {
        return false;
    }
    let digest = <sha2::Sha256 as sha2::Digest>::digest(verifier.as_bytes());
    let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
    crate::base::token::ct_eq(&computed, challenge)
}

fn bad_grant(msg: impl Into<String>) -> Error {
    oauth("oauth.invalid_grant", msg)
}

/// Mint a grant's tokens inside the caller's transaction.
fn mint(tx: &rusqlite::Connection, cfg: &crate::config::Oauth, grant: &str, scopes: &str) -> Result<Tokens> {
    let access = format!("{ACCESS_PREFIX}{}", random_base62(43)?);
    let refresh = format!("{REFRESH_PREFIX}{}", random_base62(43)?);
    let t = now();
    let access_secs = i64::from(cfg.access_minutes) * 60;
    let mut st = tx.prepare_cached(
        "INSERT INTO oauth_tokens (token_sha256, grant_id, kind, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    st.execute(params![
        sha256_hex(&access),
        grant,
        "access",
        stamp(t),
        stamp(t + time::Duration::seconds(access_secs))
    ])?;
    st.execute(params![
        sha256_hex(&refresh),
        grant,
        "refresh",
        stamp(t),
        stamp(t + time::Duration::days(i64::from(cfg.refresh_days)))
    ])?;
    Ok(Tokens {
        access_token: access,
        token_type: "Bearer",
        expires_in: access_secs,
        refresh_token: refresh,
        scope: scopes.to_string(),
    })
}

fn end_grant(tx: &rusqlite::Connection, grant: &str, why: &str) -> Result<()> {
    tx.execute(
        "UPDATE oauth_grants SET revoked_at = ?1, revoked_why = ?2 WHERE id = ?3 AND revoked_at IS NULL",
        params![stamp(now()), why, grant],
    )?;
    Ok(())
}

/// The `resource` a token request names must be the grant's, when sent.
fn check_resource(issuer: &Issuer, resource: Option<&str>, mount: &str) -> Result<()> {
    match resource {
        Some(r) if issuer.mount_of_resource(r) != Some(mount) => Err(oauth(
            "oauth.invalid_target",
            format!("this grant is for {}, not `{}`", issuer.resource(mount), shown(r, 200)),
        )),
        _ => Ok(()),
    }
}

/// What a client sends to exchange a code.
#[derive(Debug, Clone, Copy)]
pub struct CodeExchange<'a> {
    pub code: &'a str,
    pub redirect_uri: Option<&'a str>,
    pub verifier: &'a str,
    pub resource: Option<&'a str>,
}

/// An issued code's request row.
struct Issued {
    id: String,
    owner: String,
    redirect: String,
    challenge: String,
    mount: String,
    granted: Option<String>,
    used: Option<String>,
    grant_id: String,
}

/// A refresh token's row and its grant's.
struct Held {
    grant: String,
    owner: String,
    mount: String,
    scopes: String,
    spent: Option<String>,
    revoked: Option<String>,
}

/// Exchange a code for a grant's first tokens: the code is the client's, unspent, under
/// [`CODE_SECS`] old, for this redirect URI, and `verifier` matches its challenge. A code
/// presented twice ends the grant it bought.
pub fn exchange(
    store: &Store,
    issuer: &Issuer,
    cfg: &crate::config::Oauth,
    client: &Client,
    x: &CodeExchange<'_>,
) -> Result<Tokens> {
    let CodeExchange { code, redirect_uri, verifier, resource } = *x;
    let t = now();
    let out = store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let row: Option<Issued> = tx
            .query_row(
                "SELECT id, client_id, redirect_uri, code_challenge, mount, granted, code_used_at,
                        COALESCE(grant_id, '')
                   FROM oauth_requests WHERE code_sha256 = ?1 AND code_at > ?2",
                params![sha256_hex(code), stamp(t - time::Duration::seconds(CODE_SECS))],
                |r| {
                    Ok(Issued {
                        id: r.get(0)?,
                        owner: r.get(1)?,
                        redirect: r.get(2)?,
                        challenge: r.get(3)?,
                        mount: r.get(4)?,
                        granted: r.get(5)?,
                        used: r.get(6)?,
                        grant_id: r.get(7)?,
                    })
                },
            )
            .optional()?;
        let Some(Issued { id, owner, redirect, challenge, mount, granted, used, grant_id }) = row else {
            return Err(bad_grant("the code is unknown or older than a minute: authorize again"));
        };
        if used.is_some() {
            if !grant_id.is_empty() {
                end_grant(&tx, &grant_id, "its authorization code was presented again")?;
            }
            tx.commit()?;
            return Err(bad_grant("this code was spent already; the grant it bought is ended: authorize again"));
        }
        if owner != client.client_id {
            return Err(bad_grant("this code was issued to another client"));
        }
        if redirect_uri.is_some_and(|r| r != redirect) {
            return Err(bad_grant("redirect_uri differs from the one the code was issued for"));
        }
        if !pkce_matches(verifier, &challenge) {
            return Err(bad_grant("code_verifier does not match the code_challenge (PKCE S256)"));
        }
        check_resource(issuer, resource, &mount)?;
        let granted = granted.unwrap_or_default();
        let (bridge_name, scopes) = granted.split_once(' ').unwrap_or((&granted, ""));
        let grant = format!("og_{}", random_base62(22)?);
        tx.execute(
            "INSERT INTO oauth_grants (id, client_id, bridge_client, mount, scopes, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![grant, client.client_id, bridge_name, mount, scopes, stamp(t)],
        )?;
        tx.execute(
            "UPDATE oauth_requests SET code_used_at = ?1, grant_id = ?2 WHERE id = ?3",
            params![stamp(t), grant, id],
        )?;
        let tokens = mint(&tx, cfg, &grant, scopes)?;
        tx.commit()?;
        Ok(tokens)
    });
    // A replayed code ends a grant: open streams re-check their token.
    crate::auth::keycache::bump(store);
    out
}

/// Rotate a refresh token: the old one is spent, a new pair is issued. A spent one
/// presented again ends the whole grant (someone else holds a copy).
pub fn refresh(
    store: &Store,
    issuer: &Issuer,
    cfg: &crate::config::Oauth,
    client: &Client,
    token: &str,
    scope: Option<&str>,
    resource: Option<&str>,
) -> Result<Tokens> {
    let t = stamp(now());
    let out = store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let row: Option<Held> = tx
            .query_row(
                "SELECT t.grant_id, g.client_id, g.mount, g.scopes, t.spent_at, g.revoked_at
                   FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
                  WHERE t.token_sha256 = ?1 AND t.kind = 'refresh' AND t.expires_at > ?2",
                params![sha256_hex(token), t],
                |r| {
                    Ok(Held {
                        grant: r.get(0)?,
                        owner: r.get(1)?,
                        mount: r.get(2)?,
                        scopes: r.get(3)?,
                        spent: r.get(4)?,
                        revoked: r.get(5)?,
                    })
                },
            )
            .optional()?;
        let Some(Held { grant, owner, mount, scopes, spent, revoked }) = row else {
            return Err(bad_grant("the refresh token is unknown or expired: authorize again"));
        };
        if owner != client.client_id {
            return Err(bad_grant("this refresh token was issued to another client"));
        }
        if revoked.is_some() {
            return Err(bad_grant("this grant was ended (revoked, rotated or reused): authorize again"));
        }
        if spent.is_some() {
            end_grant(&tx, &grant, "a spent refresh token was presented again")?;
            tx.commit()?;
            return Err(bad_grant(
                "this refresh token was used already, so a copy of it is elsewhere: the grant is ended; authorize again",
            ));
        }
        check_resource(issuer, resource, &mount)?;
        let held = scopes_of(&scopes);
        if let Some(s) = scope
            && !parse_scope(Some(s))?.is_subset(&held)
        {
            return Err(oauth("oauth.invalid_scope", "a refresh may narrow the scope, never widen it"));
        }
        let live: Option<String> = tx
            .query_row(
                "SELECT b.name FROM oauth_grants g JOIN bridge_clients b ON b.name = g.bridge_client
                  WHERE g.id = ?1 AND b.revoked_at IS NULL",
                [&grant],
                |r| r.get(0),
            )
            .optional()?;
        if live.is_none() {
            return Err(bad_grant("the bridge client of this grant was revoked: authorize again"));
        }
        tx.execute(
            "UPDATE oauth_tokens SET spent_at = ?1 WHERE token_sha256 = ?2",
            params![t, sha256_hex(token)],
        )?;
        // The access tokens issued before this refresh end with it.
        tx.execute(
            "UPDATE oauth_tokens SET spent_at = ?1 WHERE grant_id = ?2 AND kind = 'access' AND spent_at IS NULL",
            params![t, grant],
        )?;
        let tokens = mint(&tx, cfg, &grant, &scopes)?;
        tx.commit()?;
        Ok(tokens)
    });
    crate::auth::keycache::bump(store);
    out
}

/// RFC 7009: revoking a token (access or refresh) of `client` ends its whole grant. An
/// unknown token, or another client's, changes nothing (and is not an error).
pub fn revoke(store: &Store, client: &Client, token: &str) -> Result<bool> {
    let ended = store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let grant: Option<String> = tx
            .query_row(
                "SELECT g.id FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
                  WHERE t.token_sha256 = ?1 AND g.client_id = ?2 AND g.revoked_at IS NULL",
                params![sha256_hex(token), client.client_id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(g) = &grant {
            end_grant(&tx, g, "the client revoked it")?;
        }
        tx.commit()?;
        Ok(grant.is_some())
    })?;
    crate::auth::keycache::bump(store);
    Ok(ended)
}

/// End every live grant of a bridge client inside the caller's transaction (it was
/// rotated or revoked).
pub fn end_for_bridge_client(tx: &rusqlite::Connection, name: &str, why: &str) -> Result<()> {
    tx.execute(
        "UPDATE oauth_grants SET revoked_at = ?1, revoked_why = ?2 WHERE bridge_client = ?3 AND revoked_at IS NULL",
        params![stamp(now()), why, name],
    )?;
    Ok(())
}

/// The grant a live access token opens, if any: unexpired, unspent, its grant, OAuth client
/// and bridge client live.
pub fn lookup_access(store: &Store, token: &str) -> Result<Option<Grant>> {
    if !token.starts_with(ACCESS_PREFIX) {
        return Ok(None);
    }
    let t = stamp(now());
    store.with(|c| {
        let mut st = c.prepare_cached(&format!(
            "SELECT g.id, g.client_id, g.mount, g.scopes, t.expires_at, {}
               FROM oauth_tokens t
               JOIN oauth_grants g ON g.id = t.grant_id
               JOIN oauth_clients o ON o.client_id = g.client_id
               JOIN bridge_clients b ON b.name = g.bridge_client
              WHERE t.token_sha256 = ?1 AND t.kind = 'access' AND t.spent_at IS NULL AND t.expires_at > ?2
                AND g.revoked_at IS NULL AND o.removed_at IS NULL AND b.revoked_at IS NULL",
            bridge::COLS.split(", ").map(|c| format!("b.{c}")).collect::<Vec<_>>().join(", ")
        ))?;
        Ok(st
            .query_row(params![sha256_hex(token), t], |r| {
                let scopes: String = r.get(3)?;
                // The grant acts as its bridge client with the grant's own scopes.
                let mut b = bridge::from_row_at(r, 5)?;
                b.scopes = scopes_of(&scopes);
                Ok(Grant {
                    id: r.get(0)?,
                    client_id: r.get(1)?,
                    mount: r.get(2)?,
                    scopes: scopes_of(&scopes),
                    bridge: b,
                    expires_at: r.get(4)?,
                })
            })
            .optional()?)
    })
}

/// A grant as listed (`hal0 oauth grants`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GrantRow {
    pub id: String,
    pub client_id: String,
    pub client_name: String,
    pub bridge_client: String,
    pub mount: String,
    pub scopes: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
    pub revoked_why: Option<String>,
}

/// Every grant, newest first (`all`: ended ones too).
pub fn list(store: &Store, all: bool) -> Result<Vec<GrantRow>> {
    store.with(|c| {
        let mut st = c.prepare(
            "SELECT g.id, g.client_id, o.name, g.bridge_client, g.mount, g.scopes, g.created_at, g.revoked_at,
                    g.revoked_why
               FROM oauth_grants g JOIN oauth_clients o ON o.client_id = g.client_id
              WHERE ?1 OR g.revoked_at IS NULL
              ORDER BY g.created_at DESC, g.id",
        )?;
        let rows = st
            .query_map([all], |r| {
                Ok(GrantRow {
                    id: r.get(0)?,
                    client_id: r.get(1)?,
                    client_name: r.get(2)?,
                    bridge_client: r.get(3)?,
                    mount: r.get(4)?,
                    scopes: r.get(5)?,
                    created_at: r.get(6)?,
                    revoked_at: r.get(7)?,
                    revoked_why: r.get(8)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// End one grant by id (the operator's `hal0 oauth revoke ID`).
pub fn end(store: &Store, id: &str, why: &str) -> Result<()> {
    let n = store.with(|c| {
        Ok(c.execute(
            "UPDATE oauth_grants SET revoked_at = ?1, revoked_why = ?2 WHERE id = ?3 AND revoked_at IS NULL",
            params![stamp(now()), why, id],
        )?)
    })?;
    if n == 0 {
        return Err(Error::not_found(
            "oauth.grant_unknown",
            format!("no live OAuth grant `{}` (see hal0 oauth grants)", shown(id, 60)),
        ));
    }
    crate::auth::keycache::bump(store);
    Ok(())
}

#[cfg(test)]
#[path = "grants_tests.rs"]
mod tests;
