//! `hal0 doctor`: one row per check, each `ok`, `warn` or `fail` with a one-line detail.
//!
//! The checks only read: nothing is created, migrated or repaired (the store is opened
//! read-only and only when it exists). Every detail passes through the redactor. Row names
//! are stable; see [`ROWS`]. The operation `doctor_report` ([`report`]) serves the same
//! rows to the API and hal0-admin.

use super::{Ctx, NoArgs};
use crate::auth::boxkeys::BoxKeys;
use crate::base::paths::Paths;
use crate::config::Config;
use crate::hermes::profiles::read_yaml;
use crate::hermes::{Profile, Profiles};
use crate::store::migrations::MIGRATIONS;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use serde_yaml_ng::Value as Yaml;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every row, in the order they are reported.
pub const ROWS: [&str; 16] = [
    "config",
    "paths",
    "store",
    "store_space",
    "auth",
    "oauth",
    "agent-bridge",
    "hermes_profiles_mcp",
    "hermes_default_memory",
    "memory",
    "mcp_registry",
    "mcp_accounts",
    "exposure",
    "relay_langfuse",
    "relay_database",
    "listener",
];

/// How long a Hermes `/health` or the listener probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The fix named when a Hermes profile is not wired to hal0's servers.
const REPROVISION: &str = "hal0 agent reprovision hermes";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    pub rows: Vec<Row>,
}

impl Report {
    /// The worst status of any row (`Ok` for no rows).
    pub fn worst(&self) -> Status {
        self.rows.iter().map(|r| r.status).max().unwrap_or(Status::Ok)
    }

    /// The global legend's codes: 1 when a check failed, 0 otherwise; warnings fail too
    /// only when `strict`.
    pub fn exit_code(&self, strict: bool) -> i32 {
        match self.worst() {
            Status::Warn if strict => crate::base::exit::FAILURE,
            Status::Ok | Status::Warn => crate::base::exit::OK,
            Status::Fail => crate::base::exit::FAILURE,
        }
    }

    /// `{"rows":[{"name","status","detail"}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"rows": self.rows})
    }

    pub fn get(&self, name: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.name == name)
    }
}

/// `doctor_report`: ok / warn / fail rows with a one-line detail each.
pub async fn report(ctx: &Ctx, _: NoArgs) -> crate::base::error::Result<serde_json::Value> {
    Ok(run(&ctx.paths).await.to_json())
}

fn row(name: &'static str, status: Status, detail: impl Into<String>) -> Row {
    Row { name, status, detail: detail.into() }
}

/// Run every check.
pub async fn run(paths: &Paths) -> Report {
    // Everything synchronous first, so no file or SQLite handle is held across an await.
    let (cfg, config_row) = check_config(paths);
    let cfg_ok = cfg.is_some();
    let cfg = cfg.unwrap_or_default();
    let paths_row = check_paths(paths);
    let db = StoreFacts::read(&paths.db());
    let store_row = check_store(&db);
    let space_row = check_store_space(&paths.db(), &cfg);
    let auth_row = check_auth(paths, &cfg);
    let oauth_row = check_oauth(paths, &cfg, &db);
    let profiles = Profiles::from_config(&cfg);
    let list = profiles.list();
    let here = Here::of(&cfg);
    let (mcp_row, default_memory_row) = check_hermes_wiring(&cfg, &profiles, &list, &here);
    let memory_row = check_memory(&cfg, &db);
    let registry = Registry::read(paths);
    let registry_row = check_registry(&registry);
    let accounts_row = check_accounts(paths, &registry);
    let exposure_row = check_exposure(&registry, &profiles);
    let langfuse_row = check_langfuse(&cfg, paths);

    let http = crate::hermes::client::http_client();
    let (bridge_row, listener_row, database_row) = futures::join!(
        check_bridge(&cfg, &db, &profiles, &list, &http),
        check_listener(cfg.bind_addr(), &http),
        check_relay_database(&cfg)
    );

    let mut rows = vec![
        config_row,
        paths_row,
        store_row,
        space_row,
        auth_row,
        oauth_row,
        bridge_row,
        mcp_row,
        default_memory_row,
        memory_row,
        registry_row,
        accounts_row,
        exposure_row,
        langfuse_row,
        database_row,
        listener_row,
    ];
    const USES_CONFIG: [&str; 9] = [
        "store_space",
        "agent-bridge",
        "hermes_profiles_mcp",
        "hermes_default_memory",
        "memory",
        "exposure",
        "relay_langfuse",
        "relay_database",
        "listener",
    ];
    for r in &mut rows {
        if !cfg_ok && USES_CONFIG.contains(&r.name) {
            r.detail.push_str(" (checked with default settings: hal0.toml is invalid)");
        }
        // One line, nothing secret.
        let one_line = r.detail.replace(['\n', '\r'], " ");
        r.detail = crate::base::redact::redact(&one_line).into_owned();
    }
    Report { rows }
}

// ---------------------------------------------------------------------------------------------
// config, paths, store, auth
// ---------------------------------------------------------------------------------------------

fn check_config(paths: &Paths) -> (Option<Config>, Row) {
    let path = paths.hal0_toml();
    match Config::load(paths) {
        Ok(cfg) if path.exists() => (Some(cfg), row("config", Status::Ok, format!("valid ({})", path.display()))),
        Ok(cfg) => (Some(cfg), row("config", Status::Ok, format!("absent, defaults in use ({})", path.display()))),
        Err(e) => (None, row("config", Status::Fail, e.message)),
    }
}

fn mode_of(p: &Path) -> Option<u32> {
    std::fs::metadata(p).ok().map(|m| m.permissions().mode() & 0o7777)
}

fn check_paths(paths: &Paths) -> Row {
    let mut wrong = Vec::new();
    let want = [
        ("config dir", paths.config_dir.clone(), 0o700),
        ("state dir", paths.state_dir.clone(), 0o700),
        ("hal0.toml", paths.hal0_toml(), 0o600),
        ("api.env", paths.api_env(), 0o600),
        ("hal0.db", paths.db(), 0o600),
    ];
    for (what, p, mode) in &want {
        if let Some(m) = mode_of(p)
            && m != *mode
        {
            wrong.push(format!("{what} is {m:04o}, want {mode:04o} (chmod {mode:o} {})", p.display()));
        }
    }
    let describe = |dir: &Path, source: &str| {
        let state = if dir.is_dir() { "" } else { ", not created yet" };
        let source = if source.starts_with("fallback") { format!("XDG {source}") } else { source.to_string() };
        format!("{} ({source}{state})", dir.display())
    };
    let dirs = format!(
        "config {}, state {}",
        describe(&paths.config_dir, &paths.config_source),
        describe(&paths.state_dir, &paths.state_source)
    );
    if let Some(denied) = unreadable_by_daemon(paths) {
        return row(
            "paths",
            Status::Fail,
            format!("{denied}; {}{dirs}", wrong.iter().map(|w| format!("{w}; ")).collect::<String>()),
        );
    }
    if wrong.is_empty() {
        row("paths", Status::Ok, dirs)
    } else {
        row("paths", Status::Warn, format!("{}; {dirs}", wrong.join("; ")))
    }
}

/// Files under the config and state dirs that the daemon cannot use. The daemon runs as
/// the state dir's owner (user `hal0` on a packaged install); a file it must read (or, for
/// the store and lock files, write) that another user owns without granting it, e.g. one
/// an old `sudo hal0 …` left root's 0600, stops it. `None` when all is usable, or when
/// the daemon is root.
fn unreadable_by_daemon(paths: &Paths) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let state = std::fs::metadata(&paths.state_dir).ok()?;
    let (uid, gid) = (state.uid(), state.gid());
    if uid == 0 {
        return None;
    }
    // Bits that grant `want` (4 read, 2 write, 1 search) to the daemon for this entry.
    let grants = |m: &std::fs::Metadata, want: u32| {
        let shift = if m.uid() == uid {
            6
        } else if m.gid() == gid {
            3
        } else {
            0
        };
        (m.mode() >> shift) & want == want
    };
    let mut denied = Vec::new();
    if std::fs::metadata(&paths.config_dir).is_ok_and(|m| !grants(&m, 4 | 1)) {
        denied.push(paths.config_dir.clone());
    }
    let mut visit = vec![(paths.config_dir.clone(), 0usize), (paths.state_dir.clone(), 3)];
    while let Some((dir, depth)) = visit.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let Ok(m) = e.path().symlink_metadata() else { continue };
            let name = e.file_name().to_string_lossy().into_owned();
            let writes = dir == paths.state_dir || name.ends_with(".lock");
            let ok = if m.is_dir() {
                if depth < 3 {
                    visit.push((e.path(), depth + 1));
                }
                grants(&m, 4 | 1)
            } else if m.is_file() {
                grants(&m, if writes { 4 | 2 } else { 4 })
            } else {
                true
            };
            if !ok {
                denied.push(e.path());
            }
        }
    }
    if denied.is_empty() {
        return None;
    }
    denied.sort();
    let n = denied.len();
    let shown: Vec<String> = denied.iter().take(3).map(|p| p.display().to_string()).collect();
    let more = if n > 3 { format!(" and {} more", n - 3) } else { String::new() };
    let state = paths.state_dir.display();
    Some(format!(
        "the daemon (uid {uid}, owner of {state}) cannot use {}: {}{more} (fix: chown -R --reference={state} {} {state})",
        plural(n, "file", "files"),
        shown.join(", "),
        paths.config_dir.display()
    ))
}

/// What the doctor learned from `hal0.db`, read once.
enum StoreFacts {
    Absent(PathBuf),
    Unusable(String),
    Read {
        integrity: String,
        version: i64,
        live_clients: Option<i64>,
        /// OAuth clients and live grants, when the tables exist.
        oauth: Option<(i64, i64)>,
        memory_tables: Vec<&'static str>,
        notes: Option<i64>,
    },
}

const MEMORY_TABLES: [&str; 2] = ["memory_notes", "memory_changes"];

impl StoreFacts {
    fn read(path: &Path) -> StoreFacts {
        if !path.exists() {
            return StoreFacts::Absent(path.to_path_buf());
        }
        let open = || -> rusqlite::Result<StoreFacts> {
            let c =
                Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
            c.busy_timeout(Duration::from_secs(2))?;
            let integrity = {
                let mut st = c.prepare("PRAGMA integrity_check")?;
                let lines = st.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
                lines.join("; ")
            };
            let version: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0))?;
            let has = |t: &str| -> rusqlite::Result<bool> {
                c.query_row("SELECT count(*) FROM sqlite_master WHERE name = ?1", [t], |r| r.get::<_, i64>(0))
                    .map(|n| n > 0)
            };
            let live_clients = if has("bridge_clients")? {
                Some(c.query_row("SELECT count(*) FROM bridge_clients WHERE revoked_at IS NULL", [], |r| r.get(0))?)
            } else {
                None
            };
            let oauth = if has("oauth_grants")? {
                Some((
                    c.query_row("SELECT count(*) FROM oauth_clients WHERE removed_at IS NULL", [], |r| r.get(0))?,
                    c.query_row("SELECT count(*) FROM oauth_grants WHERE revoked_at IS NULL", [], |r| r.get(0))?,
                ))
            } else {
                None
            };
            let mut memory_tables = Vec::new();
            for t in MEMORY_TABLES {
                if has(t)? {
                    memory_tables.push(t);
                }
            }
            let notes = if memory_tables.contains(&"memory_notes") {
                Some(c.query_row("SELECT count(*) FROM memory_notes", [], |r| r.get(0))?)
            } else {
                None
            };
            Ok(StoreFacts::Read { integrity, version, live_clients, oauth, memory_tables, notes })
        };
        open().unwrap_or_else(|e| StoreFacts::Unusable(format!("cannot read {}: {e}", path.display())))
    }
}

/// The store's size against its cap, the free disk for the state directory, and the
/// biggest bounded log with its retention window.
fn check_store_space(db: &Path, cfg: &Config) -> Row {
    use crate::base::term::bytes;
    let disk = crate::base::paths::disk_space(db.parent().unwrap_or(db));
    let disk_text = match disk {
        Some((free, total)) => format!("disk {} free of {}", bytes(free), bytes(total)),
        None => "free disk space unknown".into(),
    };
    let sizes = if db.exists() {
        let open = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY);
        match open.map_err(crate::base::error::Error::from).and_then(|c| crate::ops::retention::sizes_of(&c, db)) {
            Ok(s) => Some(s),
            Err(e) => return row("store_space", Status::Fail, format!("cannot read {}: {}", db.display(), e.message)),
        }
    } else {
        None
    };
    let used = sizes.as_ref().map_or(0, |s| s.store_bytes);
    let cap = cfg.store.max_size_mb.map(|m| m.saturating_mul(1024 * 1024));
    let mut detail = match cap {
        Some(c) => format!("hal0.db {} of at most {}; {disk_text}", bytes(used), bytes(c)),
        None => format!("hal0.db {}; {disk_text}", bytes(used)),
    };
    // Every bounded log that holds rows, largest first.
    if let Some(s) = &sizes {
        let mut logs: Vec<&(String, u64)> = s.tables.iter().filter(|(_, n)| *n > 0).collect();
        logs.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        if !logs.is_empty() {
            let list: Vec<String> = logs.iter().map(|(t, n)| format!("{t} {n}")).collect();
            detail.push_str(&format!("; rows: {}", list.join(", ")));
        }
    }
    detail.push_str(&format!(
        "; audit kept {}",
        if cfg.audit.retention_days == 0 {
            "forever".to_string()
        } else {
            format!("{} days", cfg.audit.retention_days)
        }
    ));
    if cfg.audit.max_rows > 0 {
        detail.push_str(&format!(" (newest {} rows at most)", cfg.audit.max_rows));
    }
    let full_store = cap.is_some_and(|c| used.saturating_mul(100) >= c.saturating_mul(99));
    let nearly_full_store = cap.is_some_and(|c| used.saturating_mul(10) >= c.saturating_mul(9));
    let free = disk.map_or(u64::MAX, |d| d.0);
    const MIB: u64 = 1024 * 1024;
    if full_store || free < 64 * MIB {
        detail.push_str(
            ": full, calls that change state are refused; run hal0 store prune, shorten retention or free disk",
        );
        row("store_space", Status::Fail, detail)
    } else if nearly_full_store || free < 1024 * MIB {
        detail.push_str(": nearly full; run hal0 store prune, shorten retention or free disk");
        row("store_space", Status::Warn, detail)
    } else {
        row("store_space", Status::Ok, detail)
    }
}

fn check_store(db: &StoreFacts) -> Row {
    let want = MIGRATIONS.len() as i64;
    match db {
        StoreFacts::Absent(p) => {
            row("store", Status::Ok, format!("not created yet ({}; hal0 creates it on first use)", p.display()))
        }
        StoreFacts::Unusable(e) => row("store", Status::Fail, e.clone()),
        StoreFacts::Read { integrity, .. } if integrity != "ok" => {
            let (cut, more) = crate::base::redact::cut(integrity, 300);
            let more = if more { " …" } else { "" };
            row("store", Status::Fail, format!("integrity check failed: {cut}{more}"))
        }
        StoreFacts::Read { version, .. } if *version < want => row(
            "store",
            Status::Fail,
            format!(
                "schema version {version}, this hal0 expects {want}: run `hal0 serve` (or any command that opens the store) to migrate"
            ),
        ),
        StoreFacts::Read { version, .. } if *version > want => row(
            "store",
            Status::Fail,
            format!("schema version {version} is newer than this hal0 ({want}): upgrade hal0"),
        ),
        StoreFacts::Read { version, .. } => {
            row("store", Status::Ok, format!("integrity ok, schema version {version} (current)"))
        }
    }
}

/// Whether auth is armed, and what an anonymous caller can do ([`crate::auth::exposure`]).
fn check_auth(paths: &Paths, cfg: &crate::config::Config) -> Row {
    match BoxKeys::load(&paths.api_env()) {
        Err(e) => row("auth", Status::Fail, e.message),
        Ok(k) if k.armed() => {
            let which = match (k.admin.is_some(), k.client.is_some()) {
                (true, true) => "admin and client keys",
                (true, false) => "admin key",
                _ => "client key",
            };
            row("auth", Status::Ok, format!("armed ({which})"))
        }
        Ok(_) => {
            let (bind, allow) = (cfg.bind_addr(), cfg.network.allow_unauthenticated);
            let status = if crate::auth::exposure::is_local(bind.ip()) { Status::Warn } else { Status::Fail };
            row("auth", status, crate::auth::exposure::account(false, bind, allow))
        }
    }
}

/// OAuth accounts at installed servers: each one's state and expiry (never a token). A
/// server that wants an account and has none, or one that must be connected again, warns.
fn check_accounts(paths: &Paths, registry: &Registry) -> Row {
    use crate::registry::oauth::account::{CONNECTED, View};
    let wanting: Vec<(&str, bool)> = match registry {
        Registry::Read { records, .. } => {
            records.iter().filter_map(|r| r.oauth.as_ref().map(|o| (r.id.as_str(), o.delegated()))).collect()
        }
        _ => vec![],
    };
    let views = crate::registry::oauth::account::views(paths);
    if wanting.is_empty() && views.is_empty() {
        return row("mcp_accounts", Status::Ok, "none: no installed server wants an OAuth account");
    }
    let mut parts = Vec::new();
    let mut warn = false;
    let mut said = |v: &View, who: &str, fix: &str, warn: &mut bool| {
        if v.state == CONNECTED {
            let exp = v.expires_at.as_deref().map(|e| format!(", expires {e}")).unwrap_or_default();
            let refresh = if v.refreshable { ", refreshable" } else { "" };
            parts.push(format!("{who}: connected{exp}{refresh}"));
        } else {
            *warn = true;
            parts.push(format!("{who}: {} ({fix})", v.state));
        }
    };
    let mut lines_of_none = Vec::new();
    for &(id, delegated) in &wanting {
        let mine: Vec<&View> = views.iter().filter(|v| v.server == id && v.holder.is_some() == delegated).collect();
        if mine.is_empty() {
            if delegated {
                lines_of_none.push(format!("{id}: delegated, no consumer has connected an account yet"));
            } else {
                warn = true;
                lines_of_none.push(format!("{id}: not connected (hal0 mcp connect {id})"));
            }
        }
        for v in mine {
            match &v.holder {
                None => said(v, id, &format!("hal0 mcp connect {id}"), &mut warn),
                Some(h) => said(v, &format!("{id} for {h}"), &format!("hal0 mcp connect {id} --for {h}"), &mut warn),
            }
        }
    }
    parts.extend(lines_of_none);
    for v in views.iter().filter(|v| !wanting.iter().any(|(id, d)| *id == v.server && v.holder.is_some() == *d)) {
        let flag = v.holder.as_deref().map(|h| format!(" --for {h}")).unwrap_or_default();
        parts.push(format!(
            "{}{}: an account this server no longer uses (hal0 mcp disconnect {}{flag})",
            v.server,
            v.holder.as_deref().map(|h| format!(" for {h}")).unwrap_or_default(),
            v.server
        ));
    }
    row("mcp_accounts", if warn { Status::Warn } else { Status::Ok }, parts.join("; "))
}

/// OAuth in: off, or on with its issuer and what it holds (never a token). On while auth
/// is off, or with a plain-http issuer (loopback only), warns.
fn check_oauth(paths: &Paths, cfg: &Config, db: &StoreFacts) -> Row {
    let issuer = match crate::auth::oauth::Issuer::of(cfg) {
        Ok(i) => i.issuer(),
        Err(_) => return row("oauth", Status::Ok, "off: clients connect with keys (hal0 bridge add)"),
    };
    let held = match db {
        StoreFacts::Read { oauth: Some((clients, grants)), .. } => {
            format!(
                "; {}, {}",
                plural(*clients as usize, "client", "clients"),
                plural(*grants as usize, "live grant", "live grants")
            )
        }
        _ => String::new(),
    };
    let armed = BoxKeys::load(&paths.api_env()).is_ok_and(|k| k.armed());
    if !armed {
        return row(
            "oauth",
            Status::Warn,
            format!("on at {issuer}{held}, while auth is off: arm it (sudo hal0 auth rotate admin)"),
        );
    }
    if !issuer.starts_with("https://") {
        return row(
            "oauth",
            Status::Warn,
            format!(
                "on at {issuer}{held}: plain http, so only clients on this box can use it (set an https network.public_url)"
            ),
        );
    }
    row("oauth", Status::Ok, format!("on at {issuer}{held} (hal0 oauth urls)"))
}

// ---------------------------------------------------------------------------------------------
// Hermes: the bridge, the profiles' wiring to hal0's servers
// ---------------------------------------------------------------------------------------------

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

async fn check_bridge(
    cfg: &Config,
    db: &StoreFacts,
    profiles: &Profiles,
    list: &[Profile],
    http: &reqwest::Client,
) -> Row {
    if !cfg.bridge.enabled {
        return row(
            "agent-bridge",
            Status::Ok,
            "off ([bridge].enabled = false): a box that only proxies MCP servers needs no Hermes",
        );
    }
    let clients = match db {
        StoreFacts::Read { live_clients: Some(n), .. } => {
            plural(*n as usize, "live bridge client", "live bridge clients")
        }
        _ => "no bridge clients yet".to_string(),
    };
    if !profiles.home.is_dir() {
        return row(
            "agent-bridge",
            Status::Warn,
            format!(
                "enabled, {clients}; no Hermes home at {} (set [hermes].home or HAL0_HERMES_HOME; a box that only \
                 proxies MCP servers needs no Hermes: hal0 config set bridge.enabled false)",
                profiles.home.display()
            ),
        );
    }
    // `/health` needs no key; all profiles are asked at once.
    let checks = list.iter().map(|p| async move {
        match http.get(format!("{}/health", p.base_url)).timeout(PROBE_TIMEOUT).send().await {
            Ok(r) if r.status().is_success() => None,
            Ok(r) => Some(format!("HTTP {} on /health", r.status().as_u16())),
            Err(e) if e.is_timeout() => Some(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())),
            Err(_) => Some("no answer".to_string()),
        }
    });
    let health = futures::future::join_all(checks).await;
    let mut down = Vec::new();
    let mut unkeyed = Vec::new();
    for (p, problem) in list.iter().zip(health) {
        if let Some(why) = problem {
            down.push(format!("{} ({}, {why})", p.agent_id, p.base_url));
        }
        if !p.keyed() {
            unkeyed.push(p.agent_id.clone());
        }
    }
    if down.is_empty() && unkeyed.is_empty() {
        let ids: Vec<_> = list.iter().map(|p| p.agent_id.as_str()).collect();
        return row(
            "agent-bridge",
            Status::Ok,
            format!(
                "enabled, {clients}; {} reachable and keyed ({})",
                plural(list.len(), "Hermes profile", "Hermes profiles"),
                ids.join(", ")
            ),
        );
    }
    let mut parts = vec![format!("enabled, {clients}")];
    if !down.is_empty() {
        parts.push(format!("Hermes unreachable: {}", down.join(", ")));
    }
    if !unkeyed.is_empty() {
        parts.push(format!("no API key for: {} (set API_SERVER_KEY in the profile's .env)", unkeyed.join(", ")));
    }
    row("agent-bridge", Status::Warn, parts.join("; "))
}

/// Where this hal0 is reached, to tell whether a URL in a Hermes config points here.
struct Here {
    bind: SocketAddr,
    public_base: Option<String>,
    local_ips: Vec<IpAddr>,
    hostname: Option<String>,
}

impl Here {
    fn of(cfg: &Config) -> Here {
        let bind = cfg.bind_addr();
        let local_ips = if bind.ip().is_unspecified() {
            if_addrs::get_if_addrs().map(|v| v.into_iter().map(|i| i.ip()).collect()).unwrap_or_default()
        } else {
            Vec::new()
        };
        let hostname = gethostname::gethostname().into_string().ok().filter(|h| !h.is_empty());
        Here {
            bind,
            public_base: cfg.network.public_url.as_ref().map(|u| u.trim_end_matches('/').to_ascii_lowercase()),
            local_ips,
            hostname,
        }
    }

    /// Does `url` name this hal0's `/mcp/<mount>/mcp`?
    fn points_here(&self, url: &str, mount: &str) -> bool {
        let Some(u) = crate::base::weburl::HttpUrl::parse(url) else { return false };
        let want_path = format!("/mcp/{mount}/mcp");
        if u.path.trim_end_matches('/') != want_path {
            return false;
        }
        if let Some(base) = &self.public_base {
            let lower = url.trim_end_matches('/').to_ascii_lowercase();
            if lower == format!("{base}{want_path}") {
                return true;
            }
        }
        if u.scheme != "http" || u.port != self.bind.port() {
            return false;
        }
        let bind_ip = self.bind.ip();
        let host_ip = u.host.parse::<IpAddr>().ok();
        let is_localhost = u.host.eq_ignore_ascii_case("localhost");
        if bind_ip.is_unspecified() {
            is_localhost
                || host_ip.is_some_and(|ip| ip.is_loopback() || self.local_ips.contains(&ip))
                || self.hostname.as_deref().is_some_and(|h| h.eq_ignore_ascii_case(&u.host))
        } else if bind_ip.is_loopback() {
            // Loopback only: a LAN name or address would not reach it.
            is_localhost || host_ip == Some(bind_ip)
        } else {
            host_ip == Some(bind_ip)
        }
    }
}

/// `mcp_servers.<name>.url` of a parsed config.yaml: `None` when the entry is absent,
/// `Some(None)` when it has no string `url`.
fn server_url<'a>(yaml: &'a Yaml, name: &str) -> Option<Option<&'a str>> {
    let entry = yaml.get("mcp_servers")?.get(name)?;
    Some(entry.get("url").and_then(|u| u.as_str()))
}

/// Why a profile is not wired to `server` (`None` when it is).
fn wiring_problem(yaml: Option<&Yaml>, server: &str, mount: &str, here: &Here) -> Option<String> {
    let Some(yaml) = yaml else { return Some("no readable config.yaml".into()) };
    match server_url(yaml, server) {
        None => Some(format!("no {server}")),
        Some(None) => Some(format!("{server} has no url")),
        Some(Some(u)) if !here.points_here(u, mount) => Some(format!("{server} points elsewhere")),
        Some(Some(_)) => None,
    }
}

fn opted_out(yaml: Option<&Yaml>) -> bool {
    yaml.and_then(|y| y.get("hal0")?.get("wire_mcp")?.as_bool()) == Some(false)
}

fn check_hermes_wiring(cfg: &Config, profiles: &Profiles, list: &[Profile], here: &Here) -> (Row, Row) {
    if !profiles.home.is_dir() {
        let d = format!("no Hermes home at {}; nothing to wire", profiles.home.display());
        return (row("hermes_profiles_mcp", Status::Ok, d.clone()), row("hermes_default_memory", Status::Ok, d));
    }
    let mut servers = vec![("hal0-admin", "admin")];
    if cfg.memory.enabled {
        servers.push(("hal0-memory", "memory"));
    }
    let names: Vec<_> = servers.iter().map(|(s, _)| *s).collect();
    let mut bad = Vec::new();
    let mut wired = Vec::new();
    let mut out = Vec::new();
    let mut default_yaml = None;
    for p in list {
        let yaml = read_yaml(&p.dir.join("config.yaml"));
        if p.agent_id == "hermes" {
            default_yaml = Some(yaml.clone());
        }
        if opted_out(yaml.as_ref()) {
            out.push(p.agent_id.clone());
            continue;
        }
        let problems: Vec<String> =
            servers.iter().filter_map(|(s, m)| wiring_problem(yaml.as_ref(), s, m, here)).collect();
        if problems.is_empty() {
            wired.push(p.agent_id.clone());
        } else {
            bad.push(format!("{} ({})", p.agent_id, problems.join(", ")));
        }
    }
    let opted = if out.is_empty() { String::new() } else { format!("; opted out: {}", out.join(", ")) };
    let mcp_row = if bad.is_empty() {
        row(
            "hermes_profiles_mcp",
            Status::Ok,
            format!(
                "{} wired to {} ({}){opted}",
                plural(wired.len(), "profile", "profiles"),
                names.join(" and "),
                wired.join(", ")
            ),
        )
    } else {
        row("hermes_profiles_mcp", Status::Warn, format!("not wired: {}{opted}; fix: {REPROVISION}", bad.join(", ")))
    };
    let default_yaml = default_yaml.flatten();
    let config_path = profiles.home.join("config.yaml");
    let memory_row = if !cfg.memory.enabled {
        row("hermes_default_memory", Status::Ok, "memory is disabled")
    } else if opted_out(default_yaml.as_ref()) {
        row("hermes_default_memory", Status::Ok, "the default profile opted out (hal0: {wire_mcp: false})")
    } else {
        match wiring_problem(default_yaml.as_ref(), "hal0-memory", "memory", here) {
            None => row(
                "hermes_default_memory",
                Status::Ok,
                format!("hal0-memory wired into the default profile ({})", config_path.display()),
            ),
            Some(why) => row(
                "hermes_default_memory",
                Status::Warn,
                format!("default profile ({}): {why}; fix: {REPROVISION} --repair", config_path.display()),
            ),
        }
    };
    (mcp_row, memory_row)
}

fn check_memory(cfg: &Config, db: &StoreFacts) -> Row {
    if !cfg.memory.enabled {
        return row("memory", Status::Ok, "disabled");
    }
    match db {
        StoreFacts::Read { memory_tables, notes, .. } => {
            let missing: Vec<_> = MEMORY_TABLES.iter().filter(|t| !memory_tables.contains(t)).copied().collect();
            if missing.is_empty() {
                let n = notes.unwrap_or(0) as usize;
                row(
                    "memory",
                    Status::Ok,
                    format!("enabled (embedded SQLite, bm25 word index, {})", plural(n, "note", "notes")),
                )
            } else {
                row(
                    "memory",
                    Status::Fail,
                    format!("enabled, but the store lacks {}: run `hal0 serve` to migrate it", missing.join(", ")),
                )
            }
        }
        StoreFacts::Absent(_) => row("memory", Status::Ok, "enabled (embedded SQLite, bm25 word index; no store yet)"),
        StoreFacts::Unusable(_) => row("memory", Status::Fail, "enabled, but the store cannot be read (see `store`)"),
    }
}

// ---------------------------------------------------------------------------------------------
// The MCP registry and its exposure to Hermes
// ---------------------------------------------------------------------------------------------

/// The registry as the doctor sees it: read through [`crate::registry::Registry::list`], the
/// same reader the daemon uses, so a file the daemon ignores is a broken one here too.
enum Registry {
    Unreadable(String),
    Read { records: Vec<crate::registry::Record>, bad: Vec<String> },
}

impl Registry {
    fn read(paths: &Paths) -> Registry {
        match crate::registry::Registry::new(paths).list() {
            Err(e) => Registry::Unreadable(e.message),
            Ok(l) => Registry::Read {
                records: l.records,
                // The file and line only: a parse message can quote the record's values.
                bad: l
                    .broken
                    .iter()
                    .map(|b| match b.line {
                        Some(n) => format!("{} (line {n})", b.file),
                        None => format!("{} (not a record)", b.file),
                    })
                    .collect(),
            },
        }
    }
}

fn check_registry(reg: &Registry) -> Row {
    match reg {
        Registry::Unreadable(e) => row("mcp_registry", Status::Warn, e.clone()),
        Registry::Read { records, bad } if bad.is_empty() => {
            if records.is_empty() {
                row("mcp_registry", Status::Ok, "none installed")
            } else {
                let ids: Vec<_> = records.iter().map(|r| r.id.as_str()).collect();
                row(
                    "mcp_registry",
                    Status::Ok,
                    format!("{} ({})", plural(records.len(), "record parses", "records parse"), ids.join(", ")),
                )
            }
        }
        Registry::Read { records, bad } => row(
            "mcp_registry",
            Status::Warn,
            format!(
                "not valid TOML: {}; {} fine (fix or remove the bad files)",
                bad.join(", "),
                plural(records.len(), "other record", "other records")
            ),
        ),
    }
}

fn check_exposure(reg: &Registry, profiles: &Profiles) -> Row {
    let Registry::Read { records, .. } = reg else { return row("exposure", Status::Ok, "nothing exposed") };
    // Targets: `hermes` is the default profile, `brain` the `hal0-brain` profile.
    let targets = [
        ("hermes", profiles.home.join("config.yaml")),
        ("brain", profiles.home.join("profiles/hal0-brain/config.yaml")),
    ];
    let mut exposed = Vec::new();
    let mut problems = Vec::new();
    for (target, path) in &targets {
        let yaml = read_yaml(path);
        let has = |id: &str| yaml.as_ref().and_then(|y| y.get("mcp_servers")?.get(id)).is_some();
        for r in records {
            let wanted = r.enabled && if *target == "hermes" { r.exposure.hermes } else { r.exposure.brain };
            if wanted {
                exposed.push(format!("{} → {target}", r.id));
                if !has(&r.id) {
                    problems.push(format!("{} is exposed to {target} but missing from {}", r.id, path.display()));
                }
            } else if has(&r.id) {
                problems.push(format!("{} is in {} but not exposed to {target}", r.id, path.display()));
            }
        }
    }
    if !problems.is_empty() {
        return row(
            "exposure",
            Status::Warn,
            format!(
                "{}; fix: re-run the join with hal0 mcp expose ID --hermes (or --no-hermes), or restart hal0 serve",
                problems.join("; ")
            ),
        );
    }
    if exposed.is_empty() {
        row("exposure", Status::Ok, "nothing exposed")
    } else {
        row("exposure", Status::Ok, format!("consistent with Hermes's config: {}", exposed.join(", ")))
    }
}

// ---------------------------------------------------------------------------------------------
// The listener
// ---------------------------------------------------------------------------------------------

/// `GET http://<addr>/api/health`: hal0's version when hal0 answers.
async fn probe_hal0(addr: SocketAddr, http: &reqwest::Client) -> Option<String> {
    let resp = http.get(format!("http://{addr}/api/health")).timeout(PROBE_TIMEOUT).send().await.ok()?;
    let v: serde_json::Value = resp.json().await.ok()?;
    (v["name"] == "hal0").then(|| v["version"].as_str().unwrap_or("(unknown version)").to_string())
}

/// `[relay.langfuse]`: off, or on with both keys in api.env (Langfuse itself is not asked).
fn check_langfuse(cfg: &Config, paths: &Paths) -> Row {
    let lf = &cfg.relay.langfuse;
    if !lf.enabled {
        return row("relay_langfuse", Status::Ok, "off");
    }
    if !cfg.relay.enabled {
        return row("relay_langfuse", Status::Ok, "enabled, but the relay is off: nothing to export");
    }
    match crate::relay::langfuse::keys_for(cfg, &paths.api_env()) {
        Ok(_) => row(
            "relay_langfuse",
            Status::Ok,
            format!("ended exchanges are exported to {} (keys in api.env)", crate::base::term::safe_line(&lf.base_url)),
        ),
        Err(e) => row("relay_langfuse", Status::Warn, format!("{} [{}]", e.message, e.code)),
    }
}

/// The relay's shared database, when one is set: reachable, and how many relays use it.
async fn check_relay_database(cfg: &Config) -> Row {
    let Some(url) = cfg.relay.database() else {
        return row("relay_database", Status::Ok, "none: the relay's history is in the store (SQLite)");
    };
    let probe = async {
        let c = crate::relay::cluster::Cluster::new(&url, String::new())?;
        let alive = c.alive().await?;
        Ok::<_, crate::base::error::Error>((c.shown().to_string(), alive))
    };
    match probe.await {
        Ok((at, None)) => row("relay_database", Status::Ok, format!("{at}: reachable; no relay has used it yet")),
        Ok((at, Some(nodes))) if nodes.is_empty() => {
            row("relay_database", Status::Ok, format!("{at}: reachable; no relay is running on it now"))
        }
        Ok((at, Some(nodes))) => {
            row("relay_database", Status::Ok, format!("{at}: reachable; relays running: {}", nodes.join(", ")))
        }
        Err(e) => row("relay_database", Status::Fail, format!("{} [{}]", e.message, e.code)),
    }
}

async fn check_listener(bind: SocketAddr, http: &reqwest::Client) -> Row {
    let err = match std::net::TcpListener::bind(bind) {
        Ok(l) => {
            drop(l);
            return row("listener", Status::Ok, format!("free ({bind})"));
        }
        Err(e) => e,
    };
    let probe = match bind.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => SocketAddr::new(Ipv4Addr::LOCALHOST.into(), bind.port()),
        IpAddr::V6(ip) if ip.is_unspecified() => SocketAddr::new(Ipv6Addr::LOCALHOST.into(), bind.port()),
        _ => bind,
    };
    if let Some(version) = probe_hal0(probe, http).await {
        return row("listener", Status::Ok, format!("held by hal0 {version} ({bind})"));
    }
    match err.kind() {
        std::io::ErrorKind::AddrInUse => row("listener", Status::Fail, format!("{bind} is held by another program")),
        std::io::ErrorKind::PermissionDenied => row(
            "listener",
            Status::Warn,
            format!("cannot test {bind}: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)"),
        ),
        _ => row("listener", Status::Fail, format!("cannot listen on {bind}: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn here(bind: &str, public: Option<&str>) -> Here {
        let mut cfg = Config::default();
        cfg.network.bind = bind.into();
        cfg.network.public_url = public.map(str::to_string);
        Here::of(&cfg)
    }

    #[test]
    fn urls_that_point_here() {
        let h = here("127.0.0.1:8080", None);
        assert!(h.points_here("http://127.0.0.1:8080/mcp/admin/mcp", "admin"));
        assert!(h.points_here("http://localhost:8080/mcp/memory/mcp/", "memory"));
        assert!(!h.points_here("http://127.0.0.1:8080/mcp/admin/mcp", "memory"), "wrong mount");
        assert!(!h.points_here("http://127.0.0.1:9090/mcp/admin/mcp", "admin"), "wrong port");
        assert!(!h.points_here("http://10.1.2.3:8080/mcp/admin/mcp", "admin"), "loopback bind, LAN url");
        assert!(!h.points_here("ftp://127.0.0.1:8080/mcp/admin/mcp", "admin"));
        assert!(!h.points_here("not a url", "admin"));
        let h = here("0.0.0.0:8080", Some("https://hal0.example.com/"));
        assert!(h.points_here("https://hal0.example.com/mcp/admin/mcp", "admin"));
        assert!(h.points_here("http://[::1]:8080/mcp/admin/mcp", "admin"));
        assert!(!h.points_here("https://other.example.com/mcp/admin/mcp", "admin"));
    }

    #[test]
    fn exit_codes() {
        let mut r = Report { rows: vec![row("a", Status::Ok, "")] };
        assert_eq!((r.exit_code(false), r.exit_code(true)), (0, 0));
        r.rows.push(row("b", Status::Warn, ""));
        assert_eq!((r.exit_code(false), r.exit_code(true)), (0, 1));
        r.rows.push(row("c", Status::Fail, ""));
        assert_eq!((r.exit_code(false), r.exit_code(true)), (1, 1));
        assert_eq!(r.to_json()["rows"][2], serde_json::json!({"name": "c", "status": "fail", "detail": ""}));
    }
}
