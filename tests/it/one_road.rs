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
