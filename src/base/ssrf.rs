//! The SSRF guard for outbound fetches made on an operator's behalf (install-spec manifests):
//! resolve first, refuse any address in a non-public class, then connect only to the
//! addresses that were checked. Redirects are followed by hand, each hop checked again.

use crate::base::error::{Error, Kind, Result};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
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

/// The class of a refused address, or `None` for a public one. Refused: every IANA
/// special-purpose block that is not globally reachable, and every IPv6 address outside
/// global unicast (2000::/3). Addresses that carry an IPv4 address (IPv4-mapped
/// `::ffff:0:0/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the embedded
/// IPv4 address; Teredo (`2001::/32`) and local-use NAT64 (`64:ff9b:1::/48`) are refused
/// outright.
pub fn refused_class(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

fn refused_v6(v6: Ipv6Addr) -> Option<&'static str> {
    let s = v6.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if v6.is_loopback() {
        Some("loopback")
    } else if v6.is_unspecified() {
        Some("unspecified")
    } else if let Some(v4) = v6.to_ipv4_mapped() {
        refused_v4(v4).map(|_| "IPv4-mapped non-public")
    } else if s[..6] == [0, 0, 0, 0, 0, 0] {
        // IPv4-compatible (::a.b.c.d), deprecated; never a public target.
        Some("IPv4-compatible")
    } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        refused_v4(embedded(s[6], s[7])).map(|_| "NAT64 (64:ff9b::/96) of a non-public IPv4")
    } else if s[..3] == [0x64, 0xff9b, 1] {
        Some("local-use NAT64 (64:ff9b:1::/48)")
    } else if s[0] == 0x2002 {
        refused_v4(embedded(s[1], s[2])).map(|_| "6to4 (2002::/16) of a non-public IPv4")
    } else if s[..2] == [0x2001, 0] {
        Some("Teredo (2001::/32)")
    } else if s[0] == 0x2001 && s[1] & 0xfe00 == 0 {
        Some("IETF protocol assignment (2001::/23)")
    } else if s[..2] == [0x2001, 0x0db8] || (s[0] == 0x3fff && s[1] & 0xf000 == 0) {
        Some("documentation (2001:db8::/32, 3fff::/20)")
    } else if s[0] == 0x5f00 {
        Some("SRv6 SIDs (5f00::/16)")
    } else if v6.is_multicast() {
        Some("multicast")
    } else if s[0] & 0xfe00 == 0xfc00 {
        Some("private (unique local fc00::/7)")
    } else if s[0] & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if s[0] & 0xffc0 == 0xfec0 {
        Some("site-local")
    } else if s[..4] == [0x100, 0, 0, 0] || s[..4] == [0x100, 0, 0, 1] {
        Some("discard-only or dummy (100::/64, 100:0:0:1::/64)")
    } else if s[0] & 0xe000 != 0x2000 {
        Some("reserved (outside global unicast 2000::/3)")
    } else {
        None
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if o[0] == 0 {
        Some("unspecified (0.0.0.0/8)")
    } else if ip.is_broadcast() {
        Some("broadcast")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
        Some("CGNAT (100.64.0.0/10)")
    } else if o[..3] == [192, 0, 0] {
        Some("IETF protocol assignment (192.0.0.0/24)")
    } else if o[..3] == [192, 0, 2] || o[..3] == [198, 51, 100] || o[..3] == [203, 0, 113] {
        Some("documentation (TEST-NET)")
    } else if o[0] == 198 && (o[1] & 0xfe) == 18 {
        Some("benchmarking (198.18.0.0/15)")
    } else if o[..3] == [192, 88, 99] {
        Some("6to4 relay anycast (192.88.99.0/24)")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if o[0] >= 240 {
        Some("reserved (240.0.0.0/4)")
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
    /// Names whose addresses pass (the daemon's debug-build test hook); an IP literal or
    /// any other name is judged as usual.
    test_only_hosts: Vec<String>,
    /// Names an operator chose (an installed server's own host): their addresses pass
    /// whatever their class, as the server itself is reached ([`Guard::trusting`]).
    trusted: Vec<String>,
}

impl Guard {
    /// The system resolver and no exceptions.
    pub fn system() -> Guard {
        Guard {
            resolve: Box::new(|host, port| Ok((host, port).to_socket_addrs()?.collect())),
            test_only_allowed: Vec::new(),
            test_only_hosts: Vec::new(),
            trusted: Vec::new(),
        }
    }

    /// This guard, letting `host` through whatever its addresses: for the URLs an installed
    /// server's metadata names on the server's own host (the operator chose that host when
    /// installing it; any other host is judged as usual).
    pub fn trusting(mut self, host: &str) -> Guard {
        self.trusted.push(host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase());
        self
    }

    /// [`Guard::system`] letting the host of `url` through: a URL an operator set in
    /// hal0.toml (a catalogue or package registry mirror on the LAN or on this box). Any
    /// other host, and anything a redirect leads to, is judged as usual.
    pub fn trusting_url(url: &str) -> Guard {
        match reqwest::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_string)) {
            Some(h) => Guard::system().trusting(&h),
            None => Guard::system(),
        }
    }

    /// The guard of the daemon's own fetches: [`Guard::system`]. In a debug build (the test
    /// suite's), `HAL0_TEST_ONLY_FETCH_NAMES` (`name=ip,…`) gives a name table whose
    /// addresses pass, so a test's loopback server can stand in for a public one; release
    /// builds (the package) never read it.
    pub fn for_daemon() -> Guard {
        #[cfg(debug_assertions)]
        if let Ok(spec) = std::env::var("HAL0_TEST_ONLY_FETCH_NAMES") {
            let names: Vec<(String, IpAddr)> = spec
                .split(',')
                .filter_map(|p| p.split_once('='))
                .filter_map(|(n, ip)| Some((n.trim().to_string(), ip.trim().parse().ok()?)))
                .collect();
            let hosts = names.iter().map(|(n, _)| n.clone()).collect();
            return Guard {
                resolve: Box::new(move |host, port| {
                    let hits: Vec<_> =
                        names.iter().filter(|(n, _)| n == host).map(|(_, ip)| SocketAddr::new(*ip, port)).collect();
                    if hits.is_empty() { Ok((host, port).to_socket_addrs()?.collect()) } else { Ok(hits) }
                }),
                test_only_allowed: Vec::new(),
                test_only_hosts: hosts,
                trusted: Vec::new(),
            };
        }
        Guard::system()
    }

    /// A CA file the daemon's own fetches trust besides the system's: in a debug build only,
    /// `HAL0_TEST_ONLY_FETCH_CA` (see [`Guard::for_daemon`]).
    pub fn daemon_ca_file() -> Option<std::path::PathBuf> {
        #[cfg(debug_assertions)]
        if let Some(p) = std::env::var_os("HAL0_TEST_ONLY_FETCH_CA") {
            return Some(p.into());
        }
        None
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
            test_only_hosts: Vec::new(),
            trusted: Vec::new(),
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
            if self.test_only_allowed.contains(&a.ip())
                || self.test_only_hosts.iter().any(|h| h == host)
                || self.trusted.iter().any(|h| h.eq_ignore_ascii_case(host))
            {
                continue;
            }
            if let Some(class) = refused_class(a.ip()) {
                return Err(Error::invalid(
                    "mcp.ssrf_refused",
                    format!(
                        "refusing to fetch from `{host}`: it resolves to {}, a {class} address; \
                         hal0 fetches from public addresses only",
                        a.ip()
                    ),
                ));
            }
        }
        Ok(addrs)
    }
}

/// Resolve `host` with the system resolver and refuse every address [`refused_class`]
/// names (loopback, private, link-local, CGNAT, documentation, benchmarking, multicast,
/// reserved, … and IPv6 forms carrying such an IPv4 address).
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

/// An HTTP client for `url` behind the guard: the host resolved and checked now, the
/// connection made only to the checked addresses (the certificate still checked for the
/// name), no proxy, no redirects followed. For requests other than a plain GET (a token
/// endpoint's POST); [`fetch`] is the GET that follows redirects hop by hop.
pub fn pinned_client(guard: &Guard, url: &str, limits: &FetchLimits) -> Result<(reqwest::Url, reqwest::Client)> {
    let u = reqwest::Url::parse(url)
        .map_err(|e| Error::invalid("mcp.invalid_spec", format!("`{url}` is not a valid URL: {e}")))?;
    let (host, port) = target(&u)?;
    let addrs = guard.check(&host, port)?;
    let mut b = crate::base::outbound::builder(limits.ca_file.as_deref())?
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(limits.timeout)
        .connect_timeout(limits.connect_timeout);
    if host.parse::<IpAddr>().is_err() {
        b = b.resolve_to_addrs(&host, &addrs);
    }
    let client = b.build().map_err(|e| Error::internal(format!("http client: {e}")))?;
    Ok((u, client))
}

/// The body of `resp`, at most `max` bytes (`Err` naming `url` beyond).
pub async fn read_capped(mut resp: reqwest::Response, url: &str, max: usize) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| fetch_failed(format!("reading {url}: {e}")))? {
        if body.len() + chunk.len() > max {
            return Err(fetch_failed(format!("{url} is larger than {max} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn fetch_failed(msg: String) -> Error {
    Error::new("mcp.manifest_fetch_failed", Kind::BadGateway, msg)
}

/// How [`fetch`] words a 404 answer.
const NOT_FOUND: &str = " answered 404 Not Found";

/// Whether `e` is [`fetch`]'s refusal of a URL the server answered 404 for.
pub fn is_not_found(e: &Error) -> bool {
    e.code == "mcp.manifest_fetch_failed" && e.message.ends_with(NOT_FOUND)
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
        let mut b = crate::base::outbound::builder(limits.ca_file.as_deref())?
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(limits.timeout)
            .connect_timeout(limits.connect_timeout);
        if host.parse::<IpAddr>().is_err() {
            b = b.resolve_to_addrs(&host, &addrs);
        }
        let client = b.build().map_err(|e| Error::internal(format!("http client: {e}")))?;
        let mut resp = client.get(url.clone()).header("accept", "application/json").send().await.map_err(|e| {
            let text = crate::base::outbound::chain(&e);
            crate::base::outbound::tls_error(url.as_str(), &text)
                .unwrap_or_else(|| fetch_failed(format!("cannot fetch {url}: {}", crate::base::redact::redact(&text))))
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
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(fetch_failed(format!("{url}{NOT_FOUND}")));
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

    /// The verdict for each address (nothing is connected to).
    #[test]
    fn classes() {
        let rows: &[(&str, Option<&str>)] = &[
            // IPv4 special-purpose blocks.
            ("0.0.0.0", Some("unspecified (0.0.0.0/8)")),
            ("0.1.2.3", Some("unspecified (0.0.0.0/8)")),
            ("10.1.2.3", Some("private")),
            ("100.64.0.1", Some("CGNAT (100.64.0.0/10)")),
            ("100.127.255.255", Some("CGNAT (100.64.0.0/10)")),
            ("127.0.0.1", Some("loopback")),
            ("127.255.0.9", Some("loopback")),
            ("169.254.169.254", Some("link-local")),
            ("172.16.0.1", Some("private")),
            ("172.31.255.254", Some("private")),
            ("192.0.0.1", Some("IETF protocol assignment (192.0.0.0/24)")),
            ("192.0.0.170", Some("IETF protocol assignment (192.0.0.0/24)")),
            ("192.0.2.10", Some("documentation (TEST-NET)")),
            ("192.88.99.1", Some("6to4 relay anycast (192.88.99.0/24)")),
            ("192.168.1.1", Some("private")),
            ("198.18.0.1", Some("benchmarking (198.18.0.0/15)")),
            ("198.19.255.255", Some("benchmarking (198.18.0.0/15)")),
            ("198.51.100.7", Some("documentation (TEST-NET)")),
            ("203.0.113.200", Some("documentation (TEST-NET)")),
            ("224.0.0.1", Some("multicast")),
            ("239.255.255.250", Some("multicast")),
            ("240.0.0.1", Some("reserved (240.0.0.0/4)")),
            ("254.1.2.3", Some("reserved (240.0.0.0/4)")),
            ("255.255.255.255", Some("broadcast")),
            // IPv4 public, including the neighbours of the blocks above.
            ("93.184.216.34", None),
            ("1.1.1.1", None),
            ("100.63.255.255", None),
            ("100.128.0.1", None),
            ("172.32.0.1", None),
            ("192.0.1.1", None),
            ("192.0.3.1", None),
            ("198.17.255.255", None),
            ("198.20.0.1", None),
            ("198.51.101.1", None),
            ("203.0.112.1", None),
            ("223.255.255.255", None),
            // IPv6.
            ("::", Some("unspecified")),
            ("::1", Some("loopback")),
            ("::ffff:127.0.0.1", Some("IPv4-mapped non-public")),
            ("::ffff:10.0.0.1", Some("IPv4-mapped non-public")),
            ("::ffff:198.18.0.1", Some("IPv4-mapped non-public")),
            ("::ffff:93.184.216.34", None),
            ("::10.0.0.1", Some("IPv4-compatible")),
            ("::93.184.216.34", Some("IPv4-compatible")),
            ("64:ff9b::7f00:1", Some("NAT64 (64:ff9b::/96) of a non-public IPv4")),
            ("64:ff9b::a9fe:a9fe", Some("NAT64 (64:ff9b::/96) of a non-public IPv4")),
            ("64:ff9b::c0a8:101", Some("NAT64 (64:ff9b::/96) of a non-public IPv4")),
            ("64:ff9b::5db8:d822", None),
            ("64:ff9b:1::5db8:d822", Some("local-use NAT64 (64:ff9b:1::/48)")),
            ("64:ff9b:1:ffff::1", Some("local-use NAT64 (64:ff9b:1::/48)")),
            ("2002:7f00:1::1", Some("6to4 (2002::/16) of a non-public IPv4")),
            ("2002:a00:1::", Some("6to4 (2002::/16) of a non-public IPv4")),
            ("2002:c000:201::1", Some("6to4 (2002::/16) of a non-public IPv4")),
            ("2002:5db8:d822::1", None),
            ("2001::1", Some("Teredo (2001::/32)")),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Some("Teredo (2001::/32)")),
            ("2001:2::1", Some("IETF protocol assignment (2001::/23)")),
            ("2001:1ff:ffff::1", Some("IETF protocol assignment (2001::/23)")),
            ("2001:db8::1", Some("documentation (2001:db8::/32, 3fff::/20)")),
            ("2001:db8:ffff::1", Some("documentation (2001:db8::/32, 3fff::/20)")),
            ("3fff::1", Some("documentation (2001:db8::/32, 3fff::/20)")),
            ("3fff:fff::1", Some("documentation (2001:db8::/32, 3fff::/20)")),
            ("3fff:1000::1", None),
            ("5f00::1", Some("SRv6 SIDs (5f00::/16)")),
            ("fc00::1", Some("private (unique local fc00::/7)")),
            ("fd12:3456::1", Some("private (unique local fc00::/7)")),
            ("fe80::1", Some("link-local")),
            ("febf::1", Some("link-local")),
            ("fec0::1", Some("site-local")),
            ("ff02::1", Some("multicast")),
            ("ff0e::1", Some("multicast")),
            ("100::1", Some("discard-only or dummy (100::/64, 100:0:0:1::/64)")),
            ("100::ffff:ffff:ffff:ffff", Some("discard-only or dummy (100::/64, 100:0:0:1::/64)")),
            ("100:0:0:1::1", Some("discard-only or dummy (100::/64, 100:0:0:1::/64)")),
            ("100:0:0:2::1", Some("reserved (outside global unicast 2000::/3)")),
            ("4000::1", Some("reserved (outside global unicast 2000::/3)")),
            ("e000::1", Some("reserved (outside global unicast 2000::/3)")),
            ("1::1", Some("reserved (outside global unicast 2000::/3)")),
            // IPv6 public.
            ("2606:4700::1111", None),
            ("2a00:1450:4001::200e", None),
            ("2001:200::1", None),
            ("2001:4860:4860::8888", None),
            ("3ffe::1", None),
        ];
        let mut wrong = Vec::new();
        for (ip, want) in rows {
            let got = refused_class(ip.parse().unwrap());
            if got != *want {
                wrong.push(format!("{ip}: {got:?}, want {want:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
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
            ("198.18.0.1", "benchmarking"),
            ("64:ff9b::a00:1", "NAT64"),
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
