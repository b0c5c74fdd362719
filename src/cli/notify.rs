//! `hal0 notify add|list|remove|test`: where a person hears that a decision waits in the
//! approvals inbox (webhooks, ntfy-style push, e-mail). `hal0 serve` sends to every target
//! when a card is queued and when one is withdrawn. The rules live in
//! [`crate::ops::notify`] and [`crate::notify`].

use super::{Ctx, print_json, runtime, table};
use crate::base::error::Result;
use crate::base::term::safe_line;
use crate::ops::notify::Target;

#[derive(Debug, clap::Subcommand)]
pub enum NotifyCmd {
    /// Add a target: `webhook URL`, `ntfy URL` or `email --smtp HOST:PORT --from A --to B`.
    #[command(subcommand)]
    Add(AddCmd),
    /// The targets.
    List {
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Remove a target (a secret it named stays in api.env).
    Remove { id: String },
    /// Send a test notification to one target or all, once each, and say how each went.
    Test { id: Option<String> },
}

#[derive(Debug, clap::Subcommand)]
pub enum AddCmd {
    /// POST each event as signed JSON (X-Hal0-Signature: sha256=HMAC of "timestamp.body").
    Webhook {
        url: String,
        /// The target's id (default: webhook).
        #[arg(long)]
        id: Option<String>,
        /// The api.env key of the signing secret (default: a new NOTIFY_<ID>_SECRET, shown once).
        #[arg(long, value_name = "API_ENV_KEY")]
        secret_key: Option<String>,
    },
    /// POST to an ntfy topic URL (title, priority, a click link to the card).
    Ntfy {
        url: String,
        #[arg(long)]
        id: Option<String>,
        /// The api.env key of an access token for the topic.
        #[arg(long, value_name = "API_ENV_KEY")]
        token_key: Option<String>,
    },
    /// Mail over SMTP.
    Email {
        /// The SMTP server, HOST:PORT (587 with STARTTLS, 465 with --tls tls).
        #[arg(long, value_name = "HOST:PORT")]
        smtp: String,
        #[arg(long, value_name = "ADDRESS")]
        from: String,
        /// A recipient (repeat for more).
        #[arg(long, value_name = "ADDRESS", required = true)]
        to: Vec<String>,
        #[arg(long, value_parser = ["starttls", "tls", "none"], default_value = "starttls")]
        tls: String,
        #[arg(long, requires = "password_key")]
        user: Option<String>,
        /// The api.env key of the SMTP password.
        #[arg(long, value_name = "API_ENV_KEY", requires = "user")]
        password_key: Option<String>,
        #[arg(long)]
        id: Option<String>,
    },
}

fn describe(t: &Target) -> String {
    match t.kind.as_str() {
        "email" => format!("{} → {}", t.smtp.as_deref().unwrap_or("-"), t.to.join(", ")),
        _ => t.url.clone().unwrap_or_default(),
    }
}

fn add(ctx: &Ctx, c: AddCmd) -> Result<()> {
    let json = ctx.json;
    let t = match c {
        AddCmd::Webhook { url, id, secret_key } => Target {
            id: id.unwrap_or_else(|| "webhook".into()),
            kind: "webhook".into(),
            url: Some(url),
            secret_key,
            ..Default::default()
        },
        AddCmd::Ntfy { url, id, token_key } => Target {
            id: id.unwrap_or_else(|| "ntfy".into()),
            kind: "ntfy".into(),
            url: Some(url),
            token_key,
            ..Default::default()
        },
        AddCmd::Email { smtp, from, to, tls, user, password_key, id } => Target {
            id: id.unwrap_or_else(|| "email".into()),
            kind: "email".into(),
            smtp: Some(smtp),
            from: Some(from),
            to,
            tls: Some(tls),
            user,
            password_key,
            ..Default::default()
        },
    };
    let ops = ctx.ops()?;
    let v = runtime()?.block_on(crate::ops::notify::add(&ops, t.clone()))?;
    if json {
        print_json(&v);
        return Ok(());
    }
    println!("Added {} target `{}`: {}.", t.kind, safe_line(&t.id), safe_line(&describe(&t)));
    if let (Some(k), Some(s)) = (v["secret_key"].as_str(), v["secret"].as_str()) {
        println!("Its signing secret (api.env {k}), shown once; give it to the receiver:");
        println!("{s}");
    }
    println!("hal0 serve sends to it when a card is queued or withdrawn; try it: hal0 notify test {}", t.id);
    Ok(())
}

pub fn run(ctx: &Ctx, cmd: NotifyCmd) -> Result<()> {
    let json = ctx.json;
    match cmd {
        NotifyCmd::Add(c) => add(ctx, c),
        NotifyCmd::List { out } => {
            let all = crate::ops::notify::list(&ctx.ops()?)?;
            if out.done_with(json, &all, "id") {
                return Ok(());
            }
            if all.is_empty() {
                println!(
                    "No notification target: nobody hears of a waiting card. Add one: hal0 notify add webhook|ntfy|email …"
                );
                return Ok(());
            }
            let rows = all
                .iter()
                .map(|t| vec![safe_line(&t.id).into_owned(), t.kind.clone(), safe_line(&describe(t)).into_owned()])
                .collect();
            println!("{}", table(&["ID", "KIND", "WHERE"], rows));
            Ok(())
        }
        NotifyCmd::Remove { id } => {
            let v = runtime()?.block_on(crate::ops::notify::remove(&ctx.ops()?, &id))?;
            if json {
                print_json(&v);
            } else {
                println!("Removed target `{}`.", safe_line(&id));
            }
            Ok(())
        }
        NotifyCmd::Test { id } => {
            let v = runtime()?.block_on(crate::ops::notify::test(&ctx.ops()?, id.as_deref()))?;
            let results = v["results"].as_array().cloned().unwrap_or_default();
            let failed = results.iter().filter(|r| r["ok"] != true).count();
            if json {
                print_json(&v);
            } else {
                for r in &results {
                    let mark = if r["ok"] == true { "ok  " } else { "FAIL" };
                    let code = r["code"].as_str().map(|c| format!(" [{c}]")).unwrap_or_default();
                    println!(
                        "{mark} {} ({}): {}{code}",
                        safe_line(r["id"].as_str().unwrap_or("")),
                        r["kind"].as_str().unwrap_or(""),
                        safe_line(r["detail"].as_str().unwrap_or(""))
                    );
                }
            }
            if failed > 0 {
                return Err(crate::base::error::Error::new(
                    "notify.failed",
                    crate::base::error::Kind::BadGateway,
                    format!("{failed} of {} target(s) did not take the test notification", results.len()),
                ));
            }
            Ok(())
        }
    }
}
