//! `hal0.toml`: the typed view (serde, defaults for everything, unknown keys refused) and
//! in-place edits through toml_edit so an operator's comments and ordering survive. An edit
//! reads and writes under the file's lock, so `hal0 config set` and `PUT /api/settings` at
//! the same moment both land.

use crate::base::error::{Error, Result};
use crate::base::paths::{Paths, read_optional, with_lock, write_atomic};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

pub mod live;
pub mod retention;
pub(crate) mod unit;
pub use retention::{Approvals, Audit};

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub network: Network,
    pub bridge: Bridge,
    pub memory: Memory,
    pub hermes: Hermes,
    pub skills: Skills,
    pub mcp: Mcp,
    pub limits: Limits,
    pub relay: Relay,
    pub audit: Audit,
    pub approvals: Approvals,
    pub store: retention::Store,
    pub telemetry: Telemetry,
    pub oauth: Oauth,
}

/// OAuth 2.1 in: hal0 as the authorization server of its own MCP mounts, for clients that
/// speak OAuth only (claude.ai, ChatGPT). The issuer is `network.public_url` + `/oauth`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Oauth {
    /// Serve the OAuth mounts (`/oauth/<mount>/mcp`) and the authorization server.
    pub enabled: bool,
    /// Minutes an access token lives.
    pub access_minutes: u32,
    /// Days a refresh token lives (each use rotates it).
    pub refresh_days: u32,
}

impl Default for Oauth {
    fn default() -> Self {
        Oauth { enabled: false, access_minutes: 60, refresh_days: 30 }
    }
}

/// `[telemetry]`: its rules live with the traces they configure.
pub use crate::base::observe::telemetry::Telemetry;

/// The agent relay: bots asking each other questions.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Relay {
    /// Serve `hal0-relay` at /mcp/relay/mcp and the bots' WebSocket at /bridge/connect.
    pub enabled: bool,
    /// Seconds an ask waits for its answer; each heartbeat of the asked bot re-arms it.
    pub ask_timeout_secs: u64,
    /// Seconds between the relay's pings on a bot's WebSocket; a bot that has not answered
    /// the previous ping by the next one is disconnected (a half-open socket).
    pub ping_secs: u64,
    /// A PostgreSQL URL: the history lives there, and relays sharing it reach each other's
    /// bots. Unset: the history is in hal0's SQLite store (or `DATABASE_URL` when set).
    pub database_url: Option<String>,
    /// This relay's name among those sharing the database (default `HOSTNAME:PORT`).
    pub node: Option<String>,
    /// Ended exchanges older than this many days are pruned, with the conversations left
    /// without any (0: kept forever).
    pub history_retention_days: u32,
    /// `[relay.langfuse]`: export of ended exchanges to Langfuse (off by default).
    pub langfuse: Langfuse,
    /// Bots that are also A2A agents with a public Agent Card at
    /// `/a2a/relay/<bot>/.well-known/agent-card.json` (none by default).
    pub a2a_bots: Vec<String>,
}

impl Default for Relay {
    fn default() -> Self {
        Relay {
            enabled: true,
            ask_timeout_secs: 120,
            ping_secs: 20,
            database_url: None,
            node: None,
            history_retention_days: 90,
            langfuse: Langfuse::default(),
            a2a_bots: Vec::new(),
        }
    }
}

impl Relay {
    /// The PostgreSQL URL the relay uses, if any: `database_url`, else `DATABASE_URL`.
    pub fn database(&self) -> Option<String> {
        self.database_url.clone().or_else(|| std::env::var("DATABASE_URL").ok()).filter(|u| !u.trim().is_empty())
    }
}

/// `[relay.langfuse]`: each ended exchange goes to Langfuse as a span of its conversation's
/// trace (`crate::relay::langfuse`). The keys are not here: `LANGFUSE_PUBLIC_KEY` and
/// `LANGFUSE_SECRET_KEY` live in api.env.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Langfuse {
    /// Export ended exchanges.
    pub enabled: bool,
    /// Langfuse's address: the cloud or a self-hosted instance (without `/api/...`).
    pub base_url: String,
    /// Most milliseconds an ended exchange waits for its batch to be sent.
    pub flush_ms: u64,
}

impl Default for Langfuse {
    fn default() -> Self {
        Langfuse { enabled: false, base_url: "https://cloud.langfuse.com".into(), flush_ms: 1000 }
    }
}

/// What one daemon holds open at most: connections, MCP sessions, and how long a client may
/// take to send a request's headers.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Open TCP connections; past it, new ones wait in the kernel's backlog.
    pub max_connections: usize,
    /// Open TCP connections of one peer address; past it, its new ones are refused (503).
    pub max_connections_per_peer: usize,
    /// The same for a loopback address (127.0.0.0/8, ::1): the box's own bots and agents,
    /// and every client of a reverse proxy on the box, arrive from there together.
    pub max_connections_per_local_peer: usize,
    /// Seconds a client has to send a request's headers before the connection is closed.
    pub header_timeout_secs: u64,
    /// Seconds a client has to send a request's body once its headers arrived.
    pub body_timeout_secs: u64,
    /// Open MCP sessions across every mount.
    pub max_sessions: usize,
    /// Open MCP sessions of one credential (one key, or every anonymous caller together).
    pub max_sessions_per_key: usize,
    /// Seconds an MCP session may sit unused before it is closed.
    pub session_idle_secs: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 512,
            max_connections_per_peer: 64,
            max_connections_per_local_peer: 512,
            header_timeout_secs: 10,
            body_timeout_secs: 30,
            max_sessions: 1000,
            max_sessions_per_key: 128,
            session_idle_secs: 300,
        }
    }
}

impl Limits {
    /// Each bound with its allowed range: (key, value, min, max).
    fn bounds(&self) -> [(&'static str, u64, u64, u64); 8] {
        [
            ("max_connections", self.max_connections as u64, 8, 65_536),
            ("max_connections_per_peer", self.max_connections_per_peer as u64, 1, 65_536),
            ("max_connections_per_local_peer", self.max_connections_per_local_peer as u64, 1, 65_536),
            ("header_timeout_secs", self.header_timeout_secs, 1, 300),
            ("body_timeout_secs", self.body_timeout_secs, 1, 3600),
            ("max_sessions", self.max_sessions as u64, 1, 100_000),
            ("max_sessions_per_key", self.max_sessions_per_key as u64, 1, 100_000),
            ("session_idle_secs", self.session_idle_secs, 10, 86_400),
        ]
    }
}

/// The MCP server registry and its proxy.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Mcp {
    /// How long a gated proxied call waits for a decision before it answers `pending_approval`.
    pub gate_wait_secs: u64,
    /// How long one proxied call may take at the upstream server.
    pub call_timeout_secs: u64,
    /// Where `hal0 mcp catalog refresh` reads the catalogue from (a file path or an https URL).
    pub catalog_url: Option<String>,
    /// How often a long wait of an MCP call (agent_run_wait, a gated call) reports progress to
    /// a client that sent a progress token.
    pub progress_secs: u64,
    /// The npm registry `npm:` installs are pinned from (default https://registry.npmjs.org).
    pub npm_registry: Option<String>,
    /// The PyPI index `uvx:` installs are pinned from (default https://pypi.org).
    pub pypi_index: Option<String>,
}

impl Default for Mcp {
    fn default() -> Self {
        Mcp {
            gate_wait_secs: 30,
            call_timeout_secs: 120,
            catalog_url: None,
            progress_secs: 5,
            npm_registry: None,
            pypi_index: None,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Skills {
    /// hal0's shipped skills, read-only (default /usr/share/hal0/skills).
    pub shipped_dir: Option<PathBuf>,
    /// The operator's drop-in skills, where approved pushes are written (default <state>/skills).
    pub dropin_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Network {
    /// Address `hal0 serve` listens on.
    pub bind: String,
    /// The URL remote clients use to reach this box (printed in `claude mcp add` lines).
    pub public_url: Option<String>,
    /// PEM certificate chain for https on `hal0 serve` (with `tls_key`); re-read when it changes.
    pub tls_cert: Option<PathBuf>,
    /// PEM private key for `tls_cert`.
    pub tls_key: Option<PathBuf>,
    /// Listen on a non-loopback `bind` even while auth is off (no box key): anyone on the
    /// network then reads what the admin tier reads (writes still come from this box only).
    /// Off: `hal0 serve` refuses such a bind until `hal0 auth rotate admin` arms auth.
    pub allow_unauthenticated: bool,
    /// Extra `Host` names hal0 answers (beyond loopback, its LAN addresses and hostname, the
    /// public URL's host): `name`, `name:port` or `name:*`; `*` turns the check off.
    /// Added to `HAL0_MCP_ALLOWED_HOSTS`.
    pub allowed_hosts: Vec<String>,
    /// Extra browser `Origin`s allowed (`scheme://host[:port]`). Added to
    /// `HAL0_MCP_ALLOWED_ORIGINS`.
    pub allowed_origins: Vec<String>,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            bind: "127.0.0.1:8080".into(),
            public_url: None,
            tls_cert: None,
            tls_key: None,
            allow_unauthenticated: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Bridge {
    pub enabled: bool,
    pub max_concurrent_runs_per_client: u32,
    pub run_retention_days: u32,
}

impl Default for Bridge {
    fn default() -> Self {
        Bridge { enabled: true, max_concurrent_runs_per_client: 4, run_retention_days: 30 }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Memory {
    pub enabled: bool,
    /// Finished memory operations older than this many days are pruned (0: kept forever).
    pub operations_retention_days: u32,
    /// Change-history entries older than this many days are pruned, except each note's
    /// newest (0: kept forever).
    pub history_retention_days: u32,
}

impl Default for Memory {
    fn default() -> Self {
        Memory { enabled: true, operations_retention_days: 30, history_retention_days: 365 }
    }
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Hermes {
    /// Hermes's home directory (`HAL0_HERMES_HOME` overrides).
    pub home: Option<PathBuf>,
    /// A shell command that restarts Hermes after hal0 changed its `mcp_servers` (run by
    /// `sh -c`); unset, hal0 only says that a restart is needed.
    pub restart_command: Option<String>,
}

impl Config {
    /// Load `hal0.toml`; a missing file means defaults.
    pub fn load(paths: &Paths) -> Result<Config> {
        let path = paths.hal0_toml();
        match read_optional(&path)? {
            None => Ok(Config::default()),
            Some(text) => Config::parse(&path, &text),
        }
    }

    /// Parse and validate; every error names the file, the line and the key.
    pub fn parse(path: &Path, text: &str) -> Result<Config> {
        let cfg: Config = toml_edit::de::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of_offset(text, s.start));
            let key = line.and_then(|l| key_on_line(text, l));
            let msg = e.message().trim().to_string();
            config_error(path, line, key.as_deref(), &msg)
        })?;
        cfg.validate(path, text)?;
        Ok(cfg)
    }

    fn validate(&self, path: &Path, text: &str) -> Result<()> {
        if self.network.bind.parse::<SocketAddr>().is_err() {
            return Err(config_error(
                path,
                find_key_line(text, "network", "bind"),
                Some("network.bind"),
                &format!("`{}` is not a HOST:PORT address such as 127.0.0.1:8080", self.network.bind),
            ));
        }
        if let Some(u) = &self.network.public_url
            && let Err(why) = check_public_url(u)
        {
            return Err(config_error(
                path,
                find_key_line(text, "network", "public_url"),
                Some("network.public_url"),
                &format!("`{}` {why}", crate::base::term::safe_line(u)),
            ));
        }
        if self.oauth.enabled
            && let Err(why) = check_issuer(self.network.public_url.as_deref())
        {
            return Err(config_error(path, find_key_line(text, "oauth", "enabled"), Some("oauth.enabled"), why));
        }
        for (key, v, min, max) in
            [("access_minutes", self.oauth.access_minutes, 5, 1440), ("refresh_days", self.oauth.refresh_days, 1, 365)]
        {
            if !(min..=max).contains(&v) {
                return Err(config_error(
                    path,
                    find_key_line(text, "oauth", key),
                    Some(&format!("oauth.{key}")),
                    &format!("must be between {min} and {max}"),
                ));
            }
        }
        if let Some(u) = &self.telemetry.otlp_endpoint {
            let ok = reqwest::Url::parse(u).is_ok_and(|url| {
                matches!(url.scheme(), "http" | "https")
                    && url.host_str().is_some()
                    && url.username().is_empty()
                    && url.password().is_none()
                    && url.query().is_none()
                    && url.fragment().is_none()
            });
            if !ok {
                return Err(config_error(
                    path,
                    find_key_line(text, "telemetry", "otlp_endpoint"),
                    Some("telemetry.otlp_endpoint"),
                    &format!(
                        "`{}` is not an http:// or https:// URL of an OTLP/HTTP collector without a user, password, query or fragment (e.g. http://127.0.0.1:4318)",
                        crate::base::term::safe_line(u)
                    ),
                ));
            }
        }
        if self.telemetry.service_name.trim().is_empty() {
            return Err(config_error(
                path,
                find_key_line(text, "telemetry", "service_name"),
                Some("telemetry.service_name"),
                "must not be empty",
            ));
        }
        if self.bridge.max_concurrent_runs_per_client == 0 {
            return Err(config_error(
                path,
                find_key_line(text, "bridge", "max_concurrent_runs_per_client"),
                Some("bridge.max_concurrent_runs_per_client"),
                "must be at least 1",
            ));
        }
        if self.mcp.gate_wait_secs > 3600 {
            return Err(config_error(
                path,
                find_key_line(text, "mcp", "gate_wait_secs"),
                Some("mcp.gate_wait_secs"),
                "must be between 0 and 3600 seconds",
            ));
        }
        for (key, v, min, max) in self.limits.bounds() {
            if !(min..=max).contains(&v) {
                return Err(config_error(
                    path,
                    find_key_line(text, "limits", key),
                    Some(format!("limits.{key}").as_str()),
                    &format!("must be between {min} and {max}"),
                ));
            }
        }
        for (key, v, min, max) in
            [("ask_timeout_secs", self.relay.ask_timeout_secs, 1, 600), ("ping_secs", self.relay.ping_secs, 1, 300)]
        {
            if !(min..=max).contains(&v) {
                return Err(config_error(
                    path,
                    find_key_line(text, "relay", key),
                    Some(format!("relay.{key}").as_str()),
                    &format!("must be between {min} and {max} seconds"),
                ));
            }
        }
        if let Some(u) = &self.relay.database_url
            && let Err(e) = u.parse::<tokio_postgres::Config>()
        {
            return Err(config_error(
                path,
                find_key_line(text, "relay", "database_url"),
                Some("relay.database_url"),
                &format!(
                    "is not a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE) or key=value string: {e}"
                ),
            ));
        }
        // A bridge client's name (the rule `hal0 bridge add` checks).
        let bot_name = |b: &str| {
            !b.is_empty()
                && b.len() <= 32
                && b.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-')
        };
        if let Some(bad) = self.relay.a2a_bots.iter().find(|b| !bot_name(b)) {
            return Err(config_error(
                path,
                find_key_line(text, "relay", "a2a_bots"),
                Some("relay.a2a_bots"),
                &format!("`{bad}` is not a bot's name (1 to 32 lower-case letters, digits, `_` or `-`)"),
            ));
        }
        if let Some(n) = &self.relay.node
            && (n.is_empty() || n.len() > 128 || n.chars().any(|c| c.is_whitespace() || c.is_control()))
        {
            return Err(config_error(
                path,
                find_key_line(text, "relay", "node"),
                Some("relay.node"),
                "must be 1 to 128 characters without spaces (a name such as box-a or box-a:8080)",
            ));
        }
        if let Err(why) = check_langfuse_url(&self.relay.langfuse.base_url) {
            return Err(config_error(
                path,
                find_key_line(text, "relay.langfuse", "base_url"),
                Some("relay.langfuse.base_url"),
                &why,
            ));
        }
        if !(50..=60_000).contains(&self.relay.langfuse.flush_ms) {
            return Err(config_error(
                path,
                find_key_line(text, "relay.langfuse", "flush_ms"),
                Some("relay.langfuse.flush_ms"),
                "must be between 50 and 60000 milliseconds",
            ));
        }
        if !(1..=3600).contains(&self.mcp.call_timeout_secs) {
            return Err(config_error(
                path,
                find_key_line(text, "mcp", "call_timeout_secs"),
                Some("mcp.call_timeout_secs"),
                "must be between 1 and 3600 seconds",
            ));
        }
        if !(1..=60).contains(&self.mcp.progress_secs) {
            return Err(config_error(
                path,
                find_key_line(text, "mcp", "progress_secs"),
                Some("mcp.progress_secs"),
                "must be between 1 and 60 seconds",
            ));
        }
        for (key, v, min, max) in retention::bounds(self) {
            if !(min..=max).contains(&v) {
                let (section, name) = key.rsplit_once('.').unwrap_or(("", key));
                let zero = if min == 0 { " (0: no limit)" } else { "" };
                return Err(config_error(
                    path,
                    find_key_line(text, section, name),
                    Some(key),
                    &format!("must be between {min} and {max}{zero}"),
                ));
            }
        }
        Ok(())
    }

    pub fn bind_addr(&self) -> SocketAddr {
        self.network.bind.parse().expect("validated at load")
    }
}

/// The keys of hal0.toml with their types, defaults and meaning (`GET /api/settings/schema`).
pub fn schema() -> serde_json::Value {
    let d = Config::default();
    let mut keys = serde_json::json!({
        "network.bind": {"type": "string", "default": d.network.bind, "description": "HOST:PORT hal0 serve listens on (restart to apply)"},
        "network.public_url": {"type": ["string", "null"], "default": null, "description": "the URL remote clients use; printed in claude mcp add lines"},
        "network.tls_cert": {"type": ["string", "null"], "default": null, "description": "PEM certificate chain: hal0 serve speaks https (with network.tls_key); re-read when the file changes"},
        "network.tls_key": {"type": ["string", "null"], "default": null, "description": "PEM private key of network.tls_cert"},
        "network.allow_unauthenticated": {"type": "boolean", "default": false, "description": "listen on a non-loopback network.bind while auth is off (anyone on the network reads; writes only from this box); off: hal0 serve refuses until hal0 auth rotate admin"},
        "bridge.enabled": {"type": "boolean", "default": d.bridge.enabled, "description": "serve hal0-agents at /mcp/agents/mcp"},
        "bridge.max_concurrent_runs_per_client": {"type": "integer", "minimum": 1, "default": d.bridge.max_concurrent_runs_per_client, "description": "unfinished runs one client may have"},
        "memory.enabled": {"type": "boolean", "default": d.memory.enabled, "description": "serve hal0-memory at /mcp/memory/mcp"},
        "skills.shipped_dir": {"type": ["string", "null"], "default": "/usr/share/hal0/skills", "description": "shipped skills (read-only)"},
        "skills.dropin_dir": {"type": ["string", "null"], "default": "<state>/skills", "description": "drop-in skills; approved pushes land here"},
        "hermes.home": {"type": ["string", "null"], "default": null, "description": "Hermes's home (HAL0_HERMES_HOME overrides; default $HOME/.hermes)"},
        "hermes.restart_command": {"type": ["string", "null"], "default": null, "description": "shell command run after hal0 changes Hermes's mcp_servers (unset: hal0 says a restart is needed)"},
        "mcp.gate_wait_secs": {"type": "integer", "minimum": 0, "maximum": 3600, "default": d.mcp.gate_wait_secs, "description": "how long a gated proxied call waits for a decision before answering pending_approval"},
        "mcp.call_timeout_secs": {"type": "integer", "minimum": 1, "maximum": 3600, "default": d.mcp.call_timeout_secs, "description": "how long one proxied call may take at the upstream server"},
        "mcp.progress_secs": {"type": "integer", "minimum": 1, "maximum": 60, "default": d.mcp.progress_secs, "description": "how often a long wait of an MCP call reports progress to a client that sent a progress token"},
        "mcp.catalog_url": {"type": ["string", "null"], "default": null, "description": "file path or https URL `hal0 mcp catalog refresh` reads"},
        "relay.enabled": {"type": "boolean", "default": d.relay.enabled, "description": "serve hal0-relay at /mcp/relay/mcp and the bots' WebSocket at /bridge/connect"},
        "relay.ask_timeout_secs": {"type": "integer", "minimum": 1, "maximum": 600, "default": d.relay.ask_timeout_secs, "description": "seconds an ask waits for its answer; each heartbeat of the asked bot re-arms it"},
        "relay.ping_secs": {"type": "integer", "minimum": 1, "maximum": 300, "default": d.relay.ping_secs, "description": "seconds between pings on a bot's WebSocket; no pong by the next one disconnects it"},
        "relay.database_url": {"type": ["string", "null"], "default": null, "description": "PostgreSQL URL for the relay's history; relays sharing it reach each other's bots (unset: DATABASE_URL, else the SQLite store)"},
        "relay.node": {"type": ["string", "null"], "default": null, "description": "this relay's name among those sharing the database (default HOSTNAME:PORT)"},
        "relay.langfuse.enabled": {"type": "boolean", "default": d.relay.langfuse.enabled, "description": "export each ended exchange to Langfuse (a span of its conversation's trace); keys LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY in api.env"},
        "relay.langfuse.base_url": {"type": "string", "default": d.relay.langfuse.base_url, "description": "Langfuse's http(s) address, cloud or self-hosted (no user, password, query or fragment)"},
        "relay.langfuse.flush_ms": {"type": "integer", "minimum": 50, "maximum": 60000, "default": d.relay.langfuse.flush_ms, "description": "milliseconds an ended exchange waits at most before its batch is sent to Langfuse"},
        "limits.max_connections": {"type": "integer", "minimum": 8, "maximum": 65536, "default": d.limits.max_connections, "description": "open TCP connections at most; new ones wait past it"},
        "limits.max_connections_per_peer": {"type": "integer", "minimum": 1, "maximum": 65536, "default": d.limits.max_connections_per_peer, "description": "open TCP connections of one peer address; its next one is refused (503 request.too_many_connections)"},
        "limits.max_connections_per_local_peer": {"type": "integer", "minimum": 1, "maximum": 65536, "default": d.limits.max_connections_per_local_peer, "description": "open TCP connections of one loopback address (the box's own bots, a reverse proxy on the box); its next one is refused (503 request.too_many_connections)"},
        "limits.header_timeout_secs": {"type": "integer", "minimum": 1, "maximum": 300, "default": d.limits.header_timeout_secs, "description": "seconds a client has to send a request's headers"},
        "limits.body_timeout_secs": {"type": "integer", "minimum": 1, "maximum": 3600, "default": d.limits.body_timeout_secs, "description": "seconds a client has to send a request's body"},
        "limits.max_sessions": {"type": "integer", "minimum": 1, "maximum": 100000, "default": d.limits.max_sessions, "description": "open MCP sessions across every mount"},
        "limits.max_sessions_per_key": {"type": "integer", "minimum": 1, "maximum": 100000, "default": d.limits.max_sessions_per_key, "description": "open MCP sessions of one credential (anonymous callers share one count)"},
        "limits.session_idle_secs": {"type": "integer", "minimum": 10, "maximum": 86400, "default": d.limits.session_idle_secs, "description": "an MCP session unused this long is closed"},
        "telemetry.otlp_endpoint": {"type": ["string", "null"], "default": null, "description": "an OTLP/HTTP collector's base URL; every MCP tool call becomes a span sent to <url>/v1/traces (unset: OTEL_EXPORTER_OTLP_ENDPOINT, else no traces)"},
        "oauth.enabled": {"type": "boolean", "default": d.oauth.enabled, "description": "serve hal0's MCP servers to OAuth clients at /oauth/<mount>/mcp, a person consenting to each (needs an https network.public_url: the issuer is it plus /oauth)"},
        "oauth.access_minutes": {"type": "integer", "minimum": 5, "maximum": 1440, "default": d.oauth.access_minutes, "description": "minutes an OAuth access token lives"},
        "oauth.refresh_days": {"type": "integer", "minimum": 1, "maximum": 365, "default": d.oauth.refresh_days, "description": "days an OAuth refresh token lives (each use rotates it; a reused one ends the grant)"},
        "telemetry.service_name": {"type": "string", "default": d.telemetry.service_name, "description": "the spans' service.name"},
    });
    if let Some(m) = keys.as_object_mut() {
        m.extend(retention::schema(&d));
        // (Outside the literal above: json! would pass its recursion limit.)
        m.insert("mcp.npm_registry".into(), serde_json::json!({"type": ["string", "null"], "default": null, "description": "the npm registry npm: installs and hal0 mcp update ask for the exact release (unset: HAL0_NPM_REGISTRY, else https://registry.npmjs.org)"}));
        m.insert("mcp.pypi_index".into(), serde_json::json!({"type": ["string", "null"], "default": null, "description": "the PyPI index uvx: installs and hal0 mcp update ask for the exact release (unset: HAL0_PYPI_INDEX, else https://pypi.org)"}));
        m.insert("network.allowed_hosts".into(), serde_json::json!({"type": "array", "items": {"type": "string"}, "default": [], "description": "extra Host names hal0 answers: name, name:port or name:* (restart to apply; HAL0_MCP_ALLOWED_HOSTS adds to it)"}));
        m.insert("relay.a2a_bots".into(), serde_json::json!({"type": "array", "items": {"type": "string"}, "default": [], "description": "bots that are also A2A agents, each with a public Agent Card at /a2a/relay/<bot>/.well-known/agent-card.json (a reload applies it)"}));
        m.insert("network.allowed_origins".into(), serde_json::json!({"type": "array", "items": {"type": "string"}, "default": [], "description": "extra browser Origins allowed, scheme://host[:port] (restart to apply; HAL0_MCP_ALLOWED_ORIGINS adds to it)"}));
    }
    keys
}

/// Settings that name a program hal0 runs, a file or directory it reads or writes, a place
/// it sends what it knows, or who may reach it: only the box's shell (the file itself, or
/// `hal0 config set`) writes them; `config_write` (REST, hal0-admin, the dashboard, an
/// approved card) refuses them whatever the key. Each with why.
pub const SHELL_ONLY: &[(&str, &str)] = &[
    ("hermes.restart_command", "hal0 runs it with sh -c"),
    ("hermes.home", "hal0 writes Hermes's MCP server entries (programs Hermes starts) there"),
    ("skills.shipped_dir", "hal0 loads skills from it"),
    ("skills.dropin_dir", "hal0 writes approved skills there"),
    ("mcp.catalog_url", "the catalog names the programs hal0 installs"),
    ("mcp.npm_registry", "it decides which code npm: installs run"),
    ("mcp.pypi_index", "it decides which code uvx: installs run"),
    ("network.bind", "it decides who can reach hal0"),
    ("oauth.enabled", "it opens hal0 to clients a person approves over OAuth"),
    ("network.allow_unauthenticated", "it decides who can reach hal0"),
    ("network.allowed_hosts", "it decides who can reach hal0"),
    ("network.allowed_origins", "it decides which pages may call hal0"),
    ("network.tls_cert", "hal0 reads that file"),
    ("network.tls_key", "hal0 reads that file"),
    ("relay.database_url", "the relay's whole history goes there"),
    ("relay.a2a_bots", "it publishes a bot's card to anyone who can reach hal0"),
    ("relay.langfuse.base_url", "ended exchanges are sent there"),
    ("telemetry.otlp_endpoint", "every MCP call is sent there as a span"),
];

/// Refuse `dotted` when only the box's shell may write it ([`SHELL_ONLY`]).
pub fn check_remote_write(dotted: &str) -> Result<()> {
    let key: String = dotted.split('.').map(str::trim).collect::<Vec<_>>().join(".");
    match SHELL_ONLY.iter().find(|(k, _)| k.eq_ignore_ascii_case(&key)) {
        None => Ok(()),
        Some((k, why)) => Err(Error::forbidden_code(
            "config.shell_only",
            format!(
                "`{k}` is set at the box's shell only ({why}), never over the API: on the box, run \
                 sudo hal0 config set {k} VALUE (or edit hal0.toml)"
            ),
        )),
    }
}

/// Why `u` cannot be `network.public_url`, printed into lines people paste into a shell: it
/// must be an http:// or https:// URL with a host, no user or password, no query or
/// fragment, written only with letters, digits and `- . _ ~ : / [ ] %` (so no whitespace,
/// quote or shell metacharacter can reach a printed command line).
fn check_public_url(u: &str) -> std::result::Result<(), &'static str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | ':' | '/' | '[' | ']' | '%');
    if let Some(c) = u.chars().find(|&c| !plain(c)) {
        return Err(if c == '@' {
            "holds a user or password (`@`); the public URL names only the scheme, host, port and path"
        } else if c == '?' || c == '#' {
            "holds a query or fragment; the public URL names only the scheme, host, port and path"
        } else {
            "holds a character a URL to paste may not hold (whitespace, a quote or a shell metacharacter); \
             use only letters, digits and - . _ ~ : / [ ] %"
        });
    }
    let url = reqwest::Url::parse(u).map_err(|_| "is not an http:// or https:// URL with a host")?;
    if !matches!(url.scheme(), "http" | "https")
        || !(u.starts_with("http://") || u.starts_with("https://"))
        || url.host_str().is_none_or(str::is_empty)
        || url_host(u).is_none()
    {
        return Err("is not an http:// or https:// URL with a host");
    }
    Ok(())
}

/// Why OAuth cannot be on with this `network.public_url`: the issuer is that URL plus
/// `/oauth`, and OAuth 2.1 wants https (plain http only on a loopback address, for tests
/// and a browser on the box itself).
fn check_issuer(public_url: Option<&str>) -> std::result::Result<(), &'static str> {
    let Some(u) = public_url else {
        return Err("needs network.public_url: the https address the client's cloud reaches (hal0 config set \
                    network.public_url https://box.example.com)");
    };
    if u.starts_with("https://") {
        return Ok(());
    }
    let loopback =
        url_host(u).is_some_and(|h| h == "localhost" || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()));
    if loopback {
        Ok(())
    } else {
        Err("needs an https network.public_url (plain http only on a loopback address): OAuth clients send tokens \
             to it; put hal0's TLS (network.tls_cert) or a reverse proxy or tunnel in front")
    }
}

/// Why `u` cannot be `relay.langfuse.base_url`: an http(s) URL with a host and nothing a
/// credential could hide in (the keys live in api.env). The value is echoed only when it
/// holds no `@`, so a password written into it never reaches a log.
fn check_langfuse_url(u: &str) -> std::result::Result<(), String> {
    if u.contains('@') {
        return Err("holds a user or password (`@`): the keys go in api.env as LANGFUSE_PUBLIC_KEY and \
                    LANGFUSE_SECRET_KEY, the URL names only the scheme, host, port and path"
            .into());
    }
    let shown = crate::base::term::safe_line(u);
    let url = match (crate::base::weburl::HttpUrl::parse(u), reqwest::Url::parse(u.trim())) {
        (Some(_), Ok(url)) => url,
        _ => {
            return Err(format!(
                "`{shown}` is not an http:// or https:// URL with a host (e.g. https://cloud.langfuse.com or your \
                 self-hosted Langfuse)"
            ));
        }
    };
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("`{shown}` holds a query or fragment; give only the scheme, host, port and path"));
    }
    Ok(())
}

/// The host part of an http(s) URL, without brackets or port.
pub fn url_host(url: &str) -> Option<String> {
    crate::base::weburl::HttpUrl::parse(url).map(|u| u.host)
}

fn config_error(path: &Path, line: Option<usize>, key: Option<&str>, msg: &str) -> Error {
    let at = match (line, key) {
        (Some(l), Some(k)) => format!(" line {l}, key `{k}`"),
        (Some(l), None) => format!(" line {l}"),
        (None, Some(k)) => format!(" key `{k}`"),
        (None, None) => String::new(),
    };
    // A value echoed back is cut: a caller that sent megabytes gets its key named, not them.
    const ECHO: usize = 600;
    let msg = match crate::base::redact::cut(msg, ECHO) {
        (whole, false) => whole.to_string(),
        (head, true) => format!("{head}… ({} bytes)", msg.len()),
    };
    Error::invalid(
        "config.invalid",
        format!("{}{at}: {msg} (fix the file, or remove it to use defaults)", path.display()),
    )
}

fn line_of_offset(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The name of a `[section]` (or `[[section]]`) header line, its comment left out.
fn header_name(t: &str) -> String {
    let t = t.trim_start_matches('[');
    t.split(']').next().unwrap_or("").trim().to_string()
}

/// The dotted key defined on a line: `[section]` context plus the bare key before `=`.
fn key_on_line(text: &str, line: usize) -> Option<String> {
    let mut section = String::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            section = header_name(t);
        }
        if i + 1 == line {
            let (k, _) = t.split_once('=')?;
            let k = k.trim().trim_matches('"');
            return Some(if section.is_empty() { k.to_string() } else { format!("{section}.{k}") });
        }
    }
    None
}

fn find_key_line(text: &str, section: &str, key: &str) -> Option<usize> {
    let mut cur = String::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            cur = header_name(t);
        } else if cur == section && t.split_once('=').map(|(k, _)| k.trim().trim_matches('"')) == Some(key) {
            return Some(i + 1);
        }
    }
    None
}

/// Set `section.key` (or `section.sub.key`) to `value` (a TOML literal, or a bare string) in `hal0.toml`, keeping
/// every comment and the order of everything else. The result is validated before it is
/// written; a bad value leaves the file as it was.
pub fn set_value(paths: &Paths, dotted: &str, raw: &str) -> Result<Config> {
    known_setting(dotted)?;
    let path = paths.hal0_toml();
    crate::base::paths::ensure_dir(&paths.config_dir)?;
    let set = with_lock(&path, || set_locked(&path, dotted, raw));
    set.map_err(|e| {
        // A value the typed config refuses is the command's fault, not the file's: say
        // which value of which setting, and what it takes.
        let marker = format!("key `{dotted}`: ");
        if e.code == "config.invalid"
            && let Some(at) = e.message.find(&marker)
        {
            // The rule's own words, unless it is serde's about types (then the schema's).
            let why = e.message[at + marker.len()..].trim_end_matches(" (fix the file, or remove it to use defaults)");
            let why = if why.contains("invalid type") || why.contains("invalid value") || why.contains("expected") {
                expected(dotted)
            } else {
                why.to_string()
            };
            // The value itself is not echoed: it may be a credential in the wrong place.
            Error::invalid(
                "config.invalid_value",
                format!("that is not a valid {dotted}: {why}; hal0.toml was not changed"),
            )
        } else {
            e
        }
    })
}

/// The effective configuration `effective` (TOML, as serialized) with ` # default` after
/// each setting that `file` (hal0.toml's text) does not set.
pub fn mark_defaults(effective: &str, file: &str) -> String {
    let doc: toml_edit::DocumentMut = file.parse().unwrap_or_default();
    let set = |dotted: &[&str]| {
        let mut item: Option<&toml_edit::Item> = Some(doc.as_item());
        for part in dotted {
            item = item.and_then(|i| i.get(part));
        }
        item.is_some()
    };
    let mut section: Vec<String> = Vec::new();
    let mut out = String::new();
    for line in effective.lines() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix('[').and_then(|h| h.strip_suffix(']')).filter(|h| !h.starts_with('[')) {
            section = h.split('.').map(|p| p.trim().trim_matches('"').to_string()).collect();
        } else if let Some((key, _)) = t.split_once(" = ").filter(|(k, _)| !k.contains(' ') && !line.starts_with(' ')) {
            let mut path: Vec<&str> = section.iter().map(String::as_str).collect();
            path.push(key.trim_matches('"'));
            if !set(&path) {
                out.push_str(line);
                out.push_str(if line.ends_with('[') { " # default\n" } else { "  # default\n" });
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `dotted` is a setting of `schema()`, or `config.unknown_key` with the nearest ones.
fn known_setting(dotted: &str) -> Result<()> {
    split_key(dotted)?;
    let schema = schema();
    let keys: Vec<&String> = schema.as_object().map(|m| m.keys().collect()).unwrap_or_default();
    if keys.iter().any(|k| *k == dotted) {
        return Ok(());
    }
    let mut near: Vec<(usize, &String)> =
        keys.iter().map(|k| (crate::base::term::edit_distance(k, dotted), *k)).collect();
    near.sort();
    let close: Vec<&str> = near.iter().take_while(|(d, _)| *d <= 3).take(3).map(|(_, k)| k.as_str()).collect();
    let section = dotted.split('.').next().unwrap_or("");
    let same: Vec<&str> =
        keys.iter().filter(|k| k.split('.').next() == Some(section)).map(|k| k.as_str()).take(12).collect();
    let hint = if !close.is_empty() {
        format!("did you mean {}?", close.join(" or "))
    } else if !same.is_empty() {
        format!("[{section}] has {}", same.join(", "))
    } else {
        "hal0 op settings_schema lists every setting".to_string()
    };
    Err(Error::invalid("config.unknown_key", format!("`{dotted}` is not a setting of hal0.toml: {hint}")))
}

/// What `dotted` takes, in words (from `schema()`).
fn expected(dotted: &str) -> String {
    let s = schema();
    let k = &s[dotted];
    let types: Vec<&str> = match &k["type"] {
        serde_json::Value::String(t) => vec![t.as_str()],
        serde_json::Value::Array(a) => a.iter().filter_map(|t| t.as_str()).filter(|t| *t != "null").collect(),
        _ => vec![],
    };
    let mut what = match types.first().copied() {
        Some("integer") => "a whole number".to_string(),
        Some("boolean") => "true or false".to_string(),
        Some("string") => "a string".to_string(),
        Some("array") => "a list of strings in TOML, such as '[\"hal0.lan\", \"box.example:8443\"]'".to_string(),
        _ => "a value".to_string(),
    };
    if let Some(e) = k["enum"].as_array() {
        what = format!("one of {}", e.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>().join(", "));
    }
    match (k["minimum"].as_u64(), k["maximum"].as_u64()) {
        (Some(lo), Some(hi)) => what.push_str(&format!(" from {lo} to {hi}")),
        (Some(lo), None) => what.push_str(&format!(" of at least {lo}")),
        _ => {}
    }
    match k["description"].as_str() {
        Some(d) => format!("it takes {what} ({d})"),
        None => format!("it takes {what}"),
    }
}

fn set_locked(path: &Path, dotted: &str, raw: &str) -> Result<Config> {
    let text = read_optional(path)?.unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let line = e.span().map(|s| line_of_offset(&text, s.start));
        config_error(path, line, None, e.message().trim())
    })?;
    let (tables, key) = split_key(dotted)?;
    let value: toml_edit::Value = raw
        .parse::<toml_edit::Value>()
        .ok()
        .filter(|v| !matches!(v, toml_edit::Value::InlineTable(_)))
        .unwrap_or_else(|| toml_edit::Value::from(raw));
    // Walk (and create) `[section]`, `[section.sub]`…; a table created here is implicit, so
    // only the innermost one with keys gets a header (inside an inline table, an inline one).
    let not_table = |i: usize| {
        let at = tables[..=i].join(".");
        Error::invalid("config.invalid_key", format!("`{at}` is not a table in {}", path.display()))
    };
    let mut item: &mut toml_edit::Item = doc.as_item_mut();
    for (i, name) in tables.iter().enumerate() {
        let fresh = if item.is_inline_table() {
            toml_edit::Item::Value(toml_edit::Value::InlineTable(toml_edit::InlineTable::new()))
        } else {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        };
        item = item.as_table_like_mut().ok_or_else(|| not_table(i))?.entry(name).or_insert(fresh);
        if !item.is_table_like() {
            return Err(not_table(i));
        }
    }
    let table = item.as_table_like_mut().ok_or_else(|| not_table(tables.len() - 1))?;
    match table.get_mut(key).and_then(|i| i.as_value_mut()) {
        Some(old) => {
            let decor = old.decor().clone();
            *old = value;
            *old.decor_mut() = decor;
        }
        None => {
            table.insert(key, toml_edit::Item::Value(value));
        }
    }
    let out = doc.to_string();
    let cfg = Config::parse(path, &out)?;
    write_atomic(path, out.as_bytes())?;
    Ok(cfg)
}

/// `section.key` or `section.sub.key` as the tables to walk and the key.
fn split_key(dotted: &str) -> Result<(Vec<&str>, &str)> {
    let parts: Vec<&str> = dotted.split('.').collect();
    if parts.len() < 2 || parts.iter().any(|p| p.trim().is_empty()) {
        return Err(Error::invalid(
            "config.invalid_key",
            format!("`{dotted}` is not SECTION.KEY, e.g. network.public_url or relay.langfuse.enabled"),
        ));
    }
    let (key, tables) = parts.split_last().expect("two parts at least");
    Ok((tables.to_vec(), key))
}

/// Remove `section.key` from `hal0.toml` (back to its default), keeping everything else;
/// a table left empty goes too. Answers the config and whether the key was set at all.
pub fn unset_value(paths: &Paths, dotted: &str) -> Result<(Config, bool)> {
    known_setting(dotted)?;
    let path = paths.hal0_toml();
    with_lock(&path, || unset_locked(&path, dotted))
}

fn unset_locked(path: &Path, dotted: &str) -> Result<(Config, bool)> {
    let Some(text) = read_optional(path)? else { return Ok((Config::default(), false)) };
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|e: toml_edit::TomlError| config_error(path, None, None, e.message().trim()))?;
    let (tables, key) = split_key(dotted)?;
    let mut table: Option<&mut dyn toml_edit::TableLike> = Some(doc.as_table_mut());
    for name in &tables {
        table = table.and_then(|t| t.get_mut(name)).and_then(|i| i.as_table_like_mut());
    }
    let removed = table.and_then(|t| t.remove(key)).is_some();
    if !removed {
        return Ok((Config::parse(path, &text)?, false));
    }
    // Drop the tables the removal left empty, innermost first (one that carries a comment
    // stays: the comment is the operator's).
    for depth in (1..=tables.len()).rev() {
        let (parents, name) = (&tables[..depth - 1], tables[depth - 1]);
        let mut parent: Option<&mut dyn toml_edit::TableLike> = Some(doc.as_table_mut());
        for p in parents {
            parent = parent.and_then(|t| t.get_mut(p)).and_then(|i| i.as_table_like_mut());
        }
        let Some(parent) = parent else { break };
        let commented = |i: &toml_edit::Item| {
            i.as_table().is_some_and(|t| {
                let d = t.decor();
                [d.prefix(), d.suffix()].into_iter().flatten().any(|r| r.as_str().is_some_and(|s| s.contains('#')))
            })
        };
        if parent.get(name).is_some_and(|i| i.as_table_like().is_some_and(|t| t.is_empty()) && !commented(i)) {
            parent.remove(name);
        } else {
            break;
        }
    }
    let out = doc.to_string();
    let cfg = Config::parse(path, &out)?;
    write_atomic(path, out.as_bytes())?;
    Ok((cfg, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_marked_and_set_values_are_not() {
        let effective =
            "[network]\nbind = \"0.0.0.0:8080\"\nallow_unauthenticated = false\n\n[mcp]\ngate_wait_secs = 30\n";
        let file = "[network]\nbind = \"0.0.0.0:8080\"\n";
        let out = mark_defaults(effective, file);
        assert!(out.contains("bind = \"0.0.0.0:8080\"\n"), "{out}");
        assert!(out.contains("allow_unauthenticated = false  # default"), "{out}");
        assert!(out.contains("gate_wait_secs = 30  # default"), "{out}");
        let _: toml_edit::DocumentMut = out.parse().expect("still TOML");
    }

    fn p() -> PathBuf {
        PathBuf::from("/etc/hal0/hal0.toml")
    }

    #[test]
    fn empty_is_defaults() {
        assert_eq!(Config::parse(&p(), "").unwrap(), Config::default());
        let c = Config::default();
        assert_eq!(c.network.bind, "127.0.0.1:8080");
        assert!(c.bridge.enabled);
        assert_eq!(c.bridge.max_concurrent_runs_per_client, 4);
        assert_eq!(c.bridge.run_retention_days, 30);
    }

    #[test]
    fn wrong_type_names_line_and_key() {
        let e = Config::parse(&p(), "# c\n[bridge]\nenabled = \"yes\"\n").unwrap_err();
        assert_eq!(e.code, "config.invalid");
        assert!(e.message.contains("/etc/hal0/hal0.toml line 3, key `bridge.enabled`"), "{}", e.message);
    }

    #[test]
    fn a_header_comment_is_not_part_of_the_key() {
        let e = Config::parse(&p(), "[bridge] # runs\nrun_retention_days = \"soon\"\n").unwrap_err();
        assert!(e.message.contains("line 2, key `bridge.run_retention_days`"), "{}", e.message);
    }

    #[test]
    fn unknown_key_is_refused() {
        let e = Config::parse(&p(), "[network]\nbnid = \"x\"\n").unwrap_err();
        assert!(e.message.contains("bnid"), "{}", e.message);
        assert!(e.message.contains("line 2"), "{}", e.message);
    }

    #[test]
    fn bad_bind_names_key() {
        let e = Config::parse(&p(), "[network]\nbind = \"localhost\"\n").unwrap_err();
        assert!(e.message.contains("line 2, key `network.bind`"), "{}", e.message);
    }

    #[test]
    fn progress_pace_is_bounded() {
        assert_eq!(Config::default().mcp.progress_secs, 5);
        assert_eq!(Config::parse(&p(), "[mcp]\nprogress_secs = 1\n").unwrap().mcp.progress_secs, 1);
        for bad in ["0", "61"] {
            let e = Config::parse(&p(), &format!("[mcp]\nprogress_secs = {bad}\n")).unwrap_err();
            assert!(e.message.contains("line 2, key `mcp.progress_secs`"), "{}", e.message);
            assert!(e.message.contains("between 1 and 60"), "{}", e.message);
        }
    }

    #[test]
    fn syntax_error_names_line() {
        let e = Config::parse(&p(), "[network]\nbind = \n").unwrap_err();
        assert!(e.message.contains("line 2"), "{}", e.message);
    }

    /// Threads each setting their own key round after round: every final value is the last
    /// one its thread wrote (without the file lock, a write based on a stale read put an
    /// older value of another key back).
    #[test]
    fn parallel_sets_lose_nothing() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::resolve(Some(d.path().join("etc")), Some(d.path().join("var")));
        std::fs::create_dir_all(&paths.config_dir).unwrap();
        std::fs::write(paths.hal0_toml(), "# operator comment\n[network]\nbind = \"127.0.0.1:9\"\n").unwrap();
        let value = |k: &str, r: u32| match k {
            "network.public_url" => format!("http://h{r}.example"),
            "hermes.restart_command" => format!("echo {r}"),
            _ => (r + 1).to_string(),
        };
        let keys = [
            "network.public_url",
            "hermes.restart_command",
            "bridge.run_retention_days",
            "bridge.max_concurrent_runs_per_client",
            "mcp.gate_wait_secs",
            "mcp.call_timeout_secs",
        ];
        let rounds = 6;
        std::thread::scope(|s| {
            for k in keys {
                let paths = &paths;
                s.spawn(move || {
                    for r in 0..rounds {
                        set_value(paths, k, &value(k, r)).unwrap();
                    }
                });
            }
        });
        let text = std::fs::read_to_string(paths.hal0_toml()).unwrap();
        assert!(text.starts_with("# operator comment\n"), "{text}");
        let got = serde_json::to_value(Config::load(&paths).unwrap()).unwrap();
        for k in keys {
            let (sec, key) = k.split_once('.').unwrap();
            let v = &got[sec][key];
            let shown = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
            assert_eq!(shown, value(k, rounds - 1), "{k} lost its last write:\n{text}");
        }
        assert_eq!(got["network"]["bind"], "127.0.0.1:9");
    }

    #[test]
    fn public_url_must_be_a_plain_http_url() {
        let cfg = |u: &str| Config::parse(&p(), &format!("[network]\npublic_url = {}\n", toml_edit::Value::from(u)));
        for good in [
            "https://hal0.example.com",
            "https://hal0.example.com:8443/",
            "http://192.168.1.20:8080",
            "http://[fd00::1]:8080/base/path",
            "https://xn--hl0-sna.example/a_b~c%20d",
        ] {
            assert_eq!(cfg(good).unwrap().network.public_url.as_deref(), Some(good));
        }
        for (bad, why) in [
            ("https://h.example/$(touch /tmp/p)", "shell metacharacter"),
            ("https://h.example/`id`", "shell metacharacter"),
            ("https://h.example/a;b", "shell metacharacter"),
            ("https://h.example/a&b", "shell metacharacter"),
            ("https://h.example/a|b", "shell metacharacter"),
            ("https://h.example/a b", "whitespace"),
            ("https://h.example/a\tb", "whitespace"),
            ("https://h.example/\"x", "a quote"),
            ("https://h.example/'x", "a quote"),
            ("https://h.example/a>b", "shell metacharacter"),
            ("https://h.example/a*", "shell metacharacter"),
            ("https://h.example/\u{1b}[2K", "shell metacharacter"),
            ("https://user:pw@h.example", "user or password"),
            ("https://h.example/?a=1", "query or fragment"),
            ("https://h.example/#top", "query or fragment"),
            ("ftp://h.example", "not an http:// or https:// URL"),
            ("https://", "not an http:// or https:// URL"),
            ("https:///path", "not an http:// or https:// URL"),
            ("hal0.example.com", "not an http:// or https:// URL"),
            ("HTTP://h.example", "not an http:// or https:// URL"),
        ] {
            let e = cfg(bad).unwrap_err();
            assert_eq!(e.code, "config.invalid", "{bad}");
            assert!(e.message.contains("line 2, key `network.public_url`"), "{bad}: {}", e.message);
            assert!(e.message.contains(why), "{bad}: {}", e.message);
            assert!(!e.message.contains('\u{1b}'), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn langfuse_is_off_by_default_and_its_section_is_checked() {
        let d = Config::default().relay.langfuse;
        assert_eq!((d.enabled, d.base_url.as_str(), d.flush_ms), (false, "https://cloud.langfuse.com", 1000));
        let c = Config::parse(
            &p(),
            "[relay]\nask_timeout_secs = 5\n\n[relay.langfuse]\nenabled = true\nbase_url = \"http://10.0.0.5:3000/lf/\"\n",
        )
        .unwrap();
        assert!(c.relay.langfuse.enabled);
        assert_eq!(c.relay.langfuse.base_url, "http://10.0.0.5:3000/lf/");
        assert_eq!(c.relay.ask_timeout_secs, 5);
        let parse = |body: &str| Config::parse(&p(), &format!("# c\n[relay.langfuse]\n{body}\n"));
        for (bad, why) in [
            ("base_url = \"cloud.langfuse.com\"", "is not an http:// or https:// URL"),
            ("base_url = \"ftp://lf.example\"", "is not an http:// or https:// URL"),
            ("base_url = \"https://\"", "is not an http:// or https:// URL"),
            ("base_url = \"https://lf.example/?project=1\"", "query or fragment"),
            ("base_url = \"https://pk-lf-1:sk-lf-secret@lf.example\"", "the keys go in api.env"),
            ("flush_ms = 10", "between 50 and 60000"),
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.code, "config.invalid", "{bad}");
            let key = bad.split(' ').next().unwrap();
            assert!(e.message.contains(&format!("line 3, key `relay.langfuse.{key}`")), "{bad}: {}", e.message);
            assert!(e.message.contains(why), "{bad}: {}", e.message);
            assert!(!e.message.contains("sk-lf-secret"), "{}", e.message);
        }
        let e = parse("public_key = \"pk-lf-1\"").unwrap_err();
        assert!(e.message.contains("public_key") && e.message.contains("line 3"), "{}", e.message);
    }

    #[test]
    fn nested_keys_are_set_and_unset_in_their_table() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::resolve(Some(d.path().join("etc")), Some(d.path().join("var")));
        let cfg = set_value(&paths, "relay.langfuse.enabled", "true").unwrap();
        assert!(cfg.relay.langfuse.enabled);
        set_value(&paths, "relay.langfuse.base_url", "https://lf.example").unwrap();
        set_value(&paths, "network.bind", "127.0.0.1:9").unwrap();
        let text = std::fs::read_to_string(paths.hal0_toml()).unwrap();
        assert_eq!(
            text,
            "[relay.langfuse]\nenabled = true\nbase_url = \"https://lf.example\"\n\n[network]\nbind = \"127.0.0.1:9\"\n"
        );
        let (cfg, removed) = unset_value(&paths, "relay.langfuse.enabled").unwrap();
        assert!(removed);
        assert!(!cfg.relay.langfuse.enabled);
        assert_eq!(cfg.relay.langfuse.base_url, "https://lf.example");
        for bad in ["relay", "relay..enabled", ".x", "relay.langfuse."] {
            assert_eq!(set_value(&paths, bad, "1").unwrap_err().code, "config.invalid_key", "{bad}");
        }
        let e = set_value(&paths, "network.bind.x", "1").unwrap_err();
        assert_eq!(e.code, "config.unknown_key");
        assert!(e.message.contains("did you mean network.bind?"), "{}", e.message);
        let e = set_value(&paths, "relay.langfuse.base_url", "nope").unwrap_err();
        assert_eq!(e.code, "config.invalid_value");
        assert_eq!(Config::load(&paths).unwrap().relay.langfuse.base_url, "https://lf.example", "left as it was");
    }

    /// Every setting of the typed config is in `schema()` (and nothing else is).
    #[test]
    fn the_schema_lists_every_setting() {
        fn leaves(prefix: &str, v: &serde_json::Value, out: &mut Vec<String>) {
            match v.as_object() {
                Some(m) => m.iter().for_each(|(k, v)| {
                    let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    leaves(&key, v, out)
                }),
                None => out.push(prefix.to_string()),
            }
        }
        let mut keys = Vec::new();
        leaves("", &serde_json::to_value(Config::default()).unwrap(), &mut keys);
        keys.sort();
        let mut listed: Vec<String> = schema().as_object().unwrap().keys().cloned().collect();
        listed.sort();
        assert_eq!(keys, listed);
    }

    #[test]
    fn url_host_parses() {
        assert_eq!(url_host("https://hal0.example.com:8443/x").as_deref(), Some("hal0.example.com"));
        assert_eq!(url_host("http://[fe80::1]:80").as_deref(), Some("fe80::1"));
        assert_eq!(url_host("http://").as_deref(), None);
    }
}
