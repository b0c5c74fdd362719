//! `hal0 relay agents|exchanges|peer`: the agent relay's bots, its history (the same
//! operations as `GET /api/relay/*`), and the A2A agents elsewhere that bots may ask.

use super::{Ctx, runtime, table};
use crate::base::error::Result;
use crate::ops::relay::{self, ExchangesArgs};

#[derive(Debug, clap::Subcommand)]
pub enum RelayCmd {
    /// The bots (bridge clients holding the relay scope) and whether each is connected.
    Agents {
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Exchanges between bots, newest first: who asked whom, the answer or the failure.
    Exchanges {
        /// Only exchanges this bot asked or was asked.
        #[arg(long)]
        agent: Option<String>,
        /// Only exchanges started at or after this: RFC 3339 or a duration back from now (30m, 1h, 7d).
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// At most this many (default 100, at most 10000).
        #[arg(long)]
        limit: Option<i64>,
        #[command(flatten)]
        out: super::ListOut,
    },
    /// A2A agents elsewhere that bots may ask (as a2a/NAME): add, list, remove.
    #[command(subcommand)]
    Peer(PeerCmd),
}

#[derive(Debug, clap::Subcommand)]
pub enum PeerCmd {
    /// Fetch an A2A agent's card and let bots ask it as a2a/NAME (hal0 sends to that host only).
    Add {
        /// The agent's URL (its card is under /.well-known/agent-card.json), or its card's URL.
        url: String,
        /// Its name here; default: made from the card's name.
        #[arg(long)]
        name: Option<String>,
        /// Read the bearer credential it takes from standard input (or a prompt); kept in api.env.
        #[arg(long)]
        token_stdin: bool,
    },
    /// The A2A agents bots may ask.
    List {
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Forget an A2A agent (asks to it fail unknown_agent from then on).
    Remove {
        /// The peer's name.
        name: String,
    },
}

/// `text` cut to `max` characters on one line.
fn short(text: &str, max: usize) -> String {
    let one: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let (head, cut) = crate::base::redact::cut(&one, max);
    if cut { format!("{head}…") } else { head.to_string() }
}

pub fn run(ctx: &Ctx, cmd: RelayCmd) -> Result<()> {
    let json = ctx.json;
    let ops = ctx.ops()?;
    let rt = runtime()?;
    match cmd {
        RelayCmd::Agents { out } => {
            let bots = rt.block_on(relay::agents(&ops, crate::ops::NoArgs {}))?;
            if out.done_with(json, &bots, "name") {
                return Ok(());
            }
            if bots.is_empty() {
                println!("No bots. Add one: hal0 bridge add NAME --scope relay");
                return Ok(());
            }
            let rows = bots
                .iter()
                .map(|b| {
                    vec![
                        b.name.clone(),
                        if b.online { "online".into() } else { "offline".into() },
                        b.connected_at.clone().unwrap_or_else(|| "-".into()),
                        b.last_seen.clone().unwrap_or_else(|| "-".into()),
                    ]
                })
                .collect();
            println!("{}", table(&["BOT", "STATE", "CONNECTED", "LAST SEEN"], rows));
        }
        RelayCmd::Exchanges { agent, since, limit, out } => {
            let args = ExchangesArgs { agent, since, limit, ..Default::default() };
            let list = rt.block_on(relay::exchanges(&ops, args))?;
            if out.done_with(json, &list, "request_id") {
                return Ok(());
            }
            if list.is_empty() {
                println!("No exchanges.");
                return Ok(());
            }
            let rows = list
                .iter()
                .map(|e| {
                    let outcome = match (&e.answer, &e.error) {
                        (Some(a), _) => short(a, 40),
                        (_, Some(err)) => err.clone(),
                        _ => "-".into(),
                    };
                    vec![
                        e.started_at.clone(),
                        format!("{} → {}", e.from, e.to),
                        e.status.clone(),
                        short(&e.message, 40),
                        outcome,
                    ]
                })
                .collect();
            println!("{}", table(&["STARTED", "ASK", "STATUS", "MESSAGE", "ANSWER / ERROR"], rows));
        }
        RelayCmd::Peer(cmd) => peer(&ops, &rt, cmd, json)?,
    }
    Ok(())
}

fn peer(ops: &crate::ops::Ctx, rt: &tokio::runtime::Runtime, cmd: PeerCmd, json: bool) -> Result<()> {
    match cmd {
        PeerCmd::Add { url, name, token_stdin } => {
            let token = match token_stdin {
                true => Some(super::mcp_secret::read_value("Bearer credential of the A2A agent")?),
                false => None,
            };
            let p = rt.block_on(relay::peer_add(ops, relay::PeerAddArgs { url, name, token }))?;
            if json {
                super::print_json(&serde_json::to_value(&p).unwrap_or_default());
                return Ok(());
            }
            let safe = crate::base::term::safe_line;
            println!(
                "Added {} ({}): bots ask it as a2a/{}; tasks go to {}",
                p.name,
                safe(&p.agent_name),
                p.name,
                safe(&p.url)
            );
            if p.secret.is_none() {
                println!(
                    "It gets no credential; if it wants one: hal0 relay peer remove NAME, then add it with --token-stdin"
                );
            }
        }
        PeerCmd::List { out } => {
            let list = rt.block_on(relay::peer_list(ops, crate::ops::NoArgs {}))?;
            if out.done_with(json, &list, "name") {
                return Ok(());
            }
            if list.is_empty() {
                println!("No peers. Add one: hal0 relay peer add URL");
                return Ok(());
            }
            let rows = list
                .iter()
                .map(|p| {
                    vec![
                        format!("a2a/{}", p.name),
                        short(&p.agent_name, 30),
                        p.url.clone(),
                        if p.secret.is_some() { "yes".into() } else { "-".into() },
                    ]
                })
                .collect();
            println!("{}", table(&["ASK AS", "CARD NAME", "INTERFACE", "CREDENTIAL"], rows));
        }
        PeerCmd::Remove { name } => {
            rt.block_on(relay::peer_remove(ops, relay::PeerNameArgs { name: name.clone() }))?;
            println!("Removed {name}: asks to a2a/{name} now fail unknown_agent.");
        }
    }
    Ok(())
}
