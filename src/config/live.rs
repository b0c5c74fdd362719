//! The configuration a running `hal0 serve` uses, and what a reload (SIGHUP, `systemctl
//! reload hal0`) may change in it. Each key of hal0.toml either applies at a reload
//! ([`RELOAD`]: read each time it is used) or only at a restart (it shaped something built at
//! start: the listener, the mounts, the relay's database, a cache). A reload copies the
//! reloadable keys from the file into the running configuration and leaves every other key
//! as it was, so the daemon never runs half of a change.

use super::Config;
use serde_json::Value;
use std::sync::{Arc, RwLock};

/// Keys a reload applies (a `*` ends a prefix: every key under it). Everything else waits
/// for a restart.
pub const RELOAD: &[&str] = &[
    "approvals.expire_hours",
    "approvals.passkey_required",
    "bridge.max_concurrent_runs_per_client",
    "hermes.restart_command",
    "mcp.gate_wait_secs",
    "mcp.call_timeout_secs",
    "mcp.progress_secs",
    "mcp.catalog_url",
    "mcp.npm_registry",
    "mcp.pypi_index",
    "relay.a2a_bots",
    "relay.ask_timeout_secs",
    "relay.ping_secs",
    "limits.body_timeout_secs",
    "oauth.access_minutes",
    "oauth.refresh_days",
    "store.max_size_mb",
    "skills.*",
];

/// When a change to a key takes effect in a running daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// At the next `systemctl reload hal0` (SIGHUP).
    Reload,
    /// Only when `hal0 serve` starts again.
    Restart,
}

impl Applies {
    pub fn as_str(self) -> &'static str {
        match self {
            Applies::Reload => "reload",
            Applies::Restart => "restart",
        }
    }

    /// What an operator runs to apply it, in words.
    pub fn hint(self) -> &'static str {
        match self {
            Applies::Reload => {
                "a reload applies it, no restart needed (systemctl reload hal0, or SIGHUP to hal0 serve)"
            }
            Applies::Restart => "it applies at a restart (systemctl restart hal0)",
        }
    }
}

/// When a change to `dotted` takes effect; retention windows are reloadable too.
pub fn applies(dotted: &str) -> Applies {
    let reloadable = RELOAD.iter().any(|k| match k.strip_suffix('*') {
        Some(prefix) => dotted.starts_with(prefix),
        None => *k == dotted,
    }) || retention_keys().iter().any(|k| k == dotted);
    if reloadable { Applies::Reload } else { Applies::Restart }
}

/// The retention windows' keys (reloadable: each prune reads them), listed once.
fn retention_keys() -> &'static [String] {
    static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| super::retention::schema(&Config::default()).keys().cloned().collect())
}

/// What a reload did: the keys it applied and the changed keys that wait for a restart.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Reloaded {
    pub applied: Vec<String>,
    pub restart: Vec<String>,
}

/// The running configuration and `hal0.toml` as it was applied (read at start, and its
/// reloadable keys at each reload since): the difference between the file on disk and the
/// latter is what waits.
pub struct Live {
    state: RwLock<(Arc<Config>, Arc<Config>)>,
}

impl Live {
    /// `running` (the file plus what was derived at start) and `loaded` (the file as read).
    pub fn new(running: Config, loaded: Config) -> Live {
        Live { state: RwLock::new((Arc::new(running), Arc::new(loaded))) }
    }

    /// The configuration in use now.
    pub fn get(&self) -> Arc<Config> {
        self.state.read().unwrap_or_else(|p| p.into_inner()).0.clone()
    }

    /// hal0.toml as applied: read at start, with the reloadable keys of each reload since.
    pub fn loaded(&self) -> Arc<Config> {
        self.state.read().unwrap_or_else(|p| p.into_inner()).1.clone()
    }

    /// Apply `file` (a freshly read hal0.toml): its reloadable keys replace the running
    /// ones; the changed keys that wait for a restart are named.
    pub fn reload(&self, file: &Config) -> Reloaded {
        let mut st = self.state.write().unwrap_or_else(|p| p.into_inner());
        let (file_v, loaded_v) = (serde_json::json!(file), serde_json::json!(*st.1));
        let mut out = Reloaded::default();
        for key in changed(&file_v, &loaded_v) {
            match applies(&key) {
                Applies::Reload => out.applied.push(key),
                Applies::Restart => out.restart.push(key),
            }
        }
        if !out.applied.is_empty() {
            let (running, loaded) = (merge(&st.0, &file_v, &out.applied), merge(&st.1, &file_v, &out.applied));
            *st = (Arc::new(running), Arc::new(loaded));
        }
        out
    }
}

/// `base` with each of `keys` (dotted) taken from `file`.
fn merge(base: &Config, file: &Value, keys: &[String]) -> Config {
    let mut v = serde_json::json!(base);
    for key in keys {
        let ptr = format!("/{}", key.replace('.', "/"));
        if let (Some(new), Some(slot)) = (file.pointer(&ptr), v.pointer_mut(&ptr)) {
            *slot = new.clone();
        }
    }
    // Both sides are a Config's own JSON with leaves swapped for leaves of the same type.
    serde_json::from_value(v).unwrap_or_else(|_| base.clone())
}

/// The dotted keys of every leaf where `a` and `b` differ.
pub fn changed(a: &Value, b: &Value) -> Vec<String> {
    fn walk(prefix: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    walk(
                        &path,
                        x.get(k.as_str()).unwrap_or(&Value::Null),
                        y.get(k.as_str()).unwrap_or(&Value::Null),
                        out,
                    );
                }
            }
            (a, b) if a != b => out.push(prefix.to_string()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk("", a, b, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reloadable_key_is_a_key_of_the_file() {
        let keys = crate::config::schema();
        for k in RELOAD {
            let found = match k.strip_suffix('*') {
                Some(p) => keys.as_object().unwrap().keys().any(|x| x.starts_with(p)),
                None => keys.get(*k).is_some(),
            };
            assert!(found, "{k} is not a hal0.toml key");
        }
        assert_eq!(applies("bridge.run_retention_days"), Applies::Reload, "retention windows reload");
        assert_eq!(applies("network.bind"), Applies::Restart);
        assert_eq!(applies("skills.dropin_dir"), Applies::Reload);
    }

    #[test]
    fn a_reload_applies_reloadable_keys_only_and_names_the_rest() {
        let mut start = Config::default();
        start.relay.node = Some("derived-at-start".into());
        let live = Live::new(start.clone(), Config::default());
        let mut file = Config::default();
        file.mcp.gate_wait_secs = 5;
        file.network.bind = "127.0.0.1:9999".into();
        file.memory.enabled = !file.memory.enabled;
        let r = live.reload(&file);
        assert_eq!(r.applied, ["mcp.gate_wait_secs"]);
        assert_eq!(r.restart, ["memory.enabled", "network.bind"]);
        let now = live.get();
        assert_eq!(now.mcp.gate_wait_secs, 5);
        assert_eq!(
            (now.network.bind.as_str(), now.memory.enabled),
            (start.network.bind.as_str(), start.memory.enabled)
        );
        assert_eq!(now.relay.node.as_deref(), Some("derived-at-start"), "what start derived stays");
        // Reloading the same file again: nothing more to apply, the rest still waits.
        assert_eq!(live.reload(&file), Reloaded { applied: vec![], restart: r.restart.clone() });
    }
}
