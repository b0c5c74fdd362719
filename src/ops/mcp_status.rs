//! One MCP server as an operator looks at it (`hal0 mcp status ID`): the record and its
//! state, the URL consumers use, their keys, the standing approval rules, the tool pins and
//! the OAuth account(s), gathered from the domains that hold each, as one typed answer.

use super::Ctx;
use crate::base::error::Result;
use crate::registry::{self, Registry, record::Record};
use serde_json::{Value, json};

pub use crate::approvals::rules::Rule;
pub use crate::auth::consumers::Consumer;
pub use crate::registry::oauth::account::{CONNECTED, View as AccountView};
pub use crate::registry::pins::{Item, Pin};

/// A server hal0 serves itself (hal0-memory, …): what it is and where it is mounted.
pub struct Bundled {
    pub id: &'static str,
    pub description: &'static str,
    pub mount: String,
    /// The listing's view of it.
    pub json: Value,
}

/// An installed server, all that is known of it.
pub struct Installed {
    pub record: Record,
    /// `reachable`, `unreachable`, `disabled`, `running`, `stopped`.
    pub state: &'static str,
    /// The URL a consumer elsewhere reaches it at, through hal0's proxy.
    pub proxy_url: String,
    pub consumers: Vec<Consumer>,
    pub rules: Vec<Rule>,
    pub pins: Vec<Pin>,
    /// Each consumer connects an account of its own.
    pub delegated: bool,
    /// The box-wide account, for a server that wants one (`Some(None)`: not connected).
    pub account: Option<Option<AccountView>>,
    /// The consumers' own accounts (a delegated server).
    pub accounts: Vec<AccountView>,
    /// The server runs a package that could be pinned and is not.
    pub unpinned_package: bool,
}

/// What [`status`] answers.
pub enum Status {
    Bundled(Bundled),
    Installed(Box<Installed>),
}

impl Status {
    /// The answer for scripts (`hal0 --json mcp status ID`).
    pub fn json(&self) -> Value {
        match self {
            Status::Bundled(b) => b.json.clone(),
            Status::Installed(i) => {
                let mut v = registry::view::ServerView::of(&i.record).with_state(i.state, None).json();
                v["proxy_url"] = json!(i.proxy_url);
                v["consumers"] = json!(i.consumers);
                v["rules"] = json!(i.rules);
                v["pins"] = json!(i.pins);
                if let Some(a) = &i.account {
                    v["account"] = json!(a);
                }
                if i.delegated {
                    v["accounts"] = json!(i.accounts);
                }
                v
            }
        }
    }
}

/// `hal0 mcp status ID`: server `id`, bundled or installed.
pub fn status(ctx: &Ctx, id: &str) -> Result<Status> {
    if let Some(b) = registry::bundled().into_iter().find(|b| b.id == id) {
        let json = registry::view::bundled_json(&b);
        return Ok(Status::Bundled(Bundled { id: b.id, description: b.description, mount: b.mount, json }));
    }
    let record = Registry::new(&ctx.paths).get(id)?;
    let delegated = record.oauth.as_ref().is_some_and(|o| o.delegated());
    let account =
        record.oauth.as_ref().filter(|_| !delegated).map(|_| registry::oauth::account::view(&ctx.paths, id, None));
    let accounts = if delegated {
        registry::oauth::account::views_of(&ctx.paths, id).into_iter().filter(|v| v.holder.is_some()).collect()
    } else {
        Vec::new()
    };
    Ok(Status::Installed(Box::new(Installed {
        state: registry::state(&record),
        proxy_url: crate::connect::proxy_url(&ctx.config(), id, crate::connect::Reach::Remote),
        consumers: crate::auth::consumers::list(&ctx.store, Some(id))?,
        rules: crate::approvals::rules::list(&ctx.store, Some(id))?,
        pins: registry::pins::list(&ctx.store, id)?,
        unpinned_package: record.package.is_none() && registry::packages::package_of(&record).is_some(),
        delegated,
        account,
        accounts,
        record,
    })))
}

pub use crate::proxy::probe::Probe;

/// `hal0 mcp test ID` at the box: ask server `id` what it offers, with the record's own URL
/// and headers (a stdio server's program runs for it), and what the policy makes of each
/// tool. A server that refuses the credentials and wants OAuth is told apart: the answer is
/// "connect an account" (`mcp.account_required`), not a failed probe.
pub async fn probe_here(ctx: &Ctx, id: &str) -> Result<Probe> {
    let record = Registry::new(&ctx.paths).get(id)?;
    match crate::proxy::probe::probe(&record, &ctx.paths).await {
        Err(e) if e.code == "mcp.probe_failed" && crate::proxy::upstream::credentials_refused(&e) => {
            match super::accounts::discover(ctx, id).await {
                Ok(Some(need)) => Err(registry::oauth::account::needs_account(id, &need.issuer)),
                _ => Err(e),
            }
        }
        out => out,
    }
}

pub use crate::registry::catalog::Item as CatalogItem;

/// The catalogue as the box's shell lists it (`hal0 mcp catalog list`).
pub struct CatalogShown {
    /// The servers of the category asked for (all when none), archived ones only when
    /// asked for.
    pub items: Vec<CatalogItem>,
    /// How many servers the catalogue holds in all.
    pub total: usize,
    /// How many archived ones were left out.
    pub hidden: usize,
    /// Where the catalogue came from, for people.
    pub source: String,
    /// Why the catalogue may be stale or not the configured one.
    pub warning: Option<String>,
}

/// The catalogue of installable servers, `category`'s only when given (an unknown category
/// is `mcp.catalog_unknown_category`); archived upstreams (no fixes come for them) only
/// with `archived`. A read of files only: it needs no store.
pub fn catalog(paths: &crate::base::paths::Paths, category: Option<&str>, archived: bool) -> Result<CatalogShown> {
    let cat = crate::registry::catalog::load(paths);
    let mut items = match category {
        Some(c) => cat.in_category(c)?,
        None => cat.items.clone(),
    };
    let before = items.len();
    items.retain(|i| archived || !i.archived);
    Ok(CatalogShown {
        hidden: before - items.len(),
        total: cat.items.len(),
        source: cat.source.describe(),
        warning: cat.source.warning.clone(),
        items,
    })
}

/// The record file of server `id` (where `hal0 mcp install` wrote it).
pub fn record_file(paths: &crate::base::paths::Paths, id: &str) -> std::path::PathBuf {
    Registry::new(paths).path_of(id)
}

/// Whether server `id` may be uninstalled (`force`: also a record file that does not
/// load), checked before a person is asked; `mcp_server_uninstall` checks again.
pub fn check_uninstall(paths: &crate::base::paths::Paths, id: &str, force: bool) -> Result<()> {
    Registry::new(paths).check_uninstall(id, force)
}
