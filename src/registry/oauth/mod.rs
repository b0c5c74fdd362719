//! hal0 as the OAuth client of installed MCP servers that want OAuth (OAuth 2.1 "out"):
//! finding that out ([`discover`]), connecting a box-wide account in one browser round trip
//! ([`flow`]: PKCE S256, `state`, RFC 8707 `resource`, RFC 9207 `iss`, with a client id
//! from hal0's own metadata document, dynamic registration, or the operator), keeping the
//! tokens sealed at rest ([`vault`]), refreshing them before they expire, and revoking them
//! on disconnect or uninstall ([`account`]). The proxy sends the account's access token
//! upstream; nothing of a consumer's own hal0 credential ever goes there.

pub mod account;
pub mod card;
pub mod discover;
pub mod flow;
pub mod vault;

use crate::config::Config;

/// Where an authorization server sends the person's browser back: `<base>/upstream-oauth/callback`,
/// `base` being `[network].public_url`, else this box's loopback URL (a browser on the box).
pub fn callback_url(cfg: &Config) -> String {
    format!("{}{CALLBACK_PATH}", base(cfg))
}

/// The path of the callback.
pub const CALLBACK_PATH: &str = "/upstream-oauth/callback";
/// The path of hal0's Client ID Metadata Document (served when `public_url` is https).
pub const CLIENT_DOC_PATH: &str = "/upstream-oauth/client.json";

pub(crate) fn base(cfg: &Config) -> String {
    match &cfg.network.public_url {
        Some(u) => u.trim_end_matches('/').to_string(),
        None => crate::connect::local_base(cfg),
    }
}

/// hal0's client id as a metadata document URL, when it can be one (an https base).
pub fn client_doc_url(cfg: &Config) -> Option<String> {
    let b = base(cfg);
    b.starts_with("https://").then(|| format!("{b}{CLIENT_DOC_PATH}"))
}

/// hal0's Client ID Metadata Document.
pub fn client_doc(cfg: &Config) -> Option<serde_json::Value> {
    let id = client_doc_url(cfg)?;
    Some(serde_json::json!({
        "client_id": id,
        "client_name": format!("hal0 on {}", gethostname::gethostname().to_string_lossy()),
        "client_uri": base(cfg),
        "redirect_uris": [callback_url(cfg)],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }))
}
