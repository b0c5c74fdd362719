//! DNS-rebinding defence for `/mcp/*`: the `Host` allowlist (loopback, LAN IPs, hostname,
//! `<hostname>.local`, the public_url host; each bare and with the port; plus
//! `HAL0_MCP_ALLOWED_HOSTS`) and the `Origin` allowlist derived from it.

use std::collections::BTreeSet;
use std::net::IpAddr;

/// The allowlists, computed once at start.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    /// `None` disables the host check (`HAL0_MCP_ALLOWED_HOSTS=*`).
    hosts: Option<BTreeSet<String>>,
    /// Hosts allowed on any port (`host:*`).
    any_port: BTreeSet<String>,
    /// Extra origins (`HAL0_MCP_ALLOWED_ORIGINS`), normalised `scheme://host[:port]`.
    origins: BTreeSet<String>,
    /// `host:port` of every place hal0 itself is served from (its port on each box name,
    /// the public URL's, an allowed host's): a page's Origin must be one of them. A page on
    /// another port of the box (80, 443, anything) is another origin.
    served_at: BTreeSet<String>,
}

/// Facts about this box the default list is built from.
#[derive(Debug, Clone, Default)]
pub struct BoxNames {
    pub port: u16,
    pub lan_ips: Vec<IpAddr>,
    pub hostname: Option<String>,
    pub public_host: Option<String>,
    pub public_port: Option<u16>,
}

impl BoxNames {
    /// Detect LAN addresses and the hostname of this machine.
    pub fn detect(port: u16, public_url: Option<&str>) -> BoxNames {
        let lan_ips = if_addrs::get_if_addrs()
            .map(|v| v.into_iter().map(|i| i.ip()).filter(|ip| !ip.is_loopback()).collect())
            .unwrap_or_default();
        let hostname = gethostname::gethostname().into_string().ok().filter(|h| !h.is_empty());
        let public_host = public_url.and_then(crate::config::url_host);
        let public_port = public_url.and_then(url_port);
        BoxNames { port, lan_ips, hostname, public_host, public_port }
    }
}

/// The port written in an http(s) URL (none when it is the scheme's default).
fn url_port(url: &str) -> Option<u16> {
    crate::base::weburl::HttpUrl::parse(url)?.explicit_port
}

/// Lower-case a host and put IPv6 literals in brackets.
fn norm_host(h: &str) -> String {
    let h = h.trim().to_ascii_lowercase();
    if h.contains(':') && !h.starts_with('[') { format!("[{h}]") } else { h }
}

impl HostPolicy {
    pub fn new(names: &BoxNames, extra_hosts: Option<&str>, extra_origins: Option<&str>) -> HostPolicy {
        let mut bare: BTreeSet<String> = ["127.0.0.1", "localhost", "::1"].iter().map(|h| norm_host(h)).collect();
        bare.extend(names.lan_ips.iter().map(|ip| norm_host(&ip.to_string())));
        if let Some(h) = &names.hostname {
            bare.insert(norm_host(h));
            if !h.ends_with(".local") {
                bare.insert(norm_host(&format!("{h}.local")));
            }
        }
        let mut hosts = BTreeSet::new();
        for h in &bare {
            hosts.insert(h.clone());
            hosts.insert(format!("{h}:{}", names.port));
        }
        if let Some(p) = &names.public_host {
            let p = norm_host(p);
            hosts.insert(p.clone());
            hosts.insert(format!("{p}:{}", names.port));
            if let Some(pp) = names.public_port {
                hosts.insert(format!("{p}:{pp}"));
            }
        }
        let mut served_at: BTreeSet<String> = bare.iter().map(|h| format!("{h}:{}", names.port)).collect();
        if let Some(p) = &names.public_host {
            let p = norm_host(p);
            served_at.insert(format!("{p}:{}", names.port));
            match names.public_port {
                Some(pp) => served_at.extend([format!("{p}:{pp}")]),
                // The public URL names no port: a reverse proxy on the scheme's own.
                None => served_at.extend([format!("{p}:80"), format!("{p}:443")]),
            }
        }
        let mut any_port = BTreeSet::new();
        let mut disabled = false;
        for e in extra_hosts.unwrap_or("").split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if e == "*" {
                disabled = true;
            } else if let Some(h) = e.strip_suffix(":*") {
                any_port.insert(norm_host(h));
            } else {
                let a = norm_authority(e);
                match split_authority(&a) {
                    (_, Some(_)) => served_at.insert(a.clone()),
                    (h, None) => {
                        served_at.insert(format!("{h}:80"));
                        served_at.insert(format!("{h}:443"))
                    }
                };
                hosts.insert(a);
            }
        }
        let origins = extra_origins
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
            .collect();
        HostPolicy { hosts: (!disabled).then_some(hosts), any_port, origins, served_at }
    }

    /// Is this `Host` header value (authority) allowed? A missing Host is refused.
    pub fn host_allowed(&self, authority: Option<&str>) -> bool {
        let Some(hosts) = &self.hosts else { return true };
        let Some(a) = authority else { return false };
        let a = norm_authority(a);
        if hosts.contains(&a) {
            return true;
        }
        let (h, _) = split_authority(&a);
        self.any_port.contains(h)
    }

    /// Is this `Origin` allowed? A missing Origin passes (non-browser clients); otherwise
    /// it must be a page hal0 itself serves (scheme, name and port: [`Self::served_at`]),
    /// or one allowed by `HAL0_MCP_ALLOWED_ORIGINS` or a `host:*` entry.
    pub fn origin_allowed(&self, origin: Option<&str>) -> bool {
        let Some(o) = origin else { return true };
        if self.hosts.is_none() {
            return true;
        }
        let o = o.trim().trim_end_matches('/').to_ascii_lowercase();
        if self.origins.contains(&o) {
            return true;
        }
        let Some((scheme, authority)) = o.split_once("://") else { return false };
        let default = match scheme {
            "http" => 80,
            "https" => 443,
            _ => return false,
        };
        let a = norm_authority(authority);
        let (h, port) = split_authority(&a);
        let Ok(port) = port.map_or(Ok(default), str::parse::<u16>) else { return false };
        self.any_port.contains(h) || self.served_at.contains(&format!("{h}:{port}"))
    }

    /// The origin list handed to rmcp's own Origin check (same decisions, its syntax).
    pub fn rmcp_origins(&self) -> Option<Vec<String>> {
        self.hosts.as_ref()?;
        let mut out: Vec<String> = self.origins.iter().cloned().collect();
        for a in &self.served_at {
            let (h, port) = split_authority(a);
            for (scheme, default) in [("http", "80"), ("https", "443")] {
                out.push(format!("{scheme}://{a}"));
                if port == Some(default) {
                    out.push(format!("{scheme}://{h}"));
                }
            }
        }
        for h in &self.any_port {
            out.push(format!("http://{h}:*"));
            out.push(format!("https://{h}:*"));
        }
        Some(out)
    }
}

fn norm_authority(a: &str) -> String {
    let a = a.trim().to_ascii_lowercase();
    let (h, p) = split_authority(&a);
    match p {
        Some(p) => format!("{}:{p}", norm_host(h)),
        None => norm_host(h),
    }
}

/// Split `host[:port]`, keeping IPv6 brackets on the host.
fn split_authority(a: &str) -> (&str, Option<&str>) {
    if a.starts_with('[') {
        match a.find(']') {
            Some(i) => {
                let rest = &a[i + 1..];
                (&a[..=i], rest.strip_prefix(':'))
            }
            None => (a, None),
        }
    } else if a.matches(':').count() > 1 {
        (a, None) // bare IPv6 without brackets
    } else {
        match a.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (a, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> BoxNames {
        BoxNames {
            port: 8080,
            lan_ips: vec!["192.168.1.20".parse().unwrap()],
            hostname: Some("box".into()),
            public_host: Some("hal0.example.com".into()),
            public_port: Some(443),
        }
    }

    #[test]
    fn defaults() {
        let p = HostPolicy::new(&names(), None, None);
        for ok in [
            "127.0.0.1:8080",
            "localhost",
            "LOCALHOST:8080",
            "[::1]:8080",
            "192.168.1.20:8080",
            "box",
            "box.local:8080",
            "hal0.example.com",
            "hal0.example.com:443",
        ] {
            assert!(p.host_allowed(Some(ok)), "{ok}");
        }
        for bad in ["evil.com", "127.0.0.1:9999", "box:1", "attacker.box"] {
            assert!(!p.host_allowed(Some(bad)), "{bad}");
        }
        assert!(!p.host_allowed(None));
    }

    #[test]
    fn extras_and_wildcard() {
        let p = HostPolicy::new(&names(), Some("proxy.lan:8443, other.lan:*"), None);
        assert!(p.host_allowed(Some("proxy.lan:8443")));
        assert!(!p.host_allowed(Some("proxy.lan:1")));
        assert!(p.host_allowed(Some("other.lan:1234")));
        let off = HostPolicy::new(&names(), Some("*"), None);
        assert!(off.host_allowed(Some("anything")));
        assert!(off.rmcp_origins().is_none());
    }

    #[test]
    fn origins() {
        let p = HostPolicy::new(&names(), None, Some("https://app.example.org"));
        assert!(p.origin_allowed(None));
        assert!(p.origin_allowed(Some("http://127.0.0.1:8080")));
        assert!(p.origin_allowed(Some("https://box.local:8080")));
        assert!(p.origin_allowed(Some("https://hal0.example.com")), "the public URL's origin");
        // Another port of the box is another origin (a page served on 80 or 443 there).
        for other in ["http://localhost", "https://127.0.0.1", "http://192.168.1.20:80", "http://box:3000"] {
            assert!(!p.origin_allowed(Some(other)), "{other}");
        }
        let rmcp = p.rmcp_origins().unwrap();
        assert!(rmcp.contains(&"http://127.0.0.1:8080".to_string()), "{rmcp:?}");
        assert!(!rmcp.iter().any(|o| o == "http://localhost" || o == "http://localhost:80"), "{rmcp:?}");
        // A hal0 that listens on 80 itself is served at the bare name.
        let on80 = HostPolicy::new(&BoxNames { port: 80, ..names() }, None, None);
        assert!(on80.origin_allowed(Some("http://localhost")));
        assert!(!on80.origin_allowed(Some("http://localhost:8080")));
        // An allowed host without a port is a reverse proxy on the scheme's own port.
        let proxied = HostPolicy::new(&names(), Some("proxy.lan"), None);
        assert!(proxied.origin_allowed(Some("https://proxy.lan")));
        assert!(!proxied.origin_allowed(Some("https://proxy.lan:9")));
        assert!(p.origin_allowed(Some("https://app.example.org")));
        assert!(!p.origin_allowed(Some("https://evil.example")));
        assert!(!p.origin_allowed(Some("null")));
        assert!(!p.origin_allowed(Some("file://x")));
    }

    #[test]
    fn url_port_parse() {
        assert_eq!(url_port("https://a:8443/x"), Some(8443));
        assert_eq!(url_port("https://a/x"), None);
        assert_eq!(url_port("http://[::1]:9"), Some(9));
    }
}
