//! `hal0 bridge add|list|scopes|rotate|revoke`: per-client bridge keys.

use super::{Ctx, confirm, print_json, table};
use crate::base::error::Result;
use crate::base::term::{safe, shell_quote};
use crate::ops::bridge::Client;
use serde_json::json;

#[derive(Debug, clap::Subcommand)]
pub enum BridgeCmd {
    /// Add a client and print its key once, with the `claude mcp add` lines to paste.
    Add {
        /// Client name: lower-case letters, digits, `_` and `-`, at most 32.
        name: String,
        /// A note for people (what and where this client is).
        #[arg(long, default_value = "")]
        note: String,
        /// A scope to grant (repeatable): agents, memory, admin, relay. Default: agents memory.
        #[arg(long = "scope", value_name = "SCOPE")]
        scopes: Vec<String>,
        /// Print this MCP client's config instead of the `claude mcp add` lines (the key is
        /// read from $HAL0_BRIDGE_KEY or the client's prompt, never written in it).
        #[arg(long, value_name = "CLIENT", value_parser = clap::builder::PossibleValuesParser::new(crate::ops::bridge::KINDS))]
        client: Option<String>,
    },
    /// List clients: name, scopes, note, created, last seen, revoked, origin (a key, or the
    /// OAuth client a person approved).
    List {
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Replace a client's scope set (agents is always held, except by a relay-only bot).
    Scopes {
        name: String,
        /// The new scopes: agents, memory, admin, relay.
        #[arg(required = true)]
        scopes: Vec<String>,
    },
    /// Mint a new key for a client; the old one stops at once.
    Rotate {
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Free a revoked client's name for reuse: deletes its runs (and their output), approvals,
    /// standing rules, memory operations and OAuth grants; the audit log keeps its history.
    Purge {
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// End a client's key; its name stays reserved (`hal0 bridge purge` frees it).
    Revoke {
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

fn scopes_str(c: &Client) -> String {
    c.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")
}

/// Run a bridge op at the shell (audited on surface `cli`); a key-minting one answers a
/// [`crate::ops::bridge::Keyed`] as JSON.
fn shell_op(ctx: &Ctx, tool: &str, args: serde_json::Value) -> Result<serde_json::Value> {
    super::change(ctx.ops()?, tool, args)
}

/// Print a new or rotated key as the op answered it (a `Keyed`), with client `kind`'s
/// config (one of [`crate::ops::bridge::KINDS`]).
fn print_key(k: &serde_json::Value, json_out: bool, verb: &str, kind: &str) -> Result<()> {
    let text = |f: &str| k[f].as_str().unwrap_or_default().to_string();
    let list = |v: &serde_json::Value| -> Vec<String> {
        v.as_array().map(|a| a.iter().filter_map(|l| l.as_str().map(str::to_string)).collect()).unwrap_or_default()
    };
    if let Some(w) = k["warning"].as_str() {
        eprintln!("warning: {}", safe(w));
    }
    let lines = list(&k["claude_mcp_add"]);
    if json_out {
        let mut out = k.clone();
        if let Some(o) = out.as_object_mut() {
            // The CLI's JSON kept its shape: the warning went to stderr, the lines always there.
            o.remove("warning");
            o.remove("base_url");
            o.insert("claude_mcp_add".into(), json!(lines));
        }
        print_json(&out);
        return Ok(());
    }
    let (name, key, base) = (text("name"), text("key"), text("base_url"));
    let scopes = list(&k["scopes"]).join(" ");
    println!("{verb} bridge client `{name}` (scopes: {scopes}).");
    println!("Key, shown once (hal0 keeps only its sha256; a lost key is replaced with `hal0 bridge rotate {name}`):");
    println!();
    println!("  {key}");
    println!();
    let servers: Vec<crate::ops::bridge::Server> = serde_json::from_value(k["servers"].clone()).unwrap_or_default();
    if !servers.is_empty() {
        let s = crate::ops::bridge::snippet(kind, &servers)?;
        println!("For {}, in {}:", s.client, s.place);
        if kind != "claude-code" {
            println!("(first, on the remote machine: {})", crate::ops::bridge::key_prompt());
        }
        println!();
        for l in s.text.lines() {
            println!("  {}", safe(l));
        }
        println!();
    }
    if let Some(bot) = k.get("relay_bot").filter(|b| b.is_object()) {
        println!("For a hermes-bridge bot (the relay's Hermes plugin), in the bot's .env:");
        println!();
        for l in list(&bot["env"]) {
            println!("  {}", safe(&l));
        }
        println!();
        println!("and in its config.yaml (so the model can ask_agent and reply):");
        println!();
        for l in bot["config_yaml"].as_str().unwrap_or_default().lines() {
            println!("  {}", safe(l));
        }
        println!();
    }
    let me = format!("{base}/api/bridge/me");
    let header = format!("\"Authorization: Bearer ${}\"", crate::ops::bridge::KEY_VAR);
    println!("Check it from there: {}", safe(&format!("curl -s {} -H {header}", shell_quote(&me))));
    Ok(())
}

pub fn run(ctx: &Ctx, cmd: BridgeCmd) -> Result<()> {
    let json = ctx.json;
    match cmd {
        BridgeCmd::Add { name, note, scopes, client } => {
            // A malformed hal0.toml fails (in ctx.ops) before anything is written.
            let k = shell_op(ctx, "bridge_client_add", json!({"name": name, "note": note, "scopes": scopes}))?;
            print_key(&k, json, "Added", client.as_deref().unwrap_or("claude-code"))
        }
        BridgeCmd::List { out } => {
            let list =
                super::runtime()?.block_on(crate::ops::bridge::list(&ctx.ops_any_config()?, crate::ops::NoArgs {}))?;
            if out.done_with(json, &list, "name") {
                return Ok(());
            }
            if list.is_empty() {
                println!("No bridge clients. Add one with: hal0 bridge add NAME");
                return Ok(());
            }
            let rows = list
                .iter()
                .map(|c| {
                    vec![
                        c.name.clone(),
                        scopes_str(c),
                        c.note.clone(),
                        c.created_at.clone(),
                        c.last_seen.clone().unwrap_or_else(|| "never".into()),
                        c.revoked_at.clone().unwrap_or_else(|| "no".into()),
                        if c.origin.is_empty() { "key".into() } else { c.origin.clone() },
                    ]
                })
                .collect();
            println!("{}", table(&["NAME", "SCOPES", "NOTE", "CREATED", "LAST SEEN", "REVOKED", "ORIGIN"], rows));
            Ok(())
        }
        BridgeCmd::Scopes { name, scopes } => {
            crate::ops::bridge::requested_scopes(&scopes)?; // a bad scope is a usage error before anything opens
            let c = shell_op(ctx, "bridge_client_scopes", json!({"name": name, "scopes": scopes}))?;
            if json {
                print_json(&c);
            } else {
                let held: Vec<&str> = c["scopes"].as_array().into_iter().flatten().filter_map(|s| s.as_str()).collect();
                println!("Client `{}` now holds: {}.", c["name"].as_str().unwrap_or_default(), held.join(" "));
            }
            Ok(())
        }
        BridgeCmd::Rotate { name, yes } => {
            crate::ops::bridge::get(&ctx.ops()?, &name)?;
            confirm(yes, &format!("Rotate the key of `{name}`? Its current key stops working at once"))?;
            let k = shell_op(ctx, "bridge_client_rotate", json!({"name": name}))?;
            print_key(&k, json, "Rotated the key of", "claude-code")
        }
        BridgeCmd::Revoke { name, yes } => {
            crate::ops::bridge::get(&ctx.ops()?, &name)?;
            confirm(yes, &format!("Revoke `{name}`? Its key stops working at once and the name stays reserved"))?;
            let c = shell_op(ctx, "bridge_client_revoke", json!({"name": name}))?;
            if json {
                print_json(&c);
            } else {
                println!(
                    "Revoked `{}`; its key no longer works. The name stays reserved (hal0 bridge purge frees it).",
                    c["name"].as_str().unwrap_or_default()
                );
            }
            Ok(())
        }
        BridgeCmd::Purge { name, yes } => {
            crate::ops::bridge::get(&ctx.ops()?, &name)?;
            confirm(
                yes,
                &format!("Purge `{name}`? Its runs and their output, approvals, rules and grants are deleted for good"),
            )?;
            let p = shell_op(ctx, "bridge_client_purge", json!({"name": name}))?;
            if json {
                print_json(&p);
            } else {
                let n = |f: &str| p[f].as_u64().unwrap_or_default();
                println!(
                    "Purged `{name}`: {} run(s), {} approval(s), {} rule(s), {} memory operation(s), {} OAuth grant(s) deleted. \
                     The name is free; the audit log keeps its history.",
                    n("runs"),
                    n("approvals"),
                    n("rules"),
                    n("memory_operations"),
                    n("oauth_grants")
                );
            }
            Ok(())
        }
    }
}
