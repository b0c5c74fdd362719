//! `hal0 bridge add|list|scopes|rotate|revoke`: per-client bridge keys.

use super::{Ctx, confirm, print_json, runtime, table};
use crate::auth::bridge::{self, Client, parse_scopes};
use crate::error::Result;
use crate::ops::bridge::Keyed;
use crate::term::{safe, shell_quote};
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
        #[arg(long)]
        json: bool,
    },
    /// List clients: name, scopes, note, created, last seen, revoked.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Replace a client's scope set (agents is always held, except by a relay-only bot).
    Scopes {
        name: String,
        /// The new scopes: agents, memory, admin, relay.
        #[arg(required = true)]
        scopes: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Mint a new key for a client; the old one stops at once.
    Rotate {
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
        #[arg(long)]
        json: bool,
    },
    /// End a client's key; its name stays reserved.
    Revoke {
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
        #[arg(long)]
        json: bool,
    },
}

fn scopes_str(c: &Client) -> String {
    c.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")
}

/// Print a new or rotated key as the op answered it ([`Keyed`]).
fn print_key(k: &Keyed, json_out: bool, verb: &str) -> Result<()> {
    if let Some(w) = &k.warning {
        eprintln!("warning: {}", safe(w));
    }
    if json_out {
        let mut out = json!(k);
        if let Some(o) = out.as_object_mut() {
            // The CLI's JSON kept its shape: the warning went to stderr, the lines always there.
            o.remove("warning");
            o.remove("base_url");
            o.insert("claude_mcp_add".into(), json!(k.claude_mcp_add));
        }
        print_json(&out);
        return Ok(());
    }
    let (key, lines, base) = (&k.key, &k.claude_mcp_add, &k.base_url);
    let bot = k.relay_bot.as_ref().map(|b| (&b.env, &b.config_yaml));
    let scopes = k.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ");
    println!("{verb} bridge client `{}` (scopes: {scopes}).", k.name);
    println!(
        "Key, shown once (hal0 keeps only its sha256; a lost key is replaced with `hal0 bridge rotate {}`):",
        k.name
    );
    println!();
    println!("  {key}");
    println!();
    println!("On the remote machine, paste:");
    println!();
    for l in lines {
        println!("{}", safe(l));
    }
    println!();
    if let Some((env, yaml)) = bot {
        println!("For a hermes-bridge bot (the relay's Hermes plugin), in the bot's .env:");
        println!();
        for l in env {
            println!("  {}", safe(l));
        }
        println!();
        println!("and in its config.yaml (so the model can ask_agent and reply):");
        println!();
        for l in yaml.lines() {
            println!("  {}", safe(l));
        }
        println!();
    }
    let me = format!("{base}/api/bridge/me");
    let header = format!("Authorization: Bearer {key}");
    println!("Check it from there: {}", safe(&format!("curl -s {} -H {}", shell_quote(&me), shell_quote(&header))));
    Ok(())
}

pub fn run(ctx: &Ctx, cmd: BridgeCmd) -> Result<()> {
    match cmd {
        BridgeCmd::Add { name, note, scopes, json } => {
            // A malformed hal0.toml fails (in ctx.ops) before anything is written.
            let ops = ctx.ops()?;
            let k = runtime()?
                .block_on(crate::ops::bridge::add(&ops, crate::ops::bridge::AddArgs { name, note, scopes }))?;
            print_key(&k, json, "Added")
        }
        BridgeCmd::List { json } => {
            let list = bridge::list(&ctx.store()?)?;
            if json {
                print_json(&json!(list));
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
                    ]
                })
                .collect();
            println!("{}", table(&["NAME", "SCOPES", "NOTE", "CREATED", "LAST SEEN", "REVOKED"], rows));
            Ok(())
        }
        BridgeCmd::Scopes { name, scopes, json } => {
            let set = parse_scopes(&scopes)?;
            let c = bridge::set_scopes(&ctx.store()?, &name, set)?;
            if json {
                print_json(&json!(c));
            } else {
                println!("Client `{}` now holds: {}.", c.name, scopes_str(&c));
            }
            Ok(())
        }
        BridgeCmd::Rotate { name, yes, json } => {
            let store = ctx.store()?;
            bridge::get(&store, &name)?;
            ctx.config()?;
            confirm(yes, &format!("Rotate the key of `{name}`? Its current key stops working at once"))?;
            let ops = ctx.ops()?;
            let k = runtime()?.block_on(crate::ops::bridge::rotate(&ops, crate::ops::bridge::NameArgs { name }))?;
            print_key(&k, json, "Rotated the key of")
        }
        BridgeCmd::Revoke { name, yes, json } => {
            let store = ctx.store()?;
            bridge::get(&store, &name)?;
            confirm(yes, &format!("Revoke `{name}`? Its key stops working at once and the name stays reserved"))?;
            let c = bridge::revoke(&store, &name)?;
            if json {
                print_json(&json!(c));
            } else {
                println!("Revoked `{}`; its key no longer works. The name stays reserved.", c.name);
            }
            Ok(())
        }
    }
}
