//! Read-modify-writes of hal0's files under concurrency, with the real binary: parallel
//! `hal0 auth rotate` processes on `api.env`, and `hal0 config set` from the CLI racing
//! `PUT /api/settings` on a running daemon for `hal0.toml`. Each round's writes must all
//! land: a writer that read the file before another's write landed and wrote its stale copy
//! back would put an earlier round's value back (issue 10, item 3).

use crate::support::*;
use serde_json::{Value, json};
use std::process::Child;

/// Start `hal0 <args>` without waiting.
fn spawn(env: &Env, args: &[&str]) -> Child {
    env.cmd(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
}

fn finish(c: Child, what: &str) -> String {
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "{what} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn key_in(env: &Env, var: &str) -> String {
    let text = std::fs::read_to_string(env.config_dir().join("api.env")).unwrap();
    text.lines().find_map(|l| l.strip_prefix(&format!("{var}="))).unwrap_or("").to_string()
}

async fn status(http: &reqwest::Client, server: &Server, key: &str) -> u16 {
    http.get(server.url("/api/settings")).bearer_auth(key).send().await.unwrap().status().as_u16()
}

/// Rounds of admin and client rotations started at once: after each round the file holds
/// one of that round's printed keys for each tier, every printed key is distinct, and at the
/// end the daemon accepts exactly the admin key the file holds and refuses every other one.
#[tokio::test]
async fn parallel_rotations_keep_every_tier_written() {
    let env = Env::new();
    env.json(&["auth", "rotate", "admin", "--yes", "--json"]);
    env.json(&["auth", "rotate", "client", "--yes", "--json"]);
    let server = env.serve();
    let (rounds, per_tier) = (10, 3);
    let mut printed: Vec<String> = Vec::new();
    let mut all_admin: Vec<String> = Vec::new();
    let mut lost = Vec::new();
    for round in 0..rounds {
        let mut procs = Vec::new();
        for _ in 0..per_tier {
            for tier in ["admin", "client"] {
                procs.push((tier, spawn(&env, &["auth", "rotate", tier, "--yes", "--json"])));
            }
        }
        let mut admin = Vec::new();
        let mut client = Vec::new();
        for (tier, p) in procs {
            let v: Value = serde_json::from_str(&finish(p, "hal0 auth rotate")).unwrap();
            let k = v["key"].as_str().unwrap().to_string();
            printed.push(k.clone());
            if tier == "admin" { admin.push(k) } else { client.push(k) }
        }
        let (a, c) = (key_in(&env, "HAL0_ADMIN_KEY"), key_in(&env, "HAL0_CLIENT_KEY"));
        if !admin.contains(&a) {
            lost.push(format!("round {round}: admin key in the file is not one printed this round"));
        }
        if !client.contains(&c) {
            lost.push(format!("round {round}: client key in the file is not one printed this round"));
        }
        all_admin.extend(admin);
    }
    assert!(lost.is_empty(), "{} of {} tier writes lost:\n{}", lost.len(), rounds * 2, lost.join("\n"));
    let mut unique = printed.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), printed.len(), "every printed key is distinct");

    let http = reqwest::Client::new();
    let live = key_in(&env, "HAL0_ADMIN_KEY");
    assert_eq!(status(&http, &server, &live).await, 200, "the admin key in api.env works");
    for k in all_admin.iter().filter(|k| **k != live) {
        assert_eq!(status(&http, &server, k).await, 401, "a rotated-away admin key is refused");
    }
}

/// The CLI sets some keys of hal0.toml while the running daemon receives `PUT /api/settings`
/// for others, round after round: after each round every key holds that round's value, and
/// the operator's comment survives.
#[tokio::test]
async fn config_set_and_settings_put_at_once_lose_nothing() {
    let env = Env::new();
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    std::fs::write(env.config_dir().join("hal0.toml"), "# operator's note\n[bridge]\nenabled = true\n").unwrap();
    let server = env.serve();
    let http = reqwest::Client::new();
    let cli_keys = ["network.public_url", "hermes.restart_command", "mcp.catalog_url"];
    let api_keys = [
        "bridge.run_retention_days",
        "bridge.max_concurrent_runs_per_client",
        "mcp.gate_wait_secs",
        "mcp.call_timeout_secs",
    ];
    let cli_value = |k: &str, r: u32| match k {
        "network.public_url" => format!("https://r{r}.example"),
        "hermes.restart_command" => format!("echo round {r}"),
        _ => format!("/srv/catalog-{r}.json"),
    };
    let rounds = 8;
    let mut lost = Vec::new();
    for r in 0..rounds {
        let procs: Vec<Child> = cli_keys.iter().map(|k| spawn(&env, &["config", "set", k, &cli_value(k, r)])).collect();
        let puts = api_keys.iter().map(|k| {
            http.put(server.url("/api/settings")).bearer_auth(&admin).json(&json!({"key": k, "value": r + 1})).send()
        });
        for resp in futures::future::join_all(puts).await {
            let resp = resp.unwrap();
            assert_eq!(resp.status().as_u16(), 200, "PUT /api/settings: {}", resp.text().await.unwrap());
        }
        for p in procs {
            finish(p, "hal0 config set");
        }
        let text = std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap();
        assert!(text.starts_with("# operator's note\n"), "{text}");
        let doc: toml_edit::DocumentMut = text.parse().unwrap();
        let get = |k: &str| {
            let (s, n) = k.split_once('.').unwrap();
            doc.get(s).and_then(|t| t.get(n)).and_then(|i| i.as_value()).map(|v| match v.as_str() {
                Some(s) => s.to_string(),
                None => v.to_string().trim().to_string(),
            })
        };
        for k in cli_keys {
            if get(k) != Some(cli_value(k, r)) {
                lost.push(format!("round {r}: {k} = {:?}", get(k)));
            }
        }
        for k in api_keys {
            if get(k) != Some((r + 1).to_string()) {
                lost.push(format!("round {r}: {k} = {:?}", get(k)));
            }
        }
    }
    let total = rounds as usize * (cli_keys.len() + api_keys.len());
    assert!(lost.is_empty(), "{} of {total} writes lost:\n{}", lost.len(), lost.join("\n"));
}
