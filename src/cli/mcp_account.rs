//! `hal0 mcp connect ID`, `refresh`, `disconnect` and `accounts`: OAuth accounts at an
//! installed server that wants one (the box's, or with `--for CONSUMER` a consumer's own
//! when the server has delegated accounts). `connect` prints the URL a person opens and waits until the
//! authorization server sends the browser back to `hal0 serve`'s callback (or `--no-wait`
//! leaves it there); `refresh` gets a new access token now; `disconnect` revokes the account's tokens upstream and forgets them.
//! The rules live in [`crate::ops::accounts`] and [`crate::registry::oauth`].

use super::{Ctx, print_json, runtime};
use crate::base::error::{Error, Kind, Result};
use crate::base::term::safe_line;
use serde_json::json;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct ConnectArgs {
    pub id: String,
    /// A client id registered for hal0 at the server's authorization server (when it takes
    /// neither hal0's metadata document nor dynamic registration).
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// The api.env key holding that client's secret (put it there first).
    #[arg(long, value_name = "API_ENV_KEY", requires = "client_id")]
    pub client_secret_key: Option<String>,
    /// The scopes to ask for, space-separated (default: what the server names).
    #[arg(long)]
    pub scope: Option<String>,
    /// The consumer whose own account this connects (servers with delegated accounts).
    #[arg(long = "for", value_name = "CONSUMER")]
    pub holder: Option<String>,
    /// Print the URL and return; `hal0 mcp status ID` shows the account once connected.
    #[arg(long)]
    pub no_wait: bool,
    /// How long to wait for the person, in seconds.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub timeout: u64,
}

pub fn connect(ctx: &Ctx, a: ConnectArgs) -> Result<()> {
    let ops = ctx.ops()?;
    let rt = runtime()?;
    let args = crate::ops::accounts::ConnectArgs {
        server_id: a.id.clone(),
        client_id: a.client_id,
        client_secret_key: a.client_secret_key,
        scope: a.scope,
        holder: a.holder.clone(),
    };
    let begun = rt.block_on(crate::ops::accounts::connect(&ops, args))?;
    if ctx.json && a.no_wait {
        print_json(&json!(begun));
        return Ok(());
    }
    if !ctx.json {
        eprintln!("Open this URL in a browser and approve hal0's access to `{}`:", safe_line(&a.id));
        println!("{}", begun.authorize_url);
        eprintln!(
            "The authorization server sends the browser back to {} (hal0 serve must be running there).",
            safe_line(&begun.redirect_uri)
        );
    }
    if a.no_wait {
        eprintln!("Not waiting: hal0 mcp status {} shows the account once it is connected.", a.id);
        return Ok(());
    }
    if !ctx.json {
        eprintln!("Waiting up to {} s…", a.timeout);
    }
    let until = Instant::now() + Duration::from_secs(a.timeout);
    loop {
        if let Some(o) = crate::ops::accounts::outcome(&ops, &begun.connect_id)? {
            if !o.ok {
                let code = o.code.as_deref().and_then(|c| crate::base::codes::ALL.iter().find(|k| **k == c).copied());
                return Err(Error::new(
                    code.unwrap_or("mcp.oauth_token_failed"),
                    Kind::BadGateway,
                    o.message.unwrap_or_else(|| "the connect failed".into()),
                ));
            }
            let view = crate::ops::accounts::view(&ops, &a.id, a.holder.as_deref());
            if ctx.json {
                print_json(&json!({"server": a.id, "for": a.holder, "connected": true, "account": view}));
            } else if let Some(h) = &a.holder {
                println!(
                    "Connected `{}` for `{}`: its calls through the proxy go upstream as this account.",
                    safe_line(&a.id),
                    safe_line(h)
                );
            } else {
                println!("Connected `{}`: calls through its proxy go upstream as this account.", safe_line(&a.id));
                if let Some(v) = view.and_then(|v| v.expires_at) {
                    println!("The token expires at {v}; hal0 serve refreshes it before then when the server allows.");
                }
            }
            return Ok(());
        }
        if Instant::now() >= until {
            return Err(Error::new(
                "mcp.oauth_connect_timeout",
                Kind::Unavailable,
                format!(
                    "nobody finished the connect within {} s (is hal0 serve running at {}?); run hal0 mcp connect {} again",
                    a.timeout, begun.redirect_uri, a.id
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

pub fn disconnect(ctx: &Ctx, id: &str, holder: Option<&str>, json_out: bool) -> Result<()> {
    let ops = ctx.ops()?;
    let v = runtime()?.block_on(crate::ops::accounts::disconnect(&ops, id, holder))?;
    if json_out {
        print_json(&v);
        return Ok(());
    }
    println!("Disconnected `{}`: its tokens are forgotten here.", safe_line(id));
    match v["revoked_upstream"].as_bool() {
        Some(true) => println!("The authorization server revoked them."),
        Some(false) => println!("The authorization server did not confirm the revocation: revoke hal0's access there."),
        None => println!("The authorization server offers no revocation: revoke hal0's access there if you need to."),
    }
    Ok(())
}

pub fn refresh(ctx: &Ctx, id: &str, holder: Option<&str>, json_out: bool) -> Result<()> {
    let ops = ctx.ops()?;
    let v = runtime()?.block_on(crate::ops::accounts::refresh(&ops, id, holder))?;
    if json_out {
        print_json(&json!({"server": id, "for": holder, "account": v}));
        return Ok(());
    }
    println!("Refreshed `{}`: the new token expires {}.", safe_line(id), v.expires_at.as_deref().unwrap_or("never"));
    Ok(())
}

/// `hal0 mcp accounts ID [--mode box|delegated]`: the server's accounts, or choose whose
/// account its calls go upstream as.
pub fn accounts(ctx: &Ctx, id: &str, mode: Option<&str>, gate: Option<bool>, json_out: bool) -> Result<()> {
    let ops = ctx.ops()?;
    if mode.is_some() || gate.is_some() {
        let v = runtime()?.block_on(crate::ops::accounts::set_mode(&ops, id, mode, gate))?;
        if json_out {
            print_json(&v);
            return Ok(());
        }
        if v["gate_first_call"] == true {
            println!(
                "`{}`: an account's first call waits for a person (hal0 agent approvals), then its calls run.",
                safe_line(id)
            );
        } else if gate == Some(false) {
            println!("`{}`: calls run as the policy says from an account's first call.", safe_line(id));
        }
        let Some(m) = mode else { return Ok(()) };
        let what = if m == "delegated" {
            "each consumer's calls go upstream as its own account (a consumer without one gets a link to connect it)"
        } else {
            "one account serves every consumer (hal0 mcp connect ID)"
        };
        println!("`{}`: {what}.", safe_line(id));
        if v["unused_accounts"].as_u64().unwrap_or(0) > 0 {
            println!(
                "{} account(s) of the other kind stay connected but unused: hal0 mcp disconnect {} [--for NAME] \
                 removes them.",
                v["unused_accounts"], id
            );
        }
        return Ok(());
    }
    let v = crate::ops::accounts::list(&ops, id)?;
    if json_out {
        print_json(&v);
        return Ok(());
    }
    let Some(mode) = v["accounts_mode"].as_str() else {
        println!("`{}` is not known to want OAuth (hal0 mcp test {} finds out).", safe_line(id), id);
        return Ok(());
    };
    println!("`{}`: {mode} accounts.", safe_line(id));
    let rows: Vec<Vec<String>> = v["accounts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            let s = |k: &str| a[k].as_str().map(|v| safe_line(v).into_owned()).unwrap_or_else(|| "-".into());
            vec![
                a["holder"].as_str().map(|v| safe_line(v).into_owned()).unwrap_or_else(|| "(box)".into()),
                s("state"),
                s("expires_at"),
                s("connected_at"),
                s("connected_by"),
            ]
        })
        .collect();
    if rows.is_empty() {
        println!("No account is connected.");
    } else {
        println!("{}", super::table(&["FOR", "STATE", "EXPIRES", "CONNECTED", "BY"], rows));
    }
    Ok(())
}
