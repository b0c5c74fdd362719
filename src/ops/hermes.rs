//! This box's Hermes from its own shell: wiring its profiles again (`hal0 agent
//! reprovision`), and teaching them (`hal0 memory add|search` on this box's store), with
//! the rules `agent_memory_add|search` follow over MCP (`crate::bridge::teach`), as the
//! admin.

use crate::base::error::{Error, Result};
use crate::config::Config;
use crate::hermes::Profiles;
use crate::memory::MemoryEngine;
use crate::store::Store;
use serde_json::Value;

pub use crate::hermes::wiring::ProfileReport;

/// Wire every profile (the default one too) to hal0 again, under the exposure lock;
/// `repair` rewrites what was changed by hand. The reports, and the Hermes home they were
/// looked for under.
pub fn reprovision(
    paths: &crate::base::paths::Paths,
    store: &Store,
    cfg: &Config,
    repair: bool,
) -> Result<(Vec<ProfileReport>, std::path::PathBuf)> {
    let _lock = crate::registry::expose::lock(paths)?;
    let rows = crate::hermes::wiring::converge(store, cfg, true, repair);
    Ok((rows, Profiles::from_config(cfg).home))
}

/// Run `f` on this box's memory and profiles as the admin; memory must be on.
fn as_admin(
    cfg: &Config,
    store: Store,
    f: impl FnOnce(&MemoryEngine, &Profiles, &str) -> Result<Value>,
) -> Result<Value> {
    if !cfg.memory.enabled {
        return Err(Error::invalid("bridge.memory_disabled", "memory is off on this box ([memory].enabled = false)"));
    }
    let engine = MemoryEngine::new(store);
    f(&engine, &Profiles::from_config(cfg), &crate::bridge::Asker::admin().client)
}

/// `hal0 memory add` here: a note in `agent`'s memory (`shared` for every profile).
pub fn memory_add(cfg: &Config, store: Store, agent: &str, text: &str, tags: &[String]) -> Result<Value> {
    as_admin(cfg, store, |e, p, me| crate::bridge::teach::add(e, p, me, agent, text, tags))
}

/// `hal0 memory search` here: what `agent`'s memory holds about `query`.
pub fn memory_search(cfg: &Config, store: Store, agent: &str, query: &str, limit: Option<i64>) -> Result<Value> {
    as_admin(cfg, store, |e, p, me| crate::bridge::teach::search(e, p, me, agent, query, limit))
}
