//! Shell completion that completes values, not only commands: at each TAB the shell asks
//! `hal0` itself (clap_complete's dynamic completion, `COMPLETE=<shell> hal0 -- WORDS…`),
//! which offers the server ids, bridge client names, approval and run ids, scopes and
//! settings of this box. `hal0 completions bash|zsh|fish` prints the few lines that wire a
//! shell to it; elvish and PowerShell get the static script (commands and flags only).
//!
//! Values come from the directories `HAL0_CONFIG_DIR`/`HAL0_STATE_DIR` name (else the
//! defaults); a store or directory this user cannot read completes nothing, and a store
//! that does not exist is never created.

use crate::base::paths::Paths;
use crate::ops::complete::Kind;
use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};

/// The environment variable that switches `hal0` into completing.
const VAR: &str = "COMPLETE";

/// Answer a completion request and exit, when this run is one (`COMPLETE` is set); a
/// normal run goes on. Called first thing in `main`.
pub fn answer_if_asked() {
    clap_complete::CompleteEnv::with_factory(super::help::command).var(VAR).completer("hal0").complete();
}

/// The script that wires `shell` to `hal0`'s dynamic completion; `None` for a shell it does
/// not serve (the static script is printed instead).
pub fn registration(shell: clap_complete::Shell) -> Option<String> {
    use clap_complete::env::EnvCompleter;
    let s: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &clap_complete::env::Bash,
        clap_complete::Shell::Zsh => &clap_complete::env::Zsh,
        clap_complete::Shell::Fish => &clap_complete::env::Fish,
        _ => return None,
    };
    let mut buf = Vec::new();
    s.write_registration(VAR, "hal0", "hal0", "hal0", &mut buf).ok()?;
    String::from_utf8(buf).ok()
}

/// The values argument `id` of command `path` (`mcp status`) takes, completed from the box.
pub fn candidates(path: &str, id: &str) -> Option<ArgValueCandidates> {
    let top = path.split(' ').next().unwrap_or_default();
    let f: fn() -> Vec<CompletionCandidate> = match (top, id) {
        ("mcp", "id") => || of(Kind::ServerId),
        ("bridge", "name") if path != "bridge add" => || of(Kind::ClientName),
        ("agent" | "approvals", "id") => || of(Kind::ApprovalId),
        (_, "run_id") => || of(Kind::RunId),
        ("approvals" | "agent", "rule_id") => || of(Kind::RuleId),
        (_, "scopes") => || of(Kind::Scope),
        ("config", "key") => || of(Kind::Setting),
        _ => return None,
    };
    Some(ArgValueCandidates::new(f))
}

/// The box's values of `kind`, as the shell shows them.
fn of(kind: Kind) -> Vec<CompletionCandidate> {
    let items = crate::ops::complete::candidates(&Paths::from_env(), kind);
    items.into_iter().map(|(v, help)| CompletionCandidate::new(v).help(Some(help.into()))).collect()
}
