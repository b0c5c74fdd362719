//! The registry of MCP servers as operations: the listing view, one record, callers seen,
//! the catalogue, per-server audit events, resolving a spec, install / uninstall, plain
//! config, probing, the tool policy, exposure, and a stdio child's start / stop / restart.
//! Every answer passes the redactor (records may hold header values).

use super::{Ctx, NoArgs, blocking};
use crate::base::error::{Error, Kind, Result};
use crate::registry::{self, Registry, Transport, manage, record::Record, view::ServerView};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub use crate::registry::expose::{HermesSync, Restart};

fn redacted(mut v: Value) -> Value {
    crate::base::redact::redact_json(&mut v);
    v
}

/// A record as every front shows it.
fn server_json(r: &Record) -> Value {
    ServerView::of(r).json()
}

/// A registry change from this caller: the shell always may create a record that runs a
/// program; the API only while auth is armed.
fn via(ctx: &Ctx) -> Result<registry::program::Via> {
    if ctx.from_shell {
        return Ok(registry::program::Via::Shell);
    }
    Ok(registry::program::Via::Api { auth_armed: ctx.keys.get()?.armed() })
}

/// `mcp_server_list`: bundled servers, installed records with their state, broken files.
pub async fn list(ctx: &Ctx, _: NoArgs) -> Result<Value> {
    let c = ctx.clone();
    blocking(move || {
        let listing = Registry::new(&c.paths).list()?;
        let mut servers: Vec<Value> = registry::bundled().iter().map(registry::view::bundled_json).collect();
        let states = registry::states(&listing.records);
        for (r, state) in listing.records.iter().zip(states) {
            let v = ServerView::of(r);
            let v = if r.transport == Transport::Stdio && c.daemon {
                // The daemon supervises stdio servers: say whether the child is up.
                let (s, pid) = c.proxy.child_state(&r.id);
                v.with_state(s, pid)
            } else {
                v.with_state(state, None)
            };
            servers.push(v.json());
        }
        Ok(redacted(json!({"count": servers.len(), "servers": servers, "broken": listing.broken})))
    })
    .await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct IdArgs {
    /// The server id.
    #[serde(rename = "server_id")]
    pub id: String,
}

/// `mcp_server_get`: one installed record.
pub async fn get(ctx: &Ctx, a: IdArgs) -> Result<Value> {
    let paths = ctx.paths.clone();
    blocking(move || Ok(redacted(server_json(&Registry::new(&paths).get(&a.id)?)))).await
}

/// `mcp_client_list`: MCP callers as the audit log saw them.
pub async fn clients(ctx: &Ctx, _: NoArgs) -> Result<Value> {
    crate::audit::flush(&ctx.store).await;
    let list = ctx.store.call(crate::audit::mcp_clients).await?;
    Ok(redacted(json!({"count": list.len(), "clients": list})))
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct CatalogArgs {
    /// Only this category.
    #[serde(default)]
    pub category: Option<String>,
}

/// `mcp_catalog`: the curated catalogue (shipped, or the refreshed copy).
pub async fn catalog(ctx: &Ctx, a: CatalogArgs) -> Result<Value> {
    let paths = ctx.paths.clone();
    blocking(move || {
        let c = registry::catalog::load(&paths);
        let items = match &a.category {
            Some(cat) => c.in_category(cat)?,
            None => c.items.clone(),
        };
        Ok(redacted(json!({"items": items, "categories": c.categories, "source": c.source})))
    })
    .await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct LogsArgs {
    /// The server id (an installed one, or hal0-admin / hal0-memory / hal0-agents).
    #[serde(rename = "server_id")]
    pub id: String,
    /// 1 to 500 (default 100).
    #[serde(default, deserialize_with = "super::de::opt_int")]
    pub limit: Option<i64>,
}

/// The audit surface of a bundled server.
fn bundled_surface(id: &str) -> Option<String> {
    crate::connect::Mount::serving(id).map(|m| m.surface())
}

/// `mcp_server_logs`: the server's audit events, newest first.
pub async fn logs(ctx: &Ctx, a: LogsArgs) -> Result<Value> {
    let (paths, store) = (ctx.paths.clone(), ctx.store.clone());
    crate::audit::flush(&store).await;
    blocking(move || {
        let limit = a.limit.unwrap_or(100);
        if !(1..=500).contains(&limit) {
            return Err(Error::invalid("mcp.invalid_limit", format!("limit `{limit}` must be a number from 1 to 500")));
        }
        let surface = match bundled_surface(&a.id) {
            Some(s) => s,
            None => {
                Registry::new(&paths).get(&a.id)?;
                format!("mcp:proxy/{}", a.id)
            }
        };
        // `mcp:proxy/a` must not match `mcp:proxy/ab`: filter the prefix match exactly.
        let events: Vec<_> = crate::audit::by_surface(&store, &surface, None, limit)?
            .into_iter()
            .filter(|r| r.surface == surface)
            .collect();
        Ok(redacted(json!({"server": a.id, "count": events.len(), "events": events})))
    })
    .await
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ResolveArgs {
    /// An install spec: oci://, npm:, uvx:, git+https://, a manifest URL or an endpoint URL.
    #[serde(default)]
    pub url: Option<String>,
}

/// What a resolved spec would record.
fn resolved_json(r: &Record) -> Value {
    json!({
        "id": r.id, "name": r.name, "description": r.description, "spec": r.spec,
        "transport": r.transport.as_str(), "url": r.url, "tools": r.tools_count, "resources": r.resources,
        "prompts": r.prompts, "env_required": r.env.keys().collect::<Vec<_>>(), "source_kind": r.source_kind,
        "source_url": r.source_url, "author": r.author, "verified": r.verified,
    })
}

/// `mcp_resolve`: what installing `url` would record; nothing is written.
pub async fn resolve(_: &Ctx, a: ResolveArgs) -> Result<Value> {
    let url = a.url.unwrap_or_default();
    if url.is_empty() || url.len() > 2048 {
        return Err(Error::invalid("mcp.invalid_spec", "give ?url= with 1 to 2048 characters"));
    }
    let r = manage::resolve(&manage::Source::Spec(url), None, &crate::base::ssrf::Guard::system()).await?;
    Ok(redacted(resolved_json(&r)))
}

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InstallArgs {
    /// An install spec (or give manifest).
    #[serde(default)]
    pub url: Option<String>,
    /// An inline manifest object (or give url).
    #[serde(default)]
    pub manifest: Option<Map<String, Value>>,
    /// The server id (default: derived).
    #[serde(default)]
    pub id: Option<String>,
    /// A display name.
    #[serde(default)]
    pub name: Option<String>,
    /// A PEM file of CA certificates on the box for an https server (from the box's shell
    /// only: over the network it would name a file on the box).
    #[serde(default)]
    pub ca_file: Option<std::path::PathBuf>,
}

/// `mcp_server_install`: the record starts with no callable tool and no exposure.
pub async fn install(ctx: &Ctx, a: InstallArgs) -> Result<Value> {
    let src = match (a.url, a.manifest) {
        (Some(u), None) => manage::Source::Spec(u),
        (None, Some(m)) => manage::Source::Manifest(Value::Object(m)),
        _ => {
            return Err(Error::invalid(
                "mcp.install_invalid",
                "give exactly one of `url` (a string) or `manifest` (an object)",
            ));
        }
    };
    if a.ca_file.is_some() && !ctx.from_shell {
        return Err(Error::invalid(
            "mcp.install_invalid",
            "`ca_file` names a file on the box, so it is given at the box's shell: hal0 mcp install --ca-file",
        ));
    }
    let opts = manage::InstallOptions { id: a.id, name: a.name, ca_file: a.ca_file };
    let (r, sync, warning) = manage::install(&ctx.paths, &ctx.config(), &ctx.store, src, opts, via(ctx)?).await?;
    let mut out = json!({"installed": server_json(&r), "hermes_sync": sync});
    if let Some(w) = warning {
        out["warning"] = json!(w);
    }
    Ok(redacted(out))
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct UninstallArgs {
    /// The server id.
    #[serde(rename = "server_id")]
    pub id: String,
    /// true removes a record file that does not load.
    #[serde(default, deserialize_with = "super::de::opt_bool")]
    pub force: Option<bool>,
}

/// `mcp_server_uninstall`: the record goes, its consumer keys are revoked, Hermes entries
/// withdrawn.
pub async fn uninstall(ctx: &Ctx, a: UninstallArgs) -> Result<Value> {
    // Its OAuth account goes with it (revoked upstream where the server can).
    let reg = Registry::new(&ctx.paths);
    reg.check_uninstall(&a.id, a.force.unwrap_or(false))?;
    let ca = reg.get(&a.id).ok().and_then(|r| r.ca_file);
    let account_revoked = super::accounts::forget(ctx, &a.id, ca.as_deref()).await;
    let c = ctx.clone();
    blocking(move || {
        let (revoked, sync) = manage::uninstall(&c.paths, &c.config(), &c.store, &a.id, a.force.unwrap_or(false))?;
        c.proxy.evict(&a.id);
        Ok(redacted(json!({"uninstalled": a.id, "keys_revoked": revoked, "hermes_sync": sync,
                           "account_revoked": account_revoked})))
    })
    .await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigArgs {
    /// The server id.
    #[serde(rename = "server_id")]
    pub id: String,
    /// Header name -> plain value; "" or null removes one.
    #[serde(default)]
    pub env: Option<BTreeMap<String, Option<String>>>,
    /// Whether the proxy serves the server.
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// `mcp_server_config_write`: plain `[env]` headers and/or `enabled`.
pub async fn configure(ctx: &Ctx, a: ConfigArgs) -> Result<Value> {
    if a.env.is_none() && a.enabled.is_none() {
        return Err(Error::invalid("mcp.config_invalid", "give env and/or enabled"));
    }
    let env = a.env.map(|m| m.into_iter().map(|(k, v)| (k, v.unwrap_or_default())).collect());
    let c = ctx.clone();
    let via = via(ctx)?;
    blocking(move || {
        let (r, sync) = manage::configure(&c.paths, &c.config(), &c.store, &a.id, env, a.enabled, via)?;
        c.proxy.evict(&a.id);
        let mut out = json!({"server": server_json(&r)});
        if let Some(s) = sync {
            out["hermes_sync"] = json!(s);
        }
        Ok(redacted(out))
    })
    .await
}

/// `mcp_server_test`: probe with the record's own URL and headers. A stdio server is probed
/// only through its running child: a probe never starts a program.
pub async fn test(ctx: &Ctx, a: IdArgs) -> Result<Value> {
    let id = a.id;
    let r = Registry::new(&ctx.paths).get(&id)?;
    let p = if r.transport == Transport::Stdio {
        let running = if ctx.daemon { ctx.proxy.running(&id) } else { None };
        let Some(up) = running else {
            return Err(Error::new(
                "mcp.supervisor_unavailable",
                Kind::Unsupported,
                format!(
                    "`{id}` is a stdio server that is not running, and a test does not start it: start it with \
                     POST /api/mcp/{id}/start (the gated mcp_server_action tool), or run `hal0 mcp test {id}` \
                     on the box"
                ),
            ));
        };
        let (_, missing) = crate::proxy::upstream::headers(&r, &ctx.paths)?;
        crate::proxy::probe::probe_with(&r, &up.client, missing).await?
    } else {
        crate::proxy::probe::probe(&r, &ctx.paths).await?
    };
    let verdicts: Map<String, Value> = p.tools.iter().map(|t| (t.tool.clone(), json!(t.verdict))).collect();
    let exposure = json!({"available": true, "hermes": r.exposure.hermes, "brain": r.exposure.brain,
                          "proxy_url": crate::connect::proxy_url(&ctx.config(), &id, crate::connect::Reach::Box)});
    Ok(redacted(json!({"server_id": id, "probe": p, "verdicts": verdicts, "agent_exposure": exposure})))
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolsArgs {
    /// The server id.
    #[serde(rename = "server_id")]
    pub id: String,
    /// Tools that run at once.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Tools that wait in the approvals inbox.
    #[serde(default)]
    pub gated: Vec<String>,
    /// Tools that are refused.
    #[serde(default)]
    pub blocked: Vec<String>,
}

/// `mcp_server_tools`: replace the whole policy; unlisted tools are denied.
pub async fn set_tools(ctx: &Ctx, a: ToolsArgs) -> Result<Value> {
    let p = manage::tool_policy(a.allow, a.gated, a.blocked)?;
    let c = ctx.clone();
    blocking(move || {
        let (r, sync) = manage::set_tools(&c.paths, &c.config(), &c.store, &a.id, p)?;
        Ok(redacted(json!({"server": server_json(&r), "hermes_sync": sync})))
    })
    .await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExposureArgs {
    /// The server id.
    #[serde(rename = "server_id")]
    pub id: String,
    /// Expose to Hermes profiles.
    #[serde(default)]
    pub hermes: Option<bool>,
    /// Expose to the brain profile.
    #[serde(default)]
    pub brain: Option<bool>,
    /// Open WebUI (not joined yet: only false is accepted).
    #[serde(default)]
    pub openwebui: Option<bool>,
    /// opencode (not joined yet: only false is accepted).
    #[serde(default)]
    pub opencode: Option<bool>,
}

/// `mcp_server_exposure`: expose through hal0's proxy, or withdraw.
pub async fn set_exposure(ctx: &Ctx, a: ExposureArgs) -> Result<Value> {
    let flags: Vec<(String, bool)> =
        [("hermes", a.hermes), ("brain", a.brain), ("openwebui", a.openwebui), ("opencode", a.opencode)]
            .into_iter()
            .filter_map(|(k, v)| v.map(|on| (k.to_string(), on)))
            .collect();
    if flags.is_empty() {
        return Err(Error::invalid(
            "mcp.exposure_invalid",
            format!("give at least one of {} as true or false", manage::FLAGS.join(", ")),
        ));
    }
    let (r, sync) = expose(&ctx.paths, &ctx.config(), &ctx.store, &a.id, flags).await?;
    Ok(redacted(json!({"server": server_json(&r), "hermes_sync": sync})))
}

/// Set a server's exposure flags (the registry's rules, then the join with Hermes), and
/// probe the server when one was turned on, so whoever exposed it learns at once whether
/// it answers (`hermes_sync.probe`).
pub async fn expose(
    paths: &crate::base::paths::Paths,
    cfg: &crate::config::Config,
    store: &crate::store::Store,
    id: &str,
    flags: Vec<(String, bool)>,
) -> Result<(Record, crate::registry::expose::HermesSync)> {
    let turned_on = flags.iter().any(|(_, on)| *on);
    let (r, mut sync) = manage::set_exposure(paths, cfg, store, id, flags)?;
    if turned_on {
        sync.probe = Some(match crate::proxy::probe::probe(&r, paths).await {
            Ok(p) => json!({"ok": true, "tools": p.tools, "missing_secrets": p.missing_secrets}),
            Err(e) => {
                json!({"ok": false, "error": {"code": e.code, "message": crate::base::redact::redact(&e.message)}})
            }
        });
    }
    Ok((r, sync))
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct ControlArgs {
    /// The server id.
    #[serde(rename = "server_id")]
    pub id: String,
    /// start, stop or restart.
    pub action: String,
}

/// `mcp_server_action`: start, stop or restart a stdio server's child. Only the daemon
/// holds children, so from any other process this is `mcp.supervisor_unavailable`.
pub async fn control(ctx: &Ctx, a: ControlArgs) -> Result<Value> {
    if !ctx.daemon {
        return Err(Error::new(
            "mcp.supervisor_unavailable",
            Kind::Unsupported,
            format!(
                "only a running `hal0 serve` supervises stdio children: {} `{}` through its API \
                 (POST /api/mcp/{}/{}) once hal0 serve runs",
                a.action, a.id, a.id, a.action
            ),
        ));
    }
    Ok(redacted(ctx.proxy.action(&a.id, &a.action).await?))
}
