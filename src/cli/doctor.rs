//! `hal0 doctor`: checks the installation and prints one row per check. Its exit code follows
//! the global legend: 1 when a check failed, 0 otherwise; with `--strict` warnings fail too
//! (no `error:` line for either).

use super::{Ctx, table};
use crate::base::error::Result;
use crate::ops::doctor::{self, Status};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit codes: 0 no check failed (warnings are not failures), 1 a check failed (with --strict: or warned)."
)]
pub struct DoctorArgs {
    /// Exit 1 on warnings too (for scripts that want a spotless box).
    #[arg(long)]
    pub strict: bool,
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
    if ctx.json {
        // Serialized from the struct, so each row keeps the order name, status, detail.
        println!("{}", crate::base::term::json_safe(&serde_json::to_string_pretty(&report).unwrap_or_default()));
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
    Ok(report.exit_code(args.strict))
}
