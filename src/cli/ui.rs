//! `hal0 ui login|user|sessions|passwd|logout`: the dashboard's people and sessions, from
//! the box's shell.

use super::{Ctx, print_json, table};
use crate::base::error::Result;
use crate::ops::people;

#[derive(Debug, clap::Subcommand)]
pub enum UiCmd {
    /// Print a one-time link that opens a dashboard session (valid for a few minutes).
    Login {
        /// How long the link may wait to be opened, in minutes (1 to 60).
        #[arg(long, default_value_t = people::LINK_MINUTES)]
        minutes: i64,
        /// Whom the link signs in (a person of `hal0 ui user list`); by default the shell
        /// user who runs this.
        #[arg(long, value_name = "NAME")]
        user: Option<String>,
    },
    /// Named people of the dashboard: each signs in as themselves (a link, a password or
    /// a passkey), and each decision is audited as `person:NAME`.
    User {
        #[command(subcommand)]
        cmd: UserCmd,
    },
    /// Dashboard sessions: id, opened, last seen, expires, browser.
    Sessions {
        /// Also ended and expired ones.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Set the box-wide dashboard password (sign-in at /ui/login without a name, as the
    /// person `owner`); read from stdin when it is not a terminal, else asked twice.
    /// Stored as an argon2id hash. Named people have their own: `hal0 ui user passwd`.
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

#[derive(Debug, clap::Subcommand)]
pub enum UserCmd {
    /// Add a person. With --password, their password is read (as for `hal0 ui passwd`);
    /// with --passkey, a one-time link is printed that opens their page, where they add a
    /// passkey with their browser.
    Add {
        /// The person's name: a-z first, then up to 31 of a-z, 0-9, `.`, `_`, `-`.
        name: String,
        /// Also set their password (read from stdin, or asked twice on a terminal).
        #[arg(long)]
        password: bool,
        /// Print a one-time link that opens their page, where they add a passkey.
        #[arg(long)]
        passkey: bool,
    },
    /// People: name, password set, passkeys, added by, when.
    List {
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Remove a person: their passkeys go and their sessions end.
    Remove {
        /// The person's name (see `hal0 ui user list`).
        name: String,
    },
    /// Set a person's password (read from stdin when it is not a terminal, else asked
    /// twice), or take it away.
    Passwd {
        /// The person's name.
        name: String,
        /// Take their password away instead (they sign in with a link or a passkey).
        #[arg(long)]
        remove: bool,
    },
    /// Passkeys (of one person): id, person, name, algorithm, added, last used.
    Passkeys {
        /// Only this person's.
        name: Option<String>,
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Remove a passkey by its id (see `hal0 ui user passkeys`).
    RemovePasskey {
        /// The passkey's id.
        id: String,
    },
}

/// A one-time link for `person`, minted as this shell's user (`then`: the page to open).
fn link(ops: &crate::ops::Ctx, minutes: i64, person: &str, then: &str) -> Result<String> {
    super::runtime()?.block_on(people::sign_in_link(ops, minutes, person, then))
}

pub fn run(ctx: &Ctx, cmd: UiCmd) -> Result<()> {
    let json = ctx.json;
    // What prints a link to the dashboard needs the configuration (its address); the rest
    // reads and changes the store only, and works while hal0.toml does not load.
    let ops = match &cmd {
        UiCmd::Login { .. } | UiCmd::Passwd { .. } | UiCmd::User { cmd: UserCmd::Add { .. } } => ctx.ops()?,
        _ => ctx.ops_any_config()?,
    };
    match cmd {
        UiCmd::Login { minutes, user } => {
            let person = super::runtime()?.block_on(people::link_person(&ops, user.as_deref()))?;
            let url = link(&ops, minutes, &person, "")?;
            if json {
                print_json(&serde_json::json!({"url": url, "minutes": minutes, "person": person}));
            } else {
                println!("{url}");
                eprintln!(
                    "Open this link within {minutes} minutes; it works once and opens a session for {person} for {} hours.",
                    people::SESSION_HOURS
                );
            }
        }
        UiCmd::User { cmd } => user(ctx, &ops, cmd)?,
        UiCmd::Sessions { all, out } => {
            let rows = super::runtime()?.block_on(people::sessions(&ops, all))?;
            if out.done_with(json, &rows, "id") {
                return Ok(());
            }
            if rows.is_empty() {
                println!("No dashboard sessions (open one: hal0 ui login).");
            } else {
                let t = table(
                    &["id", "person", "via", "opened", "last seen", "expires", "ended", "browser"],
                    rows.iter()
                        .map(|s| {
                            vec![
                                s.id.clone(),
                                s.person.clone().unwrap_or_default(),
                                s.via.clone().unwrap_or_default(),
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
            let had = super::runtime()?.block_on(people::shared_password(&ops, None))?;
            println!("{}", if had { "Password sign-in is off." } else { "No dashboard password was set." });
        }
        UiCmd::Passwd { remove: false } => {
            let pw = read_password()?;
            super::runtime()?.block_on(people::shared_password(&ops, Some(pw)))?;
            println!("Dashboard password set: sign in at {}/ui/login.", people::dashboard_base(&ops.config()));
        }
        UiCmd::Logout { id, all } => {
            let n = super::runtime()?.block_on(people::end_sessions(&ops, if all { None } else { id }))?;
            println!("Ended {n} dashboard session{}.", if n == 1 { "" } else { "s" });
        }
    }
    Ok(())
}

fn user(ctx: &Ctx, ops: &crate::ops::Ctx, cmd: UserCmd) -> Result<()> {
    let json = ctx.json;
    let rt = super::runtime()?;
    match cmd {
        UserCmd::Add { name, password, passkey } => {
            let pw = if password { Some(read_password()?) } else { None };
            let p = rt.block_on(people::add(ops, &name, pw))?;
            let url = if passkey { Some(link(ops, people::LINK_MINUTES, &p.name, "&then=account")?) } else { None };
            if json {
                print_json(&serde_json::json!({"person": p, "passkey_link": url}));
                return Ok(());
            }
            println!("Added {}{}.", p.name, if p.password { " with a password" } else { "" });
            match url {
                Some(url) => {
                    println!("{url}");
                    eprintln!(
                        "{} opens this link within {} minutes, then adds a passkey on the page it opens.",
                        p.name,
                        people::LINK_MINUTES
                    );
                }
                None if !p.password => {
                    eprintln!("{} signs in with a link: hal0 ui login --user {}", p.name, p.name);
                }
                None => {}
            }
        }
        UserCmd::List { out } => {
            let rows = rt.block_on(people::list(ops))?;
            if out.done_with(json, &rows, "name") {
                return Ok(());
            }
            if rows.is_empty() {
                println!("No named people (add one: hal0 ui user add NAME).");
                return Ok(());
            }
            let t = table(
                &["name", "password", "passkeys", "added by", "added"],
                rows.iter()
                    .map(|p| {
                        let pw = if p.password { "yes" } else { "no" };
                        vec![
                            p.name.clone(),
                            pw.into(),
                            p.passkeys.to_string(),
                            p.created_by.clone(),
                            p.created_at.clone(),
                        ]
                    })
                    .collect(),
            );
            println!("{t}");
        }
        UserCmd::Remove { name } => {
            rt.block_on(people::remove(ops, &name))?;
            println!("Removed {name}; their passkeys are gone and their sessions ended.");
        }
        UserCmd::Passwd { name, remove } => {
            let pw = if remove { None } else { Some(read_password()?) };
            rt.block_on(people::passwd(ops, &name, pw))?;
            println!(
                "{}",
                if remove { format!("{name} has no password now.") } else { format!("Password set for {name}.") }
            );
        }
        UserCmd::Passkeys { name, out } => {
            let rows = rt.block_on(people::passkeys(ops, name))?;
            if out.done_with(json, &rows, "id") {
                return Ok(());
            }
            if rows.is_empty() {
                println!("No passkeys (a person adds one on their page: hal0 ui user add NAME --passkey).");
                return Ok(());
            }
            let t = table(
                &["id", "person", "name", "algorithm", "added", "last used"],
                rows.iter()
                    .map(|k| {
                        vec![
                            k.id.clone(),
                            k.person.clone(),
                            k.label.clone(),
                            k.algorithm.into(),
                            k.created_at.clone(),
                            k.last_used.clone().unwrap_or_default(),
                        ]
                    })
                    .collect(),
            );
            println!("{t}");
        }
        UserCmd::RemovePasskey { id } => {
            rt.block_on(people::remove_passkey(ops, &id, None))?;
            println!("Removed passkey {id}.");
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
            crate::base::error::Error::invalid("ui.invalid_request", format!("cannot read the password: {e}"))
        })?;
        return Ok(line.trim_end_matches(['\n', '\r']).to_string());
    }
    dialoguer::Password::new()
        .with_prompt("Dashboard password")
        .with_confirmation("Again", "The two did not match")
        .interact()
        .map_err(|e| crate::base::error::Error::declined(format!("no password entered: {e}")))
}
