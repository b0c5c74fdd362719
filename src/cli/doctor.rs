//! `hal0 doctor`: checks the installation and prints one row per check. Its exit code is its
//! own: 0 when every row is ok, 1 with warnings, 2 with failures (no `error:` line for those).

use super::{Ctx, table};
use crate::doctor::{self, Status};
use crate::error::Result;

#[derive(Debug, clap::Args)]
#[command(after_help = "Exit codes: 0 every check ok, 1 warnings, 2 failures.")]
pub struct DoctorArgs {
    /// Print `{"rows":[{"name","status","detail"}]}`.
    #[arg(long)]
    pub json: bool,
}

fn badge(s: Status) -> &'static str {
    match s {
        Status::Ok => "✔ ok",
        Status::Warn => "▲ warn",
        Status::Fail => "✖ fail",
    }
}

/// Run the checks and print them; returns the exit code.
pub fn run(ctx: &Ctx, args: DoctorArgs) -> Result<i32> {
    let report = super::runtime()?.block_on(doctor::run(&ctx.paths));
    if args.json {
        // Serialized from the struct, so each row keeps the order name, status, detail.
        println!("{}", crate::term::json_safe(&serde_json::to_string_pretty(&report).unwrap_or_default()));
    } else {
        let rows = report
            .rows
            .iter()
            .map(|r| vec![badge(r.status).to_string(), r.name.to_string(), r.detail.clone()])
            .collect();
        println!("{}", table(&["STATUS", "CHECK", "DETAIL"], rows));
        let count = |s: Status| report.rows.iter().filter(|r| r.status == s).count();
        match (count(Status::Warn), count(Status::Fail)) {
            (0, 0) => println!("All {} checks ok.", report.rows.len()),
            (w, f) => println!("{f} failed, {w} with warnings, {} ok.", report.rows.len() - w - f),
        }
    }
    Ok(report.exit_code())
}
