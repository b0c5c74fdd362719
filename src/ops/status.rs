//! hal0's own state: liveness, name/version/uptime and mounts, and its newest log lines.

use super::{Ctx, NoArgs};
use crate::error::{Error, Result};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct Health {
    pub status: &'static str,
    pub name: &'static str,
    pub version: &'static str,
}

/// `health_check`: hal0 answers.
pub async fn health(_: &Ctx, _: NoArgs) -> Result<Health> {
    Ok(Health { status: "ok", name: "hal0", version: env!("CARGO_PKG_VERSION") })
}

#[derive(Debug, Serialize)]
pub struct VersionInfo {
    pub name: &'static str,
    pub version: &'static str,
    pub uptime_s: u64,
    pub auth_armed: bool,
    pub bridge_enabled: bool,
    pub memory_enabled: bool,
    pub mcp_servers: Vec<&'static str>,
}

/// The MCP servers this configuration mounts.
pub fn mounted_servers(cfg: &crate::config::Config) -> Vec<&'static str> {
    crate::connect::mounted(cfg).map(|m| m.server).collect()
}

/// `version_info`: name, version, uptime, whether auth is armed, the mounted servers.
pub async fn version_info(ctx: &Ctx, _: NoArgs) -> Result<VersionInfo> {
    Ok(VersionInfo {
        name: "hal0",
        version: env!("CARGO_PKG_VERSION"),
        uptime_s: ctx.started.elapsed().as_secs(),
        auth_armed: ctx.keys.get().map(|k| k.armed()).unwrap_or(true),
        bridge_enabled: ctx.config().bridge.enabled,
        memory_enabled: ctx.config().memory.enabled,
        mcp_servers: mounted_servers(&ctx.config()),
    })
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct LogsArgs {
    /// How many of the newest log lines (default 200, at most 1000).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub lines: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct LogLines {
    pub count: usize,
    pub lines: Vec<String>,
}

/// `logs_tail`: the newest lines of this process's log, redacted as they were kept.
pub async fn logs_tail(_: &Ctx, a: LogsArgs) -> Result<LogLines> {
    let n = a.lines.unwrap_or(200);
    if !(1..=1000).contains(&n) {
        return Err(Error::invalid("logs.invalid_lines", "lines must be 1 to 1000"));
    }
    let lines = crate::logbuf::tail(n);
    Ok(LogLines { count: lines.len(), lines })
}
