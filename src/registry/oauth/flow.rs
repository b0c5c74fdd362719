//! Connecting an account, refreshing it, disconnecting it. [`begin`] discovers the
//! server's authorization server, picks a client id (the operator's, else hal0's metadata
//! document when the server takes one and hal0 has an https URL, else dynamic
//! registration), and seals a pending connect (`<sha256(state)>.pending`, 10 minutes)
//! holding the PKCE verifier; it answers the URL the person opens. [`finish`] is the
//! callback: the pending connect is taken once (a replay finds nothing), `iss` checked
//! (RFC 9207), the code exchanged with the verifier and the resource, and the account
//! sealed; its outcome (no secret) is left for the CLI that waits ([`outcome`]).
//! Every request to the authorization server goes through the SSRF guard
//! ([`super::discover::guard_for`]).

use super::account::{self, Account, ClientReg};
use super::discover::{self, Discovery};
use super::vault;
use crate::base::error::{Error, Kind, Result};
use crate::base::paths::Paths;
use crate::base::ssrf::{self, FetchLimits, Guard};
use crate::config::Config;
use crate::registry::record::{OauthNeed, Record, Transport};
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// How long a person has to finish a connect.
pub const PENDING_SECS: i64 = 600;
/// The most an authorization server's answer may hold.
const MAX_ANSWER: usize = 64 * 1024;

/// A connect waiting for its callback (sealed; holds the PKCE verifier).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Pending {
    server: String,
    server_url: String,
    discovery: Discovery,
    client: ClientReg,
    verifier: String,
    scope: String,
    expires_at: i64,
    started_by: String,
    /// The consumer whose delegated account this connects (`None`: the box's).
    #[serde(default)]
    holder: Option<String>,
}

/// What [`begin`] answers: the URL to open, and the id [`outcome`] is asked by.
#[derive(Debug, Clone, Serialize)]
pub struct Begun {
    pub server: String,
    pub holder: Option<String>,
    pub connect_id: String,
    pub authorize_url: String,
    pub redirect_uri: String,
    pub issuer: String,
    pub client_kind: String,
    pub expires_at: i64,
}

/// How a connect ended, as the waiting CLI reads it (no secret).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Outcome {
    pub server: String,
    pub ok: bool,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

/// The operator's own client at the authorization server, the scope to ask, and whose
/// account it is (`holder`: a consumer of a server with delegated accounts).
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub scope: Option<String>,
    pub holder: Option<String>,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn connect_id(state: &str) -> String {
    hex::encode(Sha256::digest(state.as_bytes()))[..32].to_string()
}

fn limits(record_ca: Option<&std::path::Path>) -> FetchLimits {
    FetchLimits {
        max_bytes: MAX_ANSWER,
        timeout: std::time::Duration::from_secs(15),
        ca_file: record_ca.map(Into::into).or_else(Guard::daemon_ca_file),
        ..FetchLimits::default()
    }
}

fn upstream_said(what: &str, status: reqwest::StatusCode, body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let err = v["error"].as_str().unwrap_or("");
    let desc = v["error_description"].as_str().unwrap_or("");
    let said = match (err, desc) {
        ("", "") => String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned(),
        (e, "") => e.to_string(),
        (e, d) => format!("{e}: {d}"),
    };
    format!("{what} answered {status}: {}", crate::auth::oauth::shown(&crate::base::redact::redact(&said), 300))
}

/// POST `body` (a form, or JSON with `json`) to `url` behind the guard of `server_url`.
async fn post(
    server_url: &str,
    ca: Option<&std::path::Path>,
    url: &str,
    form: Option<&[(&str, &str)]>,
    json_body: Option<&Value>,
    basic: Option<(&str, &str)>,
) -> Result<(reqwest::StatusCode, Vec<u8>)> {
    let (u, client) = ssrf::pinned_client(&discover::guard_for(server_url), url, &limits(ca))?;
    let mut req = client.post(u).header("accept", "application/json");
    if let Some(f) = form {
        let body: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(f.iter()).finish();
        req = req.header("content-type", "application/x-www-form-urlencoded").body(body);
    }
    if let Some(j) = json_body {
        req = req.json(j);
    }
    if let Some((id, secret)) = basic {
        // RFC 6749 §2.3.1: form-urlencoded, then Basic.
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        req = req.basic_auth(enc(id), Some(enc(secret)));
    }
    let resp = req.send().await.map_err(|e| {
        Error::new(
            "mcp.upstream_failed",
            Kind::BadGateway,
            format!("{url} does not answer: {}", crate::base::redact::redact(&crate::base::outbound::chain(&e))),
        )
    })?;
    let status = resp.status();
    let body = ssrf::read_capped(resp, url, MAX_ANSWER).await?;
    Ok((status, body))
}

/// Register hal0 at the authorization server (RFC 7591).
async fn register(r: &Record, d: &Discovery, redirect_uri: &str) -> Result<ClientReg> {
    let Some(endpoint) = &d.registration_endpoint else {
        return Err(Error::new(
            "mcp.oauth_unsupported",
            Kind::BadGateway,
            format!(
                "the authorization server {} takes neither client metadata documents (from an https public_url) nor \
                 dynamic registration: register hal0 there with redirect URI {redirect_uri}, then hal0 mcp connect {} \
                 --client-id ID [--client-secret-key API_ENV_KEY]",
                d.issuer, r.id
            ),
        ));
    };
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    let doc = json!({
        "client_name": format!("hal0 on {host}"),
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    let url = r.url.as_deref().unwrap_or_default();
    let (status, body) = post(url, r.ca_file.as_deref(), endpoint, None, Some(&doc), None).await?;
    if !status.is_success() {
        return Err(Error::new(
            "mcp.oauth_unsupported",
            Kind::BadGateway,
            upstream_said("dynamic registration", status, &body),
        ));
    }
    let v: Value = serde_json::from_slice(&body).map_err(|e| {
        Error::new("mcp.oauth_unsupported", Kind::BadGateway, format!("dynamic registration answered no JSON: {e}"))
    })?;
    let client_id = v["client_id"].as_str().filter(|s| !s.is_empty()).ok_or_else(|| {
        Error::new("mcp.oauth_unsupported", Kind::BadGateway, "dynamic registration answered no client_id")
    })?;
    let secret = v["client_secret"].as_str().map(str::to_string);
    let auth_method = match (v["token_endpoint_auth_method"].as_str(), &secret) {
        (Some(m), _) => m.to_string(),
        (None, Some(_)) => "client_secret_basic".into(),
        (None, None) => "none".into(),
    };
    Ok(ClientReg {
        client_id: client_id.to_string(),
        client_secret: secret,
        auth_method,
        kind: "registered".into(),
        redirect_uri: redirect_uri.to_string(),
    })
}

/// The client to use: the operator's, the one an earlier connect registered (same issuer
/// and callback), hal0's metadata document, or a new registration.
async fn client_for(paths: &Paths, cfg: &Config, r: &Record, d: &Discovery, o: &Options) -> Result<ClientReg> {
    let redirect_uri = super::callback_url(cfg);
    if let Some(id) = &o.client_id {
        let auth_method = if o.client_secret.is_none() {
            "none".to_string()
        } else if d.token_auth_methods.iter().any(|m| m == "client_secret_basic") || d.token_auth_methods.is_empty() {
            "client_secret_basic".into()
        } else {
            "client_secret_post".into()
        };
        return Ok(ClientReg {
            client_id: id.clone(),
            client_secret: o.client_secret.clone(),
            auth_method,
            kind: "operator".into(),
            redirect_uri,
        });
    }
    // Any account of this server (the box's or a consumer's) has a client to reuse.
    if let Some(a) = account::docs_of(paths, &r.id).into_iter().filter_map(|(_, a)| a).find(|a| {
        a.discovery.issuer == d.issuer && a.client.redirect_uri == redirect_uri && a.client.kind != "operator"
    }) {
        return Ok(a.client);
    }
    if d.cimd
        && let Some(id) = super::client_doc_url(cfg)
    {
        return Ok(ClientReg {
            client_id: id,
            client_secret: None,
            auth_method: "none".into(),
            kind: "metadata".into(),
            redirect_uri,
        });
    }
    register(r, d, &redirect_uri).await
}

/// Whether record `r` can have an account: an http server.
fn check_http(r: &Record) -> Result<&str> {
    match (&r.transport, &r.url) {
        (Transport::StreamableHttp | Transport::Sse, Some(u)) => Ok(u),
        _ => Err(Error::invalid(
            "mcp.oauth_unsupported",
            format!("`{}` is a stdio server: OAuth accounts are for servers reached over http", r.id),
        )),
    }
}

/// Ask the server whether it wants OAuth: `Some(discovery)` when it answers 401 with
/// metadata hal0 can use, `None` when it answers without asking for a credential.
pub async fn probe(r: &Record) -> Result<Option<Discovery>> {
    let url = check_http(r)?;
    match discover::challenge(url, r.ca_file.as_deref()).await? {
        None => Ok(None),
        Some(ch) => discover::discover(url, &ch, r.ca_file.as_deref()).await.map(Some),
    }
}

/// The `[oauth]` table for a discovery (the operator's own settings kept).
pub fn need_of(d: &Discovery, old: Option<&OauthNeed>) -> OauthNeed {
    let mut n = old.cloned().unwrap_or_else(|| OauthNeed { accounts: "box".into(), ..Default::default() });
    n.issuer = d.issuer.clone();
    n.resource_metadata = d.resource_metadata.clone();
    n
}

/// Start connecting `r`'s account: the URL a person opens.
pub async fn begin(paths: &Paths, cfg: &Config, r: &Record, o: &Options, by: &str) -> Result<Begun> {
    let url = check_http(r)?.to_string();
    let d = match probe(r).await? {
        Some(d) => d,
        None => {
            return Err(Error::conflict(
                "mcp.oauth_not_needed",
                format!("{url} answers without asking for a credential: `{}` needs no account", r.id),
            ));
        }
    };
    let client = client_for(paths, cfg, r, &d, o).await?;
    let state = crate::base::token::random_base62(43)?;
    let verifier = crate::base::token::random_base62(64)?;
    let challenge = b64(&Sha256::digest(verifier.as_bytes()));
    let scope = o
        .scope
        .clone()
        .or_else(|| r.oauth.as_ref().and_then(|n| n.scope.clone()))
        .unwrap_or_else(|| d.scopes.join(" "));
    let mut au = url::Url::parse(&d.authorization_endpoint).map_err(|_| {
        Error::new("mcp.oauth_discovery_failed", Kind::BadGateway, "the authorization endpoint is not a URL")
    })?;
    {
        let mut q = au.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client.client_id)
            .append_pair("redirect_uri", &client.redirect_uri)
            .append_pair("state", &state)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", &d.resource);
        if !scope.is_empty() {
            q.append_pair("scope", &scope);
        }
    }
    let id = connect_id(&state);
    let expires_at = account::now() + PENDING_SECS;
    let begun = Begun {
        server: r.id.clone(),
        holder: o.holder.clone(),
        connect_id: id.clone(),
        authorize_url: au.to_string(),
        redirect_uri: client.redirect_uri.clone(),
        issuer: d.issuer.clone(),
        client_kind: client.kind.clone(),
        expires_at,
    };
    let p = Pending {
        server: r.id.clone(),
        server_url: url,
        discovery: d,
        client,
        verifier,
        scope,
        expires_at,
        started_by: by.into(),
        holder: o.holder.clone(),
    };
    sweep(paths);
    vault::put(paths, &format!("{id}.pending"), &p)?;
    Ok(begun)
}

/// Drop pending connects and outcomes older than [`PENDING_SECS`] (twice that for outcomes).
fn sweep(paths: &Paths) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * PENDING_SECS as u64);
    for suffix in [".pending", ".done"] {
        for n in vault::names(paths, suffix) {
            let p = vault::dir(paths).join(&n);
            if std::fs::metadata(&p).and_then(|m| m.modified()).is_ok_and(|t| t < old) {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

/// The callback's query.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Callback {
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub iss: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub error_description: Option<String>,
}

fn state_unknown() -> Error {
    Error::new(
        "mcp.oauth_state_unknown",
        Kind::Invalid,
        "this link does not belong to a connect hal0 is waiting for (used already, expired, or never started): \
         start again with hal0 mcp connect SERVER",
    )
}

/// The outcome of connect `id`, once its callback came.
pub fn outcome(paths: &Paths, id: &str) -> Result<Option<Outcome>> {
    vault::get(paths, &format!("{id}.done"))
}

/// The token endpoint's answer.
#[derive(Debug, Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<i64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

/// A token request with the client's authentication.
async fn token_request(
    server_url: &str,
    ca: Option<&std::path::Path>,
    d: &Discovery,
    c: &ClientReg,
    params: &[(&str, &str)],
) -> Result<std::result::Result<TokenAnswer, String>> {
    let mut form: Vec<(&str, &str)> = params.to_vec();
    let mut basic = None;
    match (c.auth_method.as_str(), c.client_secret.as_deref()) {
        ("client_secret_basic", Some(s)) => basic = Some((c.client_id.as_str(), s)),
        ("client_secret_post", Some(s)) => {
            form.push(("client_id", &c.client_id));
            form.push(("client_secret", s));
        }
        _ => form.push(("client_id", &c.client_id)),
    }
    let (status, body) = post(server_url, ca, &d.token_endpoint, Some(&form), None, basic).await?;
    if !status.is_success() {
        return Ok(Err(upstream_said("the token endpoint", status, &body)));
    }
    match serde_json::from_slice::<TokenAnswer>(&body) {
        Ok(t)
            if t.token_type.as_deref().is_none_or(|k| k.eq_ignore_ascii_case("bearer"))
                && !t.access_token.is_empty() =>
        {
            Ok(Ok(t))
        }
        Ok(t) => Ok(Err(format!(
            "the token endpoint answered a `{}` token; hal0 sends bearer tokens only",
            t.token_type.unwrap_or_default()
        ))),
        Err(e) => Ok(Err(format!("the token endpoint answered no token ({e})"))),
    }
}

/// The callback: finish connect `q.state`. The pending connect is taken first, so a
/// replayed callback finds nothing; its outcome is left for the CLI either way.
pub async fn finish(
    paths: &Paths,
    ca_of: impl Fn(&str) -> Option<std::path::PathBuf>,
    q: &Callback,
) -> Result<Account> {
    let state = q.state.as_deref().filter(|s| !s.is_empty()).ok_or_else(state_unknown)?;
    let id = connect_id(state);
    let name = format!("{id}.pending");
    let p: Pending = vault::get(paths, &name)?.ok_or_else(state_unknown)?;
    if !vault::remove(paths, &name)? {
        return Err(state_unknown());
    }
    let out = exchange(paths, &ca_of(&p.server), &p, q).await;
    let o = match &out {
        Ok(_) => Outcome { server: p.server.clone(), ok: true, code: None, message: None },
        Err(e) => Outcome {
            server: p.server.clone(),
            ok: false,
            code: Some(e.code.to_string()),
            message: Some(e.message.clone()),
        },
    };
    vault::put(paths, &format!("{id}.done"), &o)?;
    out
}

async fn exchange(paths: &Paths, ca: &Option<std::path::PathBuf>, p: &Pending, q: &Callback) -> Result<Account> {
    if p.expires_at < account::now() {
        return Err(Error::new(
            "mcp.oauth_connect_expired",
            Kind::Conflict,
            format!(
                "this connect of `{}` expired ({} minutes); start again with hal0 mcp connect {}",
                p.server,
                PENDING_SECS / 60,
                p.server
            ),
        ));
    }
    // RFC 9207: an `iss` that is another issuer is a mix-up; a server that promised one
    // must send it.
    match &q.iss {
        Some(iss) if iss.trim_end_matches('/') != p.discovery.issuer.trim_end_matches('/') => {
            return Err(Error::new(
                "mcp.oauth_iss_mismatch",
                Kind::Invalid,
                format!(
                    "the answer came from issuer `{}`, not `{}` that `{}` names: refused (a mix-up attack looks like this)",
                    crate::auth::oauth::shown(iss, 200),
                    p.discovery.issuer,
                    p.server
                ),
            ));
        }
        None if p.discovery.iss_param => {
            return Err(Error::new(
                "mcp.oauth_iss_mismatch",
                Kind::Invalid,
                format!("`{}` promises an `iss` in its answers and this one has none: refused", p.discovery.issuer),
            ));
        }
        _ => {}
    }
    if let Some(e) = &q.error {
        let d = q
            .error_description
            .as_deref()
            .map(|d| format!(": {}", crate::auth::oauth::shown(d, 300)))
            .unwrap_or_default();
        return Err(Error::new(
            "mcp.oauth_denied",
            Kind::Forbidden,
            format!("the authorization server said `{}`{d}; nothing was connected", crate::auth::oauth::shown(e, 80)),
        ));
    }
    let code = q
        .code
        .as_deref()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| Error::invalid("mcp.oauth_denied", "the answer carries neither a code nor an error"))?;
    let params = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", p.client.redirect_uri.as_str()),
        ("code_verifier", p.verifier.as_str()),
        ("resource", p.discovery.resource.as_str()),
    ];
    let t = token_request(&p.server_url, ca.as_deref(), &p.discovery, &p.client, &params)
        .await?
        .map_err(|why| Error::new("mcp.oauth_token_failed", Kind::BadGateway, why))?;
    let now = account::now();
    let a = Account {
        server: p.server.clone(),
        server_url: p.server_url.clone(),
        discovery: p.discovery.clone(),
        client: p.client.clone(),
        access: t.access_token,
        refresh: t.refresh_token,
        expires_at: t.expires_in.map(|s| now + s.max(0)),
        lifetime: t.expires_in,
        scope: t.scope.unwrap_or_else(|| p.scope.clone()),
        connected_at: now,
        connected_by: p.started_by.clone(),
        holder: p.holder.clone(),
        refreshed_at: None,
        state: account::CONNECTED.into(),
        error: None,
        vetted: false,
    };
    account::save(paths, &a)?;
    Ok(a)
}

/// Refresh `server`'s access token. A refusal (or no refresh token) puts the account in
/// `reauth_required` and answers `mcp.reauth_required`; a server that does not answer
/// leaves it as it was.
pub async fn refresh(
    paths: &Paths,
    ca: Option<&std::path::Path>,
    server: &str,
    holder: Option<&str>,
) -> Result<Account> {
    let Some(mut a) = account::load(paths, server, holder)? else {
        return Err(account::bearer(paths, server, holder)
            .err()
            .unwrap_or_else(|| account::reauth(server, holder, "no account")));
    };
    let Some(rt) = a.refresh.clone() else {
        let why = "its token expired or was refused, and the server gave no refresh token";
        account::mark_reauth(paths, server, holder, why)?;
        return Err(account::reauth(server, holder, why));
    };
    let params =
        [("grant_type", "refresh_token"), ("refresh_token", rt.as_str()), ("resource", a.discovery.resource.as_str())];
    match token_request(&a.server_url, ca, &a.discovery, &a.client, &params).await? {
        Ok(t) => {
            let now = account::now();
            a.access = t.access_token;
            if t.refresh_token.is_some() {
                a.refresh = t.refresh_token;
            }
            a.expires_at = t.expires_in.map(|s| now + s.max(0));
            a.lifetime = t.expires_in;
            if let Some(s) = t.scope {
                a.scope = s;
            }
            a.refreshed_at = Some(now);
            a.state = account::CONNECTED.into();
            a.error = None;
            account::save(paths, &a)?;
            Ok(a)
        }
        Err(why) => {
            let why = format!("the refresh was refused: {why}");
            account::mark_reauth(paths, server, holder, &why)?;
            Err(account::reauth(server, holder, &why))
        }
    }
}

/// Disconnect `server`'s account held by `holder`: revoke its tokens at the upstream
/// (RFC 7009) where the server offers revocation, then forget them. Answers whether the
/// upstream took the revocation (`None`: it offers none, or the account did not open).
pub async fn disconnect(
    paths: &Paths,
    ca: Option<&std::path::Path>,
    server: &str,
    holder: Option<&str>,
) -> Result<(bool, Option<bool>)> {
    let a = account::load(paths, server, holder);
    let mut revoked = None;
    if let Ok(Some(a)) = &a
        && let Some(endpoint) = &a.discovery.revocation_endpoint
    {
        let mut all = true;
        for (tok, hint) in [(a.refresh.as_deref(), "refresh_token"), (Some(a.access.as_str()), "access_token")] {
            let Some(tok) = tok else { continue };
            let mut form = vec![("token", tok), ("token_type_hint", hint)];
            let mut basic = None;
            match (a.client.auth_method.as_str(), a.client.client_secret.as_deref()) {
                ("client_secret_basic", Some(s)) => basic = Some((a.client.client_id.as_str(), s)),
                ("client_secret_post", Some(s)) => {
                    form.push(("client_id", &a.client.client_id));
                    form.push(("client_secret", s));
                }
                _ => form.push(("client_id", &a.client.client_id)),
            }
            let ok =
                post(&a.server_url, ca, endpoint, Some(&form), None, basic).await.is_ok_and(|(s, _)| s.is_success());
            all &= ok;
        }
        revoked = Some(all);
    }
    let had = account::remove(paths, server, holder)?;
    Ok((had, revoked))
}

/// The accounts (server, holder) whose connected, refreshable token is due ([`Account::due`]).
pub fn due(paths: &Paths, margin: i64) -> Vec<(String, Option<String>)> {
    vault::names(paths, ".acct")
        .into_iter()
        .filter_map(|n| vault::get::<Account>(paths, &n).ok().flatten())
        .filter(|a| a.state == account::CONNECTED && a.refresh.is_some() && a.due(margin))
        .map(|a| (a.server, a.holder))
        .collect()
}

/// How long a start link works.
pub const START_LINK_SECS: i64 = 900;
/// The associated data of a start link's sealed token.
const START_PURPOSE: &str = "upstream-oauth start link";
/// The path start links live under.
pub const START_PATH: &str = "/upstream-oauth/start/";

#[derive(Serialize, Deserialize)]
struct StartLink {
    s: String,
    h: String,
    e: i64,
}

/// A link that starts connecting `holder`'s own account at `server` (a delegated account)
/// when opened in a browser: the token is sealed with the vault key (only this box makes
/// and opens it), names the server and the consumer, and works for [`START_LINK_SECS`].
/// It goes only to that consumer, in the error its call got.
pub fn start_link(paths: &Paths, cfg: &Config, server: &str, holder: &str) -> Result<String> {
    let t = vault::seal_token(
        paths,
        START_PURPOSE,
        &StartLink { s: server.into(), h: holder.into(), e: account::now() + START_LINK_SECS },
    )?;
    Ok(format!("{}{START_PATH}{t}", super::base(cfg)))
}

/// The server and consumer a start link names, while it works.
pub fn open_start_link(paths: &Paths, token: &str) -> Result<(String, String)> {
    let l: StartLink = vault::open_token(paths, START_PURPOSE, token).ok_or_else(|| {
        Error::invalid(
            "mcp.oauth_link_invalid",
            "this link was not made by this box (or was changed): call the server again for a fresh one, or on \
             the box: hal0 mcp connect SERVER --for CONSUMER",
        )
    })?;
    if l.e < account::now() {
        return Err(Error::invalid(
            "mcp.oauth_link_invalid",
            format!(
                "this link expired (links work for {} minutes): call `{}` again for a fresh one",
                START_LINK_SECS / 60,
                l.s
            ),
        ));
    }
    Ok((l.s, l.h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connect_id_is_a_digest_of_the_state() {
        let a = connect_id("abc");
        assert_eq!(a.len(), 32);
        assert_ne!(a, connect_id("abd"));
        assert!(!a.contains("abc"));
    }
}
