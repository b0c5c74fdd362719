//! OAuth clients: those that registered themselves (RFC 7591 dynamic registration, its
//! answer carrying `registration_client_uri`; RFC 7592 read and delete with the
//! registration token) and those an operator added at the shell (`hal0 oauth client add`,
//! for hosts that want an id and secret typed in). Redirect URIs are checked when a client
//! registers; secrets and registration tokens are stored as their sha256.

use super::SECRET_PREFIX;
use crate::base::error::{Error, Result};
use crate::base::token::{ct_eq, random_base62, sha256_hex};
use crate::store::{Store, now};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

/// How a client proves itself at the token endpoint.
pub const AUTH_METHODS: [&str; 3] = ["none", "client_secret_post", "client_secret_basic"];

/// Live self-registered clients at most: registration is open to anyone who reaches the
/// box, so it is bounded.
pub const MAX_DYNAMIC: usize = 500;
const MAX_REDIRECTS: usize = 10;
const MAX_URI: usize = 2000;
const MAX_NAME: usize = 100;

/// Schemes a redirect may never use (a browser would run or read them).
const BAD_SCHEMES: [&str; 9] = ["javascript", "data", "file", "vbscript", "about", "blob", "filesystem", "ws", "wss"];

/// A client as stored (never its secret).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Client {
    pub client_id: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    /// `dynamic` (registered itself), `metadata` (its `client_id` is the URL of its metadata
    /// document) or `operator` (added at the shell).
    pub kind: String,
    pub auth_method: String,
    pub created_at: String,
    pub created_by: String,
}

/// An RFC 7591 registration request (the fields hal0 reads; others are ignored).
#[derive(Debug, Default, Deserialize)]
pub struct Registration {
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    pub client_name: Option<String>,
    pub token_endpoint_auth_method: Option<String>,
    pub grant_types: Option<Vec<String>>,
    pub response_types: Option<Vec<String>>,
}

/// A new client and what it is told once: its secret (confidential clients) and its
/// registration token (self-registered ones).
pub struct Registered {
    pub client: Client,
    pub secret: Option<String>,
    pub registration_token: Option<String>,
}

fn invalid_metadata(msg: impl Into<String>) -> Error {
    Error::invalid("oauth.invalid_client_metadata", msg)
}

/// Check one redirect URI: an absolute URI without a fragment; https, or http to a
/// loopback address, or an app's own scheme (`cursor://…`); never a scheme a browser runs.
pub fn check_redirect(uri: &str) -> Result<()> {
    let bad = |why: &str| {
        Error::invalid("oauth.invalid_redirect_uri", format!("redirect URI `{}` {why}", super::shown(uri, 200)))
    };
    if uri.len() > MAX_URI || uri.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad("is too long or holds whitespace or control characters"));
    }
    let url = url::Url::parse(uri).map_err(|_| bad("is not an absolute URI"))?;
    if url.fragment().is_some() {
        return Err(bad("holds a fragment (#…), which OAuth forbids"));
    }
    let scheme = url.scheme();
    if BAD_SCHEMES.contains(&scheme) {
        return Err(bad("uses a scheme a browser would run or read; use https, or http to 127.0.0.1"));
    }
    if url.username() != "" || url.password().is_some() {
        return Err(bad("holds a user or password"));
    }
    match scheme {
        "https" if url.host_str().is_some_and(|h| !h.is_empty()) => Ok(()),
        "https" => Err(bad("has no host")),
        "http" => {
            let loopback = match url.host() {
                Some(url::Host::Domain(d)) => d == "localhost",
                Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                None => false,
            };
            if loopback { Ok(()) } else { Err(bad("uses plain http to a host that is not this machine; use https")) }
        }
        // An app's own scheme (RFC 8252 §7.1): the app on the person's device receives it.
        _ => Ok(()),
    }
}

fn check_name(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME || name.chars().any(char::is_control) {
        return Err(invalid_metadata(format!(
            "client_name must be 1 to {MAX_NAME} characters with no control characters"
        )));
    }
    Ok(name.to_string())
}

/// Check a registration request and return the name, redirects and auth method it asks.
fn check(reg: &Registration) -> Result<(String, Vec<String>, String)> {
    if reg.redirect_uris.is_empty() || reg.redirect_uris.len() > MAX_REDIRECTS {
        return Err(Error::invalid(
            "oauth.invalid_redirect_uri",
            format!("redirect_uris must list 1 to {MAX_REDIRECTS} URIs (where the person's browser is sent back)"),
        ));
    }
    for u in &reg.redirect_uris {
        check_redirect(u)?;
    }
    let name = check_name(reg.client_name.as_deref().unwrap_or("unnamed client"))?;
    let method = reg.token_endpoint_auth_method.clone().unwrap_or_else(|| "client_secret_basic".into());
    if !AUTH_METHODS.contains(&method.as_str()) {
        return Err(invalid_metadata(format!(
            "token_endpoint_auth_method `{}` is not supported: use none, client_secret_post or client_secret_basic",
            super::shown(&method, 60)
        )));
    }
    if let Some(g) = &reg.grant_types
        && (!g.iter().any(|x| x == "authorization_code")
            || g.iter().any(|x| x != "authorization_code" && x != "refresh_token"))
    {
        return Err(invalid_metadata(
            "grant_types must hold authorization_code and may hold refresh_token, nothing else",
        ));
    }
    if let Some(r) = &reg.response_types
        && r.iter().any(|x| x != "code")
    {
        return Err(invalid_metadata("response_types may hold only `code`"));
    }
    let mut seen = std::collections::BTreeSet::new();
    let redirects = reg.redirect_uris.iter().filter(|u| seen.insert(u.as_str())).cloned().collect();
    Ok((name, redirects, method))
}

fn new_secret() -> Result<String> {
    Ok(format!("{SECRET_PREFIX}{}", random_base62(43)?))
}

/// Register a client. `kind` is `dynamic` (RFC 7591: it gets a registration token) or
/// `operator` (the shell).
pub fn register(store: &Store, reg: &Registration, kind: &str, by: &str) -> Result<Registered> {
    let (name, redirects, method) = check(reg)?;
    let client_id = format!("oc_{}", random_base62(22)?);
    let secret_for_client = (method != "none").then(new_secret).transpose()?;
    let registration_token = (kind == "dynamic").then(new_secret).transpose()?;
    let client = Client {
        client_id,
        name,
        redirect_uris: redirects,
        kind: kind.into(),
        auth_method: method,
        created_at: now(),
        created_by: by.into(),
    };
    store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if kind == "dynamic" {
            check_room(&tx)?;
        }
        tx.execute(
            "INSERT INTO oauth_clients (client_id, name, redirect_uris, kind, auth_method, secret_sha256,
                                        registration_sha256, created_at, created_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                client.client_id,
                client.name,
                serde_json::to_string(&client.redirect_uris).unwrap_or_default(),
                client.kind,
                client.auth_method,
                secret_for_client.as_deref().map(sha256_hex),
                registration_token.as_deref().map(sha256_hex),
                client.created_at,
                client.created_by
            ],
        )?;
        tx.commit()?;
        Ok(())
    })?;
    Ok(Registered { client, secret: secret_for_client, registration_token })
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Client> {
    let uris: String = r.get(2)?;
    Ok(Client {
        client_id: r.get(0)?,
        name: r.get(1)?,
        redirect_uris: serde_json::from_str(&uris).unwrap_or_default(),
        kind: r.get(3)?,
        auth_method: r.get(4)?,
        created_at: r.get(5)?,
        created_by: r.get(6)?,
    })
}

const COLS: &str = "client_id, name, redirect_uris, kind, auth_method, created_at, created_by";

/// Keep a client metadata document's registration under its URL (kind `metadata`),
/// replacing an older copy; an operator's removal stands (`oauth.invalid_client`).
pub fn upsert_metadata(store: &Store, url: &str, reg: &Registration) -> Result<Client> {
    let (name, redirects, _) = check(reg)?;
    store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let removed: Option<Option<String>> = tx
            .query_row("SELECT removed_at FROM oauth_clients WHERE client_id = ?1", [url], |r| r.get(0))
            .optional()?;
        match removed {
            Some(Some(_)) => {
                return Err(Error::unauthorized(
                    "oauth.invalid_client",
                    format!("the client `{}` was removed by an operator", super::shown(url, 200)),
                ));
            }
            Some(None) => {}
            None => check_room(&tx)?,
        }
        tx.execute(
            "INSERT INTO oauth_clients (client_id, name, redirect_uris, kind, auth_method, created_at, created_by)
             VALUES (?1, ?2, ?3, 'metadata', 'none', ?4, 'metadata document')
             ON CONFLICT(client_id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris,
                    created_at = excluded.created_at",
            params![url, name, serde_json::to_string(&redirects).unwrap_or_default(), now()],
        )?;
        tx.commit()?;
        Ok(())
    })?;
    get(store, url)
}

/// Refuse a new self-registered client once [`MAX_DYNAMIC`] are live.
fn check_room(tx: &rusqlite::Connection) -> Result<()> {
    let live: i64 = tx.query_row(
        "SELECT count(*) FROM oauth_clients WHERE kind IN ('dynamic', 'metadata') AND removed_at IS NULL",
        [],
        |r| r.get(0),
    )?;
    if live as usize >= MAX_DYNAMIC {
        return Err(too_many());
    }
    Ok(())
}

fn too_many() -> Error {
    Error::new(
        "oauth.too_many_clients",
        crate::base::error::Kind::TooMany,
        format!(
            "this box holds {MAX_DYNAMIC} self-registered OAuth clients already: an operator removes unused ones \
             (hal0 oauth client list, hal0 oauth client remove ID)"
        ),
    )
}

/// A live client by id (`None` for unknown or removed ones).
pub fn find(store: &Store, client_id: &str) -> Result<Option<Client>> {
    if client_id.is_empty() || client_id.len() > 500 {
        return Ok(None);
    }
    store.with(|c| {
        Ok(c.query_row(
            &format!("SELECT {COLS} FROM oauth_clients WHERE client_id = ?1 AND removed_at IS NULL"),
            [client_id],
            from_row,
        )
        .optional()?)
    })
}

/// A live client by id, or `oauth.invalid_client`.
pub fn get(store: &Store, client_id: &str) -> Result<Client> {
    find(store, client_id)?.ok_or_else(|| unknown(client_id))
}

/// The error for a client id hal0 does not know.
pub fn unknown(client_id: &str) -> Error {
    Error::unauthorized(
        "oauth.invalid_client",
        format!(
            "no OAuth client `{}` is registered here (register again, or ask the operator: hal0 oauth client list)",
            super::shown(client_id, 80)
        ),
    )
}

/// Live clients, newest first.
pub fn list(store: &Store) -> Result<Vec<Client>> {
    store.with(|c| {
        let mut st = c.prepare(&format!(
            "SELECT {COLS} FROM oauth_clients WHERE removed_at IS NULL ORDER BY created_at DESC, client_id"
        ))?;
        let rows = st.query_map([], from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    })
}

/// Check a client's credentials at the token or revocation endpoint: a confidential client
/// sends its secret (`client_secret_post` or `_basic`); a public one (`none`) sends none.
pub fn authenticate(store: &Store, client_id: &str, secret: Option<&str>) -> Result<Client> {
    let client = get(store, client_id)?;
    let stored: Option<String> = store.with(|c| {
        Ok(c.query_row("SELECT secret_sha256 FROM oauth_clients WHERE client_id = ?1", [client_id], |r| r.get(0))?)
    })?;
    match (stored, secret) {
        (None, _) => Ok(client),
        (Some(h), Some(s)) if ct_eq(&h, &sha256_hex(s)) => Ok(client),
        (Some(_), _) => Err(Error::unauthorized(
            "oauth.invalid_client",
            "this client is confidential: send its client_secret (client_secret_post or HTTP Basic)",
        )),
    }
}

/// The self-registered client a registration token manages (RFC 7592).
pub fn by_registration_token(store: &Store, client_id: &str, token: &str) -> Result<Client> {
    let hash: Option<Option<String>> = store.with(|c| {
        Ok(c.query_row(
            "SELECT registration_sha256 FROM oauth_clients WHERE client_id = ?1 AND removed_at IS NULL",
            [client_id],
            |r| r.get(0),
        )
        .optional()?)
    })?;
    match hash {
        Some(Some(h)) if ct_eq(&h, &sha256_hex(token)) => get(store, client_id),
        _ => Err(Error::unauthorized(
            "oauth.invalid_token",
            "send the registration_access_token this client got when it registered",
        )),
    }
}

/// Remove a client: its grants end (and with them every token), its name is kept for the
/// audit trail.
pub fn remove(store: &Store, client_id: &str, why: &str) -> Result<Client> {
    let client = get(store, client_id)?;
    store.with(|c| {
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let t = now();
        tx.execute("UPDATE oauth_clients SET removed_at = ?1 WHERE client_id = ?2", params![t, client_id])?;
        tx.execute(
            "UPDATE oauth_grants SET revoked_at = ?1, revoked_why = ?2 WHERE client_id = ?3 AND revoked_at IS NULL",
            params![t, why, client_id],
        )?;
        tx.commit()?;
        Ok(())
    })?;
    crate::auth::keycache::bump(store);
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(uris: &[&str]) -> Registration {
        Registration {
            redirect_uris: uris.iter().map(|s| s.to_string()).collect(),
            client_name: Some("Claude".into()),
            token_endpoint_auth_method: Some("none".into()),
            ..Default::default()
        }
    }

    #[test]
    fn redirects_a_browser_could_run_or_leak_are_refused() {
        for good in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1:5000/cb",
            "http://localhost/cb",
            "http://[::1]:9/cb",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
        ] {
            check_redirect(good).unwrap_or_else(|e| panic!("{good}: {}", e.message));
        }
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,x",
            "file:///etc/passwd",
            "http://evil.example/cb",
            "http://192.168.1.2/cb",
            "https://a.example/cb#frag",
            "/relative",
            "https://user:pw@a.example/cb",
            "https://a.example/ cb",
            "https://",
        ] {
            let e = check_redirect(bad).expect_err(bad);
            assert_eq!(e.code, "oauth.invalid_redirect_uri", "{bad}");
        }
    }

    #[test]
    fn registration_checks_and_stores_hashes_only() {
        let (_d, s) = crate::store::scratch();
        assert_eq!(register(&s, &reg(&[]), "dynamic", "t").err().unwrap().code, "oauth.invalid_redirect_uri");
        let mut r = reg(&["https://a.example/cb"]);
        r.grant_types = Some(vec!["client_credentials".into()]);
        assert_eq!(register(&s, &r, "dynamic", "t").err().unwrap().code, "oauth.invalid_client_metadata");
        r.grant_types = None;
        r.token_endpoint_auth_method = Some("private_key_jwt".into());
        assert_eq!(register(&s, &r, "dynamic", "t").err().unwrap().code, "oauth.invalid_client_metadata");
        assert!(list(&s).unwrap().is_empty(), "a refused registration stores nothing");

        let public = register(&s, &reg(&["https://a.example/cb"]), "dynamic", "t").unwrap();
        assert!(public.secret.is_none() && public.registration_token.is_some());
        authenticate(&s, &public.client.client_id, None).unwrap();

        let mut r = reg(&["https://a.example/cb"]);
        r.token_endpoint_auth_method = None;
        let conf = register(&s, &r, "operator", "t").unwrap();
        let secret = conf.secret.unwrap();
        assert!(conf.registration_token.is_none());
        assert_eq!(authenticate(&s, &conf.client.client_id, None).err().unwrap().code, "oauth.invalid_client");
        assert_eq!(authenticate(&s, &conf.client.client_id, Some("x")).err().unwrap().code, "oauth.invalid_client");
        authenticate(&s, &conf.client.client_id, Some(&secret)).unwrap();
        let stored: String = s
            .with(|c| {
                Ok(c.query_row("SELECT secret_sha256 FROM oauth_clients WHERE kind='operator'", [], |r| r.get(0))?)
            })
            .unwrap();
        assert_eq!(stored, sha256_hex(&secret));

        let token = public.registration_token.unwrap();
        by_registration_token(&s, &public.client.client_id, &token).unwrap();
        assert_eq!(
            by_registration_token(&s, &public.client.client_id, "hal0cs_wrong").err().unwrap().code,
            "oauth.invalid_token"
        );
        remove(&s, &public.client.client_id, "test").unwrap();
        assert!(find(&s, &public.client.client_id).unwrap().is_none());
    }
}
