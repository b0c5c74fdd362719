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
        ("mcp", "id") => server_ids,
        ("bridge", "name") if path != "bridge add" => client_names,
        ("agent" | "approvals", "id") => approval_ids,
        (_, "run_id") => run_ids,
        ("approvals" | "agent", "rule_id") => rule_ids,
        (_, "scopes") => scopes,
        ("config", "key") => settings,
        _ => return None,
    };
    Some(ArgValueCandidates::new(f))
}

/// The store, when it exists and this user may open it.
fn store() -> Option<crate::store::Store> {
    let p = Paths::from_env();
    p.db().exists().then(|| crate::store::Store::open(&p.db()).ok()).flatten()
}

fn named(items: impl IntoIterator<Item = (String, String)>) -> Vec<CompletionCandidate> {
    items.into_iter().map(|(v, help)| CompletionCandidate::new(v).help(Some(help.into()))).collect()
}

fn server_ids() -> Vec<CompletionCandidate> {
    let mut out: Vec<(String, String)> =
        crate::registry::bundled().into_iter().map(|b| (b.id.to_string(), "bundled".to_string())).collect();
    if let Ok(l) = crate::registry::Registry::new(&Paths::from_env()).list() {
        out.extend(l.records.into_iter().map(|r| {
            let at = r.url.clone().or(r.command.clone()).unwrap_or(r.spec.clone());
            (r.id, at)
        }));
    }
    named(out)
}

fn client_names() -> Vec<CompletionCandidate> {
    let Some(s) = store() else { return Vec::new() };
    let list = crate::auth::bridge::list(&s).unwrap_or_default();
    named(list.into_iter().map(|c| {
        let scopes: Vec<&str> = c.scopes.iter().map(|x| x.as_str()).collect();
        let state = if c.revoked { "revoked".to_string() } else { scopes.join(" ") };
        (c.name, state)
    }))
}

fn approval_ids() -> Vec<CompletionCandidate> {
    let Some(s) = store() else { return Vec::new() };
    let list = crate::approvals::list(&s, Some("pending")).unwrap_or_default();
    named(list.into_iter().map(|a| (a.id, format!("{} {}", a.client, a.tool))))
}

fn run_ids() -> Vec<CompletionCandidate> {
    let Some(s) = store() else { return Vec::new() };
    let list = crate::bridge::ledger::list(&s, None, None, 50).unwrap_or_default();
    named(list.into_iter().map(|r| (r.run_id, format!("{} {}", r.client, r.status.as_str()))))
}

fn rule_ids() -> Vec<CompletionCandidate> {
    let Some(s) = store() else { return Vec::new() };
    let list = crate::approvals::rules::list(&s, None).unwrap_or_default();
    named(list.into_iter().map(|r| (r.id, format!("{} {}", r.client, r.tool))))
}

fn scopes() -> Vec<CompletionCandidate> {
    named(crate::auth::bridge::Scope::ALL.into_iter().map(|s| (s.as_str().to_string(), String::new())))
}

fn settings() -> Vec<CompletionCandidate> {
    let schema = crate::config::schema();
    let keys = schema.as_object().into_iter().flatten();
    named(keys.map(|(k, v)| (k.clone(), v["description"].as_str().unwrap_or_default().to_string())))
}
