//! Issue 32, resource exhaustion and the relay's reach: each check fails on the relay and
//! inbox as the outside audit found them. Bounds are observed through what hal0 answers
//! and stores (error codes, stored row sizes), never through timings or RSS.

use crate::relay::{call, open_socket, relay};
use crate::support::*;
use serde_json::{Value, json};

fn exchanges(env: &Env) -> Vec<Value> {
    env.json(&["relay", "exchanges", "--json", "--limit", "1000"]).as_array().unwrap().clone()
}

/// A relay-only key cannot start Hermes runs by asking a local profile (`scope_required`,
/// no run reaches Hermes); a key with agents too can, and the profile's answer comes back
/// through the redactor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_only_key_cannot_run_hermes_and_local_answers_are_redacted() {
    use crate::support::fake_hermes::{FakeHermes, FakeHermesOptions};
    let opts = FakeHermesOptions { approval_timeout: None, ..Default::default() };
    let hermes = FakeHermes::start(opts).await;
    let home = tempfile::tempdir().unwrap();
    hermes.write_profile(home.path());
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    let toml = format!("[relay]\nask_timeout_secs = 5\n\n[hermes]\nhome = \"{}\"\n", home.path().display());
    std::fs::write(env.config_dir().join("hal0.toml"), toml).unwrap();
    let (kr, ka) = (env.bridge_key("bot-r", &["relay"]), env.bridge_key("bot-a", &["relay", "agents"]));
    let server = env.serve();

    let r = relay(&server, &kr).await;
    let (e, v) = call(&r, "ask_agent", json!({"to": "hermes", "message": "print your env"})).await;
    assert!(e && v["error"] == "scope_required", "{v}");
    assert!(v["detail"].as_str().unwrap().contains("agents scope"), "{v}");
    assert!(hermes.requests_to("POST", "/v1/runs").is_empty(), "no run started for a relay-only key");

    // The fake profile echoes its input: a secret in it comes back masked.
    let token = format!("ghp_{}", "A1b2C3d4E5".repeat(4));
    let a = relay(&server, &ka).await;
    let (e, v) = call(&a, "ask_agent", json!({"to": "hermes", "message": format!("token {token}")})).await;
    assert!(!e, "{v}");
    let answer = v["answer"].as_str().unwrap();
    assert!(answer.starts_with("FAKE ANSWER: token ") && !answer.contains(&token), "{answer}");
    let statuses: Vec<Value> = exchanges(&env).iter().map(|x| x["status"].clone()).collect();
    assert_eq!(statuses, [json!("ok"), json!("scope_required")]);
}

/// A message over 1 MiB is refused `message_too_large` with the limit named, and the
/// refusal stores only a bounded head with the size and digest; refused asks of any kind
/// never store more than that head, and an answer over the limit is refused too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_and_refused_asks_are_stored_bounded() {
    let env = Env::new();
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    let server = env.serve();
    let a = relay(&server, &ka).await;

    let huge = "x".repeat(3 << 20);
    let (e, v) = call(&a, "ask_agent", json!({"to": "bot-b", "message": huge})).await;
    assert!(e && v["error"] == "message_too_large", "{v}");
    assert!(v["detail"].as_str().unwrap().contains("1048576"), "names the limit: {v}");
    // Refused as offline, with a message under the limit but far over what a refusal keeps.
    let big = "y".repeat(512 * 1024);
    let (e, v) = call(&a, "ask_agent", json!({"to": "bot-b", "message": big})).await;
    assert!(e && v["error"] == "agent_offline", "{v}");
    let (e, v) = call(&a, "ask_agent", json!({"to": "nobody", "message": big})).await;
    assert!(e && v["error"] == "unknown_agent", "{v}");

    let rows = exchanges(&env);
    assert_eq!(rows.len(), 3, "{}", rows.len());
    for r in &rows {
        let m = r["message"].as_str().unwrap();
        assert!(m.len() < 8 * 1024, "a refusal stores a bounded message, not {} bytes", m.len());
        assert!(m.contains("sha256 "), "{}", &m[m.len().saturating_sub(200)..]);
    }
    let cut = format!("{} bytes in all", 3 << 20);
    assert!(
        rows.iter().any(|r| r["message"].as_str().unwrap().contains(&cut)),
        "{:?}",
        rows.iter().map(|r| &r["status"]).collect::<Vec<_>>()
    );

    // An answer over the limit is refused before it reaches the asker.
    let mut sb = open_socket(&server, &kb).await.unwrap();
    let ask = tokio::spawn(async move { call(&a, "ask_agent", json!({"to": "bot-b", "message": "hi"})).await });
    let w = sb.wake().await;
    let b = relay(&server, &kb).await;
    let (e, v) = call(&b, "reply", json!({"request_id": w["request_id"], "answer": huge})).await;
    assert!(e && v["error"] == "message_too_large", "{v}");
    let (e, _) = call(&b, "reply", json!({"request_id": w["request_id"], "answer": "short"})).await;
    assert!(!e);
    let (e, v) = ask.await.unwrap();
    assert!(!e && v["answer"] == "short", "{v}");
}
