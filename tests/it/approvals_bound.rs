//! An approval is bound to the exact call (issue 36): the SHA-256 of its canonical
//! arguments, the version of the policy that gated it and an expiry. A policy edit while a
//! card waits makes it stale (the card says why; approving withdraws it, nothing runs); an
//! expired card cannot be approved, and its expiry is announced; arguments changed in the
//! store after queueing are refused before anything runs. Against a real rmcp upstream
//! that counts its calls.

use crate::support::upstream::RmcpUpstream;
use crate::support::*;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

fn sql(env: &Env, stmt: &str, id: &str) {
    let c = rusqlite::Connection::open(env.state_dir().join("hal0.db")).unwrap();
    c.busy_timeout(std::time::Duration::from_secs(5)).unwrap();
    assert_eq!(c.execute(stmt, [id]).unwrap(), 1, "{stmt}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_holds_only_for_the_call_and_the_policy_it_was_queued_under() {
    let (base, rec) = crate::notify::Recorder::start(0).await;
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    env.ok(&["mcp", "gate", "up", "delete_everything"]);
    env.ok(&["config", "set", "mcp.gate_wait_secs", "1"]);
    env.ok(&["notify", "add", "webhook", &format!("{base}/hook")]);
    let key = crate::proxy::key_for(&env, "up", "ci");
    let s = env.serve();
    let cfg = StreamableHttpClientTransportConfig::with_uri(s.url("/mcp/proxy/up/mcp")).auth_header(key);
    let c = ().serve(StreamableHttpClientTransport::from_config(cfg)).await.unwrap();
    let queue = |n: i64| {
        let c = c.clone();
        async move {
            let out = crate::proxy::call(&c, "delete_everything", json!({"confirm": true, "n": n})).await.unwrap();
            assert_eq!(out["status"], "pending_approval", "{out}");
            out["approval_id"].as_str().unwrap().to_string()
        }
    };

    // The card carries what it is bound to.
    let a = queue(1).await;
    let row = env.json(&["agent", "approvals", "show", &a, "--json"]);
    let digest = row["args_sha256"].as_str().unwrap_or_else(|| panic!("{row}")).to_string();
    assert_eq!(digest.len(), 64);
    assert!(row["policy_version"].is_string() && row["expires_at"].is_string(), "{row}");

    // A policy edit while it waits: stale, with why; approving withdraws it, nothing runs.
    env.ok(&["mcp", "allow", "up", "echo"]);
    let page = env.json(&["op", "approval_list", r#"{"status":"pending"}"#]);
    let card = page["approvals"].as_array().unwrap().iter().find(|c| c["id"] == a.as_str()).unwrap().clone();
    assert!(card["stale"].as_str().is_some_and(|w| w.contains("tool policy of `up` changed")), "{card}");
    let o = env.run(&["agent", "approvals", "approve", &a, "--yes"]);
    assert_ne!(o.code(), 0);
    assert!(o.stderr().contains("approvals.stale"), "{}", o.stderr());
    let row = env.json(&["agent", "approvals", "show", &a, "--json"]);
    assert_eq!(row["status"], "withdrawn");
    assert!(row["reason"].as_str().unwrap().starts_with("stale:"), "{row}");
    assert_eq!(up.count("delete_everything"), 0);
    rec.wait("/hook", "approval.withdrawn", 1).await;

    // Queued under the policy as it is now: it holds, and runs once approved.
    let b = queue(2).await;
    assert!(env.json(&["op", "approval_list", r#"{"status":"pending"}"#])["approvals"][0].get("stale").is_none());
    let done = env.json(&["agent", "approvals", "approve", &b, "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    assert_eq!(up.count("delete_everything"), 1);

    // Arguments changed in the store after queueing: refused before anything runs.
    let t = queue(3).await;
    sql(
        &env,
        r#"UPDATE approvals SET arguments = json_set(arguments, '$.arguments.confirm', json('false')) WHERE id = ?1"#,
        &t,
    );
    let o = env.run(&["agent", "approvals", "approve", &t, "--yes"]);
    assert!(o.stderr().contains("approvals.binding_mismatch"), "{}", o.stderr());
    assert_eq!(env.json(&["agent", "approvals", "show", &t, "--json"])["status"], "failed");
    assert_eq!(up.count("delete_everything"), 1);

    // Past its expiry: the daemon expires it and says so; it cannot be approved.
    let e = queue(4).await;
    sql(&env, "UPDATE approvals SET expires_at = '2000-01-01T00:00:00Z' WHERE id = ?1", &e);
    let gone = rec.wait("/hook", "approval.expired", 1).await;
    let v: Value = serde_json::from_str(&gone[0].body).unwrap();
    assert_eq!(v["approval"]["id"], e.as_str(), "{v}");
    let o = env.run(&["agent", "approvals", "approve", &e, "--yes"]);
    assert!(o.stderr().contains("approvals.expired"), "{}", o.stderr());
    assert_eq!(env.json(&["agent", "approvals", "show", &e, "--json"])["status"], "expired");
    assert_eq!(up.count("delete_everything"), 1);
}

/// More than once: approving with "this tool for this caller for N minutes" or "always
/// these exact arguments" leaves a standing rule a person sees and removes; it lets only
/// that caller's matching gated calls run without a card.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standing_rule_lets_only_its_caller_and_arguments_through_until_removed() {
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    env.ok(&["mcp", "gate", "up", "delete_everything"]);
    env.ok(&["config", "set", "mcp.gate_wait_secs", "1"]);
    let (kc, kb) = (crate::proxy::key_for(&env, "up", "ci"), crate::proxy::key_for(&env, "up", "bot"));
    let s = env.serve();
    let consumer = |key: String| {
        let cfg = StreamableHttpClientTransportConfig::with_uri(s.url("/mcp/proxy/up/mcp")).auth_header(key);
        async move { ().serve(StreamableHttpClientTransport::from_config(cfg)).await.unwrap() }
    };
    let (ci, bot) = (consumer(kc).await, consumer(kb).await);
    let call = |c: &rmcp::service::RunningService<rmcp::RoleClient, ()>, n: i64| {
        let c = c.peer().clone();
        async move { crate::proxy::call(&c, "delete_everything", json!({"confirm": true, "n": n})).await.unwrap() }
    };

    // Approved "for 15 minutes": ci's next calls run at once, any arguments; bot's wait.
    let first = call(&ci, 1).await;
    let id = first["approval_id"].as_str().unwrap().to_string();
    let o = env.run(&["approvals", "approve", &id, "--choice", "session", "--yes"]);
    assert!(o.stderr().contains("approvals.invalid_choice"), "a Hermes choice on a proxied call: {}", o.stderr());
    let o = env.run(&["approvals", "approve", &id, "--allow-for", "0", "--yes"]);
    assert_eq!(o.code(), 2, "{}", o.stderr());
    let done = env.json(&["approvals", "approve", &id, "--allow-for", "15", "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    let rules = env.json(&["approvals", "rules", "list", "--json"]);
    assert_eq!(rules.as_array().map(Vec::len), Some(1), "{rules}");
    let rule = rules[0].clone();
    assert_eq!((rule["client"].as_str(), rule["tool"].as_str()), (Some("ci"), Some("delete_everything")), "{rule}");
    assert!(rule["expires_at"].is_string() && rule["args_sha256"].is_null(), "{rule}");
    assert_eq!(env.json(&["mcp", "status", "up", "--json"])["rules"][0]["id"], rule["id"]);
    assert!(env.ok(&["mcp", "status", "up"]).contains("ci may call delete_everything"));
    let ran = call(&ci, 2).await;
    assert!(ran.get("approval_id").is_none(), "ran without a card: {ran}");
    assert_eq!(up.count("delete_everything"), 2);
    let audit = env.ok(&["activity", "list", "--json"]);
    assert!(audit.contains(&format!("allowed by rule {}", rule["id"].as_str().unwrap())), "{audit}");
    let waits = call(&bot, 3).await;
    assert_eq!(waits["status"], "pending_approval", "another caller waits: {waits}");

    // "Always these exact arguments" for bot: the same arguments run, others wait.
    let bid = waits["approval_id"].as_str().unwrap().to_string();
    env.ok(&["approvals", "approve", &bid, "--always-these-arguments", "--yes"]);
    assert_eq!(up.count("delete_everything"), 3);
    assert!(call(&bot, 3).await.get("approval_id").is_none(), "the same arguments run");
    assert_eq!(call(&bot, 4).await["status"], "pending_approval", "other arguments wait");
    assert_eq!(up.count("delete_everything"), 4);

    // Removed: ci's calls wait again.
    env.ok(&["approvals", "rules", "remove", rule["id"].as_str().unwrap()]);
    assert_eq!(call(&ci, 5).await["status"], "pending_approval");
    let o = env.run(&["approvals", "rules", "remove", rule["id"].as_str().unwrap()]);
    assert!(o.stderr().contains("approvals.rule_not_found"), "{}", o.stderr());
    assert_eq!(env.json(&["approvals", "rules", "list", "--server", "up", "--json"]).as_array().map(Vec::len), Some(1));
}

/// The dashboard's card offers the same choices: a person picks "this tool for this caller,
/// 15 minutes", and the rule shows on the servers page, where it is removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_approves_for_a_while_and_removes_the_rule() {
    let Some(b) = crate::dashboard::browser(900, 900).await else { return };
    let up = RmcpUpstream::start().await;
    let env = Env::new();
    env.ok(&["mcp", "install", &up.url(), "--id", "up"]);
    env.ok(&["mcp", "gate", "up", "delete_everything"]);
    env.ok(&["config", "set", "mcp.gate_wait_secs", "1"]);
    let key = crate::proxy::key_for(&env, "up", "ci");
    let s = env.serve();
    let cfg = StreamableHttpClientTransportConfig::with_uri(s.url("/mcp/proxy/up/mcp")).auth_header(key);
    let c = ().serve(StreamableHttpClientTransport::from_config(cfg)).await.unwrap();
    let out = crate::proxy::call(&c, "delete_everything", json!({"confirm": true})).await.unwrap();
    let id = out["approval_id"].as_str().unwrap().to_string();
    crate::dashboard::signed_in(&b, &env, &s).await;
    b.wait_for(&format!("#ap-{id} select.how"), std::time::Duration::from_secs(30)).await.unwrap();
    b.eval(&format!(
        "const s = document.querySelector('#ap-{id} select.how'); s.value = '15'; s.dispatchEvent(new Event('change')); return 1"
    ))
    .await;
    b.wait_for(&format!("button.approve[data-id='{id}']"), std::time::Duration::from_secs(30))
        .await
        .unwrap()
        .click()
        .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while env.json(&["approvals", "rules", "list", "--json"]).as_array().map(Vec::len) != Some(1) {
        assert!(std::time::Instant::now() < deadline, "no rule");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let rule = env.json(&["approvals", "rules", "list", "--json"])[0].clone();
    assert_eq!(rule["created_by"].as_str().map(|c| c.starts_with("person:")), Some(true), "{rule}");
    b.goto(&s.url("/ui/servers")).await;
    let rid = rule["id"].as_str().unwrap();
    let li = b.wait_for(&format!("#rule-{rid}"), std::time::Duration::from_secs(30)).await.unwrap();
    assert!(li.text().await.contains("ci may call delete_everything"));
    b.wait_for(&format!("button[data-rule='{rid}']"), std::time::Duration::from_secs(30)).await.unwrap().click().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while env.json(&["approvals", "rules", "list", "--json"]) != json!([]) {
        assert!(std::time::Instant::now() < deadline, "the rule stays");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    b.close().await;
}
