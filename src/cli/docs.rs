//! Generated documentation committed beside the code: shell completions (bash, zsh, fish)
//! and one man page per command and subcommand, all from the clap definition.

use super::Cli;
use clap::CommandFactory;
use std::path::PathBuf;

/// Every generated file as (path relative to the repository root, contents).
pub fn render_all() -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for (shell, name) in [
        (clap_complete::Shell::Bash, "hal0.bash"),
        (clap_complete::Shell::Zsh, "_hal0"),
        (clap_complete::Shell::Fish, "hal0.fish"),
    ] {
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "hal0", &mut buf);
        out.push((PathBuf::from("completions").join(name), buf));
    }
    let mut cmd = Cli::command();
    cmd.build();
    man_pages(&cmd, "hal0", &mut out);
    out
}

fn man_pages(cmd: &clap::Command, name: &str, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    let page = cmd.clone().name(name.to_string());
    let mut buf = Vec::new();
    clap_mangen::Man::new(page).render(&mut buf).expect("render man page");
    out.push((PathBuf::from("man").join(format!("{name}.1")), buf));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        man_pages(sub, &format!("{name}-{}", sub.get_name()), out);
    }
}
