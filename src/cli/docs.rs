//! Generated documentation committed beside the code: shell completions (bash, zsh, fish:
//! the dynamic completion's registration)
//! and one man page per command and subcommand, all from the clap definition as users see
//! it ([`super::command`]), each page with ENVIRONMENT, FILES and EXIT STATUS sections (and
//! EXAMPLES where a command has them).

use clap_mangen::roff::{Roff, bold, roman};
use std::path::PathBuf;

/// Every generated file as (path relative to the repository root, contents).
pub fn render_all() -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for (shell, name) in [
        (clap_complete::Shell::Bash, "hal0.bash"),
        (clap_complete::Shell::Zsh, "_hal0"),
        (clap_complete::Shell::Fish, "hal0.fish"),
    ] {
        // What `hal0 completions SHELL` prints: the lines that wire the shell to hal0's
        // dynamic completion (values too).
        let script = super::complete::registration(shell).expect("bash, zsh and fish complete dynamically");
        out.push((PathBuf::from("completions").join(name), script.into_bytes()));
    }
    let mut cmd = no_help_subcommand(super::command());
    cmd.build();
    man_pages(&cmd, "hal0", &mut out);
    out
}

/// Man pages list subcommands as pages of their own: the `help` subcommand has none.
fn no_help_subcommand(cmd: clap::Command) -> clap::Command {
    let mut cmd = cmd.disable_help_subcommand(true);
    let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
    for n in names {
        cmd = cmd.mut_subcommand(n, no_help_subcommand);
    }
    cmd
}

/// One of clap_mangen's section renderers.
type Section = fn(&clap_mangen::Man, &mut dyn std::io::Write) -> std::io::Result<()>;

fn man_pages(cmd: &clap::Command, name: &str, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    let page = cmd.clone().name(name.to_string());
    let man = clap_mangen::Man::new(page.clone());
    let mut buf = Vec::new();
    let sections: [Section; 4] = [
        clap_mangen::Man::render_title,
        clap_mangen::Man::render_name_section,
        clap_mangen::Man::render_synopsis_section,
        clap_mangen::Man::render_description_section,
    ];
    for render in sections {
        render(&man, &mut buf).expect("render man page");
    }
    if page.get_arguments().any(|a| !a.is_hide_set()) || page.get_positionals().next().is_some() {
        man.render_options_section(&mut buf).expect("render man page");
    }
    if page.has_subcommands() {
        man.render_subcommands_section(&mut buf).expect("render man page");
    }
    if page.get_after_long_help().is_some() || page.get_after_help().is_some() {
        man.render_extra_section(&mut buf).expect("render man page");
    }
    extra_sections(name, name == "hal0").to_writer(&mut buf).expect("render man page");
    out.push((PathBuf::from("man").join(format!("{name}.1")), buf));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        man_pages(sub, &format!("{name}-{}", sub.get_name()), out);
    }
}

/// Commands with worked examples: (page, [(what, command)]).
const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "hal0",
        &[
            ("Run the daemon on the embedded defaults", "hal0 serve"),
            ("Check the installation", "hal0 doctor"),
            ("Admit a workstation's Claude Code", "hal0 bridge add laptop"),
        ],
    ),
    (
        "hal0-bridge-add",
        &[
            ("A client with the default scopes, with the claude mcp add lines", "hal0 bridge add laptop"),
            ("A relay bot", "hal0 bridge add bot-a --scope relay"),
            ("Cursor's config instead", "hal0 bridge add ws --client cursor"),
        ],
    ),
    (
        "hal0-mcp-install",
        &[
            ("An npm package run as a program", "hal0 mcp install npm:@modelcontextprotocol/server-filesystem"),
            ("A remote server", "hal0 mcp install https://mcp.example.com/mcp --id tracker"),
        ],
    ),
    (
        "hal0-mcp-allow",
        &[
            ("Let a tool through", "hal0 mcp allow tracker search_issues"),
            ("Refuse a name the server does not offer", "hal0 mcp allow tracker serch_issues --strict"),
        ],
    ),
    (
        "hal0-approvals",
        &[
            ("What waits", "hal0 approvals"),
            ("Approve once", "hal0 approvals approve ap_0123456789abcdef"),
            (
                "Allow that tool for that caller for 30 minutes",
                "hal0 approvals approve ap_0123456789abcdef --allow-for 30",
            ),
        ],
    ),
    (
        "hal0-config-set",
        &[
            ("Listen on the LAN", "hal0 config set network.bind 0.0.0.0:8080"),
            ("The URL remote clients use", "hal0 config set network.public_url https://hal0.lan:8443"),
        ],
    ),
    ("hal0-backup", &[("A backup beside the old one", "hal0 backup /root/hal0-$(date +%F).tar.gz")]),
    ("hal0-doctor", &[("In a script: warnings fail too", "hal0 doctor --strict")]),
];

/// EXAMPLES (where `page` has some), ENVIRONMENT, FILES and EXIT STATUS.
fn extra_sections(page: &str, top: bool) -> Roff {
    let mut r = Roff::default();
    if let Some((_, examples)) = EXAMPLES.iter().find(|(p, _)| *p == page) {
        r.control("SH", ["EXAMPLES"]);
        for (what, cmd) in *examples {
            r.control("TP", []).text([roman(*what)]).control("RS", []).text([bold(*cmd)]).control("RE", []);
        }
    }
    if top {
        r.control("SH", ["GLOBAL OPTIONS"]);
        r.text([roman("Every command takes these.")]);
        for (opt, what) in [
            ("--config-dir DIR", "the config directory (default /etc/hal0; $XDG_CONFIG_HOME/hal0 when not root)"),
            ("--state-dir DIR", "the state directory (default /var/lib/hal0; $XDG_STATE_HOME/hal0 when not root)"),
        ] {
            r.control("TP", []).text([bold(opt)]).text([roman(what)]);
        }
    }
    r.control("SH", ["ENVIRONMENT"]);
    let env: &[(&str, &str)] = &[
        ("HAL0_CONFIG_DIR", "the config directory, as --config-dir"),
        ("HAL0_STATE_DIR", "the state directory, as --state-dir"),
        ("HAL0_LOG", "the log filter of hal0 serve (tracing syntax, e.g. info,hal0=debug)"),
        (
            "HAL0_REMOTE_URL, HAL0_KEY",
            "the remote box and its bridge key for hal0 run, memory and skills, instead of hal0 remote",
        ),
        ("HAL0_KEYRING", "off: keep remote keys out of the OS keyring (a 0600 file instead)"),
        ("HAL0_BRIDGE_KEY", "read by the client configs hal0 bridge add prints (never written into them)"),
        ("HAL0_MCP_ALLOWED_HOSTS, HAL0_MCP_ALLOWED_ORIGINS", "extra Host and Origin names the daemon answers"),
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_SDK_DISABLED, OTEL_*",
            "OpenTelemetry's standard configuration of hal0 serve's traces (hal0.toml's [telemetry] wins where both are set)",
        ),
    ];
    for (var, what) in env {
        r.control("TP", []).text([bold(*var)]).text([roman(*what)]);
    }
    if top {
        r.control("SH", ["FILES"]);
        for (file, what) in [
            ("/etc/hal0/hal0.toml", "settings (hal0 config)"),
            ("/etc/hal0/api.env", "the box keys and secrets (0600)"),
            ("/etc/hal0/mcp-servers/*.toml", "one record per installed MCP server, with its tool policy"),
            ("/etc/hal0/notify.toml", "where approvals are announced (hal0 notify)"),
            ("/etc/hal0/MCP-CLIENTS.md", "ready-to-paste client configs for this box (written by hal0)"),
            ("/var/lib/hal0/hal0.db", "the store: clients, runs, approvals, memory, audit log (SQLite)"),
        ] {
            r.control("TP", []).text([bold(file)]).text([roman(what)]);
        }
    }
    r.control("SH", ["EXIT STATUS"]);
    r.text([roman(super::EXIT_CODES)]);
    r
}

#[cfg(test)]
mod tests {
    /// Every (page, option) whose help is empty, anywhere in the tree.
    fn undescribed(cmd: &clap::Command, page: &str, out: &mut Vec<String>) {
        for a in cmd.get_arguments().filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version") {
            if a.get_help().is_none() && a.get_long_help().is_none() {
                out.push(format!("{page} {}", a.get_id()));
            }
        }
        for s in cmd.get_subcommands() {
            undescribed(s, &format!("{page} {}", s.get_name()), out);
        }
    }

    #[test]
    fn every_command_is_in_one_group_of_the_top_help() {
        let cmd = super::super::command();
        let grouped: Vec<&str> = super::super::GROUPS.iter().flat_map(|(_, names)| names.iter().copied()).collect();
        let mut names: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).chain(["help"]).collect();
        names.sort();
        let mut sorted = grouped.clone();
        sorted.sort();
        assert_eq!(sorted, names, "each command once, in some group");
    }

    #[test]
    fn every_option_is_described_and_no_page_names_a_missing_one() {
        let mut missing = Vec::new();
        undescribed(&super::super::command(), "hal0", &mut missing);
        assert!(missing.is_empty(), "options without a description: {missing:#?}");
        let pages = super::render_all();
        let names: Vec<String> =
            pages.iter().map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        for (path, body) in &pages {
            let text = String::from_utf8_lossy(body);
            if path.starts_with("man") {
                for section in ["ENVIRONMENT", "EXIT STATUS"] {
                    assert!(
                        text.contains(&format!(".SH \"{section}\"")) || text.contains(&format!(".SH {section}")),
                        "{path:?}: {section}"
                    );
                }
                // Every page it refers to exists.
                for word in text.split(|c: char| c.is_whitespace() || c == '\\') {
                    if let Some(page) = word.strip_suffix("(1)").filter(|w| w.starts_with("hal0-")) {
                        assert!(names.contains(&format!("{page}.1")), "{path:?} names {page}(1)");
                    }
                }
            }
        }
    }
}
