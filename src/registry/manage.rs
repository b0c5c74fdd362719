//! The registry's operations as the CLI and REST fronts both run them: each change to the
//! registry (install, uninstall, config, exposure, policy) followed by the same Hermes join
//! (`expose::join`), whose report (`hermes_sync`) never fails the operation itself.

use super::expose::{self, HermesSync};
use super::policy::ToolPolicy;
use super::program::{self, Via};
use super::record::{FieldEdit, Record, Transport};
use super::{Registry, spec};
use crate::auth::consumers;
use crate::base::error::{Error, Kind, Result};
use crate::base::paths::Paths;
use crate::base::ssrf::Guard;
use crate::config::Config;
use crate::store::Store;
use serde_json::Value;
use std::collections::BTreeMap;

/// What a person installs: a spec string or an inline manifest.
pub enum Source {
    Spec(String),
    Manifest(Value),
}

fn check_name(name: &Option<String>) -> Result<()> {
    if let Some(n) = name
        && (n.trim().is_empty() || n.len() > 128)
    {
        return Err(Error::invalid("mcp.invalid_name", "a name is 1–128 characters"));
    }
    Ok(())
}

/// Build the record a source describes (a manifest URL is fetched behind `guard`).
pub async fn resolve(src: &Source, id: Option<&str>, guard: &Guard) -> Result<Record> {
    if let Some(id) = id {
        super::record::validate_new_id(id)?;
    }
    match src {
        Source::Spec(s) => spec::resolve(s, id, guard).await,
        Source::Manifest(m) => {
            let o = m
                .as_object()
                .ok_or_else(|| Error::invalid("mcp.manifest_invalid", "the manifest is not a JSON object"))?;
            let name = o.get("name").and_then(Value::as_str).unwrap_or("").to_string();
            let id = id
                .map(str::to_string)
                .or_else(|| o.get("id").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| spec::slug(&name));
            super::record::validate_new_id(&id)?;
            let mut r =
                Record::new(&id, if name.is_empty() { &id } else { &name }, "manifest:inline", Transport::Stdio);
            r.source_kind = "manifest".into();
            spec::apply_manifest(&mut r, m.to_string().as_bytes())?;
            if let Some(u) = &r.url {
                r.spec = u.clone();
            }
            Ok(r)
        }
    }
}

/// A record's `ca_file`: an https server's, readable, holding PEM certificates; stored
/// as an absolute path.
fn check_ca_file(r: &Record, p: &std::path::Path) -> Result<std::path::PathBuf> {
    if !r.url.as_deref().is_some_and(|u| u.starts_with("https://")) {
        return Err(Error::invalid(
            "mcp.tls_ca_invalid",
            format!("--ca-file is for a server reached over https; `{}` is not", r.spec),
        ));
    }
    crate::base::outbound::ca_certs(p)?;
    std::path::absolute(p).map_err(|e| Error::invalid("mcp.tls_ca_invalid", format!("{}: {e}", p.display())))
}

/// What an install may set besides its source.
#[derive(Debug, Default)]
pub struct InstallOptions {
    /// The server id (default: derived from the source).
    pub id: Option<String>,
    /// A display name (default: derived from the source).
    pub name: Option<String>,
    /// A PEM file of CA certificates for an https server (`--ca-file`).
    pub ca_file: Option<std::path::PathBuf>,
}

/// How long an install waits to learn whether an http server wants OAuth.
const DISCOVER_AT_INSTALL: std::time::Duration = std::time::Duration::from_secs(4);

/// Install from `src`; the new record has no callable tool and no exposure.
pub async fn install(
    paths: &Paths,
    cfg: &Config,
    store: &Store,
    src: Source,
    opts: InstallOptions,
    via: Via,
) -> Result<(Record, HermesSync, Option<String>)> {
    check_name(&opts.name)?;
    let mut r = resolve(&src, opts.id.as_deref(), &Guard::system()).await?;
    if let Some(n) = opts.name {
        r.name = n;
    }
    if let Some(p) = opts.ca_file {
        r.ca_file = Some(check_ca_file(&r, &p)?);
    }
    program::check_install(via, &r)?;
    // An npm or PyPI package runs the release its registry names now, never "latest".
    let unpinned = super::packages::pin(cfg, &mut r).await?;
    // A server that answers 401 with OAuth metadata is recorded as wanting an account; one
    // that does not answer in time, or at all, is installed as it is, with a warning.
    let mut unanswered = None;
    if r.transport != super::record::Transport::Stdio {
        match tokio::time::timeout(DISCOVER_AT_INSTALL, super::oauth::flow::probe(&r)).await {
            Ok(Ok(Some(d))) => r.oauth = Some(super::oauth::flow::need_of(&d, None)),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => unanswered = Some(e.message),
            Err(_) => {
                unanswered = Some(format!("the server did not answer within {} s", DISCOVER_AT_INSTALL.as_secs()))
            }
        }
    }
    let r = Registry::new(paths).install(r)?;
    let warning =
        unanswered.map(|why| format!("{why}; installed anyway (check it with: hal0 mcp test {})", r.id)).or(unpinned);
    Ok((r, expose::join(paths, cfg, store), warning))
}

/// What `hal0 mcp update` found: the release a package record runs and the newest one.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Update {
    pub id: String,
    /// The release pinned now (`None`: the record was never pinned).
    pub current: Option<super::record::PackagePin>,
    /// What the registry names newest (or the release asked for).
    pub available: super::record::PackagePin,
    /// The arguments the record would run with.
    pub args: Vec<String>,
    /// Whether anything would change (version or integrity).
    pub changes: bool,
}

/// Ask the registry what record `id` would run if re-pinned (`version`: that release
/// instead of the newest). Nothing is written.
pub async fn plan_update(paths: &Paths, cfg: &Config, id: &str, version: Option<&str>) -> Result<Update> {
    let r = Registry::new(paths).get(id)?;
    let Some((kind, name, _)) = super::packages::package_of(&r) else {
        return Err(Error::invalid(
            "mcp.package_unpinnable",
            format!("`{id}` does not run an npm or PyPI package through npx / uvx; only those are pinned to a release"),
        ));
    };
    let available = super::packages::resolve(cfg, kind, &name, version).await?;
    let args = super::packages::pinned_args(&r, &available);
    let changes =
        r.package.as_ref().is_none_or(|p| p.version != available.version || p.integrity != available.integrity)
            || r.args != args;
    Ok(Update { id: id.to_string(), current: r.package.clone(), available, args, changes })
}

/// Re-pin record `id` as `u` planned (after a person agreed); the supervisor starts the
/// new release at the next start.
pub fn apply_update(paths: &Paths, u: &Update) -> Result<Record> {
    Registry::new(paths).set_package(&u.id, &u.args, &u.available)
}

/// Uninstall `id`: the record goes, every consumer key of it is revoked, and the join
/// withdraws its entries from Hermes.
pub fn uninstall(paths: &Paths, cfg: &Config, store: &Store, id: &str, force: bool) -> Result<(usize, HermesSync)> {
    Registry::new(paths).uninstall(id, force)?;
    let revoked = consumers::revoke_server(store, id)?;
    super::pins::forget(store, id)?;
    Ok((revoked, expose::join(paths, cfg, store)))
}

/// `PATCH config`: `[env]` entries (an empty value removes one) and `enabled`. The join runs
/// when `enabled` was given.
pub fn configure(
    paths: &Paths,
    cfg: &Config,
    store: &Store,
    id: &str,
    env: Option<BTreeMap<String, String>>,
    enabled: Option<bool>,
    via: Via,
) -> Result<(Record, Option<HermesSync>)> {
    if env.as_ref().is_some_and(|e| !e.is_empty()) {
        program::check_env_edit(via, &Registry::new(paths).get(id)?)?;
    }
    let edit = FieldEdit { enabled, env: env.unwrap_or_default().into_iter().collect(), ..Default::default() };
    let r = Registry::new(paths).set_fields(id, &edit)?;
    Ok((r, enabled.map(|_| expose::join(paths, cfg, store))))
}

/// The exposure flags a request may set.
pub const FLAGS: [&str; 4] = ["hermes", "brain", "openwebui", "opencode"];

/// Merge exposure flags into the record and re-run the join. Turning `openwebui`/`opencode`
/// on is 501 `mcp.exposure_unsupported`; `hermes`/`brain` on a stdio record is 409
/// `mcp.exposure_needs_supervisor`. Withdrawing always works. (Probing a server just
/// exposed is the operation's: `ops::mcp::expose`.)
pub fn set_exposure(
    paths: &Paths,
    cfg: &Config,
    store: &Store,
    id: &str,
    flags: Vec<(String, bool)>,
) -> Result<(Record, HermesSync)> {
    let reg = Registry::new(paths);
    let cur = reg.get(id)?;
    for (k, on) in &flags {
        if *on && (k == "openwebui" || k == "opencode") {
            return Err(Error::new(
                "mcp.exposure_unsupported",
                Kind::Unsupported,
                format!("hal0 has no join for {k} yet; only hermes and brain can be exposed"),
            ));
        }
        if *on && cur.transport == Transport::Stdio && cur.start_command().is_err() {
            return Err(Error::conflict(
                "mcp.exposure_needs_supervisor",
                format!(
                    "`{id}` is a stdio server without a command, so hal0 cannot start it for {k}; set `command` and \
                     `args` in its record"
                ),
            ));
        }
    }
    let r = reg.set_fields(id, &FieldEdit { exposure: flags, ..Default::default() })?;
    let sync = expose::join(paths, cfg, store);
    Ok((r, sync))
}

/// Replace the whole tool policy (`mcp.tools_invalid` when a tool sits on two lists).
pub fn set_tools(paths: &Paths, cfg: &Config, store: &Store, id: &str, p: ToolPolicy) -> Result<(Record, HermesSync)> {
    let r = Registry::new(paths).replace_policy(id, p)?;
    Ok((r, expose::join(paths, cfg, store)))
}

/// A whole tool policy from its three lists (`mcp.tools_invalid` for a malformed name or a
/// tool on two lists).
pub fn tool_policy(allow: Vec<String>, gated: Vec<String>, blocked: Vec<String>) -> Result<ToolPolicy> {
    for t in allow.iter().chain(&gated).chain(&blocked) {
        super::policy::validate_tool(t).map_err(|e| Error::invalid("mcp.tools_invalid", e.message))?;
    }
    let p = ToolPolicy { allow, gated, blocked };
    p.validate()?;
    Ok(p)
}

/// Where [`set_secret`] put a server's secret.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SecretSet {
    pub server_id: String,
    /// The request header the server gets it as.
    pub header: String,
    /// Its name in api.env.
    pub stored_as: String,
    /// The name is new in api.env.
    pub created: bool,
    /// The record's `[secrets]` gained the entry.
    pub record_changed: bool,
}

/// Give installed server `id` the secret it sends as header `header`: the value goes to
/// api.env under the name the record's `[secrets]` already gives it, else `key`, else
/// `HAL0_MCP_<ID>_<HEADER>`, and the record gains the `[secrets]` entry when it lacked one.
/// Every input is checked before anything is written.
pub fn set_secret(paths: &Paths, id: &str, header: &str, key: Option<&str>, value: &str) -> Result<SecretSet> {
    let reg = Registry::new(paths);
    let r = reg.get(id)?;
    super::record::validate_secret_header(header)?;
    let existing = r.secrets.get(header).cloned();
    if let (Some(old), Some(k)) = (&existing, key)
        && old != k
    {
        return Err(Error::invalid(
            "secrets.invalid_name",
            format!(
                "`{id}` already takes `{header}` from api.env `{old}`; leave out --key, or edit the record's [secrets]"
            ),
        ));
    }
    let stored_as =
        existing.clone().or(key.map(str::to_string)).unwrap_or_else(|| crate::auth::secrets::default_name(id, header));
    // `put` checks the name and the value before it writes, and it is the first write.
    let created = crate::auth::secrets::put(paths, &stored_as, value)?;
    let record_changed = existing.is_none();
    if record_changed {
        reg.set_fields(
            id,
            &FieldEdit { secrets: vec![(header.to_string(), stored_as.clone())], ..Default::default() },
        )?;
    }
    Ok(SecretSet { server_id: id.to_string(), header: header.to_string(), stored_as, created, record_changed })
}
