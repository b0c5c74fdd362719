//! Client ID Metadata Documents: a client whose `client_id` is an https URL publishes its
//! metadata there, and hal0 fetches it through the SSRF guard (public addresses only, the
//! connection made to the address checked, no redirects, at most [`MAX_BYTES`]), checks it
//! (its `client_id` is that URL, its redirect URIs pass [`super::clients::check_redirect`],
//! it is a public client) and keeps it as a client of kind `metadata` for [`CACHE_HOURS`].

use super::clients::{self, Client, Registration};
use super::shown;
use crate::base::error::{Error, Result};
use crate::base::ssrf::{FetchLimits, Guard};
use crate::store::Store;
use rusqlite::{OptionalExtension, params};
use std::time::Duration;

/// The largest document hal0 reads.
pub const MAX_BYTES: usize = 5 * 1024;
/// How long a fetched document is used before it is fetched again.
pub const CACHE_HOURS: i64 = 24;

/// Whether a `client_id` names a metadata document (rather than a registration).
pub fn is_url(client_id: &str) -> bool {
    client_id.starts_with("https://")
}

fn refused(url: &str, why: impl std::fmt::Display) -> Error {
    Error::unauthorized("oauth.invalid_client", format!("client metadata document {}: {why}", shown(url, 200)))
}

/// Check the URL itself: https, a host, a path below the root, no user, query or fragment.
pub fn check_url(u: &str) -> Result<url::Url> {
    if u.len() > 500 {
        return Err(refused(u, "the URL is longer than 500 bytes"));
    }
    let url = url::Url::parse(u).map_err(|_| refused(u, "is not a URL"))?;
    let ok = url.scheme() == "https"
        && url.host_str().is_some_and(|h| !h.is_empty())
        && url.path() != "/"
        && url.username().is_empty()
        && url.password().is_none()
        && url.fragment().is_none();
    if !ok {
        return Err(refused(u, "must be an https URL with a path, no user, password or fragment"));
    }
    Ok(url)
}

/// The document's fields hal0 reads.
#[derive(serde::Deserialize)]
struct Document {
    client_id: String,
    #[serde(default)]
    client_name: Option<String>,
    #[serde(default)]
    redirect_uris: Vec<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
    #[serde(default)]
    grant_types: Option<Vec<String>>,
    #[serde(default)]
    response_types: Option<Vec<String>>,
}

/// Check a fetched document for `url`; the registration it stands for.
pub fn parse(url: &str, body: &[u8]) -> Result<Registration> {
    let doc: Document = serde_json::from_slice(body)
        .map_err(|e| refused(url, format!("is not a JSON client metadata document ({e})")))?;
    if doc.client_id != url {
        return Err(refused(url, format!("names another client_id (`{}`)", shown(&doc.client_id, 200))));
    }
    match doc.token_endpoint_auth_method.as_deref() {
        None | Some("none") => {}
        Some(m) => {
            return Err(refused(
                url,
                format!(
                    "asks token_endpoint_auth_method `{}`; hal0 takes metadata documents of public clients (none)",
                    shown(m, 40)
                ),
            ));
        }
    }
    Ok(Registration {
        redirect_uris: doc.redirect_uris,
        client_name: doc
            .client_name
            .or_else(|| url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_string))),
        token_endpoint_auth_method: Some("none".into()),
        grant_types: doc.grant_types,
        response_types: doc.response_types,
    })
}

/// The cached client of `url`, when fetched within [`CACHE_HOURS`].
pub fn cached(store: &Store, url: &str) -> Result<Option<Client>> {
    let since = time::OffsetDateTime::now_utc() - time::Duration::hours(CACHE_HOURS);
    let since = since.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
    let fresh: Option<i64> = store.with(|c| {
        Ok(c.query_row(
            "SELECT 1 FROM oauth_clients WHERE client_id = ?1 AND kind = 'metadata' AND removed_at IS NULL
                AND created_at > ?2",
            params![url, since],
            |r| r.get(0),
        )
        .optional()?)
    })?;
    match fresh {
        Some(_) => clients::find(store, url),
        None => Ok(None),
    }
}

/// Fetch `url` behind `guard`; the registration it stands for.
pub async fn fetch(guard: &Guard, url: &str, ca_file: Option<std::path::PathBuf>) -> Result<Registration> {
    check_url(url)?;
    let limits = FetchLimits {
        max_bytes: MAX_BYTES,
        max_redirects: 0,
        timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(4),
        ca_file,
    };
    let (_, body) = crate::base::ssrf::fetch(guard, url, limits).await.map_err(|e| refused(url, e.message))?;
    parse(url, &body)
}

/// Keep a checked document as the client `url` (replacing an older copy; its grants stay).
pub fn keep(store: &Store, url: &str, reg: &Registration) -> Result<Client> {
    clients::upsert_metadata(store, url, reg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_checked() {
        let u = "https://app.example/oauth/client.json";
        assert!(check_url(u).is_ok());
        for bad in [
            "http://app.example/c.json",
            "https://app.example/",
            "https://u:p@app.example/c",
            "https://app.example/c#x",
        ] {
            assert_eq!(check_url(bad).unwrap_err().code, "oauth.invalid_client", "{bad}");
        }
        let doc = |v: serde_json::Value| parse(u, v.to_string().as_bytes());
        let r =
            doc(serde_json::json!({"client_id": u, "client_name": "App", "redirect_uris": ["https://app.example/cb"]}))
                .unwrap();
        assert_eq!(r.client_name.as_deref(), Some("App"));
        assert!(doc(serde_json::json!({"client_id": "https://other.example/c.json", "redirect_uris": []})).is_err());
        assert!(
            doc(serde_json::json!({"client_id": u, "redirect_uris": ["https://a/cb"], "token_endpoint_auth_method": "private_key_jwt"}))
                .is_err()
        );
        assert_eq!(parse(u, b"<html>").unwrap_err().code, "oauth.invalid_client");
    }
}
