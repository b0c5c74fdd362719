//! The help as users see it, built from the clap definition: the top page's command groups
//! (as gh and kubectl group theirs), `--config-dir`/`--state-dir` described once, a
//! description for every argument that says nothing of itself, and the keys `config set`
//! takes, and the values the shell completes ([`super::complete`]). Man pages and
//! completions are generated from the same [`command`].

use super::{Cli, EXIT_CODES};
use crate::base::paths::Paths;
use clap::CommandFactory;

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
    // `hal0 config set` names every key it takes, and which a running daemon takes at a
    // reload (the others need a restart).
    let keys: Vec<String> = crate::ops::settings::keys()
        .into_iter()
        .map(|(k, reload)| if reload { format!("{k} (reload)") } else { k })
        .collect();
    let reload = "Keys marked (reload) apply to a running hal0 serve at `systemctl reload hal0` (SIGHUP); \
                  the others when it starts again (systemctl restart hal0).";
    cmd.mut_subcommand("config", |c| {
        c.mut_subcommand("set", |s| {
            s.after_long_help(format!("Keys:\n  {}\n\n{reload}\n\n{INHERITED}", keys.join("\n  ")))
        })
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
    // Each argument's words (when it has none) and the values the shell completes for it.
    type Shaped = (String, Option<&'static str>, Option<clap_complete::engine::ArgValueCandidates>);
    let args: Vec<Shaped> = sub
        .get_arguments()
        .map(|a| {
            let (id, bare) = (a.get_id().as_str(), a.get_help().is_none() && a.get_long_help().is_none());
            (id.to_string(), if bare { described(path, id) } else { None }, super::complete::candidates(path, id))
        })
        .collect();
    if args.iter().any(|(_, w, c)| w.is_some() || c.is_some()) {
        for (id, words, values) in args {
            sub = sub.mut_arg(id, |a| {
                let a = match words {
                    Some(w) => a.help(w),
                    None => a,
                };
                match values {
                    Some(v) => a.add(v),
                    None => a,
                }
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
    let paths = Paths::from_env();
    command().after_help(format!("{}\n\n{EXIT_CODES}", paths.describe()))
}
