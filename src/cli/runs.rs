//! `hal0 runs list|show|events|stop`: the bridge's run ledger read and acted on directly.

use super::{Ctx, confirm, print_json, runtime, table};
use crate::base::error::{Error, Result};
use crate::base::term::{safe, safe_line};
use crate::bridge::ledger;
use serde_json::json;

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

fn load(ctx: &Ctx, run_id: &str) -> Result<ledger::Run> {
    ledger::get(&ctx.store()?, run_id, None)?
        .ok_or_else(|| Error::not_found("bridge.run_not_found", format!("no run `{run_id}` (see `hal0 runs list`)")))
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
            let r = load(ctx, &run_id)?;
            let mut v = crate::bridge::view::list_view(&r);
            let output = if raw {
                r.output.clone()
            } else if r.finished {
                crate::base::redact::redact(&r.output).into_owned()
            } else {
                crate::base::redact::redact_live(&r.output)
            };
            if let Some(m) = v.as_object_mut() {
                m.remove("output_preview");
                m.insert("output".into(), json!(output));
                if raw {
                    m.insert("input_preview".into(), json!(r.input_preview));
                    m.insert("error".into(), json!(r.error));
                    m.insert("pending".into(), r.pending.clone().unwrap_or_default());
                }
            }
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
            if !(1..=500).contains(&limit) || since < 0 {
                return Err(Error::invalid("cli.invalid_limit", "--limit must be 1 to 500 and --since 0 or more"));
            }
            let r = load(ctx, &run_id)?;
            let page = crate::bridge::view::events_page(&ctx.store()?, &r, since, limit)?;
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
