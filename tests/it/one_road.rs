//! Issue 33: every front takes the same op, so a rule answers the same from the CLI and over
//! REST, and hal0's own servers are one list (`connect::MOUNTS`).

use crate::support::*;
use serde_json::{Value, json};

/// The error code in a REST refusal body.
fn code_of(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["code"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The CLI and REST give a new or rotated key with the same things to paste: the
/// `claude mcp add` lines and, for a relay bot, its `.env` lines and `mcp_servers` entry
/// (REST answered neither the bot's setup nor, on rotate, any line). Limits agree: a run list
/// past 1000 rows and an activity list of 0 rows are refused with the op's code from both.
/// `version_info` lists hal0-relay, and no record may take its id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_and_rest_answer_with_the_same_op() {
    let env = Env::new();
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();
    let http = reqwest::Client::new();
    let rest = |method: reqwest::Method, path: &str, body: Option<Value>| {
        let mut r = http.request(method, server.url(path)).bearer_auth(&admin);
        if let Some(b) = body {
            r = r.json(&b);
        }
        r.send()
    };

    let cli = env.json(&["bridge", "add", "bot-cli", "--scope", "relay", "--json"]);
    let resp =
        rest(reqwest::Method::POST, "/api/bridge/clients", Some(json!({"name": "bot-rest", "scopes": ["relay"]})))
            .await
            .unwrap();
    let over_rest: Value = resp.json().await.unwrap();
    for (front, v) in [("cli", &cli), ("rest", &over_rest)] {
        let env_lines = v["relay_bot"]["env"].as_array().unwrap_or_else(|| panic!("{front}: no relay_bot: {v}"));
        assert!(
            env_lines.iter().any(|l| l.as_str().unwrap().starts_with("HERMES_BRIDGE_RELAY_URL=ws://")),
            "{front}: {v}"
        );
        assert!(v["relay_bot"]["config_yaml"].as_str().unwrap().contains("/mcp/relay/mcp"), "{front}: {v}");
        let lines = v["claude_mcp_add"].as_array().unwrap();
        assert!(lines.iter().any(|l| l.as_str().unwrap().contains("hal0-relay")), "{front}: {v}");
    }
    let rotated: Value =
        rest(reqwest::Method::POST, "/api/bridge/clients/bot-rest/rotate", None).await.unwrap().json().await.unwrap();
    assert!(rotated["claude_mcp_add"].as_array().is_some_and(|l| !l.is_empty()), "{rotated}");
    assert!(rotated["relay_bot"]["env"].is_array(), "{rotated}");

    for (args, path, code) in [
        (&["runs", "list", "--limit", "5000"][..], "/api/runs?limit=5000", "runs.invalid_limit"),
        (&["activity", "list", "--limit", "0"][..], "/api/activity?limit=0", "activity.invalid_filter"),
    ] {
        let o = env.run(args);
        assert_ne!(o.code(), 0, "{args:?}");
        assert!(o.stderr().contains(code), "{args:?}: {}", o.stderr());
        let body = rest(reqwest::Method::GET, path, None).await.unwrap().text().await.unwrap();
        assert_eq!(code_of(&body), code, "{path}: {body}");
    }

    // Both fronts audit the change the same way: one row each, the op's name, the surface
    // the change came from, ended ok; no key in the arguments.
    let rows = env.json(&["activity", "list", "--tool", "bridge_client_add", "--json"]);
    let mut seen: Vec<(String, String)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["verdict"], "ok", "{r}");
            let key = cli["key"].as_str().unwrap();
            assert!(!r.to_string().contains(key), "{r}");
            (
                r["surface"].as_str().unwrap().to_string(),
                r["arguments"]["name"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [("api".to_string(), "bot-rest".to_string()), ("cli".to_string(), "bot-cli".to_string())],
        "{rows}"
    );

    // A pruning over REST is one audit row (the op wrote a second one of its own, with the
    // wrong surface when hal0-admin ran it); at the shell too.
    let r = rest(reqwest::Method::POST, "/api/store/prune", None).await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    env.ok(&["store", "prune"]);
    let rows = env.json(&["activity", "list", "--tool", "store_prune", "--json"]);
    let mut surfaces: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["surface"].as_str().unwrap()).collect();
    surfaces.sort();
    assert_eq!(surfaces, ["api", "cli"], "{rows}");

    let v = env.json(&["op", "version_info"]);
    let servers = v["mcp_servers"].as_array().unwrap_or_else(|| panic!("{v}"));
    assert!(servers.iter().any(|s| s == "hal0-relay"), "{v}");
}

/// Every change made at the box's shell is on record, as REST's are: the audit log holds one
/// row per command, surface `cli`, the shell user, the op's name and its outcome (a refusal
/// too), and never a secret value, a key or a password. (The repairs that must not depend
/// on the store, `config set|unset` and `auth rotate`, are recorded after they ran.) Before issue 33's audit pass,
/// `config set|unset`, `mcp install|allow|block|enable|disable|expose|uninstall|keys|secret`,
/// `auth rotate`, `ui passwd`, `memory add`, `agent reprovision`, `backup` and `restore`
/// wrote no row.
#[test]
fn every_change_at_the_shell_is_on_record() {
    let env = Env::new();
    let ok = |args: &[&str]| {
        let o = env.run(args);
        assert_eq!(o.code(), 0, "{args:?}: {}", o.stderr());
    };
    // A repair of hal0.toml needs no store and makes none: on a fresh box it is not
    // recorded. Once the box has a store (the first change that needs one), it is.
    ok(&["config", "set", "network.public_url", "https://first.example"]);
    assert!(!env.state_dir().join("hal0.db").exists(), "config set made a store");
    ok(&["bridge", "add", "ci"]);
    ok(&["config", "set", "network.public_url", "https://box.example"]);
    ok(&["config", "unset", "network.public_url"]);
    ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "files"]);
    ok(&["mcp", "allow", "files", "read"]);
    ok(&["mcp", "block", "files", "file:///etc/*", "--resource"]);
    // Refused by the domain (a resource has no gated list): on record with its code.
    let gated = env.run(&["mcp", "gate", "files", "file:///*", "--resource"]);
    assert_eq!(gated.code(), 2, "{}", gated.stderr());
    ok(&["mcp", "disable", "files"]);
    ok(&["mcp", "enable", "files"]);
    ok(&["mcp", "expose", "files", "--no-hermes"]);
    ok(&["mcp", "keys", "add", "files", "laptop"]);
    ok(&["mcp", "keys", "revoke", "files", "laptop", "--yes"]);
    let secret = "Bearer s3cr3t-value-4471";
    let set = env.with_stdin(&["mcp", "secret", "set", "files", "Authorization"], &format!("{secret}\n"));
    assert_eq!(set.code(), 0, "{}", set.stderr());
    let rotated = env.json(&["auth", "rotate", "client", "--yes", "--json"]);
    let key = rotated["key"].as_str().unwrap().to_string();
    let password = "a long dashboard password 93";
    assert_eq!(env.with_stdin(&["ui", "passwd"], &format!("{password}\n")).code(), 0);
    ok(&["ui", "passwd", "--remove"]);
    ok(&["memory", "add", "--local", "the deploy host is gamma"]);
    let archive = env.dir.path().join("box.tar.gz");
    ok(&["backup", archive.to_str().unwrap()]);
    ok(&["mcp", "uninstall", "files", "--yes"]);
    // A backup is recorded once it is written (so its own archive does not hold it).
    let last = |n: usize| -> Vec<(String, String)> {
        let rows = env.json(&["activity", "list", "--limit", &n.to_string(), "--json"]);
        let rows = rows.as_array().unwrap();
        rows.iter().rev().map(|r| (r["tool"].as_str().unwrap().into(), r["verdict"].as_str().unwrap().into())).collect()
    };
    let pair = |t: &str| (t.to_string(), "ok".to_string());
    assert_eq!(last(2), [pair("store_backup"), pair("mcp_server_uninstall")]);
    ok(&["restore", archive.to_str().unwrap(), "--yes"]);

    let rows = env.json(&["activity", "list", "--limit", "100", "--json"]);
    let rows = rows.as_array().unwrap();
    let seen: Vec<(String, String)> = rows
        .iter()
        .rev()
        .map(|r| {
            assert_eq!(r["surface"], "cli", "{r}");
            assert!(r["identity"].as_str().unwrap().starts_with("cli:"), "{r}");
            (r["tool"].as_str().unwrap().to_string(), r["verdict"].as_str().unwrap().to_string())
        })
        .collect();
    // The store as restored is the one backed up, then the restore's own row: the
    // backup's row and the uninstall's came after the archive was made.
    let want = [
        ("bridge_client_add", "ok"),
        ("config_write", "ok"),
        ("config_write", "ok"),
        ("mcp_server_install", "ok"),
        ("mcp_policy_place", "ok"),
        ("mcp_policy_place", "ok"),
        ("mcp_policy_place", "error"),
        ("mcp_server_config_write", "ok"),
        ("mcp_server_config_write", "ok"),
        ("mcp_server_exposure", "ok"),
        ("mcp_key_add", "ok"),
        ("mcp_key_revoke", "ok"),
        ("mcp_secret_set", "ok"),
        ("auth_rotate", "ok"),
        ("ui_password_set", "ok"),
        ("ui_password_remove", "ok"),
        ("agent_memory_add", "ok"),
        ("store_restore", "ok"),
    ];
    let want: Vec<(String, String)> = want.iter().map(|(t, v)| (t.to_string(), v.to_string())).collect();
    assert_eq!(seen, want, "{rows:?}");
    let refused = rows.iter().find(|r| r["verdict"] == "error").unwrap();
    assert_eq!(refused["result_code"], "mcp.access_invalid", "{refused}");
    let text = serde_json::to_string(rows).unwrap();
    for secret in [secret, "s3cr3t-value-4471", key.as_str(), password] {
        assert!(!text.contains(secret), "the audit log holds a secret: {text}");
    }
    // The restore put the uninstalled server back.
    assert_eq!(
        env.json(&["mcp", "list", "--json"]).as_array().unwrap().iter().filter(|s| s["id"] == "files").count(),
        1
    );
}

/// While hal0.toml does not load, the shell still reads the store (bridge clients, the
/// inbox, runs, the audit log) and still repairs the file with `config set|unset`, the
/// repair on record like any change; a change that needs the configuration says which file
/// and line to fix.
#[test]
fn a_broken_config_leaves_the_shell_its_reads_and_its_repair() {
    let env = Env::new();
    env.ok(&["bridge", "add", "ci"]);
    let toml = env.config_dir().join("hal0.toml");
    std::fs::write(&toml, "[approvals]\nexpire_hours = \"soon\"\n").unwrap();
    assert_eq!(env.json(&["bridge", "list", "--json"])[0]["name"], "ci");
    assert_eq!(env.json(&["approvals", "list", "--json"]), json!([]));
    let export = env.ok(&["activity", "export"]);
    assert!(export.contains("bridge_client_add"), "{export}");
    let refused = env.run(&["bridge", "add", "other"]);
    assert_eq!(refused.code(), 2, "{}", refused.stderr());
    assert!(refused.stderr().contains("config.invalid") && refused.stderr().contains("line 2"), "{}", refused.stderr());
    env.ok(&["config", "unset", "approvals.expire_hours"]);
    assert_eq!(env.json(&["bridge", "list", "--json"]).as_array().unwrap().len(), 1, "the refused add wrote nothing");
    let rows = env.json(&["activity", "list", "--json"]);
    assert_eq!((rows[0]["tool"].as_str(), rows[0]["verdict"].as_str()), (Some("config_write"), Some("ok")), "{rows}");
    env.ok(&["bridge", "add", "other"]);
}
