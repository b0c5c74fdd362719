//! `hal0 mcp expose` at the shell against a Hermes home in a temp dir: the entry and key it
//! writes, what it never touches (comments, unknown keys, the operator's own entries), the
//! withdrawal, the reserved and refused flags, the restart command, and the key working at
//! the proxy.

use crate::support::*;
use serde_json::json;
use std::path::Path;

const CONFIG: &str = concat!(
    "# Hermes config, hand-written\n",
    "model:\n",
    "  default: fake-model   # keep this comment\n",
    "unknown_key: [1, 2, 3]\n",
    "mcp_servers:\n",
    "  # the operator's own server\n",
    "  mine:\n",
    "    url: http://10.0.0.9:7000/mcp\n",
    "    headers: {X-Team: ops}\n",
);

fn hermes_home(dir: &Path) {
    std::fs::create_dir_all(dir.join("profiles/work")).unwrap();
    std::fs::create_dir_all(dir.join("profiles/hal0-brain")).unwrap();
    std::fs::write(dir.join("config.yaml"), CONFIG).unwrap();
    std::fs::write(dir.join(".env"), "# operator env\nOPENAI_API_KEY=sk-test-0000\nNO_PROXY=corp.example\n").unwrap();
    std::fs::write(dir.join("profiles/work/config.yaml"), "model:\n  default: fake-model\n").unwrap();
    std::fs::write(dir.join("profiles/hal0-brain/config.yaml"), "model:\n  default: fake-model\n").unwrap();
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

fn env_var(dotenv: &str, name: &str) -> Option<String> {
    dotenv.lines().find_map(|l| l.strip_prefix(&format!("{name}=")).map(str::to_string))
}

#[test]
fn expose_writes_only_its_own_entries_and_withdraws_them() {
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    hermes_home(home.path());
    env.ok(&["config", "set", "hermes.home", home.path().to_str().unwrap()]);
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "files-2"]);

    let out = env.json(&["mcp", "expose", "files-2", "--hermes", "--json"]);
    assert_eq!(out["server"]["exposure"], json!({"hermes": true, "brain": false}), "{out}");
    let sync = &out["hermes_sync"];
    assert_eq!(sync["hermes"], json!(["hermes/work: files-2", "hermes: files-2"]), "{sync}");
    assert_eq!(sync["brain"], json!([]));
    assert_eq!(sync["restart"], "needed");
    assert!(sync["note"].as_str().unwrap().contains("only at start"), "{sync}");

    // The default profile: the new entry, the operator's text untouched around it.
    let yaml = read(&home.path().join("config.yaml"));
    assert!(yaml.starts_with(CONFIG), "everything before the new entry is byte-identical:\n{yaml}");
    assert!(yaml.contains("  files-2:\n"), "{yaml}");
    assert!(yaml.contains("/mcp/proxy/files-2/mcp"), "{yaml}");
    assert!(yaml.contains("Bearer ${HAL0_MCP_FILES_2_KEY}"), "{yaml}");
    let dotenv = read(&home.path().join(".env"));
    assert!(dotenv.starts_with("# operator env\nOPENAI_API_KEY=sk-test-0000\n"), "{dotenv}");
    let key = env_var(&dotenv, "HAL0_MCP_FILES_2_KEY").expect("the key is in .env");
    assert!(key.starts_with("hal0pk_"));
    let no_proxy = env_var(&dotenv, "NO_PROXY").unwrap();
    for h in ["corp.example", "localhost", "127.0.0.1", "::1"] {
        assert!(no_proxy.split(',').any(|x| x == h), "{h} in {no_proxy}");
    }
    assert_eq!(env_var(&dotenv, "no_proxy").as_deref(), Some(no_proxy.as_str()));
    // The named profile too, with its own key; the brain profile not.
    let work_env = read(&home.path().join("profiles/work/.env"));
    let work_key = env_var(&work_env, "HAL0_MCP_FILES_2_KEY").unwrap();
    assert_ne!(work_key, key, "one key per profile");
    assert!(!read(&home.path().join("profiles/hal0-brain/config.yaml")).contains("files-2"));
    let keys = env.json(&["mcp", "keys", "list", "files-2", "--json"]);
    let names: Vec<&str> = keys.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["hermes", "hermes__work"]);

    // Again: nothing changes, the same key is kept.
    let again = env.json(&["mcp", "expose", "files-2", "--hermes", "--json"]);
    assert_eq!(again["hermes_sync"]["changed"], json!([]), "{again}");
    assert_eq!(again["hermes_sync"]["restart"], "not_needed");
    assert_eq!(env_var(&read(&home.path().join(".env")), "HAL0_MCP_FILES_2_KEY").as_deref(), Some(key.as_str()));

    // The brain as well.
    env.ok(&["mcp", "expose", "files-2", "--brain"]);
    assert!(read(&home.path().join("profiles/hal0-brain/config.yaml")).contains("/mcp/proxy/files-2/mcp"));

    // Withdraw from Hermes: entries and keys go; the operator's entry and comments stay.
    let text = env.ok(&["mcp", "expose", "files-2", "--no-hermes"]);
    assert!(text.contains("withdrew"), "{text}");
    assert_eq!(read(&home.path().join("config.yaml")), CONFIG, "back to the operator's file, byte for byte");
    assert!(env_var(&read(&home.path().join(".env")), "HAL0_MCP_FILES_2_KEY").is_none());
    assert!(!read(&home.path().join("profiles/work/config.yaml")).contains("files-2"));
    assert!(read(&home.path().join("profiles/hal0-brain/config.yaml")).contains("files-2"), "brain still exposed");
    let keys = env.json(&["mcp", "keys", "list", "files-2", "--json"]);
    let live: Vec<&str> = keys
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["revoked"] == false)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(live, vec!["hermes__hal0-brain"]);

    // Disable withdraws too; uninstall cleans the rest.
    env.ok(&["mcp", "disable", "files-2"]);
    assert!(!read(&home.path().join("profiles/hal0-brain/config.yaml")).contains("files-2"));
    env.ok(&["mcp", "enable", "files-2"]);
    assert!(read(&home.path().join("profiles/hal0-brain/config.yaml")).contains("files-2"));
    env.ok(&["mcp", "uninstall", "files-2", "--yes"]);
    assert!(!read(&home.path().join("profiles/hal0-brain/config.yaml")).contains("files-2"));
}

#[test]
fn an_operator_entry_of_the_same_name_is_never_taken_over() {
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    hermes_home(home.path());
    env.ok(&["config", "set", "hermes.home", home.path().to_str().unwrap()]);
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "mine"]);
    let out = env.json(&["mcp", "expose", "mine", "--hermes", "--json"]);
    let errors = out["hermes_sync"]["errors"].to_string();
    assert!(errors.contains("mine") && errors.contains("config.yaml"), "{out}");
    assert!(read(&home.path().join("config.yaml")).starts_with(CONFIG));
    assert!(read(&home.path().join("config.yaml")).contains("http://10.0.0.9:7000/mcp"));
    assert!(!read(&home.path().join("config.yaml")).contains("/mcp/proxy/mine/mcp"));
    // Withdrawing never removes the operator's entry.
    env.ok(&["mcp", "expose", "mine", "--no-hermes"]);
    assert_eq!(read(&home.path().join("config.yaml")), CONFIG);
}

#[test]
fn refused_flags_and_the_restart_command() {
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    hermes_home(home.path());
    env.ok(&["config", "set", "hermes.home", home.path().to_str().unwrap()]);
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "web"]);
    env.ok(&["mcp", "install", "git+https://example.com/x/stdio-server.git", "--id", "stdio1"]);
    let fails = |args: &[&str], code: &str| {
        let o = env.run(args);
        assert_ne!(o.code(), 0, "{args:?}");
        assert!(o.stderr().contains(&format!("[{code}]")), "{args:?}: {}", o.stderr());
    };
    fails(&["mcp", "expose", "web", "--openwebui"], "mcp.exposure_unsupported");
    fails(&["mcp", "expose", "web", "--opencode"], "mcp.exposure_unsupported");
    // The help lists only targets that work.
    let help = env.ok(&["mcp", "expose", "--help"]);
    assert!(help.contains("--hermes") && !help.contains("openwebui") && !help.contains("opencode"), "{help}");
    fails(&["mcp", "expose", "stdio1", "--hermes"], "mcp.exposure_needs_supervisor");
    fails(&["mcp", "expose", "web"], "mcp.exposure_invalid");
    fails(&["mcp", "expose", "nope", "--hermes"], "mcp.not_found");
    fails(&["mcp", "expose", "hal0-admin", "--hermes"], "mcp.bundled");
    env.ok(&["mcp", "expose", "stdio1", "--no-hermes"]);
    assert!(!read(&home.path().join("config.yaml")).contains("stdio1"));
    assert!(!read(&home.path().join("config.yaml")).contains("/mcp/proxy/web/"), "a refused call changed nothing");

    // With a restart command, it runs when something changed, and only then.
    let marker = home.path().join("restarted");
    let cmd = format!("echo run >> {}", marker.display());
    env.ok(&["config", "set", "hermes.restart_command", &cmd]);
    let out = env.json(&["mcp", "expose", "web", "--hermes", "--json"]);
    assert_eq!(out["hermes_sync"]["restart"], "restarted", "{out}");
    assert_eq!(read(&marker).lines().count(), 1);
    env.ok(&["mcp", "expose", "web", "--hermes"]);
    assert_eq!(read(&marker).lines().count(), 1, "nothing changed: no restart");
    env.ok(&["config", "set", "hermes.restart_command", "echo nope >&2; exit 3"]);
    let out = env.json(&["mcp", "expose", "web", "--no-hermes", "--json"]);
    let restart = out["hermes_sync"]["restart"].as_str().unwrap();
    assert!(restart.starts_with("failed") && restart.contains('3') && restart.contains("nope"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_profile_key_opens_the_proxy_until_withdrawn() {
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    hermes_home(home.path());
    env.ok(&["config", "set", "hermes.home", home.path().to_str().unwrap()]);
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "web"]);
    env.ok(&["mcp", "expose", "web", "--hermes"]);
    let key = env_var(&read(&home.path().join(".env")), "HAL0_MCP_WEB_KEY").unwrap();
    let server = env.serve();
    let post = || async {
        reqwest::Client::new()
            .post(server.url("/mcp/proxy/web/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .bearer_auth(&key)
            .body(initialize_body().to_string())
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(post().await, 200);
    env.ok(&["mcp", "expose", "web", "--no-hermes"]);
    assert_eq!(post().await, 401, "a withdrawn profile's key is revoked");
}
