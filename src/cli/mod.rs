//! The `hal0` command line: the clap definition, the shared context every subcommand
//! gets, output helpers (tables for people, `--json` for scripts), confirmation prompts and
//! the mapping from errors to one `error:` line and an exit code.

pub mod activity;
pub mod agent;
pub mod auth;
pub mod backup;
pub mod bridge;
pub mod config;
pub mod docs;
pub mod doctor;
pub mod mcp;
pub mod mcp_account;
mod mcp_catalog;
pub mod mcp_control;
pub mod mcp_keys;
pub mod mcp_secret;
pub mod notify;
pub mod oauth;
pub mod op;
pub mod relay;
pub mod remote;
pub mod run;
pub mod runs;
pub mod serve;
pub mod status;
pub mod store;
pub mod teach;
pub mod ui;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::paths::Paths;
use crate::store::Store;
use clap::{CommandFactory, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;

pub const EXIT_CODES: &str = "Exit codes: 0 ok, 1 failure, 2 usage or invalid input, 3 declined (a run: cancelled), 4 auth, 5 a run failed, 6 a run timed out.";

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
    Status(status::StatusArgs),
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
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// What every subcommand gets: where files live, and the config and store on demand.
pub struct Ctx {
    pub paths: Paths,
}

impl Ctx {
    pub fn config(&self) -> Result<Config> {
        Config::load(&self.paths)
    }
    pub fn store(&self) -> Result<Store> {
        Store::open(&self.paths.db())
    }
    /// The operations layer as this shell's operator (`cli:<user>`).
    pub fn ops(&self) -> Result<crate::ops::Ctx> {
        let svc = crate::ops::Services::open(self.paths.clone(), self.config()?, false)?;
        Ok(crate::ops::Ctx::shell(std::sync::Arc::new(svc), who()))
    }
}

/// Who a decision or change at the shell is recorded as: `cli:<user>` (the sudo user when
/// there is one).
pub fn who() -> String {
    let user = std::env::var("SUDO_USER").or_else(|_| std::env::var("USER")).unwrap_or_else(|_| "operator".into());
    format!("cli:{user}")
}

/// A current-thread async runtime for a command that talks to the network or the store.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::error::Error::internal(format!("cannot start the async runtime: {e}")))
}

/// Print JSON to stdout (control and invisible characters inside strings as `\u` escapes).
/// How a list command prints: a table for people, `--json`, or `-q` (ids only).
#[derive(Debug, clap::Args)]
pub struct ListOut {
    /// Print the result as JSON (one document on stdout)
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Print only the ids, one per line (for scripts: `-q | xargs …`)
    #[arg(short, long)]
    pub quiet: bool,
}

impl ListOut {
    /// Print `v` (the list as `--json` shows it) as JSON or, with `-q`, each item's `field`,
    /// one per line; `true` when printed (no table wanted). In an object, the list is the
    /// array whose items carry `field`.
    pub fn done(&self, v: &serde_json::Value, field: &str) -> bool {
        if self.json {
            print_json(v);
            return true;
        }
        if !self.quiet {
            return false;
        }
        let items = match v {
            serde_json::Value::Array(a) => a.as_slice(),
            serde_json::Value::Object(o) => o
                .values()
                .filter_map(|x| x.as_array())
                .find(|a| a.iter().any(|i| i.get(field).is_some()))
                .map(Vec::as_slice)
                .unwrap_or(&[]),
            _ => &[],
        };
        for item in items {
            match item.get(field) {
                Some(serde_json::Value::String(id)) => println!("{}", crate::term::safe_line(id)),
                Some(serde_json::Value::Number(n)) => println!("{n}"),
                _ => {}
            }
        }
        true
    }
}

pub fn print_json(v: &serde_json::Value) {
    println!("{}", crate::term::json_safe(&serde_json::to_string_pretty(v).unwrap_or_default()));
}

/// A table for people; every header and cell is shown through [`crate::term::safe`].
pub fn table(header: &[&str], rows: Vec<Vec<String>>) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
        .set_header(header.iter().map(|h| crate::term::safe_line(h).into_owned()).collect::<Vec<_>>());
    for r in rows {
        t.add_row(r.iter().map(|c| crate::term::safe(c).into_owned()).collect::<Vec<_>>());
    }
    t
}

/// Ask before something destructive. `--yes` skips the prompt; without a terminal and
/// without `--yes` the command is declined at once (it never waits for input).
pub fn confirm(yes: bool, prompt: &str) -> Result<()> {
    if yes {
        return Ok(());
    }
    let prompt = &*crate::term::safe_line(prompt);
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

/// The top-level help's command groups, as gh and kubectl group theirs; every subcommand
/// is in exactly one (a unit test holds it).
pub const GROUPS: &[(&str, &[&str])] = &[
    (
        "Run the box",
        &[
            "serve",
            "config",
            "auth",
            "bridge",
            "oauth",
            "mcp",
            "approvals",
            "agent",
            "notify",
            "ui",
            "backup",
            "restore",
            "store",
        ],
    ),
    ("From a workstation (memory: on the box too)", &["run", "remote", "memory", "skills"]),
    ("Look into it", &["status", "doctor", "activity", "runs", "relay", "op"]),
    ("Shell", &["completions", "help"]),
];

/// The options every command takes, said once at the top instead of on every page.
const INHERITED: &str = "Every command also takes --config-dir DIR and --state-dir DIR (see hal0 --help).";

/// The clap command as users see it: commands in groups, `--config-dir`/`--state-dir` shown
/// once (on the top page; hidden where clap would repeat them), and a pointer to them on
/// every other page.
pub fn command() -> clap::Command {
    let mut cmd = Cli::command();
    let width = cmd.get_subcommands().map(|s| s.get_name().len()).max().unwrap_or(0);
    let mut groups = String::new();
    for (title, names) in GROUPS {
        groups.push_str(&format!("{title}:\n"));
        for name in *names {
            let about = cmd
                .find_subcommand(name)
                .and_then(|s| s.get_about())
                .map(|a| a.to_string())
                .unwrap_or_else(|| "Print this message or the help of the given subcommand(s)".into());
            groups.push_str(&format!("  {name:width$}  {about}\n"));
        }
        groups.push('\n');
    }
    // Hidden on every page (clap would repeat them on each), said once here.
    let global = |id: &str| {
        let a = cmd.get_arguments().find(|a| a.get_id() == id).expect("a global option");
        let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        let env = a.get_env().map(|e| format!(" [env: {}]", e.to_string_lossy())).unwrap_or_default();
        format!("      --{} <DIR>\n          {help}{env}\n", a.get_long().unwrap_or(id))
    };
    let globals = format!("{}{}", global("config_dir"), global("state_dir"));
    cmd = cmd.override_usage("hal0 [--config-dir DIR] [--state-dir DIR] <COMMAND>").help_template(format!(
        "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{groups}Options (every command takes them):\n{globals}{{options}}{{after-help}}"
    ));
    let subs: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
    for name in subs {
        let path = name.clone();
        cmd = cmd.mut_subcommand(name, |c| inherit(c, &path));
    }
    // `hal0 config set` names every key it takes.
    let keys: Vec<String> =
        crate::config::schema().as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
    cmd.mut_subcommand("config", |c| {
        c.mut_subcommand("set", |s| s.after_long_help(format!("Keys:\n  {}\n\n{INHERITED}", keys.join("\n  "))))
    })
}

/// What an argument that says nothing of itself is, by the command `path` it is in (`mcp
/// keys add`) and its id: the same words for the same thing everywhere.
fn described(path: &str, id: &str) -> Option<&'static str> {
    let top = path.split(' ').next().unwrap_or_default();
    Some(match (top, id) {
        (_, "json") => "Print the result as JSON (one document on stdout)",
        (_, "remote") => "The remote box (default: HAL0_REMOTE_URL + HAL0_KEY, else the default remote)",
        (_, "rule_id") => "The standing rule's id (hal0 approvals rules list shows them)",
        (_, "run_id") => "The run's id (hal0 runs list shows them)",
        ("bridge", "name") => "The client's name (hal0 bridge list shows them)",
        ("agent" | "approvals", "id") => "The approval's id (hal0 approvals lists what waits)",
        ("mcp", "id") => "The server's id (hal0 mcp list shows them)",
        ("mcp", "tool") => "The tool's name, as the server lists it (hal0 mcp test ID shows them)",
        ("mcp", "name") => "The consumer's name: who holds the key",
        ("oauth", "client_id") => "The OAuth client's id (hal0 oauth client list shows them)",
        ("notify", "url") => "Where to send it: the webhook's URL, or the ntfy topic's URL",
        ("notify", "id") if path.starts_with("notify add") => "The target's id (default: its kind)",
        ("notify", "id") => "The target's id (hal0 notify list shows them)",
        ("notify", "from") => "The sender's address",
        ("notify", "tls") => "How the SMTP connection is secured",
        ("notify", "user") => "The SMTP user (with --password-key)",
        ("remote", "name") => "The remote box's name",
        ("memory", "text") => "The note",
        ("memory", "query") => "What to search for",
        ("memory", "agent") => "Whose memory: `hermes`, `hermes/<profile>` or `shared`",
        ("skills", "dir") => "The skill's directory (holding its SKILL.md)",
        ("config", "key") => "The setting, SECTION.KEY (hal0 config set --help lists them)",
        _ => return None,
    })
}

/// Point to the inherited options on `sub` (at command `path`) and below; describe the
/// arguments that say nothing of themselves ([`described`]).
fn inherit(sub: clap::Command, path: &str) -> clap::Command {
    let mut sub = sub;
    // Every argument is taken out and put back, in order: `mut_arg` moves the one it touches
    // to the end, which would reorder positionals (and the help).
    let args: Vec<(String, Option<&'static str>)> = sub
        .get_arguments()
        .map(|a| {
            let bare = a.get_help().is_none() && a.get_long_help().is_none();
            (a.get_id().to_string(), if bare { described(path, a.get_id().as_str()) } else { None })
        })
        .collect();
    if args.iter().any(|(_, w)| w.is_some()) {
        for (id, words) in args {
            sub = sub.mut_arg(id, |a| match words {
                Some(w) => a.help(w),
                None => a,
            });
        }
    }
    let after = match sub.get_after_help() {
        Some(a) => format!("{a}\n\n{INHERITED}"),
        None => INHERITED.to_string(),
    };
    sub = sub.after_help(after);
    let names: Vec<String> = sub.get_subcommands().map(|s| s.get_name().to_string()).collect();
    for name in names {
        let deeper = format!("{path} {name}");
        sub = sub.mut_subcommand(name, |c| inherit(c, &deeper));
    }
    sub
}

/// The clap command as users see it (help text that names the dirs in use).
pub fn command_with_paths() -> clap::Command {
    let paths = Paths::resolve(
        std::env::var_os("HAL0_CONFIG_DIR").map(PathBuf::from),
        std::env::var_os("HAL0_STATE_DIR").map(PathBuf::from),
    );
    command().after_help(format!("{}\n\n{EXIT_CODES}", paths.describe()))
}

/// Parse, run, and turn the outcome into an exit code.
pub fn main() -> i32 {
    let matches = match command_with_paths().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return 2;
        }
    };
    let ctx = Ctx { paths: Paths::resolve(cli.config_dir.clone(), cli.state_dir.clone()) };
    let result = match cli.command {
        Command::Serve(a) => serve::run(&ctx, a),
        Command::Bridge(c) => bridge::run(&ctx, c),
        Command::Auth(c) => auth::run(&ctx, c),
        Command::Config(c) => config::run(&ctx, c),
        Command::Runs(c) => runs::run(&ctx, c),
        Command::Agent(c) => agent::run(&ctx, c),
        Command::Activity(c) => activity::run(&ctx, c),
        Command::Relay(c) => relay::run(&ctx, c),
        Command::Store(c) => store::run(&ctx, c),
        Command::Mcp(c) => mcp::run(&ctx, c),
        Command::Op(a) => op::run(&ctx, a),
        Command::Remote(c) => remote::run(c),
        Command::Memory(c) => teach::memory(&ctx, c),
        Command::Skills(c) => teach::skills(c),
        Command::Run(a) => match run::run(a) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Ui(c) => ui::run(&ctx, c),
        Command::Notify(c) => notify::run(&ctx, c),
        Command::Approvals { cmd } => agent::approvals(
            &ctx,
            cmd.unwrap_or(agent::ApprovalsCmd::List {
                status: None,
                all: false,
                out: ListOut { json: false, quiet: false },
            }),
        ),
        Command::Oauth(c) => oauth::run(&ctx, c),
        Command::Backup(a) => backup::backup(&ctx, a),
        Command::Restore(a) => backup::restore(&ctx, a),
        Command::Status(a) => status::run(&ctx, a),
        Command::Doctor(a) => match doctor::run(&ctx, a) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut command(), "hal0", &mut std::io::stdout());
            Ok(())
        }
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {} [{}]", crate::term::safe(&e.message), e.code);
            e.exit_code()
        }
    }
}
