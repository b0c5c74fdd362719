//! `hal0 activity list|export`: the audit log of MCP tool calls and decisions.

use super::{Ctx, table};
use crate::audit::{self, Filter};
use crate::error::Result;

#[derive(Debug, clap::Subcommand)]
pub enum ActivityCmd {
    /// Audit rows, newest first.
    List {
        /// Only rows at or after this: RFC 3339 (2025-01-31T09:00:00Z) or a duration back from now (30m, 1h, 7d).
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// Only this caller: an identity (bridge:ci, admin, cli:alice) or a bridge client's name (ci).
        #[arg(long)]
        client: Option<String>,
        /// Only this tool.
        #[arg(long)]
        tool: Option<String>,
        /// Only rows before this: RFC 3339 or a duration back from now.
        #[arg(long, value_name = "WHEN")]
        until: Option<String>,
        /// At most this many (default 100, at most 10000).
        #[arg(long)]
        limit: Option<i64>,
        #[command(flatten)]
        out: super::ListOut,
    },
    /// Every matching row as JSON lines to stdout, oldest first (to ship the log elsewhere
    /// before retention prunes it).
    Export {
        /// Only rows at or after this: RFC 3339 or a duration back from now (30m, 1h, 7d).
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// Only rows before this: RFC 3339 or a duration back from now.
        #[arg(long, value_name = "WHEN")]
        until: Option<String>,
        /// Only this caller: an identity or a bridge client's name.
        #[arg(long)]
        client: Option<String>,
        /// Only this tool.
        #[arg(long)]
        tool: Option<String>,
    },
}

/// Check `--since` before the store is touched, so a typo is a usage error (exit 2).
fn filter(
    (since, until): (Option<String>, Option<String>),
    client: Option<String>,
    tool: Option<String>,
    limit: i64,
) -> Result<Filter> {
    for s in since.iter().chain(until.iter()) {
        audit::parse_since(s)?;
    }
    Ok(Filter { since, until, client, tool, limit })
}

fn one_line(v: &serde_json::Value, max: usize) -> String {
    let s = v.to_string();
    let (head, cut) = crate::redact::cut(&s, max);
    if cut { format!("{head}…") } else { head.to_string() }
}

pub fn run(ctx: &Ctx, cmd: ActivityCmd) -> Result<()> {
    match cmd {
        ActivityCmd::List { since, until, client, tool, limit, out } => {
            let args = crate::ops::activity::ListArgs {
                filter: crate::ops::activity::ExportArgs { since, until, client, tool },
                limit,
            };
            let ops = ctx.ops()?;
            let rows = super::runtime()?.block_on(crate::ops::activity::list(&ops, args))?;
            if out.done_with(&rows, "id") {
                return Ok(());
            }
            if rows.is_empty() {
                println!("No activity.");
                return Ok(());
            }
            let body = rows
                .iter()
                .map(|r| {
                    vec![
                        r.id.to_string(),
                        r.at.clone(),
                        r.surface.clone(),
                        r.tool.clone(),
                        r.identity.clone(),
                        r.verdict.to_string(),
                        r.result_code.clone().unwrap_or_else(|| "-".into()),
                        r.approval_id.clone().unwrap_or_else(|| "-".into()),
                        one_line(&r.arguments, 80),
                    ]
                })
                .collect();
            println!(
                "{}",
                table(
                    &["ID", "TIME", "SURFACE", "TOOL", "IDENTITY", "VERDICT", "RESULT", "APPROVAL", "ARGUMENTS"],
                    body
                )
            );
            Ok(())
        }
        ActivityCmd::Export { since, until, client, tool } => {
            let f = filter((since, until), client, tool, 0)?;
            let store = ctx.store()?;
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            audit::export(&store, &f, &mut out)?;
            Ok(())
        }
    }
}
