//! `hal0 mcp keys list|add|revoke`: the keys consumers present to hal0's proxy at
//! `/mcp/proxy/<id>/mcp`. Exposure to Hermes mints its own; these are for other consumers
//! (a workstation's Claude Code, a CI job). The rules live in `crate::auth::consumers`.

use super::{Ctx, confirm, print_json, runtime, table};
use crate::base::error::Result;
use crate::ops::keys;

#[derive(Debug, clap::Subcommand)]
pub enum KeysCmd {
    /// List consumers and their keys' state (never the keys).
    List {
        /// Only this server's consumers.
        id: Option<String>,
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Mint a key for consumer NAME on server ID (replaces NAME's old key); printed once.
    Add {
        id: String,
        name: String,
        /// A note shown in `keys list`.
        #[arg(long, default_value = "")]
        note: String,
    },
    /// Revoke consumer NAME's key on server ID; it stops working at once.
    Revoke {
        id: String,
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

pub fn run(ctx: &Ctx, cmd: KeysCmd) -> Result<()> {
    let json = ctx.json;
    let ops = ctx.ops()?;
    let rt = runtime()?;
    match cmd {
        KeysCmd::List { id, out } => {
            let rows = rt.block_on(keys::list(&ops, keys::ListArgs { server: id }))?;
            if out.done_with(json, &rows, "name") {
                return Ok(());
            }
            let t = rows
                .iter()
                .map(|c| {
                    vec![
                        c.server.clone(),
                        c.name.clone(),
                        if c.revoked { "revoked".into() } else { "live".into() },
                        c.last_used_at.clone().unwrap_or_else(|| "-".into()),
                        c.note.clone(),
                    ]
                })
                .collect();
            println!("{}", table(&["SERVER", "CONSUMER", "KEY", "LAST USED", "NOTE"], t));
            Ok(())
        }
        KeysCmd::Add { id, name, note } => {
            let v =
                super::change(ops, "mcp_key_add", serde_json::json!({"server_id": id, "name": name, "note": note}))?;
            if json {
                print_json(&v);
                return Ok(());
            }
            println!("Key for consumer `{name}` on `{id}` (shown once; hal0 keeps only its hash):");
            println!("{}", v["key"].as_str().unwrap_or_default());
            println!("Proxy URL: {}", v["url"].as_str().unwrap_or_default());
            println!("{}", crate::base::term::safe(v["claude_mcp_add"].as_str().unwrap_or_default()));
            Ok(())
        }
        KeysCmd::Revoke { id, name, yes } => {
            keys::get(&ops, &id, &name)?;
            confirm(yes, &format!("Revoke `{name}`'s key on `{id}`? It stops working at once"))?;
            let v = super::change(ops, "mcp_key_revoke", serde_json::json!({"server_id": id, "name": name}))?;
            if v["revoked"] == true {
                println!("Revoked `{name}`'s key on `{id}`.");
            } else {
                println!("`{name}`'s key on `{id}` was already revoked.");
            }
            Ok(())
        }
    }
}
