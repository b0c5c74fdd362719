//! `hal0 runs list|show|events|stop`: the bridge's run ledger read and acted on directly.

use super::{Ctx, confirm, print_json, runtime, table};
use crate::base::error::Result;
use crate::base::term::{safe, safe_line};

#[derive(Debug, clap::Subcommand)]
pub enum RunsCmd {
    /// Runs, newest first.
    List {
        /// Only this client's runs (`@admin` for runs started with the admin key).
        #[arg(long)]
        client: Option<String>,
        /// Only runs with this status.
        #[arg(long)]
        status: Option<String>,
        /// At most this many (default 50, at most 1000).
        #[arg(long)]
        limit: Option<i64>,
        #[command(flatten)]
        out: super::ListOut,
    },
    /// One run with its whole output (redacted unless --raw).
    Show {
        run_id: String,
        /// Print stored text as it is, without the redactor.
        #[arg(long)]
        raw: bool,
    },
    /// A run's stored events, oldest first.
    Events {
        run_id: String,
        /// Events with seq above this.
        #[arg(long, default_value_t = 0)]
        since: i64,
        /// At most this many (at most 500).
        #[arg(long, default_value_t = 100)]
        limit: i64,
    },
    /// Ask Hermes to stop a run.
    Stop {
        run_id: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

fn load(ctx: &Ctx, run_id: &str) -> Result<crate::ops::runs::Run> {
    runtime()?.block_on(crate::ops::runs::load(&ctx.ops()?, run_id))
}

pub fn run(ctx: &Ctx, cmd: RunsCmd) -> Result<()> {
    let json = ctx.json;
    match cmd {
        RunsCmd::List { client, status, limit, out } => {
            let ops = ctx.ops()?;
            let args = crate::ops::runs::ListArgs { client, status, limit };
            let runs = runtime()?.block_on(crate::ops::runs::list(&ops, args))?;
            if out.done_with(json, &runs, "run_id") {
                return Ok(());
            }
            if runs.is_empty() {
                println!("No runs.");
                return Ok(());
            }
            let rows = runs
                .iter()
                .map(|v| {
                    let field = |k: &str| v[k].as_str().unwrap_or("").to_string();
                    let preview: String = field("output_preview").chars().take(60).collect();
                    vec![
                        field("run_id"),
                        field("client"),
                        field("agent"),
                        field("status"),
                        field("created_at"),
                        preview.replace('\n', " "),
                    ]
                })
                .collect();
            println!("{}", table(&["RUN", "CLIENT", "AGENT", "STATUS", "CREATED", "OUTPUT"], rows));
            Ok(())
        }
        RunsCmd::Show { run_id, raw } => {
            let v = runtime()?.block_on(crate::ops::runs::shown(&ctx.ops_any_config()?, &run_id, raw))?;
            let output = v["output"].as_str().unwrap_or_default().to_string();
            if json {
                print_json(&v);
            } else {
                for k in [
                    "run_id",
                    "client",
                    "agent",
                    "status",
                    "created_at",
                    "updated_at",
                    "input_preview",
                    "error",
                    "usage",
                    "pending",
                    "last_seq",
                ] {
                    let val = &v[k];
                    if !val.is_null() {
                        let text = val.as_str().map(str::to_string).unwrap_or_else(|| val.to_string());
                        println!("{k:>14}: {}", safe_line(&text));
                    }
                }
                println!("{:>14}:\n{}", "output", safe(&output));
            }
            Ok(())
        }
        RunsCmd::Events { run_id, since, limit } => {
            let args = crate::ops::runs::EventsArgs { run_id, since: Some(since), limit: Some(limit) };
            let page = runtime()?.block_on(crate::ops::runs::events(&ctx.ops_any_config()?, args))?;
            if json {
                print_json(&page);
            } else {
                for e in page["events"].as_array().into_iter().flatten() {
                    let seq = e["seq"].as_i64().unwrap_or(0);
                    let name = e["event"].as_str().unwrap_or("").to_string();
                    let mut rest = e.clone();
                    if let Some(m) = rest.as_object_mut() {
                        m.remove("seq");
                        m.remove("event");
                        m.remove("timestamp");
                    }
                    println!("{seq:>5} {:<20} {}", safe_line(&name), safe_line(&rest.to_string()));
                }
            }
            Ok(())
        }
        RunsCmd::Stop { run_id, yes } => {
            let r = load(ctx, &run_id)?;
            if r.finished {
                println!("Run {run_id} has already ended ({}).", safe_line(r.status.as_str()));
                return Ok(());
            }
            confirm(yes, &format!("Stop run {run_id} of {} on {}?", r.client, r.agent))?;
            let v = super::change(ctx.ops()?, "run_stop", serde_json::json!({"run_id": run_id}))?;
            if v["status"] == "stopping" {
                println!("Asked Hermes to stop {run_id}; it is stopping.");
            } else {
                println!("Hermes no longer runs {run_id}: it has finished.");
            }
            Ok(())
        }
    }
}
