//! `hal0 mcp test`: connect to an installed server's own URL with its resolved headers
//! (its `[env]` values and `[secrets]` from api.env — never hal0's own credentials),
//! initialize, list its tools, and give each tool its verdict under the record's policy.

use crate::base::error::{Error, Result};
use crate::registry::record::Record;
use serde::Serialize;
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

fn failed(what: String) -> Error {
    super::upstream::failed("mcp.probe_failed", what)
}

/// Probe `record`: connect with its own URL and headers (a stdio server's command is
/// started for the probe and stopped after it), list its tools and judge each.
pub async fn probe(record: &Record, paths: &crate::base::paths::Paths) -> Result<Probe> {
    let (up, missing) = super::upstream::connect(record, paths, "mcp.probe_failed", Default::default()).await?;
    let out = probe_with(record, &up.client, missing).await;
    let _ = up.client.cancel().await;
    out
}

/// Probe `record` over a connection that is already open (the daemon's running child of a
/// stdio server); the connection stays open.
pub async fn probe_with(record: &Record, client: &super::upstream::Client, missing: Vec<String>) -> Result<Probe> {
    let url = match (&record.url, &record.command) {
        (Some(u), _) => u.clone(),
        (None, Some(c)) => format!("{c} {}", record.args.join(" ")),
        (None, None) => String::new(),
    };
    let info = client.peer_info().and_then(|i| i.server_info.clone());
    let listed = tokio::time::timeout(TIMEOUT, client.list_all_tools())
        .await
        .map_err(|_| failed(format!("{url} did not list its tools within {} s", TIMEOUT.as_secs())))?
        .map_err(|e| failed(format!("{url} failed tools/list: {}", crate::base::redact::redact(&e.to_string()))))?;
    let names: Vec<String> = listed.iter().map(|t| t.name.to_string()).collect();
    let tools = names
        .iter()
        .map(|n| ToolVerdict { tool: n.clone(), verdict: crate::registry::classify(Some(record), n).as_str() })
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

/// Whether an installed server offers a tool, as far as hal0 can tell without starting a
/// program.
#[derive(Debug, Clone, PartialEq)]
pub enum Offer {
    Offered,
    /// Not in its list: the nearest name it does offer, if one is close.
    NotOffered {
        nearest: Option<String>,
        offered: usize,
    },
    /// Not checked: a stdio server (a check would start it), or no answer (why, in words).
    Unknown(String),
}

/// Whether `record`'s server offers tool `name` (a pattern with `*` is not checked).
pub async fn offers(record: &Record, paths: &crate::base::paths::Paths, name: &str) -> Offer {
    if name.contains('*') {
        return Offer::Offered;
    }
    if record.url.is_none() {
        return Offer::Unknown(format!("`{}` runs as a program; hal0 does not start it to check", record.id));
    }
    const CHECK: Duration = Duration::from_secs(5);
    match tokio::time::timeout(CHECK, probe(record, paths)).await {
        Err(_) => Offer::Unknown(format!("{} did not list its tools within {} s", record.id, CHECK.as_secs())),
        Ok(Err(e)) => Offer::Unknown(e.message),
        Ok(Ok(p)) => judge(&p.tools.iter().map(|t| t.tool.as_str()).collect::<Vec<_>>(), name),
    }
}

/// `name` against the tools a server listed.
fn judge(listed: &[&str], name: &str) -> Offer {
    if listed.contains(&name) {
        return Offer::Offered;
    }
    let nearest = listed
        .iter()
        .map(|t| (crate::base::term::edit_distance(t, name), *t))
        .filter(|(d, t)| *d <= 2.max(t.len() / 4))
        .min()
        .map(|(_, t)| t.to_string());
    Offer::NotOffered { nearest, offered: listed.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_is_not_offered_and_names_the_nearest_tool() {
        let listed = ["read_file", "write_file", "list_directory"];
        assert_eq!(judge(&listed, "read_file"), Offer::Offered);
        assert_eq!(judge(&listed, "read_fiel"), Offer::NotOffered { nearest: Some("read_file".into()), offered: 3 });
        assert_eq!(judge(&listed, "no_such_tool"), Offer::NotOffered { nearest: None, offered: 3 });
    }
}
