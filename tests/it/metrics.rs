//! `GET /metrics` after a scripted sequence against a running `hal0 serve` (fake Hermes, an
//! rmcp upstream behind the proxy, relay bots): every counter moves by exactly what was
//! done (MCP calls by server, tool and outcome; proxy verdicts; relay asks), the gauges read
//! what is there (pending approvals, runs by status, open MCP sessions and WebSockets), the
//! text is OpenMetrics, and the route is the admin tier's.

use crate::support::fake_hermes::FakeHermesOptions;
use crate::support::mcp::{call, connect_with};
use crate::support::upstream::RmcpUpstream;
use crate::support::*;
use serde_json::json;
use std::collections::BTreeMap;

/// `name{labels}` → value, for every sample line.
pub(crate) fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(k, v)| (k.to_string(), v.parse::<f64>().unwrap_or(f64::NAN)))
        .collect()
}

pub(crate) async fn scrape(server: &Server, key: &str) -> BTreeMap<String, f64> {
    let r = reqwest::Client::new().get(server.url("/metrics")).bearer_auth(key).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let ct = r.headers()["content-type"].to_str().unwrap().to_string();
    assert!(ct.starts_with("application/openmetrics-text"), "{ct}");
    let text = r.text().await.unwrap();
    assert!(text.ends_with("# EOF\n"), "{text}");
    samples(&text)
}

fn moved(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>, key: &str) -> f64 {
    after.get(key).copied().unwrap_or(0.0) - before.get(key).copied().unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_move_by_exactly_what_was_done() {
    let (env, _hermes, _home) = fake_hermes_env(FakeHermesOptions::default(), "").await;
    let up = RmcpUpstream::start().await;
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    env.ok(&["mcp", "allow", "up", "echo"]);
    env.ok(&["mcp", "block", "up", "delete_everything"]);
    let consumer = env.json(&["mcp", "keys", "add", "up", "ci", "--json"])["key"].as_str().unwrap().to_string();
    let key = env.bridge_key("ops", &["admin"]);
    let bot = env.bridge_key("bot-a", &["relay"]);
    env.bridge_key("bot-b", &["relay"]);
    let server = env.serve();

    // The route is the admin tier's.
    let http = reqwest::Client::new();
    assert_eq!(http.get(server.url("/metrics")).send().await.unwrap().status(), 401);
    assert_eq!(http.get(server.url("/metrics")).bearer_auth(&key).send().await.unwrap().status(), 403);

    let before = scrape(&server, &admin).await;
    let agents = connect_with(&server, "agents", &key, false).await;
    let admin_mcp = connect_with(&server, "admin", &key, false).await;
    let proxy = connect_with(&server, "proxy/up", &consumer, false).await;
    let relay = connect_with(&server, "relay", &bot, false).await;
    let _socket = crate::relay::open_socket(&server, &bot).await.unwrap();

    for _ in 0..3 {
        call(&agents, "agent_runs_list", json!({})).await.unwrap();
    }
    let run = call(&agents, "agent_run", json!({"agent": "hermes", "input": "hello"})).await.unwrap();
    call(&agents, "agent_run_wait", json!({"run_id": run["run_id"], "timeout_s": 30})).await.unwrap();
    assert!(call(&agents, "agent_run_status", json!({"run_id": "run_nope"})).await.is_err());
    for v in ["https://a.example", "https://b.example"] {
        let q =
            call(&admin_mcp, "config_write", json!({"args": {"key": "network.public_url", "value": v}})).await.unwrap();
        assert_eq!(q["status"], "pending_approval");
    }
    call(&proxy, "echo", json!({"text": "one"})).await.unwrap();
    call(&proxy, "echo", json!({"text": "two"})).await.unwrap();
    assert!(call(&proxy, "delete_everything", json!({"confirm": true})).await.is_err());
    let asked = call(&relay, "ask_agent", json!({"to": "bot-b", "message": "anyone?"})).await;
    assert!(asked.is_err(), "bot-b is offline: {asked:?}");

    let after = scrape(&server, &admin).await;
    let calls = |server: &str, tool: &str, outcome: &str| {
        moved(
            &before,
            &after,
            &format!("hal0_mcp_tool_calls_total{{server=\"{server}\",tool=\"{tool}\",outcome=\"{outcome}\"}}"),
        )
    };
    assert_eq!(calls("agents", "agent_runs_list", "ok"), 3.0);
    assert_eq!(calls("agents", "agent_run", "ok"), 1.0);
    assert_eq!(calls("agents", "agent_run_wait", "ok"), 1.0);
    assert_eq!(calls("agents", "agent_run_status", "is_error"), 1.0);
    assert_eq!(calls("admin", "config_write", "ok"), 2.0);
    assert_eq!(calls("proxy/up", "echo", "ok"), 2.0);
    assert_eq!(calls("proxy/up", "delete_everything", "is_error"), 1.0);
    assert_eq!(calls("relay", "ask_agent", "is_error"), 1.0);
    let count = moved(&before, &after, "hal0_mcp_tool_call_seconds_count{server=\"agents\",tool=\"agent_runs_list\"}");
    assert_eq!(count, 3.0, "the latency histogram saw each call");
    let verdict =
        |v: &str| moved(&before, &after, &format!("hal0_proxy_verdicts_total{{server=\"proxy/up\",verdict=\"{v}\"}}"));
    assert_eq!((verdict("allow"), verdict("blocked")), (2.0, 1.0));
    assert_eq!(moved(&before, &after, "hal0_relay_asks_total{outcome=\"agent_offline\"}"), 1.0);
    assert_eq!(after["hal0_approvals_pending"], 2.0);
    assert_eq!(after["hal0_runs{status=\"completed\"}"], 1.0);
    assert_eq!(after["hal0_websockets_open"], 1.0);
    assert!(after["hal0_mcp_sessions_open"] >= 4.0, "four clients hold sessions: {}", after["hal0_mcp_sessions_open"]);
    assert!(moved(&before, &after, "hal0_store_call_seconds_count") > 0.0);

    // A decision moves the gauge; closed sessions leave it.
    let pending = env.json(&["agent", "approvals", "list", "--json", "--status", "pending"]);
    env.ok(&["agent", "approvals", "deny", pending[0]["id"].as_str().unwrap(), "--yes"]);
    for c in [agents, admin_mcp, proxy, relay] {
        c.cancel().await.unwrap();
    }
    let last = scrape(&server, &admin).await;
    assert_eq!(last["hal0_approvals_pending"], 1.0);
    assert_eq!(last["hal0_mcp_sessions_open"], 0.0);
}
