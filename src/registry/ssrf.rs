//! The SSRF guard for outbound fetches made on an operator's behalf (install-spec manifests):
//! resolve first, refuse any address in a non-public class, then connect only to the
//! addresses that were checked. Redirects are followed by hand, each hop checked again.

use crate::error::{Error, Kind, Result};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Limits for one guarded fetch.
#[derive(Debug, Clone)]
pub struct FetchLimits {
    pub max_bytes: usize,
    pub max_redirects: usize,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// CA certificates (PEM) trusted besides the system store and the webpki roots.
    pub ca_file: Option<std::path::PathBuf>,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            max_bytes: 256 * 1024,
            max_redirects: 5,
            timeout: Duration::from_secs(6),
            connect_timeout: Duration::from_secs(4),
            ca_file: None,
        }
    }
}

/// The class of a refused address, or `None` for a public one.
pub fn refused_class(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return refused_v4(v4).map(|_| "IPv4-mapped non-public");
            }
            let s = v6.segments();
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if v6.is_multicast() {
                Some("multicast")
            } else if s[0] & 0xfe00 == 0xfc00 {
                Some("private (unique local fc00::/7)")
            } else if s[0] & 0xffc0 == 0xfe80 {
                Some("link-local")
            } else if s[0] & 0xffc0 == 0xfec0 {
                Some("site-local")
            } else if s[..6] == [0, 0, 0, 0, 0, 0] {
                // IPv4-compatible (::a.b.c.d), deprecated; never a public target.
                Some("IPv4-compatible")
            } else {
                None
            }
        }
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() || o[0] == 0 {
        Some("unspecified")
    } else if ip.is_broadcast() {
        Some("broadcast")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
        Some("CGNAT (100.64.0.0/10)")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if o[0] >= 240 {
        Some("reserved")
    } else {
        None
    }
}

/// A resolver: host and port to socket addresses.
type ResolveFn = dyn Fn(&str, u16) -> std::io::Result<Vec<SocketAddr>> + Send + Sync;

/// How names are resolved and which addresses are let through. Production code uses
/// [`Guard::system`]; the other constructor exists so tests can reach a loopback server.
pub struct Guard {
    resolve: Box<ResolveFn>,
    test_only_allowed: Vec<IpAddr>,
}

impl Guard {
    /// The system resolver and no exceptions.
    pub fn system() -> Guard {
        Guard {
            resolve: Box::new(|host, port| Ok((host, port).to_socket_addrs()?.collect())),
            test_only_allowed: Vec::new(),
        }
    }

    /// FOR TESTS ONLY: a fixed name table (names not in it fail to resolve; IP literals pass
    /// through) and addresses exempted from the guard, so a test can stand up a loopback
    /// server and check that what it redirects to is still refused.
    pub fn test_only_with(names: Vec<(String, IpAddr)>, allowed: Vec<IpAddr>) -> Guard {
        Guard {
            resolve: Box::new(move |host, port| {
                if let Ok(ip) = host.parse::<IpAddr>() {
                    return Ok(vec![SocketAddr::new(ip, port)]);
                }
                let hits: Vec<_> =
                    names.iter().filter(|(n, _)| n == host).map(|(_, ip)| SocketAddr::new(*ip, port)).collect();
                if hits.is_empty() {
                    Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such name in the test table"))
                } else {
                    Ok(hits)
                }
            }),
            test_only_allowed: allowed,
        }
    }

    /// Resolve `host` and refuse it if any address is non-public.
    pub fn check(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>> {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(Error::invalid("mcp.invalid_spec", "the URL has no host"));
        }
        let addrs = (self.resolve)(host, port).map_err(|e| {
            Error::new("mcp.manifest_fetch_failed", Kind::BadGateway, format!("cannot resolve `{host}`: {e}"))
        })?;
        if addrs.is_empty() {
            return Err(Error::new(
                "mcp.manifest_fetch_failed",
                Kind::BadGateway,
                format!("`{host}` resolves to no address"),
            ));
        }
        for a in &addrs {
            if self.test_only_allowed.contains(&a.ip()) {
                continue;
            }
            if let Some(class) = refused_class(a.ip()) {
                return Err(Error::invalid(
                    "mcp.ssrf_refused",
                    format!(
                        "refusing to fetch from `{host}`: it resolves to {}, a {class} address; \
                         manifests are fetched only from public addresses",
                        a.ip()
                    ),
                ));
            }
        }
        Ok(addrs)
    }
}

/// Resolve `host` with the system resolver and refuse loopback, private, link-local, CGNAT,
/// unspecified, multicast, broadcast and reserved addresses (and IPv4-mapped forms).
pub fn check_target(host: &str, port: u16) -> Result<Vec<SocketAddr>> {
    Guard::system().check(host, port)
}

/// The parts of an http(s) URL the guard needs.
fn target(url: &reqwest::Url) -> Result<(String, u16)> {
    match url.scheme() {
        "http" | "https" => {}
        s => {
            return Err(Error::invalid(
                "mcp.invalid_spec",
                format!("`{s}://` URLs cannot be fetched; use an http:// or https:// manifest URL"),
            ));
        }
    }
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| Error::invalid("mcp.invalid_spec", "the URL has no host"))?;
    let port = url.port_or_known_default().unwrap_or(80);
    Ok((host.trim_start_matches('[').trim_end_matches(']').to_string(), port))
}

fn fetch_failed(msg: String) -> Error {
    Error::new("mcp.manifest_fetch_failed", Kind::BadGateway, msg)
}

/// GET `url` behind the guard: every hop (at most `limits.max_redirects` redirects) is
/// resolved and checked, the connection goes only to the checked addresses, no proxy is
/// used, and the body is capped at `limits.max_bytes`. https hops verify the certificate
/// for the host name while connecting to the checked address.
pub async fn fetch(guard: &Guard, url: &str, limits: FetchLimits) -> Result<(reqwest::Url, Vec<u8>)> {
    let mut url = reqwest::Url::parse(url)
        .map_err(|e| Error::invalid("mcp.invalid_spec", format!("`{url}` is not a valid URL: {e}")))?;
    let mut hops = 0;
    loop {
        let (host, port) = target(&url)?;
        let addrs = guard.check(&host, port)?;
        // TLS with hal0's trust; the connection goes only to the checked addresses, while
        // SNI and the certificate check use the name (`resolve_to_addrs` keeps it).
        let mut b = crate::outbound::builder(limits.ca_file.as_deref())?
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(limits.timeout)
            .connect_timeout(limits.connect_timeout);
        if host.parse::<IpAddr>().is_err() {
            b = b.resolve_to_addrs(&host, &addrs);
        }
        let client = b.build().map_err(|e| Error::internal(format!("http client: {e}")))?;
        let mut resp = client.get(url.clone()).header("accept", "application/json").send().await.map_err(|e| {
            let text = crate::outbound::chain(&e);
            crate::outbound::tls_error(url.as_str(), &text)
                .unwrap_or_else(|| fetch_failed(format!("cannot fetch {url}: {}", crate::redact::redact(&text))))
        })?;
        let status = resp.status();
        if status.is_redirection() {
            hops += 1;
            if hops > limits.max_redirects {
                return Err(fetch_failed(format!("{url} redirected more than {} times", limits.max_redirects)));
            }
            let loc = resp
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| fetch_failed(format!("{url} answered {status} without a Location")))?;
            url = url.join(loc).map_err(|e| fetch_failed(format!("{url} redirected to a bad URL: {e}")))?;
            continue;
        }
        if !status.is_success() {
            return Err(fetch_failed(format!("{url} answered {status}")));
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| fetch_failed(format!("reading {url}: {e}")))? {
            if body.len() + chunk.len() > limits.max_bytes {
                return Err(fetch_failed(format!("{url} is larger than {} bytes", limits.max_bytes)));
            }
            body.extend_from_slice(&chunk);
        }
        return Ok((url, body));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(ip: &str) -> Option<&'static str> {
        refused_class(ip.parse().unwrap())
    }

    #[test]
    fn classes() {
        assert_eq!(refused("127.0.0.1"), Some("loopback"));
        assert_eq!(refused("::1"), Some("loopback"));
        assert_eq!(refused("10.1.2.3"), Some("private"));
        assert_eq!(refused("172.16.0.1"), Some("private"));
        assert_eq!(refused("192.168.1.1"), Some("private"));
        assert_eq!(refused("fd00::1"), Some("private (unique local fc00::/7)"));
        assert_eq!(refused("169.254.1.1"), Some("link-local"));
        assert_eq!(refused("fe80::1"), Some("link-local"));
        assert_eq!(refused("100.64.0.1"), Some("CGNAT (100.64.0.0/10)"));
        assert_eq!(refused("100.127.255.255"), Some("CGNAT (100.64.0.0/10)"));
        assert_eq!(refused("0.0.0.0"), Some("unspecified"));
        assert_eq!(refused("::"), Some("unspecified"));
        assert_eq!(refused("::ffff:127.0.0.1"), Some("IPv4-mapped non-public"));
        assert_eq!(refused("::ffff:10.0.0.1"), Some("IPv4-mapped non-public"));
        assert_eq!(refused("224.0.0.1"), Some("multicast"));
        assert_eq!(refused("ff02::1"), Some("multicast"));
        assert_eq!(refused("255.255.255.255"), Some("broadcast"));
        assert_eq!(refused("93.184.216.34"), None);
        assert_eq!(refused("100.128.0.1"), None);
        assert_eq!(refused("2606:4700::1111"), None);
        assert_eq!(refused("::ffff:93.184.216.34"), None);
    }

    #[test]
    fn check_target_refuses_and_names_class() {
        for (ip, class) in [
            ("127.0.0.1", "loopback"),
            ("::1", "loopback"),
            ("10.1.2.3", "private"),
            ("169.254.1.1", "link-local"),
            ("100.64.0.1", "CGNAT"),
            ("0.0.0.0", "unspecified"),
            ("::ffff:127.0.0.1", "IPv4-mapped"),
            ("224.0.0.1", "multicast"),
        ] {
            let e = check_target(ip, 80).unwrap_err();
            assert_eq!(e.code, "mcp.ssrf_refused", "{ip}");
            assert!(e.message.contains(class), "{ip}: {}", e.message);
            assert_eq!(e.status(), 400);
        }
        let e = check_target("[::1]", 80).unwrap_err();
        assert_eq!(e.code, "mcp.ssrf_refused");
    }

    #[test]
    fn localhost_name_is_refused_after_resolving() {
        let e = check_target("localhost", 80).unwrap_err();
        assert_eq!(e.code, "mcp.ssrf_refused", "{}", e.message);
        assert!(e.message.contains("loopback"), "{}", e.message);
    }

    #[test]
    fn a_name_with_any_bad_address_is_refused() {
        let g = Guard::test_only_with(
            vec![
                ("mixed.test".into(), "93.184.216.34".parse().unwrap()),
                ("mixed.test".into(), "10.0.0.7".parse().unwrap()),
            ],
            vec![],
        );
        let e = g.check("mixed.test", 80).unwrap_err();
        assert!(e.message.contains("10.0.0.7"), "{}", e.message);
        let g = Guard::test_only_with(vec![("pub.test".into(), "93.184.216.34".parse().unwrap())], vec![]);
        assert_eq!(g.check("pub.test", 80).unwrap().len(), 1);
    }

    async fn redirect_server(location: &'static str) -> SocketAddr {
        use axum::{Router, http::StatusCode, response::IntoResponse, routing::get};
        let app = Router::new()
            .route("/hop", get(move || async move { (StatusCode::FOUND, [("location", location)]).into_response() }))
            .route("/loop", get(|| async { (StatusCode::FOUND, [("location", "/loop")]).into_response() }))
            .route("/big", get(|| async { "x".repeat(4096) }))
            .route("/manifest.json", get(|| async { r#"{"name":"demo"}"# }));
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
        addr
    }

    fn loopback_allowed() -> Guard {
        Guard::test_only_with(
            vec![("evil.test".into(), "10.9.8.7".parse().unwrap())],
            vec!["127.0.0.1".parse().unwrap()],
        )
    }

    #[tokio::test]
    async fn redirect_to_private_address_is_refused() {
        let addr = redirect_server("http://10.0.0.5/manifest.json").await;
        let e = fetch(&loopback_allowed(), &format!("http://{addr}/hop"), FetchLimits::default()).await.unwrap_err();
        assert_eq!(e.code, "mcp.ssrf_refused", "{}", e.message);
        assert!(e.message.contains("10.0.0.5") && e.message.contains("private"), "{}", e.message);
    }

    #[tokio::test]
    async fn redirect_to_name_resolving_private_is_refused() {
        let addr = redirect_server("http://evil.test/manifest.json").await;
        let e = fetch(&loopback_allowed(), &format!("http://{addr}/hop"), FetchLimits::default()).await.unwrap_err();
        assert_eq!(e.code, "mcp.ssrf_refused", "{}", e.message);
        assert!(e.message.contains("evil.test"), "{}", e.message);
    }

    #[tokio::test]
    async fn redirects_are_followed_and_capped() {
        let addr = redirect_server("/manifest.json").await;
        let (u, body) =
            fetch(&loopback_allowed(), &format!("http://{addr}/hop"), FetchLimits::default()).await.unwrap();
        assert_eq!(u.path(), "/manifest.json");
        assert_eq!(body, br#"{"name":"demo"}"#);
        let e = fetch(&loopback_allowed(), &format!("http://{addr}/loop"), FetchLimits::default()).await.unwrap_err();
        assert_eq!(e.code, "mcp.manifest_fetch_failed");
        assert!(e.message.contains("more than 5"), "{}", e.message);
        let small = FetchLimits { max_bytes: 100, ..FetchLimits::default() };
        let e = fetch(&loopback_allowed(), &format!("http://{addr}/big"), small).await.unwrap_err();
        assert!(e.message.contains("larger than 100"), "{}", e.message);
    }

    #[tokio::test]
    async fn system_guard_refuses_loopback_and_private_fetches_before_connecting() {
        let addr = redirect_server("/manifest.json").await;
        let e =
            fetch(&Guard::system(), &format!("http://{addr}/manifest.json"), FetchLimits::default()).await.unwrap_err();
        assert_eq!(e.code, "mcp.ssrf_refused");
        let e = fetch(&Guard::system(), "https://10.0.0.1/manifest.json", FetchLimits::default()).await.unwrap_err();
        assert_eq!(e.code, "mcp.ssrf_refused", "the guard runs before any connection, https too");
    }
}
