//! `hal0 activity list|export|verify`: the audit log of MCP tool calls and decisions, and
//! the check of its hash chain.

use super::{Ctx, table};
use crate::base::error::Result;
use crate::ops::activity::Report;

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
    /// Check the audit log against its hash chain and name the first row changed, removed
    /// or added outside hal0 (exit 7 when one is found). Prints the chain's head hash: keep
    /// it elsewhere to show later that nothing before it changed.
    Verify {
        /// Check a copy written by `hal0 activity export` instead of the store (`-`: stdin).
        #[arg(long, value_name = "PATH")]
        file: Option<std::path::PathBuf>,
        /// With --file: the copy is a whole export (no filter), so a missing link is a removed row.
        #[arg(long, requires = "file")]
        complete: bool,
    },
}

fn one_line(v: &serde_json::Value, max: usize) -> String {
    let s = v.to_string();
    let (head, cut) = crate::base::redact::cut(&s, max);
    if cut { format!("{head}…") } else { head.to_string() }
}

pub fn run(ctx: &Ctx, cmd: ActivityCmd) -> Result<i32> {
    let json = ctx.json;
    match cmd {
        ActivityCmd::List { since, until, client, tool, limit, out } => {
            let args = crate::ops::activity::ListArgs {
                filter: crate::ops::activity::ExportArgs { since, until, client, tool },
                limit,
            };
            let ops = ctx.ops()?;
            let rows = super::runtime()?.block_on(crate::ops::activity::list(&ops, args))?;
            if out.done_with(json, &rows, "id") {
                return Ok(crate::base::exit::OK);
            }
            if rows.is_empty() {
                println!("No activity.");
                return Ok(crate::base::exit::OK);
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
            Ok(crate::base::exit::OK)
        }
        ActivityCmd::Export { since, until, client, tool } => {
            // A malformed --since is refused before the store is opened (a usage error, exit 2).
            let a = crate::ops::activity::ExportArgs { since, until, client, tool };
            a.check()?;
            let ops = ctx.ops_any_config()?;
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            crate::ops::activity::export_to(&ops, a, &mut out)?;
            Ok(crate::base::exit::OK)
        }
        ActivityCmd::Verify { file, complete } => {
            let report = match file {
                Some(path) => read_copy(&path, complete)?,
                None => super::runtime()?.block_on(crate::ops::activity::verify(&ctx.ops()?, crate::ops::NoArgs {}))?,
            };
            if json {
                super::print_json(&serde_json::to_value(&report).unwrap_or_default());
            } else {
                print_report(&report);
            }
            Ok(if report.intact { crate::base::exit::OK } else { crate::base::exit::TAMPERED })
        }
    }
}

fn read_copy(path: &std::path::Path, complete: bool) -> Result<Report> {
    if path.as_os_str() == "-" {
        return crate::ops::activity::verify_copy(std::io::stdin().lock(), complete);
    }
    let f = std::fs::File::open(path).map_err(|e| {
        crate::base::error::Error::invalid(
            "audit.invalid_copy",
            format!("cannot open {}: {e}; give the file `hal0 activity export` wrote", path.display()),
        )
    })?;
    crate::ops::activity::verify_copy(std::io::BufReader::new(f), complete)
}

fn print_report(r: &Report) {
    let span = match (r.first_row, r.last_row) {
        (Some(a), Some(b)) => format!(" (ids {a}–{b})"),
        _ => String::new(),
    };
    match &r.problem {
        None => println!("audit log intact: {} rows checked{span}, {} outcomes", r.rows, r.outcomes),
        Some(p) => {
            println!("audit log TAMPERED: {} [{}]", p.message, p.code);
            println!(
                "  {} rows before it check{span}; rows from {} on cannot be trusted: compare them with a copy \
                 kept elsewhere (hal0 activity export; hal0 activity verify --file COPY)",
                r.rows, p.row
            );
        }
    }
    if r.gaps > 0 {
        println!("  {} places where rows are not in this copy (filtered out of the export)", r.gaps);
    }
    if r.unchained > 0 {
        println!("  {} older rows were stored before the chain existed (not covered)", r.unchained);
    }
    println!("head          {}", r.head);
    println!("outcome head  {}", r.outcome_head);
}
