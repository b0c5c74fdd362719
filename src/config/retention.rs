//! The sections of `hal0.toml` that bound the store: `[audit]` (how long the audit log keeps
//! its rows, a row cap, and where else each row goes), `[approvals]` (how long decided
//! approvals stay) and `[store]` (a size cap for `hal0.db` and how often it is pruned). The
//! other logs' windows live in their own sections: `[memory]` (operations, history),
//! `[relay]` (exchanges) and `[bridge]` (finished runs).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[audit]`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Audit {
    /// Rows older than this many days are pruned (0 keeps them forever).
    pub retention_days: u32,
    /// The newest rows kept at most; older ones are pruned (0: no cap).
    pub max_rows: u64,
    /// Also send every row to the system log: `none`, `syslog` or `journald`.
    pub forward: Forward,
    /// The socket rows are forwarded to (default `/dev/log` for syslog,
    /// `/run/systemd/journal/socket` for journald).
    pub forward_socket: Option<PathBuf>,
}

impl Default for Audit {
    fn default() -> Self {
        Audit { retention_days: 30, max_rows: 5_000_000, forward: Forward::None, forward_socket: None }
    }
}

/// Where audit rows are forwarded besides the store.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Forward {
    #[default]
    None,
    Syslog,
    Journald,
}

impl Audit {
    /// The socket rows go to, when forwarding is on.
    pub fn forward_to(&self) -> Option<PathBuf> {
        let default = match self.forward {
            Forward::None => return None,
            Forward::Syslog => "/dev/log",
            Forward::Journald => "/run/systemd/journal/socket",
        };
        Some(self.forward_socket.clone().unwrap_or_else(|| PathBuf::from(default)))
    }
}

/// `[approvals]`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Approvals {
    /// Decided approvals (approved, denied, expired) older than this many days are pruned;
    /// pending ones never are (0 keeps them forever).
    pub retention_days: u32,
    /// Hours a gated call's card waits for a person before it expires (it can no longer be
    /// approved; the caller asks again).
    pub expire_hours: u32,
    /// Take decisions over the network only from a dashboard session opened with a passkey
    /// (`approvals.passkey_required` otherwise); the box's shell always decides.
    pub passkey_required: bool,
}

impl Default for Approvals {
    fn default() -> Self {
        Approvals { retention_days: 90, expire_hours: 24, passkey_required: false }
    }
}

/// `[store]`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Store {
    /// The largest `hal0.db` may grow, in MiB (unset: the disk's size). When it is full,
    /// calls that change state are refused and reads keep working.
    pub max_size_mb: Option<u64>,
    /// Minutes between two prunings by `hal0 serve`.
    pub prune_every_mins: u64,
}

impl Default for Store {
    fn default() -> Self {
        Store { max_size_mb: None, prune_every_mins: 60 }
    }
}

/// `(key, value, min, max)` of every bounded number of these sections, for validation.
pub fn bounds(c: &super::Config) -> Vec<(&'static str, u64, u64, u64)> {
    let mut b = vec![
        ("audit.retention_days", u64::from(c.audit.retention_days), 0, 36_500),
        ("approvals.retention_days", u64::from(c.approvals.retention_days), 0, 36_500),
        ("approvals.expire_hours", u64::from(c.approvals.expire_hours), 1, 8_760),
        ("memory.operations_retention_days", u64::from(c.memory.operations_retention_days), 0, 36_500),
        ("memory.history_retention_days", u64::from(c.memory.history_retention_days), 0, 36_500),
        ("relay.history_retention_days", u64::from(c.relay.history_retention_days), 0, 36_500),
        ("bridge.run_retention_days", u64::from(c.bridge.run_retention_days), 0, 36_500),
        ("store.prune_every_mins", c.store.prune_every_mins, 1, 10_080),
    ];
    if c.audit.max_rows != 0 {
        b.push(("audit.max_rows", c.audit.max_rows, 1_000, 1_000_000_000));
    }
    if let Some(mb) = c.store.max_size_mb {
        b.push(("store.max_size_mb", mb, 1, 16_777_216));
    }
    b
}

/// The schema entries of the retention keys (see `super::schema`).
pub fn schema(d: &super::Config) -> serde_json::Map<String, serde_json::Value> {
    let v = serde_json::json!({
        "bridge.run_retention_days": {"type": "integer", "minimum": 0, "maximum": 36500, "default": d.bridge.run_retention_days, "description": "finished runs older than this are pruned (0: kept forever)"},
        "memory.operations_retention_days": {"type": "integer", "minimum": 0, "maximum": 36500, "default": d.memory.operations_retention_days, "description": "finished memory operations older than this are pruned (0: kept forever)"},
        "memory.history_retention_days": {"type": "integer", "minimum": 0, "maximum": 36500, "default": d.memory.history_retention_days, "description": "note change history older than this is pruned, except each note's newest entry (0: kept forever)"},
        "audit.retention_days": {"type": "integer", "minimum": 0, "maximum": 36500, "default": d.audit.retention_days, "description": "audit rows older than this are pruned (0: kept forever); export them first with hal0 activity export"},
        "audit.max_rows": {"type": "integer", "minimum": 0, "maximum": 1000000000, "default": d.audit.max_rows, "description": "the newest audit rows kept at most, at least 1000 (0: no cap)"},
        "audit.forward": {"type": "string", "enum": ["none", "syslog", "journald"], "default": "none", "description": "also send every audit row to the system log"},
        "audit.forward_socket": {"type": ["string", "null"], "default": null, "description": "the socket audit rows are forwarded to (default /dev/log for syslog, /run/systemd/journal/socket for journald)"},
        "approvals.retention_days": {"type": "integer", "minimum": 0, "maximum": 36500, "default": d.approvals.retention_days, "description": "decided approvals older than this are pruned; pending ones never are (0: kept forever)"},
        "approvals.expire_hours": {"type": "integer", "minimum": 1, "maximum": 8760, "default": d.approvals.expire_hours, "description": "hours a gated call's card waits for a person before it expires and can no longer be approved"},
        "approvals.passkey_required": {"type": "boolean", "default": d.approvals.passkey_required, "description": "take decisions over the network only from a dashboard session opened with a passkey (the shell always decides)"},
        "store.max_size_mb": {"type": ["integer", "null"], "minimum": 1, "default": null, "description": "the largest hal0.db may grow, in MiB; when full, calls that change state are refused and reads keep working (unset: the disk's size)"},
        "store.prune_every_mins": {"type": "integer", "minimum": 1, "maximum": 10080, "default": d.store.prune_every_mins, "description": "minutes between two prunings of the store by hal0 serve"},
        "relay.history_retention_days": {"type": "integer", "minimum": 0, "maximum": 36500, "default": d.relay.history_retention_days, "description": "ended relay exchanges older than this are pruned, with conversations left empty (0: kept forever)"},
    });
    match v {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}
