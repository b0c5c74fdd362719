//! OAuth 2.1 in: hal0 as the authorization server and resource server of its own MCP
//! mounts, for clients that speak OAuth only (claude.ai, ChatGPT). A self-hosted box has no
//! identity provider, so a person consents on hal0's own page (a dashboard session), and
//! each approval is tied to a bridge client, so revoking or rotating that client ends every
//! token at once.
//!
//! The split with static keys: the key URLs (`/mcp/<mount>/mcp`) never advertise OAuth
//! (some clients drop a configured header once a server does); the OAuth URLs are their
//! own (`/oauth/<mount>/mcp`), each an RFC 9728 protected resource whose metadata names
//! the issuer `<public_url>/oauth` (RFC 8414 metadata at
//! `/.well-known/oauth-authorization-server/oauth`). A token is taken only at the
//! resource it was issued for.
//!
//! - [`clients`]: registrations (RFC 7591 dynamic, or added at the shell).
//! - [`cimd`]: clients known by the URL of their metadata document.
//! - [`grants`]: authorization requests, a person's decision, codes (PKCE S256), grants
//!   and their rotating tokens.

pub mod cimd;
pub mod clients;
pub mod grants;

use super::bridge::Scope;
use crate::base::error::{Error, Result};
use crate::config::Config;

/// An access token (`Authorization: Bearer hal0at_…`); only its sha256 is stored.
pub const ACCESS_PREFIX: &str = "hal0at_";
/// A refresh token; only its sha256 is stored.
pub const REFRESH_PREFIX: &str = "hal0rt_";
/// An authorization code; only its sha256 is stored.
pub const CODE_PREFIX: &str = "hal0ac_";
/// A client secret or a registration access token; only its sha256 is stored.
pub const SECRET_PREFIX: &str = "hal0cs_";

/// The path of the issuer under `network.public_url`.
pub const ISSUER_PATH: &str = "/oauth";

/// The mounts OAuth clients may reach, with the scope each one needs. The relay (bots) and
/// the proxy (consumer keys) stay key-only.
pub const MOUNTS: [(&str, Scope); 3] = [("agents", Scope::Agents), ("memory", Scope::Memory), ("admin", Scope::Admin)];

/// The scope names a client may ask for.
pub const SCOPES: [&str; 3] = ["agents", "memory", "admin"];

/// The scope a mount needs.
pub fn mount_scope(mount: &str) -> Option<Scope> {
    MOUNTS.iter().find(|(m, _)| *m == mount).map(|(_, s)| *s)
}

/// The OAuth mount a request path is under (`/oauth/<mount>` or below), if any.
pub fn mount_of_path(path: &str) -> Option<&'static str> {
    let rest = path.strip_prefix("/oauth/")?;
    let first = rest.split('/').next().unwrap_or("");
    MOUNTS.iter().map(|(m, _)| *m).find(|m| *m == first)
}

/// Whether `path` is one of the metadata documents this box serves while OAuth is on.
pub fn is_own_metadata(path: &str) -> bool {
    path == "/.well-known/oauth-authorization-server/oauth"
        || path.strip_prefix("/.well-known/oauth-protected-resource").is_some_and(|r| mount_of_path(r).is_some())
}

/// The path of a mount's OAuth resource.
pub fn resource_path(mount: &str) -> String {
    format!("{ISSUER_PATH}/{mount}/mcp")
}

/// Where this box's OAuth endpoints are, from `network.public_url`.
#[derive(Debug, Clone, PartialEq)]
pub struct Issuer {
    base: String,
}

impl Issuer {
    /// The issuer when OAuth is on (`oauth.off` otherwise; the config load already
    /// checked the public URL).
    pub fn of(cfg: &Config) -> Result<Issuer> {
        match (&cfg.oauth.enabled, &cfg.network.public_url) {
            (true, Some(u)) => Ok(Issuer { base: u.trim_end_matches('/').to_string() }),
            _ => Err(off()),
        }
    }

    /// `https://box.example/oauth`.
    pub fn issuer(&self) -> String {
        format!("{}{ISSUER_PATH}", self.base)
    }

    /// The absolute URL of a path on this box.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A mount's resource identifier (RFC 8707): its OAuth URL.
    pub fn resource(&self, mount: &str) -> String {
        self.url(&resource_path(mount))
    }

    /// Where a mount's protected resource metadata is (RFC 9728 §3.1 path insertion).
    pub fn resource_metadata(&self, mount: &str) -> String {
        self.url(&format!("/.well-known/oauth-protected-resource{}", resource_path(mount)))
    }

    /// The mount a `resource` parameter names, if it names one of this box's.
    pub fn mount_of_resource(&self, resource: &str) -> Option<&'static str> {
        let r = resource.trim_end_matches('/');
        MOUNTS.iter().map(|(m, _)| *m).find(|m| r == self.resource(m))
    }

    /// RFC 8414 authorization server metadata.
    pub fn metadata(&self) -> serde_json::Value {
        serde_json::json!({
            "issuer": self.issuer(),
            "authorization_endpoint": self.url("/oauth/authorize"),
            "token_endpoint": self.url("/oauth/token"),
            "registration_endpoint": self.url("/oauth/register"),
            "revocation_endpoint": self.url("/oauth/revoke"),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": clients::AUTH_METHODS,
            "revocation_endpoint_auth_methods_supported": clients::AUTH_METHODS,
            "scopes_supported": SCOPES,
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": true,
            "service_documentation": "https://github.com/hal0/hal0#connect-claudeai-or-chatgpt",
        })
    }

    /// RFC 9728 protected resource metadata of one mount.
    pub fn resource_metadata_doc(&self, mount: &str) -> serde_json::Value {
        let scope = mount_scope(mount).map(Scope::as_str).unwrap_or("agents");
        serde_json::json!({
            "resource": self.resource(mount),
            "authorization_servers": [self.issuer()],
            "scopes_supported": [scope],
            "bearer_methods_supported": ["header"],
            "resource_name": format!("hal0-{mount}"),
        })
    }
}

/// A caller's value, cut and made safe to echo in a message.
pub(crate) fn shown(s: &str, max: usize) -> String {
    crate::base::term::safe_line(crate::base::redact::cut(s, max).0).into_owned()
}

/// OAuth is off on this box.
pub fn off() -> Error {
    Error::not_found(
        "oauth.off",
        "OAuth is off on this box: on the box, set an https network.public_url, then sudo hal0 config set \
         oauth.enabled true (clients with a key use /mcp/<mount>/mcp instead)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(url: &str) -> Issuer {
        let mut c = Config::default();
        c.oauth.enabled = true;
        c.network.public_url = Some(url.into());
        Issuer::of(&c).unwrap()
    }

    #[test]
    fn urls_hang_off_the_public_url() {
        let i = on("https://box.example/");
        assert_eq!(i.issuer(), "https://box.example/oauth");
        assert_eq!(i.resource("memory"), "https://box.example/oauth/memory/mcp");
        assert_eq!(
            i.resource_metadata("memory"),
            "https://box.example/.well-known/oauth-protected-resource/oauth/memory/mcp"
        );
        assert_eq!(i.mount_of_resource("https://box.example/oauth/admin/mcp/"), Some("admin"));
        assert_eq!(i.mount_of_resource("https://box.example/mcp/admin/mcp"), None);
        assert_eq!(i.mount_of_resource("https://other.example/oauth/admin/mcp"), None);
        assert_eq!(i.metadata()["code_challenge_methods_supported"], serde_json::json!(["S256"]));
    }

    #[test]
    fn paths_name_their_mount() {
        assert_eq!(mount_of_path("/oauth/memory/mcp"), Some("memory"));
        assert_eq!(mount_of_path("/oauth/memory"), Some("memory"));
        assert_eq!(mount_of_path("/oauth/relay/mcp"), None);
        assert_eq!(mount_of_path("/oauth/token"), None);
        assert_eq!(mount_of_path("/mcp/memory/mcp"), None);
    }

    #[test]
    fn off_without_the_setting() {
        let mut c = Config::default();
        c.network.public_url = Some("https://box.example".into());
        assert_eq!(Issuer::of(&c).unwrap_err().code, "oauth.off");
    }
}
