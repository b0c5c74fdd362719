//! Completion that completes values, driven through real shells: bash (its `complete -F`
//! function with `COMP_WORDS`), zsh (the `#compdef` function with `words`/`CURRENT`, its
//! `_describe` caught) and fish (`complete -C`), each wired by `hal0 completions SHELL`,
//! offer this box's server ids, client names, pending approval ids, scopes and settings.

use crate::support::*;
use std::process::Command;

/// A shell on this machine, or `None` (a failure in CI, where every shell is installed).
fn shell(name: &str) -> Option<String> {
    let path = format!("/usr/bin/{name}");
    if std::path::Path::new(&path).exists() {
        return Some(path);
    }
    missing_external(path, &format!("apt-get install {name}"));
    None
}

/// Run `script` in `sh` with the box's dirs and `hal0` first on PATH.
fn run(env: &Env, sh: &str, args: &[&str], script: &str) -> String {
    let bin_dir = std::path::Path::new(BIN).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let o = Command::new(sh)
        .args(args)
        .arg(script)
        .env("PATH", path)
        .env("HAL0_CONFIG_DIR", env.config_dir())
        .env("HAL0_STATE_DIR", env.state_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{sh}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A box with two clients (one revoked), an installed server and a pending approval.
fn a_box() -> (Env, String) {
    let env = Env::new();
    env.ok(&["bridge", "add", "ci"]);
    env.ok(&["bridge", "add", "ops", "--scope", "admin"]);
    env.ok(&["bridge", "revoke", "ops", "--yes"]);
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "files"]);
    pending_card(&env, "ap_complete01", "store_prune");
    (env, "ap_complete01".to_string())
}

fn lines(s: &str) -> Vec<String> {
    s.lines().map(|l| l.split(['\t', ':']).next().unwrap_or_default().trim().to_string()).collect()
}

#[test]
fn bash_zsh_and_fish_complete_values_from_the_box() {
    let (env, approval) = a_box();
    let bash = shell("bash").unwrap();
    // bash: the registered function fills COMPREPLY for the words so far.
    let bash_complete = |words: &str, cword: usize| {
        let script = format!(
            "source <(hal0 completions bash)\nCOMP_WORDS=({words})\nCOMP_CWORD={cword}\nCOMP_TYPE=9\n\
             _clap_complete_hal0 hal0 \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"\n\
             printf '%s\\n' \"${{COMPREPLY[@]}}\""
        );
        lines(&run(&env, &bash, &["-c"], &script))
    };
    let servers = bash_complete("hal0 mcp status ''", 3);
    for want in ["files", "hal0-agents", "hal0-admin"] {
        assert!(servers.contains(&want.to_string()), "bash: mcp status: {servers:?}");
    }
    assert_eq!(bash_complete("hal0 mcp status fi", 3), ["files"], "bash: the typed prefix narrows it");
    let clients = bash_complete("hal0 bridge rotate ''", 3);
    assert!(clients.contains(&"ci".to_string()) && clients.contains(&"ops".to_string()), "{clients:?}");
    assert_eq!(bash_complete("hal0 approvals approve ap_", 3), std::slice::from_ref(&approval));
    let scopes = bash_complete("hal0 bridge add x --scope ''", 5);
    assert_eq!(scopes, ["agents", "memory", "admin", "relay"]);

    // zsh: the #compdef function hands its candidates (value:description) to _describe.
    if let Some(zsh) = shell("zsh") {
        let script = "compdef() { :; }\n_describe() { print -rl -- \"${(@P)3}\"; }\n\
                      source <(hal0 completions zsh)\nwords=(hal0 config set mcp.gate)\nCURRENT=4\n\
                      _clap_dynamic_completer_hal0";
        let out = run(&env, &zsh, &["-f", "-c"], script);
        assert_eq!(lines(&out), ["mcp.gate_wait_secs"], "zsh: {out}");
        assert!(out.contains("how long a gated proxied call waits"), "the setting's description: {out}");
        let script = "compdef() { :; }\n_describe() { print -rl -- \"${(@P)3}\"; }\n\
                      source <(hal0 completions zsh)\nwords=(hal0 approvals deny '')\nCURRENT=4\n\
                      _clap_dynamic_completer_hal0";
        assert!(lines(&run(&env, &zsh, &["-f", "-c"], script)).contains(&approval), "zsh: approvals deny");
    }

    // fish: `complete -C` asks the registered completion for a command line.
    if let Some(fish) = shell("fish") {
        let script = "hal0 completions fish | source; complete -C 'hal0 mcp allow '";
        let out = run(&env, &fish, &["--no-config", "-c"], script);
        assert!(lines(&out).contains(&"files".to_string()), "fish: {out}");
        let out = run(
            &env,
            &fish,
            &["--no-config", "-c"],
            "hal0 completions fish | source; complete -C 'hal0 bridge purge o'",
        );
        assert_eq!(lines(&out), ["ops"], "fish: {out}");
    }
}

/// A box whose store does not exist yet: completing a client name creates nothing.
#[test]
fn completing_on_an_empty_box_creates_no_store() {
    let env = Env::new();
    let bash = shell("bash").unwrap();
    let script = "source <(hal0 completions bash)\nCOMP_WORDS=(hal0 bridge rotate '')\nCOMP_CWORD=3\nCOMP_TYPE=9\n\
                  _clap_complete_hal0 hal0 '' rotate\nprintf '%s\\n' \"${COMPREPLY[@]}\"";
    let out = run(&env, &bash, &["-c"], script);
    assert!(!lines(&out).iter().any(|l| !l.starts_with('-')), "only flags, no names: {out}");
    assert!(!env.state_dir().join("hal0.db").exists(), "no store was made by completing");
}
