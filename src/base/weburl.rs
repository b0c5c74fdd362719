//! hal0's one URL type for http(s) URLs, over the `url` crate (WHATWG parsing): the parts
//! hal0 compares (scheme, host without brackets, port, path). The config checks, the host
//! allowlist and the doctor read URLs through this and nothing else.

/// Whether `ip` is this box: 127.0.0.0/8, ::1, or an IPv4-mapped loopback.
pub fn is_local(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => v4.is_loopback(),
        std::net::IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

/// An `http://` or `https://` URL with a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    /// `http` or `https`.
    pub scheme: String,
    /// Lower-case host; an IPv6 literal without its brackets.
    pub host: String,
    /// The port written in the URL, if any other than the scheme's default.
    pub explicit_port: Option<u16>,
    /// The port used: the explicit one or the scheme's default.
    pub port: u16,
    /// The path (`/` when none was written).
    pub path: String,
}

impl HttpUrl {
    /// Parse `text`; `None` for anything but an http(s) URL with a host.
    pub fn parse(text: &str) -> Option<HttpUrl> {
        // WHATWG parsing reads `https:///path` as host `path`; hal0 wants the host written.
        let (_, rest) = text.trim().split_once("://")?;
        if rest.is_empty() || rest.starts_with(['/', '\\', '?', '#']) {
            return None;
        }
        let u = url::Url::parse(text.trim()).ok()?;
        if !matches!(u.scheme(), "http" | "https") {
            return None;
        }
        let host = match u.host()? {
            url::Host::Domain(d) if !d.is_empty() => d.to_string(),
            url::Host::Domain(_) => return None,
            url::Host::Ipv4(ip) => ip.to_string(),
            url::Host::Ipv6(ip) => ip.to_string(),
        };
        Some(HttpUrl {
            scheme: u.scheme().to_string(),
            host,
            explicit_port: u.port(),
            port: u.port_or_known_default()?,
            path: u.path().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::HttpUrl;

    #[test]
    fn parts() {
        let u = HttpUrl::parse("https://Hal0.Example.com:8443/x?y#z").unwrap();
        assert_eq!(
            (u.scheme.as_str(), u.host.as_str(), u.explicit_port, u.port),
            ("https", "hal0.example.com", Some(8443), 8443)
        );
        assert_eq!(u.path, "/x");
        let u = HttpUrl::parse("http://[fe80::1]:80").unwrap();
        assert_eq!((u.host.as_str(), u.explicit_port, u.port, u.path.as_str()), ("fe80::1", None, 80, "/"));
        let u = HttpUrl::parse("http://user:pw@10.0.0.5:9000/mcp/agents/mcp").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.path.as_str()), ("10.0.0.5", 9000, "/mcp/agents/mcp"));
        for bad in ["http://", "https:///path", "http://?x", "ftp://x/", "x", "", "http://:80/", "unix:/run/x.sock"] {
            assert_eq!(HttpUrl::parse(bad), None, "{bad}");
        }
    }
}
