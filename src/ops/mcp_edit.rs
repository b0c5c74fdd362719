//! Registry changes made from the box's shell, as audited operations: one name's place in
//! a server's policy (`hal0 mcp allow|gate|block`; REST replaces a whole policy instead,
//! `mcp_server_tools` in [`super::mcp`]), re-pinning a package to a release (`hal0 mcp
//! update`), a server's secret header (`hal0 mcp secret set`), and refreshing the
//! catalogue (`hal0 mcp catalog refresh`).

use super::{Ctx, audited, blocking};
use crate::base::error::{Error, Result};
use crate::base::term::safe_line;
use crate::registry::{Registry, record::Access};
use serde_json::json;

pub use crate::registry::manage::Update;
pub use crate::registry::policy::ToolList as Tier;
pub use crate::registry::record::PackagePin as Pin;

/// What a name in a policy is: a tool, a resource URI (or a URI prefix ending in `*`), or a
/// prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Named {
    Tool,
    Resource,
    Prompt,
}

/// Put one name on one list of one server's policy.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PlaceArgs {
    pub server_id: String,
    pub name: String,
    pub tier: Tier,
    pub named: Named,
    /// Refuse, changing nothing, when the server does not offer the tool or cannot be asked
    /// (without it, that is a warning in the answer).
    pub strict: bool,
}

/// What [`place`] did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Placed {
    /// The record's table: `tools`, `resource_access` or `prompt_access`.
    pub table: &'static str,
    /// Whether the name's verdict (for a tool: its list) changed.
    pub changed: bool,
    /// The tool's list before (a tool only; `None`: on none).
    pub before: Option<Tier>,
    /// Why the name may be a typo, when it was written anyway (not `strict`).
    pub warning: Option<String>,
}

/// `mcp_policy_place`: put `a.name` on list `a.tier` (audited). A tool the server does not
/// offer is a warning, or with `strict` a refusal: a typo would otherwise wait in the policy
/// until the server grows a tool of that name.
pub async fn place(ctx: &Ctx, a: PlaceArgs) -> Result<Placed> {
    audited(ctx, "mcp_policy_place", json!(a), async {
        let reg = Registry::new(&ctx.paths);
        let which = match a.named {
            Named::Tool => None,
            Named::Resource => Some(Access::Resources),
            Named::Prompt => Some(Access::Prompts),
        };
        if let Some(which) = which {
            let before = reg.get(&a.server_id)?.access(which).verdict(&a.name);
            let r = reg.set_access(&a.server_id, which, &a.name, Some(a.tier))?;
            let changed = r.access(which).verdict(&a.name) != before;
            return Ok(Placed { table: which.table(), changed, before: None, warning: None });
        }
        let record = reg.get(&a.server_id)?;
        let warning = not_offered(ctx, &record, &a.name, a.strict).await?;
        let before = record.tools.tier_of(&a.name);
        let (id, name, tier) = (a.server_id.clone(), a.name.clone(), a.tier);
        let paths = ctx.paths.clone();
        blocking(move || Registry::new(&paths).set_tier(&id, &name, tier)).await?;
        Ok(Placed { table: "tools", changed: before != Some(a.tier), before, warning })
    })
    .await
}

/// Why `tool` may be a typo (`record`'s server does not offer it, or cannot be asked), or
/// with `strict` the refusal that says so.
async fn not_offered(
    ctx: &Ctx,
    record: &crate::registry::record::Record,
    tool: &str,
    strict: bool,
) -> Result<Option<String>> {
    use crate::proxy::probe::Offer;
    let (id, name) = (&record.id, safe_line(tool));
    let problem = match crate::proxy::probe::offers(record, &ctx.paths, tool).await {
        Offer::Offered => return Ok(None),
        Offer::NotOffered { nearest, offered } => {
            let hint = nearest.map(|n| format!("; did you mean `{}`?", safe_line(&n))).unwrap_or_default();
            format!("`{id}` offers no tool `{name}` (it lists {offered}: hal0 mcp test {id}){hint}")
        }
        Offer::Unknown(why) if strict => format!("cannot check that `{id}` offers `{name}`: {}", safe_line(&why)),
        Offer::Unknown(_) => return Ok(None),
    };
    if strict {
        return Err(Error::invalid("mcp.unknown_tool", format!("{problem}; nothing was changed")));
    }
    Ok(Some(problem))
}

/// What re-pinning server `id` would change (`version`: that release, else the newest the
/// package registry names). A read: nothing is written.
pub async fn plan_update(ctx: &Ctx, id: &str, version: Option<&str>) -> Result<Update> {
    crate::registry::manage::plan_update(&ctx.paths, &ctx.config(), id, version).await
}

/// `mcp_server_update`: pin the record to the release `u` names (audited); it runs at the
/// server's next start, and its tools keep their pins.
pub async fn apply_update(ctx: &Ctx, u: &Update) -> Result<()> {
    let args = json!({"server_id": u.id, "name": u.available.name, "version": u.available.version});
    audited(ctx, "mcp_server_update", args, async {
        let (paths, u) = (ctx.paths.clone(), u.clone());
        blocking(move || crate::registry::manage::apply_update(&paths, &u).map(drop)).await
    })
    .await
}

pub use crate::registry::catalog::RefreshReport;

/// `mcp_catalog_refresh`: fetch the catalogue again (`from`: this URL or file instead of
/// the configured source), audited.
pub async fn catalog_refresh(ctx: &Ctx, from: Option<String>) -> Result<RefreshReport> {
    audited(ctx, "mcp_catalog_refresh", json!({"from": from}), async {
        crate::registry::catalog::refresh(&ctx.paths, &ctx.config(), from.as_deref()).await
    })
    .await
}

pub use crate::registry::manage::SecretSet;

/// Check a server's secret header before its value is asked for: the server exists and
/// `header` is a header name a secret may go in.
pub fn check_secret_header(ctx: &Ctx, id: &str, header: &str) -> Result<()> {
    Registry::new(&ctx.paths).get(id)?;
    crate::registry::record::validate_secret_header(header)
}

/// `mcp_secret_set`: store `value` in api.env for server `id`'s `header` (under `key`, the
/// name its `[secrets]` gives, or a made one), audited with the names, never the value.
pub async fn set_secret(ctx: &Ctx, id: &str, header: &str, key: Option<&str>, value: String) -> Result<SecretSet> {
    let args = json!({"server_id": id, "header": header, "key": key});
    let (paths, id, header, key) = (ctx.paths.clone(), id.to_string(), header.to_string(), key.map(str::to_string));
    let set = blocking(move || crate::registry::manage::set_secret(&paths, &id, &header, key.as_deref(), &value));
    audited(ctx, "mcp_secret_set", args, set).await
}
