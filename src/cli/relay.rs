//! `hal0 relay agents|exchanges`: the agent relay's bots and its history, read through the
//! same operations as `GET /api/relay/*`.

use super::{Ctx, runtime, table};
use crate::error::Result;
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
}

/// `text` cut to `max` characters on one line.
fn short(text: &str, max: usize) -> String {
    let one: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let (head, cut) = crate::redact::cut(&one, max);
    if cut { format!("{head}…") } else { head.to_string() }
}

pub fn run(ctx: &Ctx, cmd: RelayCmd) -> Result<()> {
    let ops = ctx.ops()?;
    let rt = runtime()?;
    match cmd {
        RelayCmd::Agents { out } => {
            let bots = rt.block_on(relay::agents(&ops, crate::ops::NoArgs {}))?;
            if out.done_with(&bots, "name") {
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
            if out.done_with(&list, "request_id") {
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
    }
    Ok(())
}
