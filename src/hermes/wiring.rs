//! Wiring Hermes profiles to hal0's own MCP servers: `hal0-admin`, `hal0-memory` and (while
//! `[relay].enabled`) `hal0-relay` entries
//! in each profile's config.yaml (edited round-trip; nothing else in the file changes), a
//! per-profile bridge key (`hermes` / `hermes__<profile>`, stored hashed) whose value lives
//! only in the profile's `.env` and is referenced as `${HAL0_MCP_KEY}`, shared memory by
//! default and private with `hal0: {memory_private: true}`, skipped with
//! `hal0: {wire_mcp: false}`.

use super::{Profile, Profiles};
use crate::auth::bridge::{self, Scope};
use crate::base::error::Result;
use crate::config::Config;
use crate::store::Store;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The env variable holding the profile's hal0 key.
pub const KEY_VAR: &str = "HAL0_MCP_KEY";

/// What happened to one profile.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProfileReport {
    pub agent: String,
    /// `wired`, `unchanged`, `skipped` or `failed`.
    pub outcome: String,
    pub detail: String,
}

/// The bridge client name of a profile's key.
pub fn client_name(p: &Profile) -> String {
    if p.name == "default" { "hermes".into() } else { format!("hermes__{}", p.name) }
}

fn profile_flag(p: &Profile, key: &str) -> Option<bool> {
    let y = super::profiles::read_yaml(&p.dir.join("config.yaml"))?;
    y.get("hal0")?.get(key)?.as_bool()
}

/// The `hal0-relay` entry of a profile: its calls wait up to the ask window, so the
/// entry's timeout is the window plus a margin.
pub fn relay_entry(cfg: &Config) -> Value {
    json!({
        "url": format!("{}/mcp/relay/mcp", crate::connect::local_base(cfg)),
        "timeout": cfg.relay.ask_timeout_secs + 30,
        "connect_timeout": 10,
        "headers": {"Authorization": format!("Bearer ${{{KEY_VAR}}}")},
    })
}

/// The two entries for a profile.
pub fn entries(cfg: &Config, p: &Profile) -> (Value, Value) {
    let base = crate::connect::local_base(cfg);
    let who = client_name(p);
    let auth = format!("Bearer ${{{KEY_VAR}}}");
    let admin = json!({
        "url": format!("{base}/mcp/admin/mcp"),
        "timeout": 60,
        "connect_timeout": 10,
        "headers": {"X-hal0-Agent": who, "Authorization": auth},
    });
    let mut mem_headers = json!({"X-hal0-Agent": who, "Authorization": auth});
    if profile_flag(p, "memory_private") == Some(true) {
        mem_headers["X-hal0-Private"] = json!("1");
    }
    let memory =
        json!({"url": format!("{base}/mcp/memory/mcp"), "timeout": 30, "connect_timeout": 10, "headers": mem_headers});
    (admin, memory)
}

/// Make sure the profile's `.env` holds a live key for its bridge client; mint or rotate
/// when it does not. Returns whether anything changed.
fn ensure_key(store: &Store, cfg: &Config, p: &Profile, repair: bool) -> Result<bool> {
    let env = p.dir.join(".env");
    // Read, mint and write under one lock of the `.env`: the key minted is the key kept.
    crate::base::paths::with_lock(&env, || ensure_key_locked(store, cfg, p, &env, repair))
}

/// The scopes a profile's key holds: hal0-agents, -memory, -admin, and the relay while it
/// is on.
fn profile_scopes(cfg: &Config) -> BTreeSet<Scope> {
    let mut scopes = BTreeSet::from([Scope::Agents, Scope::Memory, Scope::Admin]);
    if cfg.relay.enabled {
        scopes.insert(Scope::Relay);
    }
    scopes
}

fn ensure_key_locked(store: &Store, cfg: &Config, p: &Profile, env: &std::path::Path, repair: bool) -> Result<bool> {
    let name = client_name(p);
    let scopes = profile_scopes(cfg);
    let current = crate::base::envfile::get_var(env, KEY_VAR)?;
    let live = match &current {
        Some(k) => bridge::lookup(store, k)?.filter(|c| c.name == name),
        None => None,
    };
    if let Some(c) = &live
        && !repair
    {
        // A key minted before the relay existed gains the scope in place (same key).
        if c.scopes != scopes {
            bridge::set_scopes(store, &name, scopes)?;
            return Ok(true);
        }
        return Ok(false);
    }
    let key = match bridge::get(store, &name) {
        Ok(c) if !c.revoked => {
            bridge::set_scopes(store, &name, scopes)?;
            bridge::rotate(store, &name)?.1
        }
        Ok(_) => {
            return Err(crate::base::error::Error::conflict(
                "hermes.client_revoked",
                format!("the bridge client `{name}` for {} is revoked; its name stays reserved", p.agent_id),
            ));
        }
        Err(_) => {
            bridge::add(store, &name, &format!("Hermes profile {} (hal0 agent reprovision)", p.agent_id), scopes)?.1
        }
    };
    crate::base::envfile::set_vars(env, &[(KEY_VAR, &key)])?;
    Ok(true)
}

fn wire_one(store: &Store, cfg: &Config, p: &Profile, repair: bool) -> ProfileReport {
    let report =
        |outcome: &str, detail: String| ProfileReport { agent: p.agent_id.clone(), outcome: outcome.into(), detail };
    if profile_flag(p, "wire_mcp") == Some(false) {
        return report("skipped", "hal0: {wire_mcp: false} in its config.yaml".into());
    }
    if bridge::validate_name(&client_name(p)).is_err() {
        return report("failed", format!("the profile name is too long for a client name ({})", client_name(p)));
    }
    let result = (|| -> Result<bool> {
        let key_changed = ensure_key(store, cfg, p, repair)?;
        let (admin, memory) = entries(cfg, p);
        let path = p.dir.join("config.yaml");
        let yaml_changed = crate::base::yamledit::edit_file(&path, |doc| {
            doc.set_entry("mcp_servers", "hal0-admin", &admin)?;
            doc.set_entry("mcp_servers", "hal0-memory", &memory)?;
            if cfg.relay.enabled {
                doc.set_entry("mcp_servers", "hal0-relay", &relay_entry(cfg))?;
            }
            Ok(())
        })?;
        Ok(key_changed || yaml_changed)
    })();
    match result {
        Ok(true) => {
            let which =
                if cfg.relay.enabled { "hal0-admin, hal0-memory and hal0-relay" } else { "hal0-admin and hal0-memory" };
            report("wired", format!("{which} written; restart this profile's gateway to load them"))
        }
        Ok(false) => report("unchanged", "already wired".into()),
        Err(e) => report("failed", e.message),
    }
}

/// Wire every profile (`include_default` adds the default one). `repair` re-mints keys.
pub fn converge(store: &Store, cfg: &Config, include_default: bool, repair: bool) -> Vec<ProfileReport> {
    Profiles::from_config(cfg)
        .list()
        .iter()
        .filter(|p| include_default || p.name != "default")
        .filter(|p| p.dir.join("config.yaml").exists() || p.name != "default")
        .map(|p| wire_one(store, cfg, p, repair))
        .collect()
}
