//! `hal0 auth status|rotate`: the box keys in `api.env`.

use super::{Ctx, confirm, print_json, table};
use crate::base::error::Result;
use crate::base::token::fingerprint;
use crate::ops::boxkeys::{self, BoxKey, BoxKeys};

#[derive(Debug, clap::Subcommand)]
pub enum AuthCmd {
    /// Whether auth is armed, and each box key as configured or not with a fingerprint.
    Status {},
    /// Mint a new admin or client key and print it once; the old one stops at once.
    Rotate {
        /// Which key.
        tier: BoxKey,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

pub fn run(ctx: &Ctx, cmd: AuthCmd) -> Result<()> {
    let json = ctx.json;
    let path = ctx.paths.api_env();
    match cmd {
        AuthCmd::Status { .. } => {
            let keys = BoxKeys::load(&path)?;
            if json {
                print_json(&boxkeys::status_json(&keys));
                return Ok(());
            }
            println!(
                "auth: {}",
                if keys.armed() {
                    "armed (a key is required on protected routes)"
                } else {
                    "off (no box key yet; `hal0 auth rotate admin` arms it)"
                }
            );
            let rows = [BoxKey::Admin, BoxKey::Client]
                .iter()
                .map(|t| {
                    let k = keys.get(*t);
                    vec![
                        t.var().to_string(),
                        if k.is_some() { "yes" } else { "no" }.to_string(),
                        k.map(fingerprint).unwrap_or_else(|| "-".into()),
                    ]
                })
                .collect();
            println!("{}", table(&["KEY", "CONFIGURED", "FINGERPRINT"], rows));
            Ok(())
        }
        AuthCmd::Rotate { tier, yes } => {
            if BoxKeys::load(&path)?.get(tier).is_some() {
                confirm(
                    yes,
                    &format!("Rotate the {} key? Every client using it stops working at once", tier.as_str()),
                )?;
            }
            let r = boxkeys::rotate(&ctx.paths, tier, &super::who())?;
            if json {
                print_json(&serde_json::to_value(&r).unwrap_or_default());
            } else {
                println!(
                    "New {} key ({}), shown once; it is also in {}:",
                    tier.as_str(),
                    r.fingerprint,
                    path.display()
                );
                println!();
                println!("  {}", r.key);
                println!();
                if r.had {
                    println!("The old key no longer works; update each client's Authorization header.");
                } else {
                    println!("Auth is now armed.");
                }
            }
            Ok(())
        }
    }
}
