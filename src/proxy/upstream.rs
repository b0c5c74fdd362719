//! hal0 as an MCP client of an installed server: the headers the server gets (its `[env]`
//! values and `[secrets]` resolved from api.env — never hal0's own credentials), one
//! connection with clear errors (used by `hal0 mcp test`), and the pool of live connections
//! the proxy shares between its consumers (one per server, replaced when the record's URL
//! or headers change, reconnected once when it broke).

use crate::base::error::{Error, Kind, Result};
use crate::registry::record::{Record, Transport};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long connecting (the MCP handshake) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub type Client = rmcp::service::RunningService<rmcp::RoleClient, super::inbound::Relay>;

/// The headers the server gets, and the api.env keys the record names that are not set.
/// A server with an `[oauth]` table gets its account's access token as `Authorization`
/// (`mcp.account_required` / `mcp.reauth_required` when there is none to send).
pub fn headers(record: &Record, paths: &crate::base::paths::Paths) -> Result<(HashMap<String, String>, Vec<String>)> {
    let mut out: HashMap<String, String> = record.env.clone().into_iter().collect();
    let mut missing = Vec::new();
    let api_env = paths.api_env();
    for (header, key) in &record.secrets {
        match crate::base::envfile::get_var(&api_env, key)? {
            Some(v) => {
                out.insert(header.clone(), v);
            }
            None => missing.push(key.clone()),
        }
    }
    if let Some(o) = &record.oauth {
        out.retain(|k, _| !k.eq_ignore_ascii_case("authorization"));
        // A delegated server's calls go as the consumer's own account; with no consumer
        // named (a probe from the shell) there is no account to send.
        let holder = match (o.delegated(), &o.holder) {
            (true, None) => return Err(delegated_needs_holder(&record.id)),
            (_, h) => h.as_deref(),
        };
        let token = crate::registry::oauth::account::bearer(paths, &record.id, holder)?;
        out.insert(OAUTH_HEADER.into(), format!("Bearer {token}"));
    }
    Ok((out, missing))
}

/// `mcp.account_required` for a delegated server reached with no consumer named.
pub fn delegated_needs_holder(id: &str) -> Error {
    Error::new(
        "mcp.account_required",
        Kind::Conflict,
        format!(
            "`{id}` calls go upstream as each consumer's own OAuth account: reach it through the proxy with a \
             consumer key, or name the consumer (hal0 mcp connect {id} --for NAME)"
        ),
    )
}

/// [`headers`] for the proxy's cache: a server whose OAuth account is missing or must be
/// connected again gets its other headers and that error (each call answers it, while a
/// consumer's session still opens).
pub fn headers_or_account_error(
    record: &Record,
    paths: &crate::base::paths::Paths,
) -> Result<(HashMap<String, String>, Option<Error>)> {
    match headers(record, paths) {
        Ok((h, _)) => Ok((h, None)),
        Err(e) if record.oauth.is_some() && matches!(e.code, "mcp.account_required" | "mcp.reauth_required") => {
            let mut plain = record.clone();
            plain.oauth = None;
            let (mut h, _) = headers(&plain, paths)?;
            h.retain(|k, _| !k.eq_ignore_ascii_case("authorization"));
            Ok((h, Some(e)))
        }
        Err(e) => Err(e),
    }
}

/// What a connect error says when the server refused the record's own credentials (or
/// wants some and got none).
const CREDENTIALS_REFUSED: &str = "refused our credentials (check the record's [secrets] and api.env)";

/// Whether `e` (from [`connect`]) is the server refusing the record's credentials.
pub fn credentials_refused(e: &Error) -> bool {
    e.message.contains(CREDENTIALS_REFUSED) || token_refused(e)
}

/// What a connect error says when the server refused an OAuth account's token.
const TOKEN_REFUSED: &str = "refused the OAuth account's token";

/// Whether `e` (from [`connect`]) is the server refusing an OAuth account's token.
pub fn token_refused(e: &Error) -> bool {
    e.message.contains(TOKEN_REFUSED)
}

/// The header an OAuth account's token goes in.
pub const OAUTH_HEADER: &str = "Authorization";

/// What to mask of the values among `hdrs` that came from the record's `[secrets]` or its
/// OAuth account (wherever they would go back out): each value and its parts worth masking
/// alone, like the token of `Bearer <token>` ([`crate::registry::mask::needles`]; very short ones
/// are left alone, they would mask ordinary text).
pub fn secrets_in(record: &Record, hdrs: &HashMap<String, String>) -> Vec<String> {
    let oauth = record.oauth.is_some().then_some(OAUTH_HEADER);
    crate::registry::mask::needles(
        record.secrets.keys().map(String::as_str).chain(oauth).filter_map(|h| hdrs.get(h)).map(String::as_str),
    )
}

/// A failure talking to the upstream server (502).
pub fn failed(code: &'static str, what: String) -> Error {
    Error::new(code, Kind::BadGateway, what)
}

fn is_loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost") || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The record's URL, checked: http(s) with a host, and credential headers only over https
/// or to loopback (unless the record sets `allow_insecure_http`).
pub fn target(record: &Record, hdrs: &HashMap<String, String>) -> Result<String> {
    if record.transport == Transport::Stdio {
        return Err(Error::new(
            "mcp.invalid_url",
            Kind::Invalid,
            format!("`{}` is a stdio server: it has a command, not a URL", record.id),
        ));
    }
    let url =
        record.url.clone().ok_or_else(|| Error::invalid("mcp.invalid_url", format!("`{}` has no url", record.id)))?;
    let host = crate::config::url_host(&url);
    if !(url.starts_with("http://") || url.starts_with("https://")) || host.is_none() {
        return Err(Error::invalid(
            "mcp.invalid_url",
            format!("`{url}` is not an http:// or https:// URL with a host"),
        ));
    }
    let plain = url.starts_with("http://") && !host.as_deref().is_some_and(is_loopback_host);
    if plain && !hdrs.is_empty() && !record.allow_insecure_http {
        return Err(Error::conflict(
            "mcp.insecure_credentials",
            format!(
                "`{}` would send its headers ({}) over plain http to a non-loopback host; use https, or set \
                 allow_insecure_http = true in its record if this network is trusted",
                record.id,
                hdrs.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    Ok(url)
}

/// A live MCP client of one installed server, and the child process behind it for a stdio
/// server (killed when this is dropped).
pub struct Upstream {
    pub client: Client,
    pub child: Option<super::supervisor::Child>,
    /// The wire path's way to this upstream session (streamable HTTP only).
    pub wire: Option<Arc<super::wire::Wire>>,
}

impl Upstream {
    /// The connection's client handler: where the server's notifications and requests go.
    pub fn relay(&self) -> &super::inbound::Relay {
        self.client.service()
    }
}

/// Where a stdio server's child runs: `<state>/mcp-run/<id>`.
pub fn work_dir(paths: &crate::base::paths::Paths, id: &str) -> std::path::PathBuf {
    paths.state_dir.join("mcp-run").join(id)
}

/// The HTTP client of streamable-HTTP upstreams that trust `ca_file` (besides the system
/// store and the webpki roots): hal0's TLS trust, TCP_NODELAY, same-origin 307/308 redirects
/// and kept-alive connections, shared by every upstream session, so a call reuses an open
/// connection instead of a TCP (and TLS) handshake each time. One client per CA file and
/// its content's stamp.
///
/// Keep-alive was off until the cause of a ~43 ms stall per call against a FastMCP test
/// server was found: that server's socket lacked TCP_NODELAY (its fixture made the socket
/// with proto 0, and asyncio sets NODELAY only for IPPROTO_TCP sockets), so its Nagle held a
/// response's body until this side's delayed ACK. uvicorn's own bind sets it; a server that
/// does not will still be slow on a kept-alive connection.
/// An rmcp error's text for people: without the transport's Rust type names, redacted.
fn plain(text: &str) -> String {
    let mut t = text.to_string();
    // `Transport [rmcp::transport::worker::WorkerTransport<…>] error: ` says nothing to a person.
    while let Some(at) = t.find(" [rmcp::") {
        let mut depth = 0usize;
        let end = t[at + 1..].char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(at + 1 + i + 1);
                    }
                }
                _ => {}
            }
            None
        });
        let Some(end) = end else { break };
        t.replace_range(at..end, "");
    }
    crate::base::redact::redact(&t.replace("Send message error Transport error: ", "").replace("Client error: ", ""))
        .into_owned()
}

fn http_client(ca_file: Option<&Path>) -> Result<reqwest::Client> {
    use std::sync::LazyLock;
    type Key = (Option<std::path::PathBuf>, Option<std::time::SystemTime>);
    static CLIENTS: LazyLock<Mutex<HashMap<Key, reqwest::Client>>> = LazyLock::new(Default::default);
    let stamp = ca_file.and_then(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    let key = (ca_file.map(Path::to_path_buf), stamp);
    if let Some(c) = CLIENTS.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(c.clone());
    }
    let c = crate::base::outbound::build(
        crate::base::outbound::builder(ca_file)?.pool_idle_timeout(Duration::from_secs(60)),
    )?;
    let mut m = CLIENTS.lock().unwrap_or_else(|p| p.into_inner());
    m.retain(|(p, _), _| p.as_deref() != ca_file);
    m.insert(key, c.clone());
    Ok(c)
}

/// Connect and initialize (a stdio server is started first); streamable HTTP goes through
/// [`http_client`]. `code` names the failure (`mcp.probe_failed`, `mcp.upstream_failed`).
pub async fn connect(
    record: &Record,
    paths: &crate::base::paths::Paths,
    code: &'static str,
    relay: super::inbound::Relay,
) -> Result<(Upstream, Vec<String>)> {
    let (hdrs, missing) = headers(record, paths)?;
    if record.transport == Transport::Stdio {
        let (client, child) =
            super::supervisor::start(record, &hdrs, &work_dir(paths, &record.id), code, relay).await?;
        return Ok((Upstream { client, child: Some(child), wire: None }, missing));
    }
    let url = target(record, &hdrs)?;
    let mut tapped = None;
    let serving = if record.transport == Transport::Sse {
        // Legacy HTTP+SSE. Authorization as the streamable client sends it: a bare token
        // gets the Bearer scheme.
        let mut hdrs = hdrs.clone();
        for (k, v) in hdrs.iter_mut() {
            if k.eq_ignore_ascii_case("authorization") && !v.trim().contains(' ') {
                *v = format!("Bearer {}", v.trim());
            }
        }
        let transport = super::sse_client::connect(&url, &hdrs, code, record.ca_file.as_deref()).await?;
        tokio::time::timeout(CONNECT_TIMEOUT, relay.serve_over(transport)).await
    } else {
        let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.clone());
        let mut custom = HashMap::new();
        for (k, v) in &hdrs {
            if k.eq_ignore_ascii_case("authorization") {
                cfg = cfg.auth_header(v.strip_prefix("Bearer ").unwrap_or(v).to_string());
                continue;
            }
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| Error::invalid("mcp.invalid_header", format!("`{k}` is not a valid header name")))?;
            let value = reqwest::header::HeaderValue::from_str(v).map_err(|_| {
                Error::invalid("mcp.invalid_header", format!("the value of `{k}` is not a valid header value"))
            })?;
            custom.insert(name, value);
        }
        let cfg = cfg.custom_headers(custom);
        let http = http_client(record.ca_file.as_deref())?;
        let tap = super::tap::Tapped { http, session: Default::default() };
        tapped = Some(tap.clone());
        let transport = StreamableHttpClientTransport::with_client(tap, cfg);
        tokio::time::timeout(CONNECT_TIMEOUT, relay.serve_over(transport)).await
    };
    let client = match serving {
        Err(_) => {
            return Err(failed(
                code,
                format!("{url} did not finish the MCP handshake within {} s", CONNECT_TIMEOUT.as_secs()),
            ));
        }
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            let text = crate::base::outbound::chain(&e);
            if let Some(tls) = crate::base::outbound::tls_error(&url, &text) {
                return Err(tls);
            }
            // rmcp keeps only the text of the HTTP error, not its cause: for https, or a
            // request that got no answer, one bare HEAD learns it (the certificate, DNS,
            // refused, a timeout).
            let low = text.to_lowercase();
            let unanswered = low.contains("sending request") || low.contains("connect");
            let ca = record.ca_file.as_deref();
            let cause = match url.starts_with("https://") || unanswered {
                true => crate::base::outbound::head_failure(&url, ca).await,
                false => None,
            };
            if let Some(tls) = cause.as_deref().and_then(|c| crate::base::outbound::tls_error(&url, c)) {
                return Err(tls);
            }
            if text.contains("401")
                || text.contains("403")
                || low.contains("unauthorized")
                || low.contains("auth required")
            {
                let why = if record.oauth.is_some() { TOKEN_REFUSED } else { CREDENTIALS_REFUSED };
                return Err(failed(code, format!("{url} {why}: {}", plain(&text))));
            }
            if unanswered && let Some(why) = cause.as_deref().and_then(|c| crate::base::outbound::in_words(&url, c)) {
                return Err(failed(code, format!("{url} does not answer: {why}")));
            }
            return Err(failed(code, format!("{url} did not answer like an MCP server: {}", plain(&text))));
        }
    };
    let wire = tapped.and_then(|t| {
        use rmcp::Service;
        let version = client.peer().peer_info()?.protocol_version.clone();
        super::wire::Wire::new(&url, t.http, &hdrs, t.session, &version, &client.service().get_info()).map(Arc::new)
    });
    Ok((Upstream { client, child: None, wire }, missing))
}

struct Conn {
    fingerprint: String,
    up: Arc<Upstream>,
}

/// After a failed connect, calls within this long get the same error at once instead of
/// each trying again (a crashing stdio child is not restarted on every call).
pub const RETRY_AFTER: Duration = Duration::from_secs(3);

/// Live upstream connections, one per server id, shared by every consumer of the proxy.
#[derive(Clone, Default)]
pub struct Pool {
    conns: Arc<Mutex<HashMap<String, Conn>>>,
    /// One lock per server id, so a burst of first calls opens one connection and a slow
    /// start of one server never holds up another.
    connecting: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
    /// The last failed connect per server id.
    failed: Arc<Mutex<HashMap<String, Failure>>>,
}

/// A failed connect: the fingerprint it was for, when, and the error.
type Failure = (String, std::time::Instant, Error);

/// What identifies a connection: the URL or command line and every header or variable sent
/// (a change means a new connection, and a new child for a stdio server).
pub fn fingerprint(record: &Record, hdrs: &HashMap<String, String>) -> String {
    let mut parts: Vec<String> = hdrs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.sort();
    let target = match &record.url {
        Some(u) if record.transport != Transport::Stdio => u.clone(),
        _ => format!("{:?} {:?}", record.command, record.args),
    };
    crate::base::token::sha256_hex(&format!("{target}\n{}", parts.join("\n")))
}

impl Pool {
    fn cached(&self, id: &str, fp: &str) -> Option<Arc<Upstream>> {
        let m = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        m.get(id).filter(|c| c.fingerprint == fp && !c.up.client.is_closed()).map(|c| c.up.clone())
    }

    /// The pooled connection of `id`, if one is open.
    pub fn current(&self, id: &str) -> Option<Arc<Upstream>> {
        let m = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        m.get(id).filter(|c| !c.up.client.is_closed()).map(|c| c.up.clone())
    }

    /// A live client for `record` whose headers have fingerprint `fp`: the pooled one, or a
    /// new connection (a stdio server's child started).
    pub async fn client(&self, record: &Record, fp: &str, paths: &crate::base::paths::Paths) -> Result<Arc<Upstream>> {
        if let Some(c) = self.cached(&record.id, fp) {
            return Ok(c);
        }
        let gate =
            self.connecting.lock().unwrap_or_else(|p| p.into_inner()).entry(record.id.clone()).or_default().clone();
        let _one = gate.lock().await;
        if let Some(c) = self.cached(&record.id, fp) {
            return Ok(c);
        }
        self.recent_failure(&record.id, fp)?;
        let up = match connect(record, paths, "mcp.upstream_failed", super::inbound::Relay::default()).await {
            Ok((up, _)) => Arc::new(up),
            Err(e) => {
                self.note_failure(&record.id, fp, &e);
                return Err(e);
            }
        };
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).remove(&record.id);
        let old = self
            .conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(record.id.clone(), Conn { fingerprint: fp.to_string(), up: up.clone() });
        drop(old);
        Ok(up)
    }

    /// `Err` (the last error, with its age) when connecting to `id` with fingerprint `fp`
    /// failed less than [`RETRY_AFTER`] ago.
    pub fn recent_failure(&self, id: &str, fp: &str) -> Result<()> {
        if let Some((f, at, e)) = self.failed.lock().unwrap_or_else(|p| p.into_inner()).get(id)
            && f == fp
            && at.elapsed() < RETRY_AFTER
        {
            let mut e = e.clone();
            e.message = format!(
                "{} (failed {} ms ago; hal0 tries again after {} s)",
                e.message,
                at.elapsed().as_millis(),
                RETRY_AFTER.as_secs()
            );
            return Err(e);
        }
        Ok(())
    }

    /// Remember that connecting to `id` with fingerprint `fp` failed with `e`.
    pub fn note_failure(&self, id: &str, fp: &str, e: &Error) {
        let entry = (fp.to_string(), std::time::Instant::now(), e.clone());
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).insert(id.to_string(), entry);
    }

    /// Drop the pooled connection of `id` if it is still `up` (another request may have
    /// replaced it already).
    pub fn evict_if(&self, id: &str, up: &Arc<Upstream>) {
        let mut m = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        if m.get(id).is_some_and(|c| Arc::ptr_eq(&c.up, up)) {
            let old = m.remove(id);
            drop(m);
            drop(old);
        }
    }

    /// Drop the connection of `id` (it broke, or the server was uninstalled).
    pub fn evict(&self, id: &str) {
        let old = self.conns.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
        drop(old);
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(url: &str) -> Record {
        let mut r = Record::new("x", "x", url, Transport::StreamableHttp);
        r.url = Some(url.into());
        r
    }

    #[tokio::test]
    async fn a_failed_connect_is_not_retried_on_every_call() {
        let d = tempfile::tempdir().unwrap();
        let paths = crate::base::paths::Paths {
            config_dir: d.path().join("etc"),
            state_dir: d.path().join("state"),
            config_source: "test".into(),
            state_source: "test".into(),
        };
        let pool = Pool::default();
        let r = rec("http://127.0.0.1:1/mcp");
        let fp = fingerprint(&r, &HashMap::new());
        let first = pool.client(&r, &fp, &paths).await.err().unwrap();
        assert_eq!(first.code, "mcp.upstream_failed");
        assert!(!first.message.contains("ago"), "{}", first.message);
        let again = pool.client(&r, &fp, &paths).await.err().unwrap();
        assert!(again.message.contains("ms ago") && again.message.contains("tries again"), "{}", again.message);
        // A changed record is tried at once; so is one after an explicit evict (restart).
        let other = rec("http://127.0.0.1:2/mcp");
        let e = pool.client(&other, &fingerprint(&other, &HashMap::new()), &paths).await.err().unwrap();
        assert!(!e.message.contains("ago"), "{}", e.message);
        pool.evict(&r.id);
        let e = pool.client(&r, &fp, &paths).await.err().unwrap();
        assert!(!e.message.contains("ago"), "{}", e.message);
    }

    #[test]
    fn credentials_go_only_over_https_or_to_loopback() {
        let creds = HashMap::from([("Authorization".to_string(), "Bearer t".to_string())]);
        let none = HashMap::new();
        for ok in
            ["https://mcp.example.com/mcp", "http://127.0.0.1:9/mcp", "http://[::1]:9/mcp", "http://localhost/mcp"]
        {
            assert!(target(&rec(ok), &creds).is_ok(), "{ok}");
        }
        let e = target(&rec("http://mcp.example.com/mcp"), &creds).unwrap_err();
        assert_eq!(e.code, "mcp.insecure_credentials");
        assert!(e.message.contains("Authorization") && !e.message.contains("Bearer t"), "{}", e.message);
        assert!(target(&rec("http://mcp.example.com/mcp"), &none).is_ok(), "no credential, plain http is fine");
        let mut r = rec("http://10.0.0.5/mcp");
        r.allow_insecure_http = true;
        assert!(target(&r, &creds).is_ok(), "the operator's explicit opt-in");
        assert_eq!(target(&rec("ftp://x/mcp"), &none).unwrap_err().code, "mcp.invalid_url");
        let mut s = rec("npm:@x/y");
        s.transport = Transport::Stdio;
        assert_eq!(target(&s, &none).unwrap_err().code, "mcp.invalid_url");
    }
}
