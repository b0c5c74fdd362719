//! What a shell may complete (`hal0 … <TAB>`): for each kind of argument, the values this
//! box has now, each with a short help. Read from the directories `paths` names; a store or
//! directory this user cannot read completes nothing, and a store that does not exist is
//! never created (completing must neither fail nor change anything).

use crate::base::paths::Paths;

/// A kind of argument whose values come from the box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Installed and bundled MCP servers.
    ServerId,
    /// Bridge clients.
    ClientName,
    /// Pending approvals.
    ApprovalId,
    /// The newest runs.
    RunId,
    /// Standing approval rules.
    RuleId,
    /// Bridge key scopes.
    Scope,
    /// hal0.toml keys.
    Setting,
}

/// The store, when it exists and this user may open it.
fn store(paths: &Paths) -> Option<crate::store::Store> {
    paths.db().exists().then(|| crate::store::Store::open(&paths.db()).ok()).flatten()
}

/// The values of `kind` on this box, each with its help (empty when there is nothing to
/// read).
pub fn candidates(paths: &Paths, kind: Kind) -> Vec<(String, String)> {
    match kind {
        Kind::ServerId => {
            let mut out: Vec<(String, String)> =
                crate::registry::bundled().into_iter().map(|b| (b.id.to_string(), "bundled".to_string())).collect();
            if let Ok(l) = crate::registry::Registry::new(paths).list() {
                out.extend(l.records.into_iter().map(|r| {
                    let at = r.url.clone().or(r.command.clone()).unwrap_or(r.spec.clone());
                    (r.id, at)
                }));
            }
            out
        }
        Kind::ClientName => {
            let Some(s) = store(paths) else { return Vec::new() };
            let list = crate::auth::bridge::list(&s).unwrap_or_default();
            list.into_iter()
                .map(|c| {
                    let scopes: Vec<&str> = c.scopes.iter().map(|x| x.as_str()).collect();
                    let state = if c.revoked { "revoked".to_string() } else { scopes.join(" ") };
                    (c.name, state)
                })
                .collect()
        }
        Kind::ApprovalId => {
            let Some(s) = store(paths) else { return Vec::new() };
            let list = crate::approvals::list(&s, Some("pending")).unwrap_or_default();
            list.into_iter().map(|a| (a.id, format!("{} {}", a.client, a.tool))).collect()
        }
        Kind::RunId => {
            let Some(s) = store(paths) else { return Vec::new() };
            let list = crate::bridge::ledger::list(&s, None, None, 50).unwrap_or_default();
            list.into_iter().map(|r| (r.run_id, format!("{} {}", r.client, r.status.as_str()))).collect()
        }
        Kind::RuleId => {
            let Some(s) = store(paths) else { return Vec::new() };
            let list = crate::approvals::rules::list(&s, None).unwrap_or_default();
            list.into_iter().map(|r| (r.id, format!("{} {}", r.client, r.tool))).collect()
        }
        Kind::Scope => {
            crate::auth::bridge::Scope::ALL.into_iter().map(|s| (s.as_str().to_string(), String::new())).collect()
        }
        Kind::Setting => {
            let schema = crate::config::schema();
            let keys = schema.as_object().into_iter().flatten();
            keys.map(|(k, v)| (k.clone(), v["description"].as_str().unwrap_or_default().to_string())).collect()
        }
    }
}
