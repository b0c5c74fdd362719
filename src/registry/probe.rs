//! `hal0 mcp test`: connect to an installed server's own URL with its resolved headers
//! (its `[env]` values and `[secrets]` from api.env — never hal0's own credentials),
//! initialize, list its tools, and give each tool its verdict under the record's policy.

use super::record::{Record, Transport};
use crate::error::{Error, Kind, Result};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Serialize)]
pub struct ToolVerdict {
    pub tool: String,
    pub verdict: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    pub id: String,
    pub url: String,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub tools: Vec<ToolVerdict>,
    /// Policy entries naming tools the server does not advertise.
    pub stale_policy: Vec<String>,
    /// Secrets the record names that api.env does not hold.
    pub missing_secrets: Vec<String>,
}

/// The headers the server gets: `[env]` values and `[secrets]` resolved from `api.env`.
fn headers(record: &Record, api_env: &Path) -> Result<(HashMap<String, String>, Vec<String>)> {
    let mut out: HashMap<String, String> = record.env.clone().into_iter().collect();
    let mut missing = Vec::new();
    for (header, key) in &record.secrets {
        match crate::envfile::get_var(api_env, key)? {
            Some(v) => {
                out.insert(header.clone(), v);
            }
            None => missing.push(key.clone()),
        }
    }
    Ok((out, missing))
}

fn failed(what: String) -> Error {
    Error::new("mcp.probe_failed", Kind::BadGateway, what)
}

/// Probe `record` (which must be an http or sse server with a URL).
pub async fn probe(record: &Record, api_env: &Path) -> Result<Probe> {
    use rmcp::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    if record.transport == Transport::Stdio {
        return Err(Error::new(
            "mcp.supervisor_unavailable",
            Kind::Unsupported,
            format!(
                "`{}` is a stdio server: hal0 has no process supervisor yet, so it cannot start it to test it",
                record.id
            ),
        ));
    }
    let url =
        record.url.clone().ok_or_else(|| Error::invalid("mcp.invalid_url", format!("`{}` has no url", record.id)))?;
    if !(url.starts_with("http://") || url.starts_with("https://")) || crate::config::url_host(&url).is_none() {
        return Err(Error::invalid(
            "mcp.invalid_url",
            format!("`{url}` is not an http:// or https:// URL with a host"),
        ));
    }
    let (hdrs, missing) = headers(record, api_env)?;
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
    let client = tokio::time::timeout(TIMEOUT, ().serve(StreamableHttpClientTransport::from_config(cfg)))
        .await
        .map_err(|_| failed(format!("{url} did not finish the MCP handshake within {} s", TIMEOUT.as_secs())))?
        .map_err(|e| {
            let text = e.to_string();
            let why = if text.contains("401") || text.contains("403") || text.to_lowercase().contains("unauthorized") {
                "refused our credentials (check the record's [secrets] and api.env)"
            } else if text.to_lowercase().contains("connect") || text.to_lowercase().contains("refused") {
                "does not answer (is the server running? is the url right?)"
            } else {
                "did not answer like an MCP server"
            };
            failed(format!("{url} {why}: {}", crate::redact::redact(&text)))
        })?;
    let info = client.peer_info().and_then(|i| i.server_info.clone());
    let listed = tokio::time::timeout(TIMEOUT, client.list_all_tools())
        .await
        .map_err(|_| failed(format!("{url} did not list its tools within {} s", TIMEOUT.as_secs())))?
        .map_err(|e| failed(format!("{url} failed tools/list: {}", crate::redact::redact(&e.to_string()))))?;
    let _ = client.cancel().await;
    let names: Vec<String> = listed.iter().map(|t| t.name.to_string()).collect();
    let tools = names
        .iter()
        .map(|n| ToolVerdict { tool: n.clone(), verdict: super::classify(Some(record), n).as_str() })
        .collect();
    let p = &record.tools;
    let stale_policy =
        p.allow.iter().chain(&p.gated).chain(&p.blocked).filter(|t| !names.contains(t)).cloned().collect();
    Ok(Probe {
        id: record.id.clone(),
        url,
        server_name: info.as_ref().map(|i| i.name.clone()),
        server_version: info.map(|i| i.version),
        tools,
        stale_policy,
        missing_secrets: missing,
    })
}
