//! `hal0 agent approvals list|show|approve|deny`: the approvals inbox at the shell. A
//! decision here reaches Hermes (or the waiting daemon) directly; no API key decides.

use super::{Ctx, confirm, print_json, table, who};
use crate::base::error::{Error, Result};
use crate::base::term::{safe, safe_line};
use crate::ops::approvals::{Approval, Rule, Standing, Status};
use std::io::IsTerminal;

#[derive(Debug, clap::Subcommand)]
pub enum AgentCmd {
    /// The approvals inbox.
    #[command(subcommand)]
    Approvals(ApprovalsCmd),
    /// Wire Hermes profiles to hal0-admin and hal0-memory (config.yaml and .env).
    Reprovision {
        /// Which agent runtime (only `hermes`).
        #[arg(value_parser = ["hermes"])]
        agent: String,
        /// Re-mint each profile's hal0 key even when it still works.
        #[arg(long)]
        repair: bool,
    },
}

#[derive(Debug, clap::Subcommand)]
pub enum ApprovalsCmd {
    /// The cards waiting for a person, newest first (`--all`: every status).
    List {
        /// Only this status: pending (the default), approved, denied, withdrawn, expired,
        /// executed or failed.
        #[arg(long, conflicts_with = "all")]
        status: Option<String>,
        /// Every card, whatever its status.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        out: super::ListOut,
    },
    /// One row: the whole card.
    Show { id: String },
    /// Approve a pending row (pick one on a terminal when ID is left out).
    Approve {
        id: Option<String>,
        /// A Hermes command: answer `once` (default), `session` or `always`, as the card offers.
        #[arg(long, value_parser = ["once", "session", "always"])]
        choice: Option<String>,
        /// A proxied call: also allow this tool for this caller for MINUTES (a standing rule).
        #[arg(long, value_name = "MINUTES", value_parser = clap::value_parser!(u32).range(1..=1440), conflicts_with = "always_these_arguments")]
        allow_for: Option<u32>,
        /// A proxied call: also always allow these exact arguments for this caller.
        #[arg(long)]
        always_these_arguments: bool,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// The standing rules people chose while approving proxied calls: list, remove.
    #[command(subcommand)]
    Rules(RulesCmd),
    /// Deny a pending row.
    Deny {
        id: Option<String>,
        /// Why (kept on the row).
        #[arg(long)]
        reason: Option<String>,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

#[derive(Debug, clap::Subcommand)]
pub enum RulesCmd {
    /// The live rules, newest first.
    List {
        /// Only this server's.
        #[arg(long, value_name = "ID")]
        server: Option<String>,
        #[command(flatten)]
        out: super::ListOut,
    },
    /// End a rule: its calls wait for a person again.
    Remove { rule_id: String },
}

/// One rule in words: `ar_…  ci may call write on files (these arguments) until …`.
pub fn rule_text(r: &Rule) -> String {
    let what = if r.args_sha256.is_some() { " with these exact arguments" } else { "" };
    let until = r.expires_at.as_deref().map(|t| format!(" until {t}")).unwrap_or_else(|| " until removed".into());
    format!("{} may call {}{what}{until} (by {})", r.client, r.tool, r.created_by)
}

fn rules(ctx: &Ctx, cmd: RulesCmd) -> Result<()> {
    let json = ctx.json;
    let ops = ctx.ops()?;
    let rt = super::runtime()?;
    match cmd {
        RulesCmd::List { server, out } => {
            let v = rt
                .block_on(crate::ops::approvals::rules(&ops, crate::ops::approvals::RulesArgs { server_id: server }))?;
            if out.done(json, &super::items_of(&v, "rules"), "id") {
                return Ok(());
            }
            let rules: Vec<Rule> = serde_json::from_value(v["rules"].clone()).unwrap_or_default();
            if rules.is_empty() {
                println!("No standing rule: every gated call waits for a person.");
                return Ok(());
            }
            let t = rules
                .iter()
                .map(|r| vec![r.id.clone(), safe_line(&r.server).into_owned(), safe_line(&rule_text(r)).into_owned()])
                .collect();
            println!("{}", table(&["ID", "SERVER", "RULE"], t));
            Ok(())
        }
        RulesCmd::Remove { rule_id } => {
            let v = rt.block_on(crate::ops::call::at_shell(
                ops,
                "approval_rule_remove",
                serde_json::json!({"rule_id": rule_id}),
            ))?;
            if json {
                print_json(&v);
            } else {
                println!("Removed rule {}: its calls wait for a person again.", safe_line(&rule_id));
            }
            Ok(())
        }
    }
}

fn pick(ctx: &Ctx, id: Option<String>) -> Result<String> {
    if let Some(id) = id {
        return Ok(id);
    }
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(Error::invalid("cli.missing_id", "name the approval ID (see `hal0 agent approvals list`)"));
    }
    let rows = super::runtime()?.block_on(crate::ops::approvals::at_shell(&ctx.ops()?, Some("pending".into())))?;
    if rows.is_empty() {
        return Err(Error::not_found("approvals.none_pending", "nothing is pending"));
    }
    let items: Vec<String> = rows
        .iter()
        .map(|r| format!("{}  {}  {}", safe_line(&r.id), safe_line(&r.client), safe_line(&r.preview)))
        .collect();
    let i = dialoguer::Select::new()
        .with_prompt("Which request?")
        .items(&items)
        .default(0)
        .interact()
        .map_err(|e| Error::declined(format!("nothing chosen: {e}")))?;
    Ok(rows[i].id.clone())
}

/// One line of the card: `label: value`, the value through [`safe_line`].
fn line(label: &str, value: &str) {
    println!("{label:>11}: {}", safe_line(value));
}

/// A card field that may hold several lines: each through [`safe`], the lines after the
/// first indented under the value, so no line of it can pass for a field of the card.
fn block(label: &str, value: &str) {
    let shown = safe(value);
    let mut lines = shown.split('\n');
    println!("{label:>11}: {}", lines.next().unwrap_or(""));
    for l in lines {
        println!("{:>11}  {l}", "");
    }
}

/// The whole card. Every value came from outside (an agent, Hermes, the store), so it is
/// shown with control and invisible characters escaped.
fn print_card(a: &Approval) {
    line("id", &a.id);
    line("kind", a.kind.as_str());
    line("client", &a.client);
    line("tool", &a.tool);
    line("status", a.status.as_str());
    line("created", &a.created_at);
    if let Some(d) = &a.decided_at {
        line("decided", &format!("{d} by {}", a.decided_by.as_deref().unwrap_or("?")));
    }
    if let Some(r) = &a.reason {
        block("reason", r);
    }
    block("preview", &a.preview);
    block("arguments", &serde_json::to_string_pretty(&a.arguments).unwrap_or_default());
    if let Some(r) = &a.result {
        block("result", &r.to_string());
    }
}

fn decide(
    ctx: &Ctx,
    id: Option<String>,
    approve: bool,
    choice: crate::ops::decide::Choice,
    reason: Option<String>,
    yes: bool,
    json: bool,
) -> Result<()> {
    let id = pick(ctx, id)?;
    let row = super::runtime()?.block_on(crate::ops::approvals::card_at_shell(&ctx.ops()?, &id, true))?;
    if !yes && std::io::stdout().is_terminal() {
        print_card(&row);
    }
    confirm(yes, &format!("{} {id}?", if approve { "Approve" } else { "Deny" }))?;
    let cfg = ctx.config()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| Error::internal(e.to_string()))?;
    // An approved admin call runs its operation here, as the daemon would.
    let svc = std::sync::Arc::new(crate::ops::Services::open(ctx.paths.clone(), cfg, false)?);
    let ops = crate::ops::Ctx::shell(svc, who());
    let decided = rt.block_on(crate::ops::approvals::decide_as(&ops, &id, approve, &choice, reason.as_deref()))?;
    let done = decided.row;
    if let Some(out) = &decided.output {
        if json {
            print_json(&serde_json::json!({"row": done, "output": out}));
        } else {
            println!("{} {id}: {}. Result (shown once):", if approve { "Approved" } else { "Denied" }, done.status);
            print_json(out);
        }
        return Ok(());
    }
    if json {
        print_json(&serde_json::json!(done));
    } else {
        println!("{} {id}: {}.", if approve { "Approved" } else { "Denied" }, done.status);
    }
    if done.status == Status::Failed {
        return Err(Error::new(
            "approvals.execution_failed",
            crate::base::error::Kind::BadGateway,
            format!(
                "the decision was recorded but could not be delivered: {}",
                done.result.map(|r| r.to_string()).unwrap_or_default()
            ),
        ));
    }
    Ok(())
}

pub fn run(ctx: &Ctx, cmd: AgentCmd) -> Result<()> {
    let json = ctx.json;
    let cmd = match cmd {
        AgentCmd::Approvals(c) => c,
        AgentCmd::Reprovision { agent: _, repair } => {
            let ops = ctx.ops()?;
            let (rows, home) = super::runtime()?.block_on(crate::ops::hermes::reprovision(&ops, repair))?;
            if json {
                print_json(&serde_json::json!({"profiles": rows}));
            } else if rows.is_empty() {
                println!("No Hermes profiles under {}.", home.display());
            } else {
                let t = rows.iter().map(|r| vec![r.agent.clone(), r.outcome.clone(), r.detail.clone()]).collect();
                println!("{}", table(&["AGENT", "OUTCOME", "DETAIL"], t));
            }
            if rows.iter().any(|r| r.outcome == "failed") {
                return Err(Error::new(
                    "hermes.reprovision_failed",
                    crate::base::error::Kind::Unavailable,
                    "some profiles could not be wired (see the table)",
                ));
            }
            return Ok(());
        }
    };
    approvals(ctx, cmd)
}

/// `hal0 agent approvals …` and its shortcut `hal0 approvals …`.
pub fn approvals(ctx: &Ctx, cmd: ApprovalsCmd) -> Result<()> {
    let json = ctx.json;
    match cmd {
        ApprovalsCmd::List { status, all, out } => {
            let status = if all { None } else { Some(status.unwrap_or_else(|| "pending".into())) };
            let rows =
                super::runtime()?.block_on(crate::ops::approvals::at_shell(&ctx.ops_any_config()?, status.clone()))?;
            if out.done_with(json, &rows, "id") {
                return Ok(());
            }
            if rows.is_empty() {
                match status.as_deref() {
                    Some("pending") => {
                        println!("The inbox is empty: nothing waits for a person (--all lists decided cards).")
                    }
                    Some(s) => println!("No card is {s}."),
                    None => println!("The inbox is empty."),
                }
                return Ok(());
            }
            // The whole preview: the command or call a person decides on is never cut.
            let t = rows
                .iter()
                .map(|r| {
                    vec![
                        r.id.clone(),
                        r.kind.to_string(),
                        r.client.clone(),
                        r.status.to_string(),
                        r.created_at.clone(),
                        r.preview.clone(),
                    ]
                })
                .collect();
            println!("{}", table(&["ID", "KIND", "CLIENT", "STATUS", "CREATED", "PREVIEW"], t));
            Ok(())
        }
        ApprovalsCmd::Show { id } => {
            let a =
                super::runtime()?.block_on(crate::ops::approvals::card_at_shell(&ctx.ops_any_config()?, &id, false))?;
            if json {
                print_json(&serde_json::json!(a));
            } else {
                print_card(&a);
            }
            Ok(())
        }
        ApprovalsCmd::Approve { id, choice, allow_for, always_these_arguments, yes } => {
            let choice = crate::ops::decide::Choice {
                hermes: choice,
                standing: Standing { minutes: allow_for, these_arguments: always_these_arguments },
            };
            decide(ctx, id, true, choice, None, yes, json)
        }
        ApprovalsCmd::Rules(c) => rules(ctx, c),
        ApprovalsCmd::Deny { id, reason, yes } => decide(ctx, id, false, Default::default(), reason, yes, json),
    }
}
