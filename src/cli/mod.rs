//! The `hal0` command line: the clap definition, the shared context every subcommand
//! gets, output helpers (tables for people, `--json` for scripts), confirmation prompts and
//! the mapping from errors to one `error:` line and an exit code.

pub mod activity;
pub mod agent;
pub mod auth;
pub mod backup;
pub mod bridge;
pub mod complete;
pub mod config;
pub mod docs;
pub mod doctor;
pub mod help;
pub mod mcp;
pub mod mcp_account;
mod mcp_catalog;
pub mod mcp_control;
pub mod mcp_keys;
pub mod mcp_secret;
pub mod notify;
pub mod oauth;
pub mod op;
pub mod print;
pub mod relay;
pub mod remote;
pub mod run;
pub mod runs;
pub mod serve;
pub mod status;
pub mod store;
pub mod teach;
pub mod ui;

use crate::base::error::{Error, Result};
use crate::base::paths::Paths;
use crate::ops::Config;
use clap::{Parser, Subcommand};
pub use help::{GROUPS, command, command_with_paths};
use std::io::IsTerminal;
use std::path::PathBuf;

pub use crate::base::exit::LEGEND as EXIT_CODES;
pub use print::{ListOut, items_of, print_json, table};

#[derive(Debug, Parser)]
#[command(
    name = "hal0",
    version,
    about = "The Model Context Protocol control point of an AI box",
    long_about = "hal0 runs the box's MCP servers (hal0-agents, hal0-memory, hal0-admin), admits remote coding agents with per-client bridge keys, and keeps its state in /etc/hal0 and /var/lib/hal0. Every subcommand edits those files directly; `hal0 serve` runs the daemon.",
    after_help = EXIT_CODES,
)]
pub struct Cli {
    /// Config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root and that is not writable).
    #[arg(long, global = true, hide = true, env = "HAL0_CONFIG_DIR", value_name = "DIR")]
    pub config_dir: Option<PathBuf>,
    /// State directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root and that is not writable).
    #[arg(long, global = true, hide = true, env = "HAL0_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Print JSON for scripts instead of text for people: one document on stdout (a list
    /// command prints a JSON array of its items)
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the REST + MCP daemon.
    Serve(serve::ServeArgs),
    /// Admit remote coding agents with per-client bridge keys.
    #[command(subcommand)]
    Bridge(bridge::BridgeCmd),
    /// The box keys (admin and client): status and rotation.
    #[command(subcommand)]
    Auth(auth::AuthCmd),
    /// The bridge's run ledger: list, show, events, stop.
    #[command(subcommand)]
    Runs(runs::RunsCmd),
    /// Agents on this box: the approvals inbox.
    #[command(subcommand)]
    Agent(agent::AgentCmd),
    /// Read and edit hal0.toml (comments and ordering are kept).
    #[command(subcommand)]
    Config(config::ConfigCmd),
    /// The audit log of MCP tool calls and decisions: list and export.
    #[command(subcommand)]
    Activity(activity::ActivityCmd),
    /// The store: its size, retention windows and free disk; prune now.
    #[command(subcommand)]
    Store(store::StoreCmd),
    /// Install third-party MCP servers and set their tool policy.
    #[command(subcommand)]
    Mcp(mcp::McpCmd),
    /// The agent relay: its bots and the history of their exchanges.
    #[command(subcommand)]
    Relay(relay::RelayCmd),
    /// Check the installation: config, modes, store, auth, Hermes wiring, registry, listener.
    Doctor(doctor::DoctorArgs),
    /// The box on one screen: daemon, URL, auth, TLS, what waits, servers, newest errors.
    Status,
    /// OAuth 2.1 for clients that speak only OAuth (claude.ai, ChatGPT): URLs, clients, grants.
    #[command(subcommand)]
    Oauth(oauth::OauthCmd),
    /// The approvals inbox (same as `hal0 agent approvals`; no subcommand: what waits).
    Approvals {
        #[command(subcommand)]
        cmd: Option<agent::ApprovalsCmd>,
    },
    /// Where a person hears that an approval waits: webhooks, ntfy push, e-mail.
    #[command(subcommand)]
    Notify(notify::NotifyCmd),
    /// The dashboard (/ui): one-time login links, sessions, logout.
    #[command(subcommand)]
    Ui(ui::UiCmd),
    /// Write one archive of the config dir and a consistent copy of hal0.db (the daemon may run).
    Backup(backup::BackupArgs),
    /// Put back what `hal0 backup` wrote (the daemon must be stopped; asks first).
    Restore(backup::RestoreArgs),
    /// Run any operation of the REST route table by its tool name, with JSON in and out.
    Op(op::OpArgs),
    /// Delegate a run to a remote box's Hermes and follow it (see `hal0 remote`).
    Run(run::RunArgs),
    /// The remote boxes `hal0 run` talks to; keys in the OS keyring.
    #[command(subcommand)]
    Remote(remote::RemoteCmd),
    /// Hermes memory: add and search notes on a remote box (see `hal0 remote`), or this box's.
    #[command(subcommand)]
    Memory(teach::MemoryCmd),
    /// A remote box's drop-in skills: list, and push one for a person to approve.
    #[command(subcommand)]
    Skills(teach::SkillsCmd),
    /// Print a shell completion script: bash, zsh and fish complete values too (server ids,
    /// client names, approval and run ids, scopes, settings) by asking hal0 at each TAB.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// What every subcommand gets: where files live, and the config and store on demand.
pub struct Ctx {
    pub paths: Paths,
    /// `--json`: print JSON for scripts instead of text for people.
    pub json: bool,
}

impl Ctx {
    pub fn config(&self) -> Result<Config> {
        Config::load(&self.paths)
    }
    /// The operations layer as this shell's operator (`cli:<user>`).
    pub fn ops(&self) -> Result<crate::ops::Ctx> {
        let svc = crate::ops::Services::open(self.paths.clone(), self.config()?, false)?;
        Ok(crate::ops::Ctx::shell(std::sync::Arc::new(svc), who()))
    }
    /// [`Ctx::ops`] even when hal0.toml does not load (its defaults stand in), for the
    /// shell's commands that read or change only the store or the registry (the inbox,
    /// bridge clients, runs, the audit log, dashboard people and sessions, `mcp list|test`):
    /// they never needed the configuration and work while it is broken.
    pub fn ops_any_config(&self) -> Result<crate::ops::Ctx> {
        let cfg = self.config().unwrap_or_default();
        let svc = crate::ops::Services::open(self.paths.clone(), cfg, false)?;
        Ok(crate::ops::Ctx::shell(std::sync::Arc::new(svc), who()))
    }
}

/// Run the route-table op named `tool` as this shell's operator (a change audited on
/// surface `cli`, as REST audits it on `api`; see [`crate::ops::call::at_shell`]).
pub fn change(ops: crate::ops::Ctx, tool: &str, args: serde_json::Value) -> Result<serde_json::Value> {
    runtime()?.block_on(crate::ops::call::at_shell(ops, tool, args))
}

/// Who a decision or change at the shell is recorded as: `cli:<user>` (the sudo user when
/// there is one).
pub fn who() -> String {
    let user = std::env::var("SUDO_USER").or_else(|_| std::env::var("USER")).unwrap_or_else(|_| "operator".into());
    crate::base::actor::Actor::Cli(user).to_string()
}

/// A current-thread async runtime for a command that talks to the network or the store.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::base::error::Error::internal(format!("cannot start the async runtime: {e}")))
}

/// Ask before something destructive. `--yes` skips the prompt; without a terminal and
/// without `--yes` the command is declined at once (it never waits for input).
pub fn confirm(yes: bool, prompt: &str) -> Result<()> {
    if yes {
        return Ok(());
    }
    let prompt = &*crate::base::term::safe_line(prompt);
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(Error::declined(format!(
            "{prompt} — not confirmed: no terminal to ask on; pass --yes to go ahead"
        )));
    }
    match dialoguer::Confirm::new().with_prompt(prompt).default(false).interact() {
        Ok(true) => Ok(()),
        Ok(false) => Err(Error::declined("cancelled")),
        Err(e) => Err(Error::declined(format!("not confirmed: {e}; pass --yes to go ahead"))),
    }
}

/// The commands that print no JSON: `--json` is refused for them rather than ignored, so
/// a script never reads text it took for JSON. (`hal0 op` prints JSON either way.)
const NO_JSON: &[&str] = &[
    "activity export",
    "completions",
    "config set",
    "config unset",
    "mcp allow",
    "mcp block",
    "mcp disable",
    "mcp enable",
    "mcp gate",
    "mcp keys revoke",
    "mcp uninstall",
    "relay peer remove",
    "remote default",
    "remote remove",
    "runs stop",
    "serve",
    "ui logout",
    "ui passwd",
    "ui user passwd",
    "ui user remove",
    "ui user remove-passkey",
];

/// Why `--json` cannot be given to the command in `m`, if it cannot: the command prints no
/// JSON, or it was also asked for ids only (`-q`).
fn json_refused(m: &clap::ArgMatches) -> Option<String> {
    let (mut path, mut leaf) = (Vec::new(), m);
    while let Some((name, sub)) = leaf.subcommand() {
        path.push(name);
        leaf = sub;
    }
    let path = path.join(" ");
    if NO_JSON.contains(&path.as_str()) {
        return Some(format!("`hal0 {path}` prints no JSON; leave out --json"));
    }
    let quiet = leaf.try_get_one::<bool>("quiet").ok().flatten().copied().unwrap_or(false);
    quiet.then(|| "--json and -q/--quiet cannot be used together: --json prints whole items, -q their ids".into())
}

/// Parse, run, and turn the outcome into an exit code.
pub fn main() -> i32 {
    // A shell asking for completions (`COMPLETE=bash hal0 -- …`) is answered, then exits.
    complete::answer_if_asked();
    let matches = match command_with_paths().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let code = if e.use_stderr() { crate::base::exit::USAGE } else { crate::base::exit::OK };
            let _ = e.print();
            return code;
        }
    };
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return crate::base::exit::USAGE;
        }
    };
    if cli.json
        && let Some(why) = json_refused(&matches)
    {
        eprintln!("error: {why}");
        return crate::base::exit::USAGE;
    }
    let ctx = Ctx { paths: Paths::resolve(cli.config_dir.clone(), cli.state_dir.clone()), json: cli.json };
    let result = match cli.command {
        Command::Serve(a) => serve::run(&ctx, a),
        Command::Bridge(c) => bridge::run(&ctx, c),
        Command::Auth(c) => auth::run(&ctx, c),
        Command::Config(c) => config::run(&ctx, c),
        Command::Runs(c) => runs::run(&ctx, c),
        Command::Agent(c) => agent::run(&ctx, c),
        Command::Activity(c) => match activity::run(&ctx, c) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Relay(c) => relay::run(&ctx, c),
        Command::Store(c) => store::run(&ctx, c),
        Command::Mcp(c) => mcp::run(&ctx, c),
        Command::Op(a) => op::run(&ctx, a),
        Command::Remote(c) => remote::run(c, ctx.json),
        Command::Memory(c) => teach::memory(&ctx, c),
        Command::Skills(c) => teach::skills(c, ctx.json),
        Command::Run(a) => match run::run(a, ctx.json) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Ui(c) => ui::run(&ctx, c),
        Command::Notify(c) => notify::run(&ctx, c),
        Command::Approvals { cmd } => agent::approvals(
            &ctx,
            cmd.unwrap_or(agent::ApprovalsCmd::List { status: None, all: false, out: ListOut { quiet: false } }),
        ),
        Command::Oauth(c) => oauth::run(&ctx, c),
        Command::Backup(a) => backup::backup(&ctx, a),
        Command::Restore(a) => backup::restore(&ctx, a),
        Command::Status => status::run(&ctx),
        Command::Doctor(a) => match doctor::run(&ctx, a) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Completions { shell } => {
            match complete::registration(shell) {
                Some(script) => print!("{script}"),
                None => clap_complete::generate(shell, &mut command(), "hal0", &mut std::io::stdout()),
            }
            Ok(())
        }
    };
    match result {
        Ok(()) => crate::base::exit::OK,
        Err(e) => {
            eprintln!("error: {} [{}]", crate::base::term::safe(&e.message), e.code);
            crate::base::exit::of(&e.kind)
        }
    }
}

#[cfg(test)]
mod json_tests {
    /// Every command named in [`super::NO_JSON`] exists and is a leaf (a typo would let
    /// `--json` through unnoticed).
    #[test]
    fn the_commands_without_json_are_real_leaves() {
        let root = super::command_with_paths();
        for path in super::NO_JSON {
            let mut cmd = &root;
            for name in path.split(' ') {
                cmd = cmd.find_subcommand(name).unwrap_or_else(|| panic!("no command `hal0 {path}`"));
            }
            assert!(!cmd.has_subcommands(), "`hal0 {path}` has subcommands");
        }
    }
}
