//! Accounts at installed servers: a box-wide one per server (`<state>/upstream-oauth/<id>.acct`)
//! or, for a server whose record says `accounts = "delegated"`, one per consumer (its
//! *holder*: `<id>@<sha256(holder)[..16]>.acct`), each with its tokens and the client they
//! were issued to, sealed ([`super::vault`]). What the proxy sends upstream ([`bearer`]),
//! what `hal0 mcp status` and `hal0 doctor` show of it ([`View`]: holder, state and expiry,
//! never a token), and the states: `connected`, or `reauth_required` (the upstream refused
//! a refresh, or the token, and a person must connect the account again).

use super::discover::Discovery;
use super::vault;
use crate::base::error::{Error, Kind, Result};
use crate::base::paths::Paths;
use serde::{Deserialize, Serialize};

/// The client hal0 is at one authorization server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClientReg {
    pub client_id: String,
    #[serde(default)]
    pub client_secret: Option<String>,
    /// `none`, `client_secret_post` or `client_secret_basic`.
    pub auth_method: String,
    /// `metadata` (hal0's own document), `registered` (dynamic registration) or `operator`.
    pub kind: String,
    pub redirect_uri: String,
}

/// A connected account.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Account {
    pub server: String,
    /// The consumer whose delegated account this is (`None`: the box-wide account).
    #[serde(default)]
    pub holder: Option<String>,
    /// The server's URL when it was connected (its host passes the SSRF guard).
    pub server_url: String,
    pub discovery: Discovery,
    pub client: ClientReg,
    pub access: String,
    #[serde(default)]
    pub refresh: Option<String>,
    /// Unix seconds; `None` when the server gave no lifetime.
    #[serde(default)]
    pub expires_at: Option<i64>,
    /// The token's lifetime as the server gave it (`expires_in`), in seconds.
    #[serde(default)]
    pub lifetime: Option<i64>,
    #[serde(default)]
    pub scope: String,
    pub connected_at: i64,
    #[serde(default)]
    pub connected_by: String,
    #[serde(default)]
    pub refreshed_at: Option<i64>,
    /// `connected` or `reauth_required`.
    pub state: String,
    /// Why a person must connect it again (no secret in it).
    #[serde(default)]
    pub error: Option<String>,
    /// Whether a person has approved a call made with it (the server's `gate_first_call`
    /// holds its calls until then).
    #[serde(default)]
    pub vetted: bool,
}

pub const CONNECTED: &str = "connected";
pub const REAUTH: &str = "reauth_required";

/// The sealed document's name: `<server>.acct`, or `<server>@<digest of holder>.acct`.
pub fn name(server: &str, holder: Option<&str>) -> String {
    match holder {
        None => format!("{server}.acct"),
        Some(h) => format!("{server}@{}.acct", &crate::base::token::sha256_hex(h)[..16]),
    }
}

/// Who an account belongs to, in words: `the box` or `consumer NAME`.
pub fn whose(holder: Option<&str>) -> String {
    holder.map_or_else(|| "the box".to_string(), |h| format!("consumer `{h}`"))
}

pub fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn rfc3339(t: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(t)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

/// The account of `server` held by `holder` (`None`: the box-wide one), if connected.
pub fn load(paths: &Paths, server: &str, holder: Option<&str>) -> Result<Option<Account>> {
    vault::get(paths, &name(server, holder))
}

pub fn save(paths: &Paths, a: &Account) -> Result<()> {
    vault::put(paths, &name(&a.server, a.holder.as_deref()), a)
}

/// Remove that account (`true` when there was one).
pub fn remove(paths: &Paths, server: &str, holder: Option<&str>) -> Result<bool> {
    vault::remove(paths, &name(server, holder))
}

/// Put that account in `reauth_required` with `why`.
pub fn mark_reauth(paths: &Paths, server: &str, holder: Option<&str>, why: &str) -> Result<()> {
    if let Some(mut a) = load(paths, server, holder)? {
        a.state = REAUTH.into();
        a.error = Some(crate::base::redact::redact(why).into_owned());
        save(paths, &a)?;
    }
    Ok(())
}

/// Whether calls with that account wait for a person first: the account is connected and
/// no call of it was approved yet.
pub fn unvetted(paths: &Paths, server: &str, holder: Option<&str>) -> bool {
    load(paths, server, holder).ok().flatten().is_some_and(|a| !a.vetted)
}

/// Record that a person approved a call made with that account.
pub fn vet(paths: &Paths, server: &str, holder: Option<&str>) -> Result<()> {
    if let Some(mut a) = load(paths, server, holder)?
        && !a.vetted
    {
        a.vetted = true;
        save(paths, &a)?;
    }
    Ok(())
}

/// The fix, in words, for an account that is missing or must be connected again.
pub fn connect_hint(server: &str, holder: Option<&str>) -> String {
    match holder {
        None => format!("on the box: hal0 mcp connect {server} (then open the URL it prints)"),
        Some(h) => format!("on the box: hal0 mcp connect {server} --for {h} (then open the URL it prints)"),
    }
}

/// What may be shown of an account: never a token.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct View {
    pub server: String,
    /// The consumer of a delegated account (`None`: the box-wide account).
    pub holder: Option<String>,
    pub state: String,
    pub issuer: String,
    pub client_kind: String,
    pub scope: String,
    pub connected_at: String,
    pub connected_by: String,
    pub expires_at: Option<String>,
    pub refreshed_at: Option<String>,
    pub refreshable: bool,
    pub error: Option<String>,
    /// Whether a person has approved a call made with it.
    pub vetted: bool,
}

impl Account {
    pub fn view(&self) -> View {
        View {
            server: self.server.clone(),
            holder: self.holder.clone(),
            state: self.state.clone(),
            issuer: self.discovery.issuer.clone(),
            client_kind: self.client.kind.clone(),
            scope: self.scope.clone(),
            connected_at: rfc3339(self.connected_at),
            connected_by: self.connected_by.clone(),
            expires_at: self.expires_at.map(rfc3339),
            refreshed_at: self.refreshed_at.map(rfc3339),
            refreshable: self.refresh.is_some(),
            error: self.error.clone(),
            vetted: self.vetted,
        }
    }

    /// Whether the access token has expired (or will within `margin` seconds).
    pub fn expiring(&self, margin: i64) -> bool {
        self.expires_at.is_some_and(|e| e - margin <= now())
    }

    /// Whether it is time to refresh: within `margin` seconds of expiry, or within half
    /// its lifetime when that is shorter (a 5-minute token is not refreshed every check).
    pub fn due(&self, margin: i64) -> bool {
        let m = self.lifetime.map_or(margin, |l| margin.min(l / 2));
        self.expiring(m)
    }
}

/// The view of document `doc` (an `.acct` name); one whose sealed file does not open
/// reads as `reauth_required` (with why).
fn view_of(paths: &Paths, doc: &str) -> Option<View> {
    match vault::get::<Account>(paths, doc) {
        Ok(a) => a.map(|a| a.view()),
        Err(e) => Some(View {
            server: doc.trim_end_matches(".acct").split('@').next().unwrap_or_default().to_string(),
            holder: None,
            state: REAUTH.into(),
            issuer: String::new(),
            client_kind: String::new(),
            scope: String::new(),
            connected_at: String::new(),
            connected_by: String::new(),
            expires_at: None,
            refreshed_at: None,
            refreshable: false,
            error: Some(e.message),
            vetted: false,
        }),
    }
}

/// The view of `server`'s account held by `holder`: `None` when none is connected.
pub fn view(paths: &Paths, server: &str, holder: Option<&str>) -> Option<View> {
    view_of(paths, &name(server, holder))
}

/// Every account's view, by server id (the box-wide one first, then by holder).
pub fn views(paths: &Paths) -> Vec<View> {
    let mut v: Vec<View> = vault::names(paths, ".acct").into_iter().filter_map(|n| view_of(paths, &n)).collect();
    v.sort_by(|a, b| (&a.server, &a.holder).cmp(&(&b.server, &b.holder)));
    v
}

/// The views of `server`'s accounts (box-wide and delegated).
pub fn views_of(paths: &Paths, server: &str) -> Vec<View> {
    let prefix = (format!("{server}.acct"), format!("{server}@"));
    let mut v: Vec<View> = vault::names(paths, ".acct")
        .into_iter()
        .filter(|n| *n == prefix.0 || n.starts_with(&prefix.1))
        .filter_map(|n| view_of(paths, &n))
        .collect();
    v.sort_by(|a, b| a.holder.cmp(&b.holder));
    v
}

/// The sealed documents of `server`'s accounts, with their holders where they open.
pub fn docs_of(paths: &Paths, server: &str) -> Vec<(String, Option<Account>)> {
    let prefix = (format!("{server}.acct"), format!("{server}@"));
    vault::names(paths, ".acct")
        .into_iter()
        .filter(|n| *n == prefix.0 || n.starts_with(&prefix.1))
        .map(|n| {
            let a = vault::get::<Account>(paths, &n).ok().flatten();
            (n, a)
        })
        .collect()
}

/// The access token the proxy sends upstream for `server` as `holder` (`None`: the box):
/// `mcp.account_required` when no account is connected, `mcp.reauth_required` when a
/// person must connect it again.
pub fn bearer(paths: &Paths, server: &str, holder: Option<&str>) -> Result<String> {
    let a = load(paths, server, holder).map_err(|e| {
        Error::new(
            "mcp.reauth_required",
            Kind::Conflict,
            format!(
                "`{server}`'s account for {} cannot be read ({}); {}",
                whose(holder),
                e.message,
                connect_hint(server, holder)
            ),
        )
    })?;
    let Some(a) = a else {
        return Err(match holder {
            None => Error::new(
                "mcp.account_required",
                Kind::Conflict,
                format!("`{server}` needs an OAuth account and none is connected; {}", connect_hint(server, None)),
            ),
            Some(h) => Error::new(
                "mcp.account_required",
                Kind::Conflict,
                format!(
                    "`{server}` calls go upstream as each consumer's own OAuth account and `{h}` has none connected; {}",
                    connect_hint(server, holder)
                ),
            ),
        });
    };
    if a.state != CONNECTED {
        return Err(reauth(server, holder, a.error.as_deref().unwrap_or("the upstream refused the account")));
    }
    if a.refresh.is_none() && a.expiring(0) {
        return Err(reauth(server, holder, "its token expired and the server gave no refresh token"));
    }
    Ok(a.access)
}

/// `mcp.account_required`: `server` wants an OAuth account from `issuer` and has none.
pub fn needs_account(server: &str, issuer: &str) -> Error {
    Error::new(
        "mcp.account_required",
        Kind::Conflict,
        format!("`{server}` needs an OAuth account (authorization server {issuer}); {}", connect_hint(server, None)),
    )
}

/// `mcp.reauth_required` for that account, saying why.
pub fn reauth(server: &str, holder: Option<&str>, why: &str) -> Error {
    let whose = holder.map(|h| format!(" for `{h}`")).unwrap_or_default();
    Error::new(
        "mcp.reauth_required",
        Kind::Conflict,
        format!("`{server}`'s OAuth account{whose} must be connected again ({why}); {}", connect_hint(server, holder)),
    )
}
