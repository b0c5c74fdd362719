//! Every HTTP client hal0 builds for a connection it makes to someone else (an installed MCP
//! server, a manifest or catalogue URL): TLS by rustls, trusting the system's store, the
//! webpki roots and a record's own `ca_file` (a private CA); TCP_NODELAY; redirects only
//! within the origin the request started on; and certificate failures turned into an error
//! that says which check failed and what to do.

use crate::base::error::{Error, Kind, Result};
use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

/// Redirects an outgoing MCP or manifest request follows at most.
pub const MAX_REDIRECTS: usize = 10;

/// The webpki (Mozilla) roots, parsed once; added to whatever the system store holds, so a
/// box without `ca-certificates` still reaches public servers.
static WEBPKI: LazyLock<Vec<reqwest::Certificate>> = LazyLock::new(|| {
    webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .filter_map(|c| reqwest::Certificate::from_der(c.as_ref()).ok())
        .collect()
});

/// The certificates of a PEM file (a private CA, or a chain of them).
pub fn ca_certs(path: &Path) -> Result<Vec<reqwest::Certificate>> {
    let bad = |why: String| {
        Error::invalid(
            "mcp.tls_ca_invalid",
            format!("ca_file {}: {why} (give a PEM file holding the CA certificate)", path.display()),
        )
    };
    let pem = std::fs::read(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| bad(format!("not a PEM certificate: {e}")))?;
    if certs.is_empty() {
        return Err(bad("holds no certificate".into()));
    }
    Ok(certs)
}

/// A client builder with hal0's TLS trust (plus `ca_file`'s CAs), TCP_NODELAY and
/// same-origin redirects. Callers add their timeouts and pooling.
pub fn builder(ca_file: Option<&Path>) -> Result<reqwest::ClientBuilder> {
    let mut roots: Vec<reqwest::Certificate> = WEBPKI.clone();
    if let Some(p) = ca_file {
        roots.extend(ca_certs(p)?);
    }
    Ok(reqwest::Client::builder()
        .tls_certs_merge(roots)
        .tcp_nodelay(true)
        .redirect(same_origin_redirects())
        .connect_timeout(Duration::from_secs(10)))
}

/// Build `b`, naming the failure.
pub fn build(b: reqwest::ClientBuilder) -> Result<reqwest::Client> {
    b.build().map_err(|e| Error::internal(format!("cannot build the HTTP client: {e}")))
}

/// Follow 307/308 redirects within the starting origin only (a 301/302/303 would turn a
/// POST into a GET and lose the message; another origin would get the credentials).
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same = attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
        if keeps_body && same && attempt.previous().len() <= MAX_REDIRECTS { attempt.follow() } else { attempt.stop() }
    })
}

/// Which certificate check failed, from an error's text and its sources.
fn certificate_problem(text: &str) -> Option<&'static str> {
    let t = text.to_ascii_lowercase();
    if !(t.contains("certificate") || t.contains("tls") || t.contains("handshake")) {
        return None;
    }
    Some(if t.contains("notvalidforname") || t.contains("not valid for name") {
        "its certificate is not valid for this host name"
    } else if t.contains("expired") {
        "its certificate has expired"
    } else if t.contains("notvalidyet") || t.contains("not valid yet") {
        "its certificate is not valid yet (check this box's clock)"
    } else if t.contains("unknownissuer") || t.contains("unknown issuer") || t.contains("issuer") {
        "its certificate is not signed by a CA this box trusts (for a private CA, set ca_file in the record)"
    } else if t.contains("revoked") {
        "its certificate was revoked"
    } else if t.contains("certificate") {
        "its certificate was refused"
    } else {
        return None;
    })
}

/// The whole text of an error with every source, for classification.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}

/// `Some(error)` when `text` (an error chain) is a refused certificate: code
/// `mcp.tls_certificate_invalid`, naming `url` and the check that failed.
pub fn tls_error(url: &str, text: &str) -> Option<Error> {
    certificate_problem(text).map(|why| {
        Error::new(
            "mcp.tls_certificate_invalid",
            Kind::BadGateway,
            format!("{url} was refused: {why}; hal0 did not send anything to it"),
        )
    })
}

/// Why a request to `url` never got an answer, in words a person acts on, from its error
/// chain (`text`): the name did not resolve, the connection was refused or timed out, the
/// network is unreachable, or the certificate was refused. `None` when the chain names none
/// of these (the caller keeps its own words).
pub fn in_words(url: &str, text: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok();
    let host = parsed.as_ref().and_then(|u| u.host_str()).unwrap_or(url).to_string();
    let port = parsed.as_ref().and_then(|u| u.port_or_known_default()).map(|p| format!(":{p}")).unwrap_or_default();
    let t = text.to_ascii_lowercase();
    if let Some(why) = certificate_problem(text) {
        return Some(format!("TLS: {why}"));
    }
    Some(
        if t.contains("dns error") || t.contains("failed to lookup address") || t.contains("name or service not known")
        {
            format!("DNS lookup failed for {host} (is the host name right?)")
        } else if t.contains("connection refused") {
            format!("connection refused by {host}{port} (is the server running? is the port right?)")
        } else if t.contains("timed out") || t.contains("timeout") {
            format!("no answer from {host}{port} in time (a firewall, or the wrong address?)")
        } else if t.contains("network is unreachable") || t.contains("no route to host") {
            format!("no route to {host} from this box (network unreachable)")
        } else if t.contains("connection reset") || t.contains("connection closed before message completed") {
            format!("{host}{port} closed the connection (is it an http server? http vs https?)")
        } else {
            return None;
        },
    )
}

/// After a request to `url` failed without saying why (rmcp keeps only an error's text):
/// one bare `HEAD` (no credentials, no body) with the same trust; the error chain of its
/// failure ([`tls_error`] and [`in_words`] read it), or `None` when it is answered.
pub async fn head_failure(url: &str, ca_file: Option<&Path>) -> Option<String> {
    let client = builder(ca_file).ok()?.timeout(Duration::from_secs(5)).build().ok()?;
    client.head(url).send().await.err().map(|e| chain(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unanswered_requests_are_named_in_words() {
        let cases = [
            (
                "client error (Connect): dns error: failed to lookup address information",
                "DNS lookup failed for x.invalid",
            ),
            ("tcp connect error: Connection refused (os error 111)", "connection refused by x.invalid:8443"),
            ("operation timed out", "no answer from x.invalid:8443 in time"),
            ("Network is unreachable (os error 101)", "no route to x.invalid"),
            ("invalid peer certificate: NotValidForName", "TLS: its certificate is not valid for this host name"),
        ];
        for (text, want) in cases {
            let got = in_words("https://x.invalid:8443/mcp", text).unwrap();
            assert!(got.starts_with(want), "{text}: {got}");
        }
        assert_eq!(
            in_words("http://h/mcp", "connection refused").unwrap(),
            "connection refused by h:80 (is the server running? is the port right?)"
        );
        assert!(in_words("http://h/mcp", "expected value at line 1").is_none());
    }

    #[test]
    fn certificate_failures_are_named() {
        let cases = [
            ("invalid peer certificate: NotValidForName", "not valid for this host name"),
            ("error sending request: invalid peer certificate: Expired", "has expired"),
            ("invalid peer certificate: UnknownIssuer", "ca_file"),
            ("client error (Connect): invalid peer certificate: NotValidYet", "clock"),
        ];
        for (text, want) in cases {
            let e = tls_error("https://x.example/mcp", text).unwrap();
            assert_eq!(e.code, "mcp.tls_certificate_invalid");
            assert!(e.message.contains(want) && e.message.contains("https://x.example/mcp"), "{}", e.message);
        }
        assert!(tls_error("u", "connection refused").is_none());
    }

    #[test]
    fn a_bad_ca_file_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ca.pem");
        assert_eq!(ca_certs(&p).unwrap_err().code, "mcp.tls_ca_invalid");
        std::fs::write(&p, "not a certificate").unwrap();
        let e = ca_certs(&p).unwrap_err();
        assert!(e.message.contains("ca.pem"), "{}", e.message);
        assert!(builder(Some(&p)).is_err());
        assert!(builder(None).and_then(build).is_ok());
    }
}
