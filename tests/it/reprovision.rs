//! `hal0 agent reprovision hermes`: hal0-admin and hal0-memory written into every profile's
//! config.yaml round-trip (comments and the operator's own entries kept), a per-profile key
//! in the profile's .env that really opens hal0, opt-outs honoured, idempotent reruns.

use crate::support::*;
use std::os::unix::fs::PermissionsExt;

const DEFAULT_YAML: &str = "# Hermes config (operator notes)\nmodel:\n  default: m  # the model\nmcp_servers:\n  github:   # mine\n    url: https://example.com/mcp\n    timeout: 120\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reprovision_wires_profiles() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.yaml"), DEFAULT_YAML).unwrap();
    for (p, yaml) in [
        ("coder", "model: x\n"),
        ("private1", "hal0:\n  memory_private: true\n"),
        ("optout", "hal0: {wire_mcp: false}\n"),
    ] {
        let d = home.path().join("profiles").join(p);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("config.yaml"), yaml).unwrap();
    }
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    std::fs::write(env.config_dir().join("hal0.toml"), format!("[hermes]\nhome = \"{}\"\n", home.path().display()))
        .unwrap();
    let out = env.json(&["agent", "reprovision", "hermes", "--json"]);
    let rows = out["profiles"].as_array().unwrap();
    let outcome = |a: &str| rows.iter().find(|r| r["agent"] == a).unwrap()["outcome"].as_str().unwrap().to_string();
    assert_eq!(outcome("hermes"), "wired");
    assert_eq!(outcome("hermes/coder"), "wired");
    assert_eq!(outcome("hermes/private1"), "wired");
    assert_eq!(outcome("hermes/optout"), "skipped");

    let yaml = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    assert!(yaml.starts_with("# Hermes config (operator notes)\nmodel:\n  default: m  # the model\nmcp_servers:\n  github:   # mine\n    url: https://example.com/mcp\n    timeout: 120\n"), "{yaml}");
    assert!(yaml.contains("hal0-admin:") && yaml.contains("hal0-memory:") && yaml.contains("hal0-relay:"), "{yaml}");
    assert!(
        yaml.contains("/mcp/relay/mcp") && yaml.contains("timeout: 150"),
        "relay calls wait the ask window: {yaml}"
    );
    assert!(yaml.contains("/mcp/admin/mcp") && yaml.contains("${HAL0_MCP_KEY}"), "{yaml}");
    assert!(!yaml.contains("hal0bk_"), "the key never lands in config.yaml");
    let opt = std::fs::read_to_string(home.path().join("profiles/optout/config.yaml")).unwrap();
    assert_eq!(opt, "hal0: {wire_mcp: false}\n", "an opted-out profile is untouched");
    let private = std::fs::read_to_string(home.path().join("profiles/private1/config.yaml")).unwrap();
    assert!(private.contains("X-hal0-Private"), "{private}");
    let coder = std::fs::read_to_string(home.path().join("profiles/coder/config.yaml")).unwrap();
    assert!(!coder.contains("X-hal0-Private") && coder.contains("hermes__coder"), "{coder}");

    let env_file = home.path().join("profiles/coder/.env");
    assert_eq!(std::fs::metadata(&env_file).unwrap().permissions().mode() & 0o777, 0o600);
    let key = std::fs::read_to_string(&env_file)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("HAL0_MCP_KEY=").map(str::to_string))
        .unwrap();

    // Rerun: nothing changes, the key stays.
    let again = env.json(&["agent", "reprovision", "hermes", "--json"]);
    assert!(
        again["profiles"].as_array().unwrap().iter().all(|r| r["outcome"] == "unchanged" || r["outcome"] == "skipped"),
        "{again}"
    );
    assert_eq!(std::fs::read_to_string(home.path().join("config.yaml")).unwrap(), yaml);
    assert!(std::fs::read_to_string(&env_file).unwrap().contains(&key));

    // The key opens hal0's memory as the profile's own identity.
    let server = env.serve();
    let me: serde_json::Value = reqwest::Client::new()
        .get(server.url("/api/bridge/me"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["client"], "hermes__coder");
    assert_eq!(me["scopes"], serde_json::json!(["agents", "memory", "admin", "relay"]));

    // A key minted before the relay existed gains the scope in place: same key, rewired.
    env.ok(&["bridge", "scopes", "hermes__coder", "agents", "memory", "admin"]);
    let r = env.json(&["agent", "reprovision", "hermes", "--json"]);
    let coder = r["profiles"].as_array().unwrap().iter().find(|p| p["agent"] == "hermes/coder").unwrap().clone();
    assert_eq!(coder["outcome"], "wired", "{r}");
    assert!(std::fs::read_to_string(&env_file).unwrap().contains(&key), "the key stays");
    let listed = env.json(&["bridge", "list", "--json"]);
    let row = listed.as_array().unwrap().iter().find(|c| c["name"] == "hermes__coder").unwrap().clone();
    assert_eq!(row["scopes"], serde_json::json!(["agents", "memory", "admin", "relay"]), "{listed}");

    // --repair mints a new key; the old one stops working.
    env.ok(&["agent", "reprovision", "hermes", "--repair"]);
    let key2 = std::fs::read_to_string(&env_file)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("HAL0_MCP_KEY=").map(str::to_string))
        .unwrap();
    assert_ne!(key, key2);
    let status =
        reqwest::Client::new().get(server.url("/api/bridge/me")).bearer_auth(&key).send().await.unwrap().status();
    assert_eq!(status.as_u16(), 401);
    // An unparsable profile config is reported, not clobbered.
    std::fs::write(home.path().join("profiles/coder/config.yaml"), "model: [unclosed\n").unwrap();
    let o = env.run(&["agent", "reprovision", "hermes"]);
    assert_eq!(o.code(), 1, "{}", o.stderr());
    assert_eq!(std::fs::read_to_string(home.path().join("profiles/coder/config.yaml")).unwrap(), "model: [unclosed\n");
}
