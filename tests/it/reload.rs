//! `systemctl reload hal0` (SIGHUP to `hal0 serve`): the reloadable keys of hal0.toml go
//! live without a restart (seen in what the daemon does, not only in what it reports), the
//! others wait and are named, `hal0 config set` says which a key needs, and a file that
//! does not parse changes nothing while the daemon keeps serving.

use crate::admin::{admin, call};
use crate::support::logged::Logged;
use crate::support::*;
use serde_json::json;

/// The hours between a queued card's creation and its expiry.
fn card_hours(env: &Env, id: &str) -> i64 {
    let v = env.json(&["approvals", "show", id, "--json"]);
    let at = |k: &str| {
        let s = v[k].as_str().unwrap_or_else(|| panic!("{k} in {v}"));
        time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).unwrap().unix_timestamp()
    };
    (at("expires_at") - at("created_at") + 1800) / 3600
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_applies_what_it_can_and_names_what_waits_for_a_restart() {
    let env = Env::new();
    let key = env.bridge_key("ops", &["admin", "memory"]);
    let d = Logged::start(&env);
    let c = admin(&d.server, &key).await;
    let gated = async || {
        let (e, v) = call(&c, "store_prune", json!({})).await;
        assert!(!e && v["status"] == "pending_approval", "{v}");
        v["approval_id"].as_str().unwrap().to_string()
    };
    assert_eq!(card_hours(&env, &gated().await), 24, "the default expiry");

    // `config set` says which each key needs.
    let o = env.ok(&["config", "set", "approvals.expire_hours", "2"]);
    assert!(o.contains("hal0 serve is running: a reload applies it, no restart needed"), "{o}");
    let o = env.ok(&["config", "set", "memory.enabled", "false"]);
    assert!(o.contains("hal0 serve is running: it applies at a restart"), "{o}");
    let (_, s) = call(&c, "settings_get", json!({})).await;
    assert_eq!(s["pending_restart"]["approvals.expire_hours"]["applies"], "reload", "{s}");
    assert_eq!(s["pending_restart"]["memory.enabled"]["applies"], "restart", "{s}");
    assert_eq!(card_hours(&env, &gated().await), 24, "nothing applies before the reload");

    d.hup();
    let line = d.line("hal0.toml reloaded").await;
    assert!(line.contains("applied approvals.expire_hours"), "{line}");
    assert!(line.contains("waiting for a restart (systemctl restart hal0): memory.enabled"), "{line}");
    // Applied: a card queued now expires in 2 hours; memory is still served.
    assert_eq!(card_hours(&env, &gated().await), 2, "the reloaded expiry is in use");
    let (_, s) = call(&c, "settings_get", json!({})).await;
    assert_eq!(s["running"]["approvals"]["expire_hours"], 2, "{s}");
    assert_eq!(s["running"]["memory"]["enabled"], true, "a restart key keeps its running value: {s}");
    let waiting: Vec<&String> = s["pending_restart"].as_object().unwrap().keys().collect();
    assert_eq!(waiting, ["memory.enabled"], "{s}");
    let r = reqwest::Client::new()
        .post(d.server.url("/mcp/memory/mcp"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "hal0-memory is still served until a restart");

    // A broken file: nothing changes, the daemon keeps serving, the log says why.
    let toml = env.config_dir().join("hal0.toml");
    let good = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, good.replace("expire_hours = 2", "expire_hours = \"soon\"")).unwrap();
    d.hup();
    let line = d.line("hal0.toml not reloaded").await;
    assert!(line.contains("expire_hours"), "the error names the key: {line}");
    assert_eq!(card_hours(&env, &gated().await), 2, "the running settings are unchanged");
}
