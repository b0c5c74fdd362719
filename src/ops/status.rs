//! hal0's own state: liveness, name/version/uptime and mounts, and its newest log lines;
//! and `hal0 status`: the box on one screen — whether the daemon runs, the URL clients use,
//! auth and TLS, what waits for a person, the installed servers and what needs attention,
//! and the newest errors of the audit log. Read from the files and the store (the daemon
//! need not run); nothing secret.

use super::{Ctx, NoArgs};
use crate::base::error::{Error, Result};
use crate::base::paths::Paths;
use crate::config::Config;
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
    let lines = crate::base::logbuf::tail(n);
    Ok(LogLines { count: lines.len(), lines })
}

/// The box at a glance.
#[derive(Debug, Serialize)]
pub struct Status {
    /// Whether a `hal0 serve` holds this state dir now.
    pub daemon_running: bool,
    /// Where it listens, and the base URL remote clients are told.
    pub bind: String,
    pub url: String,
    pub auth_armed: bool,
    pub tls: bool,
    pub pending_approvals: i64,
    pub live_clients: i64,
    pub active_runs: i64,
    pub servers: Servers,
    /// The newest audit rows that ended in an error (at most 3, the last 24 hours).
    pub recent_errors: Vec<RecentError>,
}

/// The installed MCP servers.
#[derive(Debug, Serialize)]
pub struct Servers {
    pub installed: usize,
    pub enabled: usize,
    /// Record files that do not load (`hal0 mcp list` names them).
    pub broken: usize,
    /// Servers whose account must be connected again.
    pub reauth_required: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct RecentError {
    pub at: String,
    pub tool: String,
    pub identity: String,
    pub code: String,
}

/// Read the status of the box at `paths` (no store yet: zeros).
pub fn read(paths: &Paths, cfg: &Config) -> Result<Status> {
    let keys = crate::auth::boxkeys::BoxKeys::load(&paths.api_env())?;
    let listing = crate::registry::Registry::new(paths).list()?;
    let reauth_required = crate::registry::oauth::account::views(paths)
        .into_iter()
        .filter(|v| v.state == crate::registry::oauth::account::REAUTH)
        .map(|v| v.server)
        .collect();
    let servers = Servers {
        installed: listing.records.len(),
        enabled: listing.records.iter().filter(|r| r.enabled).count(),
        broken: listing.broken.len(),
        reauth_required,
    };
    let (mut pending, mut clients, mut runs, mut recent_errors) = (0, 0, 0, Vec::new());
    if paths.db().exists() {
        let store = crate::store::Store::open(&paths.db())?;
        pending = crate::approvals::count_pending(&store)?;
        let since = crate::store::stamp_after(-24 * 3600);
        (clients, runs, recent_errors) = store.with(|c| {
            let one = |sql: &str| c.query_row(sql, [], |r| r.get::<_, i64>(0));
            let clients = one("SELECT count(*) FROM bridge_clients WHERE revoked_at IS NULL")?;
            let runs = one("SELECT count(*) FROM runs WHERE finished = 0")?;
            let mut st = c.prepare(
                "SELECT at, tool, identity, result_code FROM audit_log WHERE result_code IS NOT NULL AND at >= ?1 \
                 ORDER BY id DESC LIMIT 3",
            )?;
            let errors = st
                .query_map([&since], |r| {
                    Ok(RecentError { at: r.get(0)?, tool: r.get(1)?, identity: r.get(2)?, code: r.get(3)? })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok((clients, runs, errors))
        })?;
    }
    Ok(Status {
        daemon_running: crate::store::backup::daemon_running(paths),
        bind: cfg.bind_addr().to_string(),
        url: crate::connect::base_url(cfg).0,
        auth_armed: keys.armed(),
        tls: cfg.network.tls_cert.is_some(),
        pending_approvals: pending,
        live_clients: clients,
        active_runs: runs,
        servers,
        recent_errors,
    })
}

/// The daemon's metrics as OpenMetrics text (`GET /metrics`), with what is read at scrape
/// time: the cards waiting and the runs by state from the store, and `sessions`, the MCP
/// sessions the daemon holds.
pub async fn metrics_text(store: &crate::store::Store, sessions: usize) -> Result<String> {
    let (approvals_pending, runs) =
        store.call(|s| Ok((crate::approvals::count_pending(s)?, crate::bridge::ledger::count_by_status(s)?))).await?;
    Ok(crate::base::observe::metrics::render(crate::base::observe::metrics::Snapshot {
        sessions,
        approvals_pending,
        runs,
    }))
}
