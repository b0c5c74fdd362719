//! `hal0 ui login|sessions|logout`: the dashboard's sessions, from the box's shell.

use super::{Ctx, print_json, table};
use crate::error::Result;
use crate::ui::session;

#[derive(Debug, clap::Subcommand)]
pub enum UiCmd {
    /// Print a one-time link that opens a dashboard session (valid for a few minutes).
    Login {
        /// How long the link may wait to be opened, in minutes (1 to 60).
        #[arg(long, default_value_t = session::LINK_MINUTES)]
        minutes: i64,
        #[arg(long)]
        json: bool,
    },
    /// Dashboard sessions: id, opened, last seen, expires, browser.
    Sessions {
        /// Also ended and expired ones.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Set the dashboard password (sign-in at /ui/login without a shell); read from stdin
    /// when it is not a terminal, else asked twice. Stored as an argon2id hash.
    Passwd {
        /// Turn password sign-in off instead.
        #[arg(long)]
        remove: bool,
    },
    /// End a dashboard session (its cookie opens nothing any more), or every one.
    Logout {
        /// The session's id (see `hal0 ui sessions`).
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        id: Option<String>,
        /// End every live session.
        #[arg(long)]
        all: bool,
    },
}

/// Where a person's browser reaches the dashboard: `[network].public_url`, else this box's
/// own address (loopback when hal0 listens only there: open it on the box or through an
/// SSH tunnel).
fn base(cfg: &crate::config::Config) -> String {
    if cfg.network.public_url.is_none() && cfg.bind_addr().ip().is_loopback() {
        return crate::connect::local_base(cfg);
    }
    crate::connect::base_url(cfg).0
}

pub fn run(ctx: &Ctx, cmd: UiCmd) -> Result<()> {
    let store = ctx.store()?;
    match cmd {
        UiCmd::Login { minutes, json } => {
            let token = session::new_link(&store, minutes, &super::who())?;
            let url = format!("{}/ui/login?token={token}", base(&ctx.config()?));
            if json {
                print_json(&serde_json::json!({"url": url, "minutes": minutes}));
            } else {
                println!("{url}");
                eprintln!(
                    "Open this link within {minutes} minutes; it works once and opens a session for {} hours.",
                    session::SESSION_HOURS
                );
            }
        }
        UiCmd::Sessions { all, out } => {
            let rows = session::list(&store, all)?;
            if out.done_with(&rows, "id") {
                return Ok(());
            }
            if rows.is_empty() {
                println!("No dashboard sessions (open one: hal0 ui login).");
            } else {
                let t = table(
                    &["id", "opened", "last seen", "expires", "ended", "browser"],
                    rows.iter()
                        .map(|s| {
                            vec![
                                s.id.clone(),
                                s.created_at.clone(),
                                s.last_seen.clone(),
                                s.expires_at.clone(),
                                s.ended_at.clone().unwrap_or_default(),
                                s.user_agent.chars().take(40).collect(),
                            ]
                        })
                        .collect(),
                );
                println!("{t}");
            }
        }
        UiCmd::Passwd { remove: true } => {
            let had = crate::ui::password::remove(&ctx.paths)?;
            println!("{}", if had { "Password sign-in is off." } else { "No dashboard password was set." });
        }
        UiCmd::Passwd { remove: false } => {
            let pw = read_password()?;
            crate::ui::password::set(&ctx.paths, &pw)?;
            println!("Dashboard password set: sign in at {}/ui/login.", base(&ctx.config()?));
        }
        UiCmd::Logout { id, all } => {
            let n = session::end(&store, if all { None } else { id.as_deref() }, &super::who())?;
            println!("Ended {n} dashboard session{}.", if n == 1 { "" } else { "s" });
        }
    }
    Ok(())
}

/// The new password: one line of stdin, or asked twice on a terminal.
fn read_password() -> Result<String> {
    use std::io::{BufRead, IsTerminal};
    if !std::io::stdin().is_terminal() {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map_err(|e| {
            crate::error::Error::invalid("ui.invalid_request", format!("cannot read the password: {e}"))
        })?;
        return Ok(line.trim_end_matches(['\n', '\r']).to_string());
    }
    dialoguer::Password::new()
        .with_prompt("Dashboard password")
        .with_confirmation("Again", "The two did not match")
        .interact()
        .map_err(|e| crate::error::Error::declined(format!("no password entered: {e}")))
}
