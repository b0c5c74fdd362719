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

/// A bot that stops reading its socket cannot make the relay hold every ask sent to it:
/// past the relay's bound of unsent wakes (4 MiB) its connection is dropped, every ask to it
/// ends (`agent_disconnected`, or `agent_offline` for the ask that found it gone) long before
/// the asks' window, and it shows offline. Before the bound, the wakes piled up in memory and
/// the stuck send held the socket task, so nothing ended until the window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_stops_reading_is_dropped_past_the_send_bound() {
    let env = Env::new();
    env.ok(&["config", "set", "relay.ask_timeout_secs", "600"]);
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    let server = env.serve();
    let a = relay(&server, &ka).await;
    // Connected, then never read: the kernel's buffers fill, then hal0's queue.
    let silent = crate::relay::silent_socket(&server, &kb).await;
    let message = "m".repeat(900 * 1024);
    let asks = (0..32).map(|_| call(&a, "ask_agent", json!({"to": "bot-b", "message": message})));
    let ended = tokio::time::timeout(std::time::Duration::from_secs(120), futures::future::join_all(asks))
        .await
        .expect("every ask to a bot that stopped reading ended well before the asks' window");
    let codes: Vec<String> = ended
        .iter()
        .map(|(e, v)| {
            assert!(*e, "{v}");
            v["error"].as_str().unwrap().to_string()
        })
        .collect();
    assert!(codes.iter().all(|c| c == "agent_disconnected" || c == "agent_offline"), "{codes:?}");
    assert!(codes.iter().any(|c| c == "agent_disconnected"), "asks queued to the dropped socket: {codes:?}");
    let (_, v) = call(&a, "list_agents", json!({})).await;
    assert_eq!(crate::relay::online(&v, "bot-b"), Some(false), "{v}");
    drop(silent);
}

/// The approvals inbox stays small however a caller fills it: a gated call's arguments are
/// capped (64 KiB, refused before anything is stored), one key holds at most 32 pending
/// gated calls, and `approval_list` answers a page (with `next_cursor`) whose cards carry a
/// bounded head of long arguments with their size and digest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbox_caps_gated_calls_and_answers_in_pages() {
    use crate::support::mcp::{call as mcp_call, connect_with};
    let env = Env::new();
    let key = env.bridge_key("filler", &["admin"]);
    let server = env.serve();
    let admin = connect_with(&server, "admin", &key, false).await;
    let huge = json!({"args": {"key": "telemetry.service_name", "value": "v".repeat(3 << 20)}});
    let e = mcp_call(&admin, "config_write", huge).await.unwrap_err();
    assert!(e.contains("approvals.arguments_too_large") && e.contains("65536"), "{e}");
    let mut queued = 0;
    let refused = loop {
        let args =
            json!({"args": {"key": "telemetry.service_name", "value": format!("svc-{queued}-{}", "w".repeat(20_000))}});
        match mcp_call(&admin, "config_write", args).await {
            Ok(v) => {
                assert!(v["approval_id"].is_string(), "{v}");
                queued += 1;
                assert!(queued <= 32, "more than 32 pending gated calls for one key");
            }
            Err(e) => break e,
        }
    };
    assert_eq!(queued, 32);
    assert!(refused.contains("approvals.too_many_pending"), "{refused}");
    let page = mcp_call(&admin, "approval_list", json!({"args": {"status": "pending", "limit": 10}})).await.unwrap();
    let cards = page["approvals"].as_array().unwrap();
    assert_eq!(cards.len(), 10, "{page}");
    assert!(page["next_cursor"].is_string(), "{page}");
    let card = &cards[0];
    assert_eq!(card["arguments_cut"], true, "{card}");
    assert!(card["arguments_bytes"].as_u64().unwrap() > 20_000 && card["arguments_sha256"].is_string(), "{card}");
    assert!(card.to_string().len() < 16 * 1024, "a card of {} bytes", card.to_string().len());
    let next = mcp_call(
        &admin,
        "approval_list",
        json!({"args": {"status": "pending", "limit": 10, "before": page["next_cursor"]}}),
    )
    .await
    .unwrap();
    let ids = |p: &Value| p["approvals"].as_array().unwrap().iter().map(|c| c["id"].clone()).collect::<Vec<_>>();
    assert!(ids(&next).iter().all(|id| !ids(&page).contains(id)), "the next page is older rows");
}

/// One request on a fresh connection, read to its end (the answers here close).
async fn raw_get(port: u16, path: &str, auth: Option<&str>) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let auth = auth.map(|k| format!("authorization: Bearer {k}\r\n")).unwrap_or_default();
    let req = format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n{auth}connection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(20), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// `GET /api/health` on fresh connections until the answer is `done` (the accept loop counts
/// a connection a moment after it opened), or 50 tries 50 ms apart; the last answer.
async fn get_until(port: u16, done: impl Fn(&str) -> bool) -> String {
    let mut answer = String::new();
    for _ in 0..50 {
        answer = raw_get(port, "/api/health", None).await;
        if done(&answer) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    answer
}

/// Idle connections from one address cannot hold the daemon: past its share
/// (`limits.max_connections_per_local_peer` for a loopback address, as here;
/// `max_connections_per_peer` for any other) that address's next connection is answered
/// `503 request.too_many_connections`, and once a share is given back it is served again.
/// The remote share does not bind loopback, where the box's own bots all arrive.
/// Near the cap, a request without a credential is turned away (`503 request.busy`) while
/// one with a key is served, so anonymous callers cannot take the last slots.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_cannot_hold_the_daemon() {
    let env = Env::new();
    env.ok(&["config", "set", "limits.header_timeout_secs", "120"]);
    env.ok(&["config", "set", "limits.max_connections_per_peer", "2"]);
    env.ok(&["config", "set", "limits.max_connections_per_local_peer", "4"]);
    let server = env.serve();
    let port = server.port;
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap());
    }
    let served = raw_get(port, "/api/health", None).await;
    assert!(served.starts_with("HTTP/1.1 200"), "loopback is not held to the remote share of 2: {served}");
    idle.push(tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap());
    // The accept loop counts each held connection before the next is refused.
    let refused = get_until(port, |a| a.contains("request.too_many_connections")).await;
    assert!(refused.starts_with("HTTP/1.1 503") && refused.contains("max_connections_per_local_peer"), "{refused}");
    idle.pop();
    let served = get_until(port, |a| a.starts_with("HTTP/1.1 200")).await;
    assert!(served.starts_with("HTTP/1.1 200"), "a share given back is served again: {served}");
    drop(idle);
    drop(server);

    // Room for keys: 8 slots, 1 kept; 7 held idle, then the 8th slot.
    let env = Env::new();
    env.ok(&["config", "set", "limits.header_timeout_secs", "120"]);
    env.ok(&["config", "set", "limits.max_connections", "8"]);
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();
    let port = server.port;
    let mut idle = Vec::new();
    for _ in 0..7 {
        idle.push(tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap());
    }
    let busy = get_until(port, |a| a.contains("request.busy")).await;
    assert!(busy.starts_with("HTTP/1.1 503"), "{busy}");
    let keyed = raw_get(port, "/api/status", Some(&admin)).await;
    assert!(keyed.starts_with("HTTP/1.1 200"), "a caller with a key is served in the kept room: {keyed}");
    drop(idle);
}
