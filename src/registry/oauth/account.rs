//! One box-wide account per installed server: its tokens and the client they were issued
//! to, sealed in `<state>/upstream-oauth/<id>.acct` ([`super::vault`]). What the proxy
//! sends upstream ([`bearer`]), what `hal0 mcp status` and `hal0 doctor` show of it
//! ([`View`]: state and expiry, never a token), and the states: `connected`, or
//! `reauth_required` (the upstream refused a refresh, or the token, and a person must
//! connect the account again).

use super::discover::Discovery;
use super::vault;
use crate::error::{Error, Kind, Result};
use crate::paths::Paths;
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
}

pub const CONNECTED: &str = "connected";
pub const REAUTH: &str = "reauth_required";

/// The sealed document's name.
pub fn name(server: &str) -> String {
    format!("{server}.acct")
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

/// The account of `server`, if one is connected.
pub fn load(paths: &Paths, server: &str) -> Result<Option<Account>> {
    vault::get(paths, &name(server))
}

pub fn save(paths: &Paths, a: &Account) -> Result<()> {
    vault::put(paths, &name(&a.server), a)
}

/// Remove the account of `server` (`true` when there was one).
pub fn remove(paths: &Paths, server: &str) -> Result<bool> {
    vault::remove(paths, &name(server))
}

/// Put `server`'s account in `reauth_required` with `why`.
pub fn mark_reauth(paths: &Paths, server: &str, why: &str) -> Result<()> {
    if let Some(mut a) = load(paths, server)? {
        a.state = REAUTH.into();
        a.error = Some(crate::redact::redact(why).into_owned());
        save(paths, &a)?;
    }
    Ok(())
}

/// The fix, in words, for a server whose account is missing or must be connected again.
pub fn connect_hint(server: &str) -> String {
    format!("on the box: hal0 mcp connect {server} (then open the URL it prints)")
}

/// What may be shown of an account: never a token.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct View {
    pub server: String,
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
}

impl Account {
    pub fn view(&self) -> View {
        View {
            server: self.server.clone(),
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

/// The view of `server`'s account: `Ok(None)` when none is connected; an account whose
/// sealed file does not open reads as `reauth_required` (with why).
pub fn view(paths: &Paths, server: &str) -> Option<View> {
    match load(paths, server) {
        Ok(a) => a.map(|a| a.view()),
        Err(e) => Some(View {
            server: server.into(),
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
        }),
    }
}

/// Every account's view, by server id.
pub fn views(paths: &Paths) -> Vec<View> {
    vault::names(paths, ".acct")
        .into_iter()
        .filter_map(|n| n.strip_suffix(".acct").map(str::to_string))
        .filter_map(|s| view(paths, &s))
        .collect()
}

/// The access token the proxy sends upstream for `server`: `mcp.account_required` when no
/// account is connected, `mcp.reauth_required` when a person must connect it again.
pub fn bearer(paths: &Paths, server: &str) -> Result<String> {
    let a = load(paths, server).map_err(|e| {
        Error::new(
            "mcp.reauth_required",
            Kind::Conflict,
            format!("`{server}`'s account cannot be read ({}); {}", e.message, connect_hint(server)),
        )
    })?;
    let Some(a) = a else {
        return Err(Error::new(
            "mcp.account_required",
            Kind::Conflict,
            format!("`{server}` needs an OAuth account and none is connected; {}", connect_hint(server)),
        ));
    };
    if a.state != CONNECTED {
        return Err(reauth(server, a.error.as_deref().unwrap_or("the upstream refused the account")));
    }
    if a.refresh.is_none() && a.expiring(0) {
        return Err(reauth(server, "its token expired and the server gave no refresh token"));
    }
    Ok(a.access)
}

/// `mcp.account_required`: `server` wants an OAuth account from `issuer` and has none.
pub fn needs_account(server: &str, issuer: &str) -> Error {
    Error::new(
        "mcp.account_required",
        Kind::Conflict,
        format!("`{server}` needs an OAuth account (authorization server {issuer}); {}", connect_hint(server)),
    )
}

/// `mcp.reauth_required` for `server`, saying why.
pub fn reauth(server: &str, why: &str) -> Error {
    Error::new(
        "mcp.reauth_required",
        Kind::Conflict,
        format!("`{server}`'s OAuth account must be connected again ({why}); {}", connect_hint(server)),
    )
}
