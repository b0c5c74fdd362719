//! `hal0 mcp keys list|add|revoke`: the keys consumers present to hal0's proxy at
//! `/mcp/proxy/<id>/mcp`. Exposure to Hermes mints its own; these are for other consumers
//! (a workstation's Claude Code, a CI job). The rules live in `crate::registry::consumers`.

use super::{Ctx, confirm, print_json, table};
use crate::error::Result;
use crate::registry::{Registry, consumers};
use serde_json::json;

#[derive(Debug, clap::Subcommand)]
pub enum KeysCmd {
    /// List consumers and their keys' state (never the keys).
    List {
        /// Only this server's consumers.
        id: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Mint a key for consumer NAME on server ID (replaces NAME's old key); printed once.
    Add {
        id: String,
        name: String,
        /// A note shown in `keys list`.
        #[arg(long, default_value = "")]
        note: String,
        #[arg(long)]
        json: bool,
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
    let store = ctx.store()?;
    match cmd {
        KeysCmd::List { id, json } => {
            if let Some(id) = &id {
                Registry::new(&ctx.paths).get(id)?;
            }
            let rows = consumers::list(&store, id.as_deref())?;
            if json {
                print_json(&json!({"consumers": rows, "count": rows.len()}));
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
        KeysCmd::Add { id, name, note, json } => {
            let cfg = ctx.config()?;
            crate::registry::proxy::serving(&Registry::new(&ctx.paths), &id)?;
            let (c, key) = consumers::mint(&store, &id, &name, &note)?;
            let url = crate::connect::proxy_url(&cfg, &id, crate::connect::Reach::Remote);
            if json {
                print_json(&json!({"consumer": c, "key": key, "url": url}));
                return Ok(());
            }
            println!("Key for consumer `{name}` on `{id}` (shown once; hal0 keeps only its hash):");
            println!("{key}");
            println!("Proxy URL: {url}");
            println!("{}", crate::term::safe(&crate::connect::claude_line(&id, &url, &key)));
            Ok(())
        }
        KeysCmd::Revoke { id, name, yes } => {
            consumers::get(&store, &id, &name)?;
            confirm(yes, &format!("Revoke `{name}`'s key on `{id}`? It stops working at once"))?;
            if consumers::revoke(&store, &id, &name)? {
                println!("Revoked `{name}`'s key on `{id}`.");
            } else {
                println!("`{name}`'s key on `{id}` was already revoked.");
            }
            Ok(())
        }
    }
}
