//! Finding out that an installed server wants OAuth, and where its authorization server
//! is (MCP authorization, 2025-11-25): an unauthenticated `initialize` answered 401 whose
//! `WWW-Authenticate` names the Protected Resource Metadata (RFC 9728; else its well-known
//! URLs), whose `authorization_servers` names the issuer, whose RFC 8414 metadata (else
//! OpenID discovery) gives the endpoints. Every fetch goes through the SSRF guard; the
//! server's own host passes it (the operator chose that host), any other host must be
//! public. Endpoints must be https (plain http only on a loopback host), the metadata's
//! `issuer` must be the issuer asked for, and S256 must be offered (MCP forbids a client
//! to go on without it).

use crate::base::error::{Error, Kind, Result};
use crate::base::ssrf::{self, FetchLimits, Guard};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most metadata hal0 reads from one URL.
const MAX_BYTES: usize = 64 * 1024;

/// What the discovery found: enough to run the authorization code flow.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Discovery {
    /// The resource indicator sent with every request (RFC 8707): the PRM's `resource`.
    pub resource: String,
    /// Where the Protected Resource Metadata was read.
    pub resource_metadata: String,
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    #[serde(default)]
    pub revocation_endpoint: Option<String>,
    /// The server takes Client ID Metadata Documents.
    #[serde(default)]
    pub cimd: bool,
    /// The server puts `iss` in its authorization responses (RFC 9207): then it must.
    #[serde(default)]
    pub iss_param: bool,
    /// Scopes to ask for: the challenge's `scope`, else the PRM's `scopes_supported`.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The token endpoint's client authentication methods.
    #[serde(default)]
    pub token_auth_methods: Vec<String>,
}

fn failed(what: impl std::fmt::Display) -> Error {
    Error::new("mcp.oauth_discovery_failed", Kind::BadGateway, what.to_string())
}

fn limits(ca_file: Option<&std::path::Path>) -> FetchLimits {
    FetchLimits {
        max_bytes: MAX_BYTES,
        ca_file: ca_file.map(Into::into).or_else(Guard::daemon_ca_file),
        ..FetchLimits::default()
    }
}

/// The guard for the URLs of server `url`'s metadata: its own host passes.
pub fn guard_for(url: &str) -> Guard {
    let g = Guard::for_daemon();
    match url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_string)) {
        Some(h) => g.trusting(&h),
        None => g,
    }
}

/// Whether `u` is an endpoint hal0 talks OAuth to: https, or http to a loopback host.
pub fn check_endpoint(what: &str, u: &str) -> Result<()> {
    let parsed = url::Url::parse(u).map_err(|_| failed(format!("the {what} `{}` is not a URL", shown(u))))?;
    let loopback = parsed.host_str().is_some_and(|h| {
        let h = h.trim_start_matches('[').trim_end_matches(']');
        h.eq_ignore_ascii_case("localhost") || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    });
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(Error::new(
            "mcp.oauth_insecure",
            Kind::BadGateway,
            format!("the {what} `{}` is not https; hal0 sends OAuth credentials over https only", shown(u)),
        )),
    }
}

/// `s` cut for a message (it came from a remote server).
fn shown(s: &str) -> String {
    crate::auth::oauth::shown(s, 200)
}

/// The parameters of a `WWW-Authenticate: Bearer …` challenge (lowercased names).
pub fn challenge_params(header: &str) -> Vec<(String, String)> {
    let Some(rest) = header.trim().strip_prefix("Bearer").or_else(|| header.trim().strip_prefix("bearer")) else {
        return vec![];
    };
    let mut out = Vec::new();
    let mut s = rest.trim();
    while !s.is_empty() {
        let Some(eq) = s.find('=') else { break };
        let name = s[..eq].trim().trim_start_matches(',').trim().to_ascii_lowercase();
        s = s[eq + 1..].trim_start();
        let value;
        if let Some(q) = s.strip_prefix('"') {
            let mut v = String::new();
            let mut chars = q.char_indices();
            let mut end = q.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            v.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => v.push(c),
                }
            }
            value = v;
            s = q[end.min(q.len())..].trim_start().trim_start_matches(',').trim_start();
        } else {
            let end = s.find(',').unwrap_or(s.len());
            value = s[..end].trim().to_string();
            s = s[end..].trim_start_matches(',').trim_start();
        }
        out.push((name, value));
    }
    out
}

/// Ask `url` to initialize without a credential: `Some(challenge)` (the `WWW-Authenticate`
/// value, maybe empty) when it answers 401, `None` when it answers anything else.
pub async fn challenge(url: &str, ca_file: Option<&std::path::Path>) -> Result<Option<String>> {
    let (u, client) = ssrf::pinned_client(&guard_for(url), url, &limits(ca_file))?;
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "hal0", "version": env!("CARGO_PKG_VERSION")}}});
    let resp = client
        .post(u)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(init.to_string())
        .send()
        .await
        .map_err(|e| {
            let text = crate::base::outbound::chain(&e);
            let why = crate::base::outbound::in_words(url, &text)
                .unwrap_or_else(|| crate::base::redact::redact(&text).into_owned());
            failed(format!("{url} does not answer: {why}"))
        })?;
    if resp.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    let h = resp.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    Ok(Some(h))
}

async fn get_json(guard: &Guard, url: &str, ca_file: Option<&std::path::Path>) -> Result<Value> {
    let (_, body) = ssrf::fetch(guard, url, limits(ca_file)).await?;
    serde_json::from_slice(&body).map_err(|e| failed(format!("{} is not JSON metadata: {e}", shown(url))))
}

/// The well-known URLs of `url`'s Protected Resource Metadata, path-specific first.
fn prm_candidates(url: &url::Url) -> Vec<String> {
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let mut out = Vec::new();
    if !path.is_empty() {
        out.push(format!("{origin}/.well-known/oauth-protected-resource{path}"));
    }
    out.push(format!("{origin}/.well-known/oauth-protected-resource"));
    out
}

/// The metadata URLs of `issuer` (RFC 8414 §3.1, then OpenID discovery both ways).
fn as_candidates(issuer: &url::Url) -> Vec<String> {
    let origin = issuer.origin().ascii_serialization();
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        return vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ];
    }
    vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ]
}

fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

/// Discover the OAuth setup of the server at `url` from its 401 `challenge`.
pub async fn discover(url: &str, challenge: &str, ca_file: Option<&std::path::Path>) -> Result<Discovery> {
    let guard = guard_for(url);
    let server = url::Url::parse(url).map_err(|_| failed(format!("`{}` is not a URL", shown(url))))?;
    let params = challenge_params(challenge);
    let param = |n: &str| params.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let mut tried = Vec::new();
    let mut prm = None;
    let candidates = match param("resource_metadata") {
        Some(u) => vec![u],
        None => prm_candidates(&server),
    };
    for c in candidates {
        match get_json(&guard, &c, ca_file).await {
            Ok(v) => {
                prm = Some((c, v));
                break;
            }
            Err(e) if e.code == "mcp.ssrf_refused" || e.code == "mcp.tls_certificate_invalid" => return Err(e),
            Err(e) => tried.push(format!("{c}: {}", e.message)),
        }
    }
    let Some((prm_url, prm)) = prm else {
        return Err(failed(format!(
            "{} answered 401 but publishes no Protected Resource Metadata ({}); it may want a static key: \
             hal0 mcp secret set",
            shown(url),
            tried.join("; ")
        )));
    };
    let resource = prm["resource"].as_str().unwrap_or_default().to_string();
    // RFC 9728 §3.3: the metadata must be about this resource.
    let about_this = url::Url::parse(&resource)
        .is_ok_and(|r| r.origin() == server.origin() && server.path().starts_with(r.path().trim_end_matches('/')));
    if !about_this {
        return Err(failed(format!(
            "the Protected Resource Metadata at {} is about `{}`, not {}",
            shown(&prm_url),
            shown(&resource),
            shown(url)
        )));
    }
    let issuer = strings(&prm["authorization_servers"]).into_iter().next().ok_or_else(|| {
        failed(format!("the Protected Resource Metadata at {} names no authorization server", shown(&prm_url)))
    })?;
    check_endpoint("authorization server", &issuer)?;
    let issuer_url = url::Url::parse(&issuer).map_err(|_| failed(format!("`{}` is not a URL", shown(&issuer))))?;
    let mut meta = None;
    let mut tried = Vec::new();
    for c in as_candidates(&issuer_url) {
        match get_json(&guard, &c, ca_file).await {
            Ok(v) => {
                meta = Some(v);
                break;
            }
            Err(e) if e.code == "mcp.ssrf_refused" || e.code == "mcp.tls_certificate_invalid" => return Err(e),
            Err(e) => tried.push(format!("{c}: {}", e.message)),
        }
    }
    let meta = meta.ok_or_else(|| {
        failed(format!("the authorization server {} publishes no metadata ({})", shown(&issuer), tried.join("; ")))
    })?;
    let got_issuer = meta["issuer"].as_str().unwrap_or_default();
    if !same_url(got_issuer, &issuer) {
        return Err(failed(format!(
            "the metadata of {} names another issuer (`{}`)",
            shown(&issuer),
            shown(got_issuer)
        )));
    }
    if !strings(&meta["code_challenge_methods_supported"]).iter().any(|m| m == "S256") {
        return Err(Error::new(
            "mcp.oauth_unsupported",
            Kind::BadGateway,
            format!(
                "the authorization server {} does not offer PKCE S256; hal0 will not go on without it",
                shown(&issuer)
            ),
        ));
    }
    let endpoint = |k: &str| -> Result<Option<String>> {
        match meta[k].as_str() {
            None => Ok(None),
            Some(u) => {
                check_endpoint(k, u)?;
                Ok(Some(u.to_string()))
            }
        }
    };
    let authorization_endpoint = endpoint("authorization_endpoint")?
        .ok_or_else(|| failed(format!("the metadata of {} has no authorization_endpoint", shown(&issuer))))?;
    let token_endpoint = endpoint("token_endpoint")?
        .ok_or_else(|| failed(format!("the metadata of {} has no token_endpoint", shown(&issuer))))?;
    let scopes = match param("scope") {
        Some(s) => s.split_whitespace().map(str::to_string).collect(),
        None => strings(&prm["scopes_supported"]),
    };
    Ok(Discovery {
        resource,
        resource_metadata: prm_url,
        issuer: got_issuer.to_string(),
        authorization_endpoint,
        token_endpoint,
        registration_endpoint: endpoint("registration_endpoint")?,
        revocation_endpoint: endpoint("revocation_endpoint")?,
        cimd: meta["client_id_metadata_document_supported"].as_bool() == Some(true),
        iss_param: meta["authorization_response_iss_parameter_supported"].as_bool() == Some(true),
        scopes,
        token_auth_methods: strings(&meta["token_endpoint_auth_methods_supported"]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed_with_quotes_and_commas() {
        let p = challenge_params(
            r#"Bearer error="invalid_token", resource_metadata="https://x.example/.well-known/oauth-protected-resource/mcp", scope="a b""#,
        );
        assert_eq!(p[0], ("error".into(), "invalid_token".into()));
        assert_eq!(p[1].1, "https://x.example/.well-known/oauth-protected-resource/mcp");
        assert_eq!(p[2], ("scope".into(), "a b".into()));
        assert_eq!(challenge_params(r#"Bearer realm=x, scope="q\"z""#)[1].1, "q\"z");
        assert!(challenge_params("Basic realm=x").is_empty());
    }

    #[test]
    fn well_known_urls_in_the_specs_order() {
        let u = url::Url::parse("https://h.example/api/mcp").unwrap();
        assert_eq!(
            prm_candidates(&u),
            vec![
                "https://h.example/.well-known/oauth-protected-resource/api/mcp",
                "https://h.example/.well-known/oauth-protected-resource"
            ]
        );
        let i = url::Url::parse("https://auth.example/tenant1").unwrap();
        assert_eq!(as_candidates(&i)[0], "https://auth.example/.well-known/oauth-authorization-server/tenant1");
        assert_eq!(as_candidates(&i)[2], "https://auth.example/tenant1/.well-known/openid-configuration");
    }

    #[test]
    fn endpoints_must_be_https_but_loopback() {
        assert!(check_endpoint("x", "https://a.example/token").is_ok());
        assert!(check_endpoint("x", "http://localhost:9/token").is_ok());
        assert!(check_endpoint("x", "http://127.0.0.1:9/token").is_ok());
        assert_eq!(check_endpoint("x", "http://a.example/token").unwrap_err().code, "mcp.oauth_insecure");
        assert_eq!(check_endpoint("x", "ftp://a.example/t").unwrap_err().code, "mcp.oauth_insecure");
    }

    /// Metadata naming a private address is refused by the guard's verdict before any
    /// connection is made (nothing here leaves the machine: the address is only judged).
    #[tokio::test]
    async fn metadata_at_a_private_address_is_refused() {
        let e = discover(
            "https://mcp.example.com/mcp",
            r#"Bearer resource_metadata="http://10.20.30.40/.well-known/oauth-protected-resource""#,
            None,
        )
        .await
        .unwrap_err();
        assert_eq!(e.code, "mcp.ssrf_refused", "{}", e.message);
        assert!(e.message.contains("10.20.30.40") && e.message.contains("private"), "{}", e.message);
    }
}
