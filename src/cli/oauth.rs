//! `hal0 oauth urls|client add|client list|client remove|grants|revoke`: OAuth 2.1 for
//! clients that speak only OAuth (claude.ai, ChatGPT). Each command calls one op of
//! [`crate::ops::oauth`] and prints its answer.

use super::{Ctx, confirm, print_json, runtime, table};
use crate::base::error::Result;
use crate::base::term::safe;
use crate::ops::oauth::Registration;
use serde_json::json;

#[derive(Debug, clap::Subcommand)]
pub enum OauthCmd {
    /// The URLs to paste into an OAuth-only client (claude.ai, ChatGPT), one per MCP server.
    Urls {},
    /// OAuth clients: those that registered themselves, and those added here.
    #[command(subcommand)]
    Client(ClientCmd),
    /// Grants a person approved: which client, which server, as which bridge client.
    Grants {
        /// Ended grants too.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        out: super::ListOut,
    },
    /// End one grant (every token of it stops at once).
    Revoke {
        /// The grant id (see hal0 oauth grants).
        grant: String,
    },
}

#[derive(Debug, clap::Subcommand)]
pub enum ClientCmd {
    /// Add a client for a host that wants an id and secret typed in; prints both once.
    Add {
        /// What the person sees on the consent page (e.g. "ChatGPT").
        name: String,
        /// A redirect URI the host gave you (repeatable; at least one).
        #[arg(long = "redirect-uri", value_name = "URI", required = true)]
        redirect_uris: Vec<String>,
        /// A public client (no secret; PKCE only).
        #[arg(long)]
        public: bool,
    },
    /// List clients.
    List {
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Remove a client: every grant it holds ends.
    Remove {
        client_id: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

pub fn run(ctx: &Ctx, cmd: OauthCmd) -> Result<()> {
    let json = ctx.json;
    let ops = ctx.ops()?;
    let rt = runtime()?;
    match cmd {
        OauthCmd::Urls { .. } => {
            let v = crate::ops::oauth::urls(&ops)?;
            if json {
                print_json(&v);
                return Ok(());
            }
            println!("Paste one of these into the client as the MCP server URL (claude.ai: Settings → Connectors →");
            println!("Add custom connector; ChatGPT: Settings → Apps → Create). A person approves each client on");
            println!("the box's consent page, signed in with `hal0 ui login`.");
            println!();
            for m in v["mounts"].as_array().into_iter().flatten() {
                println!(
                    "  {:<12} {}",
                    safe(m["server"].as_str().unwrap_or("")),
                    safe(m["url"].as_str().unwrap_or(""))
                );
            }
            println!();
            println!("Issuer: {}", safe(v["issuer"].as_str().unwrap_or("")));
            println!("Clients with a key keep using /mcp/<server>/mcp (hal0 bridge add prints those lines).");
            Ok(())
        }
        OauthCmd::Client(ClientCmd::Add { name, redirect_uris, public }) => {
            let reg = Registration {
                redirect_uris,
                client_name: Some(name),
                token_endpoint_auth_method: Some(if public { "none" } else { "client_secret_post" }.into()),
                ..Default::default()
            };
            let v = rt.block_on(crate::ops::oauth::register(&ops, reg))?;
            if json {
                print_json(&v);
                return Ok(());
            }
            println!("Added OAuth client `{}`.", safe(v["client_name"].as_str().unwrap_or("")));
            println!("  client_id:     {}", safe(v["client_id"].as_str().unwrap_or("")));
            if let Some(s) = v["client_secret"].as_str() {
                println!("  client_secret: {}", safe(s));
                println!("The secret is shown once (hal0 keeps only its sha256).");
            }
            Ok(())
        }
        OauthCmd::Client(ClientCmd::List { out }) => {
            let list = rt.block_on(crate::ops::oauth::clients(&ops))?;
            if out.done_with(json, &list, "client_id") {
                return Ok(());
            }
            if list.is_empty() {
                println!("No OAuth clients. They register themselves when they connect (hal0 oauth urls).");
                return Ok(());
            }
            let rows = list
                .iter()
                .map(|c| {
                    vec![
                        c.client_id.clone(),
                        c.name.clone(),
                        c.kind.clone(),
                        c.redirect_uris.join("\n"),
                        c.created_at.clone(),
                    ]
                })
                .collect();
            println!("{}", table(&["CLIENT ID", "NAME", "KIND", "REDIRECT URIS", "CREATED"], rows));
            Ok(())
        }
        OauthCmd::Client(ClientCmd::Remove { client_id, yes }) => {
            confirm(yes, &format!("Remove OAuth client `{client_id}`? Every token it holds stops at once"))?;
            let c = rt.block_on(crate::ops::oauth::remove_client(&ops, client_id))?;
            if json {
                print_json(&json!(c));
            } else {
                println!("Removed `{}` ({}); its grants ended.", safe(&c.name), safe(&c.client_id));
            }
            Ok(())
        }
        OauthCmd::Grants { all, out } => {
            let list = rt.block_on(crate::ops::oauth::grants(&ops, all))?;
            if out.done_with(json, &list, "id") {
                return Ok(());
            }
            if list.is_empty() {
                println!("No OAuth grants.");
                return Ok(());
            }
            let rows = list
                .iter()
                .map(|g| {
                    vec![
                        g.id.clone(),
                        g.client_name.clone(),
                        format!("hal0-{}", g.mount),
                        g.scopes.clone(),
                        g.bridge_client.clone(),
                        g.created_at.clone(),
                        g.revoked_at
                            .clone()
                            .map_or("no".into(), |at| format!("{at} ({})", g.revoked_why.clone().unwrap_or_default())),
                    ]
                })
                .collect();
            println!("{}", table(&["GRANT", "CLIENT", "SERVER", "SCOPES", "BRIDGE CLIENT", "CREATED", "ENDED"], rows));
            Ok(())
        }
        OauthCmd::Revoke { grant } => {
            rt.block_on(crate::ops::oauth::end_grant(&ops, grant.clone()))?;
            if json {
                print_json(&json!({"grant": grant, "ended": true}));
            } else {
                println!("Ended grant `{}`; its tokens stop at once.", safe(&grant));
            }
            Ok(())
        }
    }
}
