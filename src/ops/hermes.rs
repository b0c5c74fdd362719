//! This box's Hermes from its own shell: wiring its profiles again (`hal0 agent
//! reprovision`), and teaching them (`hal0 memory add|search` on this box's store), with
//! the rules `agent_memory_add|search` follow over MCP (`crate::bridge::teach`), as the
//! admin. The changes are audited.

use super::{Ctx, audited, blocking};
use crate::base::error::Result;
use crate::config::Config;
use crate::hermes::Profiles;
use crate::memory::MemoryEngine;
use crate::store::Store;
use serde_json::{Value, json};

pub use crate::hermes::wiring::ProfileReport;

/// `agent_reprovision`: wire every profile (the default one too) to hal0 again, under the
/// exposure lock; `repair` rewrites what was changed by hand. The reports, and the Hermes
/// home they were looked for under.
pub async fn reprovision(ctx: &Ctx, repair: bool) -> Result<(Vec<ProfileReport>, std::path::PathBuf)> {
    audited(ctx, "agent_reprovision", json!({"repair": repair}), async {
        let (paths, store, cfg) = (ctx.paths.clone(), ctx.store.clone(), ctx.config());
        blocking(move || {
            let _lock = crate::registry::expose::lock(&paths)?;
            let rows = crate::hermes::wiring::converge(&store, &cfg, true, repair);
            Ok((rows, Profiles::from_config(&cfg).home))
        })
        .await
    })
    .await
}

/// Run `f` on this box's memory and profiles as the admin; memory must be on.
fn as_admin(
    cfg: &Config,
    store: Store,
    f: impl FnOnce(&MemoryEngine, &Profiles, &str) -> Result<Value>,
) -> Result<Value> {
    super::agents::memory_on(cfg)?;
    let engine = MemoryEngine::new(store);
    f(&engine, &Profiles::from_config(cfg), &crate::bridge::Asker::admin().client)
}

/// `agent_memory_add` here (audited): a note in `agent`'s memory (`shared` for every profile).
pub async fn memory_add(ctx: &Ctx, agent: String, text: String, tags: Vec<String>) -> Result<Value> {
    let args = json!({"agent": agent, "text": text, "tags": tags});
    audited(ctx, "agent_memory_add", args, async {
        let (store, cfg) = (ctx.store.clone(), ctx.config());
        blocking(move || as_admin(&cfg, store, |e, p, me| crate::bridge::teach::add(e, p, me, &agent, &text, &tags)))
            .await
    })
    .await
}

/// `hal0 memory search` here: what `agent`'s memory holds about `query`.
pub fn memory_search(ctx: &Ctx, agent: &str, query: &str, limit: Option<i64>) -> Result<Value> {
    as_admin(&ctx.config(), ctx.store.clone(), |e, p, me| crate::bridge::teach::search(e, p, me, agent, query, limit))
}
