//! `hal0 mcp install|list|status|uninstall|allow|gate|block`: third-party MCP servers and
//! their tool policy. The rules live in `crate::registry`; this file translates.

use super::{Ctx, confirm, print_json, runtime, table};
use crate::base::error::{Error, Result};
use crate::base::term::{safe, safe_line};
use crate::ops::mcp::{HermesSync, Restart};
use crate::ops::mcp_edit::{Named, PlaceArgs, Tier};
use serde_json::json;

#[derive(Debug, clap::Subcommand)]
pub enum McpCmd {
    /// Install a server from a spec: oci://IMAGE, npm:PKG, uvx:PKG, git+https://…, an http manifest URL, or an endpoint URL.
    #[command(visible_alias = "add")]
    Install {
        /// The install spec.
        spec: String,
        /// The server id (default: derived from the spec): lower-case letters, digits, `-`, `_`, at most 64.
        #[arg(long)]
        id: Option<String>,
        /// A display name (default: derived from the spec).
        #[arg(long)]
        name: Option<String>,
        /// A PEM file of CA certificates to trust for this server's https URL (a private CA),
        /// besides the system store and the webpki roots.
        #[arg(long, value_name = "PEM")]
        ca_file: Option<std::path::PathBuf>,
    },
    /// List bundled and installed servers with their state; broken record files are shown too.
    List {
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Show one server: transport, tool policy, env names (secret values are never shown), exposure.
    Status { id: String },
    /// Show which release of its npm or PyPI package a server would run now and, once you
    /// agree, pin it (the next start runs it). Nothing changes without your yes.
    Update {
        id: String,
        /// Pin this release instead of the newest.
        #[arg(long, value_name = "VERSION")]
        version: Option<String>,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Remove an installed server's record (bundled servers cannot be removed).
    #[command(visible_alias = "remove")]
    Uninstall {
        id: String,
        /// Remove the record file even if it does not load.
        #[arg(long, short = 'f')]
        force: bool,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Let agents call TOOL autonomously (moves it off gated/blocked); with --resource or
    /// --prompt, offer a resource URI (a trailing `*` matches a prefix) or a prompt instead.
    Allow {
        id: String,
        tool: String,
        #[command(flatten)]
        what: AccessFlags,
    },
    /// Queue each call of TOOL for approval (moves it off allow/blocked).
    Gate {
        id: String,
        tool: String,
        #[command(flatten)]
        what: AccessFlags,
    },
    /// Hard-reject calls of TOOL (moves it off allow/gated); with --resource or --prompt,
    /// refuse that resource URI (pattern) or prompt.
    Block {
        id: String,
        tool: String,
        #[command(flatten)]
        what: AccessFlags,
    },
    /// Connect to the server with its own headers, list its tools and show each tool's verdict.
    Test { id: String },
    /// Expose a server to Hermes profiles through hal0's proxy (--hermes, --brain) or withdraw it (--no-hermes, --no-brain).
    Expose {
        id: String,
        /// Join it into every Hermes profile but hal0-brain.
        #[arg(long, overrides_with = "no_hermes")]
        hermes: bool,
        /// Withdraw it from those profiles.
        #[arg(long)]
        no_hermes: bool,
        /// Join it into the hal0-brain profile.
        #[arg(long, overrides_with = "no_brain")]
        brain: bool,
        /// Withdraw it from hal0-brain.
        #[arg(long)]
        no_brain: bool,
        /// Reserved by the spec: answers 501 mcp.exposure_unsupported (hidden from the help:
        /// hal0 cannot expose to Open WebUI).
        #[arg(long, hide = true)]
        openwebui: bool,
        /// Reserved by the spec: answers 501 mcp.exposure_unsupported (hidden, as above).
        #[arg(long, hide = true)]
        opencode: bool,
    },
    /// Serve an installed server through the proxy again (and re-join its exposure).
    Enable { id: String },
    /// Stop serving a server through the proxy and withdraw its exposure (its record stays).
    Disable { id: String },
    /// The curated catalogue of installable servers: list, refresh.
    Catalog {
        #[command(subcommand)]
        cmd: super::mcp_catalog::CatalogCmd,
    },
    /// Keys consumers present to hal0's proxy at /mcp/proxy/ID/mcp.
    Keys {
        #[command(subcommand)]
        cmd: super::mcp_keys::KeysCmd,
    },
    /// Start a stdio server's child in the running daemon (it also starts on the first call).
    Start { id: String },
    /// Stop a stdio server's child in the running daemon.
    Stop { id: String },
    /// Restart a stdio server's child in the running daemon.
    Restart { id: String },
    /// Secrets an installed server sends as headers (values in api.env, read from stdin or a prompt).
    Secret {
        #[command(subcommand)]
        cmd: super::mcp_secret::SecretCmd,
    },
    /// Connect an OAuth account at a server that wants one: prints the URL to open, waits for the callback.
    Connect(super::mcp_account::ConnectArgs),
    /// A server's OAuth accounts (box-wide or one per consumer), or choose which with --mode.
    Accounts {
        id: String,
        /// `box`: one account serves every consumer; `delegated`: each consumer connects its own.
        #[arg(long, value_parser = ["box", "delegated"])]
        mode: Option<String>,
        /// `on`: the first call made with an account waits for a person's approval (after
        /// one approved call, its calls run as the policy says); `off`: never.
        #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
        gate_first_call: Option<String>,
    },
    /// Refresh a server's OAuth account now (hal0 serve does before its token expires).
    Refresh {
        id: String,
        /// The consumer whose own account it is (servers with delegated accounts).
        #[arg(long = "for", value_name = "CONSUMER")]
        holder: Option<String>,
    },
    /// Disconnect a server's OAuth account: its tokens are revoked upstream and forgotten.
    Disconnect {
        id: String,
        /// The consumer whose own account it is (servers with delegated accounts).
        #[arg(long = "for", value_name = "CONSUMER")]
        holder: Option<String>,
    },
}

/// `hal0 mcp list --json`: GET /api/mcp/servers's servers, then each broken record as an
/// item of its own (`"state": "broken"`, its file and the error), so the list is one array.
fn listed(v: &serde_json::Value) -> Vec<serde_json::Value> {
    let mut items = super::items_of(v, "servers");
    for b in super::items_of(v, "broken") {
        let file = b["file"].as_str().unwrap_or_default();
        items.push(json!({"id": file.trim_end_matches(".toml"), "state": "broken", "file": file, "error": b["error"]}));
    }
    items
}

/// `--resource` / `--prompt`: the name is a resource URI (pattern) or a prompt, not a tool.
#[derive(clap::Args, Debug, Clone, Copy)]
#[group(multiple = false)]
pub struct AccessFlags {
    /// The name is a resource URI, or a URI prefix ending in `*` ([resource_access]).
    #[arg(long)]
    resource: bool,
    /// The name is a prompt ([prompt_access]).
    #[arg(long)]
    prompt: bool,
    /// Refuse (exit 2, nothing written) when the server does not offer the tool or cannot
    /// be asked; without it, that is a warning.
    #[arg(long)]
    strict: bool,
}

impl AccessFlags {
    fn named(self) -> Named {
        if self.resource {
            Named::Resource
        } else if self.prompt {
            Named::Prompt
        } else {
            Named::Tool
        }
    }
}

fn set(ctx: &Ctx, id: &str, name: &str, tier: Tier, what: AccessFlags) -> Result<()> {
    let named = what.named();
    let a = PlaceArgs { server_id: id.into(), name: name.into(), tier, named, strict: what.strict };
    let ops = ctx.ops()?;
    let p = runtime()?.block_on(crate::ops::mcp_edit::place(&ops, a))?;
    if let Some(w) = &p.warning {
        eprintln!("warning: {w}; the policy names it anyway (--strict refuses)");
    }
    let name = safe_line(name);
    match (named, p.before) {
        (Named::Tool, Some(b)) if b == tier => println!("`{name}` on `{id}` is already {}.", tier.key()),
        (Named::Tool, Some(b)) => println!("`{name}` on `{id}`: {} → {}.", b.key(), tier.key()),
        (Named::Tool, None) => println!("`{name}` on `{id}`: {}.", tier.key()),
        _ if p.changed => println!("`{name}` on `{id}`: {} in [{}].", tier.key(), p.table),
        _ => println!("`{name}` on `{id}` is already {} in [{}].", tier.key(), p.table),
    }
    Ok(())
}

/// The join's report for people (the `hermes_sync` of an op's answer `v`): what changed in
/// Hermes, errors, warnings, the restart.
fn print_sync(v: &serde_json::Value) {
    let s: HermesSync = match serde_json::from_value(v["hermes_sync"].clone()) {
        Ok(s) => s,
        Err(e) => return eprintln!("warning: cannot read the Hermes join's report: {e}"),
    };
    for a in &s.applied {
        println!("Hermes: joined {}.", safe_line(a));
    }
    for r in &s.removed {
        println!("Hermes: withdrew {}.", safe_line(r));
    }
    for w in &s.warnings {
        eprintln!("warning: {}", safe(w));
    }
    for e in &s.errors {
        eprintln!("warning: the Hermes join could not finish: {}", safe(e));
    }
    match &s.restart {
        Restart::NotNeeded => {}
        Restart::Restarted => {
            println!("Hermes restarted ([hermes].restart_command) to load its mcp_servers.")
        }
        other => {
            if let Some(n) = &s.note {
                println!("{}", safe(n));
            } else {
                println!("Hermes restart: {}", safe_line(&other.to_string()));
            }
        }
    }
}

fn toggle(ctx: &Ctx, id: &str, on: bool) -> Result<()> {
    let v = super::change(ctx.ops()?, "mcp_server_config_write", json!({"server_id": id, "enabled": on}))?;
    println!("`{id}` is {}.", if on { "enabled" } else { "disabled" });
    print_sync(&v);
    Ok(())
}

pub fn run(ctx: &Ctx, cmd: McpCmd) -> Result<()> {
    let json = ctx.json;
    match cmd {
        McpCmd::Install { spec, id, name, ca_file } => {
            let ca_file = match ca_file.map(|p| p.into_os_string().into_string()) {
                Some(Err(_)) => return Err(Error::invalid("mcp.install_invalid", "the --ca-file path is not UTF-8")),
                Some(Ok(p)) => Some(p),
                None => None,
            };
            let mut args = json!({"url": spec});
            for (k, v) in [("id", json!(id)), ("name", json!(name)), ("ca_file", json!(ca_file))] {
                if !v.is_null() {
                    args[k] = v;
                }
            }
            let v = super::change(ctx.ops()?, "mcp_server_install", args)?;
            if let Some(w) = v["warning"].as_str() {
                eprintln!("warning: {}", safe_line(w));
            }
            if json {
                print_json(&json!({"installed": v["installed"], "hermes_sync": v["hermes_sync"]}));
                return Ok(());
            }
            let r = &v["installed"];
            let text = |f: &str| r[f].as_str().unwrap_or_default().to_string();
            let id = text("id");
            println!("Installed `{}` ({}, {}).", safe_line(&id), safe_line(&text("name")), text("transport"));
            println!("File: {}", crate::ops::mcp_status::record_file(&ctx.paths, &id).display());
            if let Some(issuer) = r["oauth"]["issuer"].as_str() {
                println!(
                    "It wants an OAuth account (authorization server {}): hal0 mcp connect {id}",
                    safe_line(issuer)
                );
            }
            println!("No tool is callable yet; allow one with: hal0 mcp allow {id} TOOL");
            Ok(())
        }
        McpCmd::List { out } => {
            // The same view as GET /api/mcp/servers, for scripts and for people.
            let ops = ctx.ops_any_config()?;
            let v = super::runtime()?.block_on(crate::ops::mcp::list(&ops, crate::ops::NoArgs {}))?;
            if out.done(json, &listed(&v), "id") {
                return Ok(());
            }
            let text = |s: &serde_json::Value, f: &str| s[f].as_str().map(str::to_string);
            let mut rows: Vec<Vec<String>> = Vec::new();
            for s in v["servers"].as_array().into_iter().flatten() {
                let id = text(s, "id").unwrap_or_default();
                if s["bundled"] == true {
                    let mount = text(s, "mount").unwrap_or_default();
                    rows.push(vec![id, "bundled".into(), mount, "running".into(), "-".into()]);
                    continue;
                }
                let count = |list: &str| s["tool_policy"][list].as_array().map_or(0, Vec::len);
                let policy = format!("{}/{}/{}", count("allow"), count("gated"), count("blocked"));
                let at = text(s, "url").or_else(|| text(s, "command")).or_else(|| text(s, "spec")).unwrap_or_default();
                let transport = text(s, "transport").unwrap_or_default();
                rows.push(vec![id, transport, at, text(s, "state").unwrap_or_default(), policy]);
            }
            let broken = v["broken"].as_array().cloned().unwrap_or_default();
            for b in &broken {
                let file = text(b, "file").unwrap_or_default();
                rows.push(vec![file.trim_end_matches(".toml").into(), "-".into(), file, "broken".into(), "-".into()]);
            }
            println!("{}", table(&["ID", "TRANSPORT", "URL / COMMAND", "STATE", "ALLOW/GATED/BLOCKED"], rows));
            for b in &broken {
                let (file, error) = (text(b, "file").unwrap_or_default(), text(b, "error").unwrap_or_default());
                eprintln!("warning: broken record {}: {}", safe_line(&file), safe(&error));
            }
            Ok(())
        }
        McpCmd::Status { id } => {
            use crate::ops::mcp_status::{self, CONNECTED, Item, Status};
            let status = mcp_status::status(&ctx.ops()?, &id)?;
            if json {
                print_json(&status.json());
                return Ok(());
            }
            let s = match status {
                Status::Bundled(b) => {
                    println!("{} (bundled): {}, mounted at {}.", b.id, b.description, b.mount);
                    return Ok(());
                }
                Status::Installed(s) => s,
            };
            let (r, consumers, rules, pins) = (&s.record, &s.consumers, &s.rules, &s.pins);
            let (state, proxy, delegated, account, own) =
                (s.state, s.proxy_url.clone(), s.delegated, &s.account, &s.accounts);
            let live: Vec<String> = consumers
                .iter()
                .filter(|c| !c.revoked)
                .map(|c| match &c.last_used_at {
                    Some(t) => format!("{} (last call {t})", c.name),
                    None => format!("{} (never used)", c.name),
                })
                .collect();
            let list = |v: &Vec<String>| if v.is_empty() { "-".to_string() } else { v.join(", ") };
            let names = |m: &std::collections::BTreeMap<String, String>| {
                if m.is_empty() { "-".to_string() } else { m.keys().cloned().collect::<Vec<_>>().join(", ") }
            };
            let mut rows = vec![
                vec!["name".into(), r.name.clone()],
                vec!["spec".into(), r.spec.clone()],
                vec!["transport".into(), r.transport.as_str().into()],
                vec!["url".into(), r.url.clone().unwrap_or_else(|| "-".into())],
                vec![
                    "command".into(),
                    r.command.clone().map(|c| format!("{c} {}", r.args.join(" "))).unwrap_or_else(|| "-".into()),
                ],
                vec![
                    "package".into(),
                    match &r.package {
                        Some(p) => format!(
                            "{}@{} from {} ({}; resolved {})",
                            p.name,
                            p.version,
                            p.registry,
                            p.integrity.as_deref().unwrap_or("no hash"),
                            p.resolved_at
                        ),
                        None if s.unpinned_package => format!("not pinned: hal0 mcp update {id} pins it"),
                        None => "-".into(),
                    },
                ],
                vec!["enabled".into(), r.enabled.to_string()],
                vec!["state".into(), state.into()],
                vec!["allow".into(), list(&r.tools.allow)],
                vec!["gated".into(), list(&r.tools.gated)],
                vec!["blocked".into(), list(&r.tools.blocked)],
                vec!["env".into(), names(&r.env)],
                vec!["secrets".into(), names(&r.secrets)],
                vec!["exposure".into(), format!("hermes: {}, brain: {}", r.exposure.hermes, r.exposure.brain)],
                vec!["proxy".into(), proxy],
                vec!["consumers".into(), if live.is_empty() { "-".into() } else { live.join(", ") }],
                vec!["installed".into(), r.installed_at.clone()],
            ];
            if delegated {
                let text = if own.is_empty() {
                    format!(
                        "each consumer connects its own account; none yet (a consumer's call answers a link, or: \
                         hal0 mcp connect {id} --for NAME)"
                    )
                } else {
                    let each: Vec<String> =
                        own.iter().map(|v| format!("{} {}", v.holder.as_deref().unwrap_or("-"), v.state)).collect();
                    format!("delegated: {} (hal0 mcp accounts {id})", each.join(", "))
                };
                rows.push(vec!["oauth".into(), text]);
            }
            if let (Some(o), Some(a)) = (&r.oauth, account) {
                let text = match a {
                    None => format!("needs an OAuth account ({}): hal0 mcp connect {id}", o.issuer),
                    Some(v) if v.state == CONNECTED => format!(
                        "connected at {} ({}), expires {}{}",
                        v.issuer,
                        v.client_kind,
                        v.expires_at.as_deref().unwrap_or("never"),
                        if v.refreshable { ", refreshed by hal0 serve" } else { "" }
                    ),
                    Some(v) => format!(
                        "{}: {}; hal0 mcp connect {id}",
                        v.state,
                        v.error.as_deref().unwrap_or("connect it again")
                    ),
                };
                rows.push(vec!["oauth".into(), text]);
            }
            if !rules.is_empty() {
                let each: Vec<String> =
                    rules.iter().map(|x| format!("{} {}", x.id, super::agent::rule_text(x))).collect();
                rows.push(vec!["rules".into(), format!("{} (hal0 approvals rules remove ID)", each.join("; "))]);
            }
            for state in ["pinned", "accepted", "drifted"] {
                let each: Vec<String> = pins
                    .iter()
                    .filter(|p| p.state == state)
                    .map(|p| {
                        let what = if p.item == Item::Tool { p.name.clone() } else { format!("{} {}", p.item, p.name) };
                        match (state, &p.approval_id) {
                            ("accepted", _) => format!("{what} (by {})", p.pinned_by),
                            ("drifted", Some(card)) => format!("{what} (quarantined; card {card})"),
                            ("drifted", None) => format!("{what} (quarantined; its card was decided)"),
                            _ => what,
                        }
                    })
                    .collect();
                if !each.is_empty() {
                    rows.push(vec![state.into(), each.join(", ")]);
                }
            }
            for (row, p) in [("resources", &r.resource_access), ("prompts", &r.prompt_access)] {
                if !p.is_empty() {
                    rows.push(vec![row.into(), format!("allow: {}; blocked: {}", list(&p.allow), list(&p.blocked))]);
                }
            }
            println!("{}", table(&[r.id.as_str(), ""], rows));
            Ok(())
        }
        McpCmd::Update { id, version, yes } => {
            let ops = ctx.ops()?;
            let rt = runtime()?;
            let u = rt.block_on(crate::ops::mcp_edit::plan_update(&ops, &id, version.as_deref()))?;
            let show = |p: Option<&crate::ops::mcp_edit::Pin>| match p {
                Some(p) => format!("{}@{} ({})", p.name, p.version, p.integrity.as_deref().unwrap_or("no hash")),
                None => "not pinned (the newest release at each start)".into(),
            };
            if !u.changes {
                if json {
                    print_json(&json!({"update": u, "applied": false}));
                } else {
                    println!("`{id}` runs {} already; nothing to change.", show(Some(&u.available)));
                }
                return Ok(());
            }
            if json && !yes {
                print_json(&json!({"update": u, "applied": false}));
                return Ok(());
            }
            if !json {
                println!("`{id}` runs {}", show(u.current.as_ref()));
                println!("{} offers {}", u.available.registry, show(Some(&u.available)));
            }
            confirm(
                yes,
                &format!("Pin `{id}` to {}@{}? Its next start runs it", u.available.name, u.available.version),
            )?;
            rt.block_on(crate::ops::mcp_edit::apply_update(&ops, &u))?;
            if json {
                print_json(&json!({"update": u, "applied": true}));
            } else {
                println!(
                    "Pinned `{id}` to {}@{}; it runs at the next start (hal0 mcp restart {id}).",
                    u.available.name, u.available.version
                );
                println!(
                    "Its tools keep their pins: a changed definition waits for a person (hal0 agent approvals list)."
                );
            }
            Ok(())
        }
        McpCmd::Uninstall { id, force, yes } => {
            crate::ops::mcp_status::check_uninstall(&ctx.paths, &id, force)?;
            confirm(yes, &format!("Uninstall MCP server `{id}`? Its record file is deleted"))?;
            let v = super::change(ctx.ops()?, "mcp_server_uninstall", json!({"server_id": id, "force": force}))?;
            println!("Uninstalled `{id}`.");
            if v["account_revoked"] == true {
                println!("Its OAuth account was revoked at the authorization server.");
            }
            match v["keys_revoked"].as_u64() {
                Some(n) if n > 0 => println!("Revoked {n} consumer key(s)."),
                _ => {}
            }
            print_sync(&v);
            Ok(())
        }
        McpCmd::Allow { id, tool, what } => set(ctx, &id, &tool, Tier::Allow, what),
        McpCmd::Gate { id, tool, what } => set(ctx, &id, &tool, Tier::Gated, what),
        McpCmd::Block { id, tool, what } => set(ctx, &id, &tool, Tier::Blocked, what),
        McpCmd::Keys { cmd } => super::mcp_keys::run(ctx, cmd),
        McpCmd::Secret { cmd } => super::mcp_secret::run(ctx, cmd),
        McpCmd::Connect(a) => super::mcp_account::connect(ctx, a),
        McpCmd::Accounts { id, mode, gate_first_call } => {
            let gate = gate_first_call.map(|g| g == "on");
            super::mcp_account::accounts(ctx, &id, mode.as_deref(), gate, json)
        }
        McpCmd::Refresh { id, holder } => super::mcp_account::refresh(ctx, &id, holder.as_deref(), json),
        McpCmd::Disconnect { id, holder } => super::mcp_account::disconnect(ctx, &id, holder.as_deref(), json),
        McpCmd::Start { id } => super::mcp_control::run(ctx, &id, "start", json),
        McpCmd::Stop { id } => super::mcp_control::run(ctx, &id, "stop", json),
        McpCmd::Restart { id } => super::mcp_control::run(ctx, &id, "restart", json),
        McpCmd::Expose { id, hermes, no_hermes, brain, no_brain, openwebui, opencode } => {
            let mut flags = Vec::new();
            for (name, on, off) in [
                ("hermes", hermes, no_hermes),
                ("brain", brain, no_brain),
                ("openwebui", openwebui, false),
                ("opencode", opencode, false),
            ] {
                if on && off {
                    return Err(Error::invalid(
                        "mcp.exposure_invalid",
                        format!("give --{name} or --no-{name}, not both"),
                    ));
                }
                if on || off {
                    flags.push((name.to_string(), on));
                }
            }
            if flags.is_empty() {
                return Err(Error::invalid(
                    "mcp.exposure_invalid",
                    "say what to change: --hermes, --no-hermes, --brain or --no-brain",
                ));
            }
            let mut args = json!({"server_id": id});
            for (name, on) in flags {
                args[name] = json!(on);
            }
            let v = super::change(ctx.ops()?, "mcp_server_exposure", args)?;
            if json {
                print_json(&json!({"server": v["server"], "hermes_sync": v["hermes_sync"]}));
                return Ok(());
            }
            let e = &v["server"]["exposure"];
            println!("`{id}` exposure: hermes: {}, brain: {}.", e["hermes"], e["brain"]);
            print_sync(&v);
            Ok(())
        }
        McpCmd::Enable { id } => toggle(ctx, &id, true),
        McpCmd::Disable { id } => toggle(ctx, &id, false),
        McpCmd::Catalog { cmd } => super::mcp_catalog::run(ctx, cmd),
        McpCmd::Test { id } => {
            let ops = ctx.ops_any_config()?;
            let p = runtime()?.block_on(crate::ops::mcp_status::probe_here(&ops, &id))?;
            if json {
                print_json(&json!(p));
                return Ok(());
            }
            // The server's name, version and tool names come from the server itself.
            println!(
                "{} answers at {} ({} {})",
                safe_line(&p.id),
                safe_line(&p.url),
                safe_line(p.server_name.as_deref().unwrap_or("?")),
                safe_line(p.server_version.as_deref().unwrap_or(""))
            );
            let rows = p.tools.iter().map(|t| vec![t.tool.clone(), t.verdict.to_string()]).collect();
            println!("{}", table(&["TOOL", "VERDICT"], rows));
            if !p.stale_policy.is_empty() {
                println!("policy names tools the server does not offer: {}", safe_line(&p.stale_policy.join(", ")));
            }
            if !p.missing_secrets.is_empty() {
                println!("secrets not in api.env: {}", safe_line(&p.missing_secrets.join(", ")));
            }
            if p.tools.iter().all(|t| t.verdict == "unknown_tool") {
                println!("no tool is callable yet: hal0 mcp allow|gate {} TOOL", p.id);
            }
            Ok(())
        }
    }
}
