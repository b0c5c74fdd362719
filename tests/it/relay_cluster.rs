//! Two relays sharing one real PostgreSQL (`[relay].database_url`): each `hal0 serve` has
//! its own store and keys; a bot connected to relay A is asked from relay B (and back), its
//! heartbeats and answer cross over, the history both list is the shared one, and stopping
//! A takes its bot offline on B and fails B's waiting ask. The server comes from
//! `tests/external/postgres.sh` (see `support::postgres`).

use crate::relay::{call, online, open_socket, relay};
use crate::support::postgres::Database;
use crate::support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// An installation whose relay is node `node` on `db`.
fn member(db: &Database, node: &str, extra: &str) -> Env {
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    let toml = format!("[relay]\ndatabase_url = \"{}\"\nnode = \"{node}\"\n{extra}", db.url);
    std::fs::write(env.config_dir().join("hal0.toml"), toml).unwrap();
    env
}

async fn agents(c: &crate::support::mcp::Client) -> Value {
    let (e, v) = call(c, "list_agents", json!({})).await;
    assert!(!e, "{v}");
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_on_one_relay_answers_an_ask_made_on_another() {
    let Some(db) = Database::create().await else { return };
    let (ea, eb) = (member(&db, "box-a", "ask_timeout_secs = 3\n"), member(&db, "box-b", "ask_timeout_secs = 3\n"));
    // Each box holds the key of its own bot only.
    let ka = ea.bridge_key("bot-a", &["relay"]);
    let kb = eb.bridge_key("bot-b", &["relay"]);
    let (sa, sb) = (ea.serve(), eb.serve());
    let (ca, cb) = (Arc::new(relay(&sa, &ka).await), Arc::new(relay(&sb, &kb).await));
    let mut wa = open_socket(&sa, &ka).await.unwrap();
    let mut wb = open_socket(&sb, &kb).await.unwrap();

    // B sees A's bot online, though it holds no key of it.
    assert!(eventually(Duration::from_secs(10), async || online(&agents(&cb).await, "bot-a") == Some(true)).await);

    // B → A: the wake reaches bot-a's socket on A; a heartbeat sent to A re-arms the
    // 3 s window kept on B; bot-a's reply (to A) is B's answer.
    let ask = tokio::spawn({
        let cb = cb.clone();
        async move { call(&cb, "ask_agent", json!({"to": "bot-a", "message": "ping from B"})).await }
    });
    let w = wa.wake().await;
    assert_eq!((w["from"].as_str(), w["message"].as_str()), (Some("bot-b"), Some("ping from B")));
    let id = w["request_id"].as_str().unwrap().to_string();
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        wa.heartbeat(&id);
    }
    // Only the asked bot may answer, on its own relay.
    let (e, v) = call(&cb, "reply", json!({"request_id": id, "answer": "not mine"})).await;
    assert!(e && v["error"] == "unknown_request", "{v}");
    let (e, v) = call(&ca, "reply", json!({"request_id": id, "answer": "pong from A"})).await;
    assert!(!e, "{v}");
    let (e, v) = ask.await.unwrap();
    assert!(!e && v["answer"] == "pong from A", "an answer after 4.5 s of heartbeats: {v}");
    let conv = v["conversation_id"].as_str().unwrap().to_string();
    // A late second reply is refused.
    let (e, v) = call(&ca, "reply", json!({"request_id": id, "answer": "again"})).await;
    assert!(e && v["error"] == "unknown_request", "{v}");

    // A → B in the same conversation, which B opened.
    let ask = tokio::spawn({
        let (ca, conv) = (ca.clone(), conv.clone());
        async move { call(&ca, "ask_agent", json!({"to": "bot-b", "message": "and you?", "conversation_id": conv})).await }
    });
    let w = wb.wake().await;
    assert_eq!(w["conversation_id"], conv.as_str());
    let (e, _) = call(&cb, "reply", json!({"request_id": w["request_id"], "answer": "fine"})).await;
    assert!(!e);
    let (e, v) = ask.await.unwrap();
    assert!(!e && v["answer"] == "fine" && v["conversation_id"] == conv.as_str(), "{v}");

    // An ask B → A that nobody answers times out on B after the window; A forgets it.
    let ask = tokio::spawn({
        let cb = cb.clone();
        async move { call(&cb, "ask_agent", json!({"to": "bot-a", "message": "silence"})).await }
    });
    let w = wa.wake().await;
    let (e, v) = ask.await.unwrap();
    assert!(e && v["error"] == "timeout", "{v}");
    assert!(
        eventually(Duration::from_secs(5), async || {
            let (e, v) = call(&ca, "reply", json!({"request_id": w["request_id"], "answer": "late"})).await;
            e && v["error"] == "unknown_request"
        })
        .await
    );

    // The history is the shared one: both boxes list the same three exchanges, all ended
    // (newest first by their second; within one second relays' clocks do not order them).
    for env in [&ea, &eb] {
        let rows = env.json(&["relay", "exchanges", "--json"]);
        let mut rows: Vec<(&str, &str, &str)> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["from"].as_str().unwrap(), r["to"].as_str().unwrap(), r["status"].as_str().unwrap()))
            .collect();
        rows.sort();
        assert_eq!(rows, [("bot-a", "bot-b", "ok"), ("bot-b", "bot-a", "ok"), ("bot-b", "bot-a", "timeout")]);
    }
    let pending = db.query("SELECT count(*)::text FROM hal0_relay_exchanges WHERE status = 'pending'").await;
    assert_eq!(pending, ["0"]);
    assert_eq!(doctor_row(&eb), ("ok".into(), format!("{}: reachable; relays running: box-a, box-b", db.shown())));
    let bots = eb.json(&["relay", "agents", "--json"]);
    let a = bots.as_array().unwrap().iter().find(|b| b["name"] == "bot-a").expect("bot-a listed on B");
    assert_eq!((a["online"].as_bool(), a["node"].as_str()), (Some(true), Some("box-a")), "{bots}");

    // Stopping A: B's waiting ask to bot-a fails, and bot-a is offline on B.
    let ask = tokio::spawn({
        let cb = cb.clone();
        async move { call(&cb, "ask_agent", json!({"to": "bot-a", "message": "still there?"})).await }
    });
    wa.wake().await;
    sa.terminate().await;
    let (e, v) = ask.await.unwrap();
    assert!(e && v["error"] == "agent_disconnected", "{v}");
    assert_eq!(online(&agents(&cb).await, "bot-a"), Some(false));
    let (e, v) = call(&cb, "ask_agent", json!({"to": "bot-a", "message": "hello?"})).await;
    assert!(e && v["error"] == "agent_offline", "{v}");
    let (e, v) = call(&cb, "ask_agent", json!({"to": "bot-z", "message": "hello?"})).await;
    assert!(e && v["error"] == "unknown_agent", "{v}");
    assert_eq!(doctor_row(&eb).1, format!("{}: reachable; relays running: box-b", db.shown()));
}

/// `hal0 doctor`'s relay_database row: (status, detail).
fn doctor_row(env: &Env) -> (String, String) {
    let o = env.run(&["doctor", "--json"]);
    let v: Value = serde_json::from_str(&o.stdout()).unwrap_or_else(|e| panic!("{e}: {}", o.stdout()));
    let r = v["rows"].as_array().unwrap().iter().find(|r| r["name"] == "relay_database").expect("relay_database row");
    (r["status"].as_str().unwrap().to_string(), r["detail"].as_str().unwrap().to_string())
}

#[tokio::test]
async fn a_bad_database_url_is_refused_with_the_key_named() {
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    std::fs::write(env.config_dir().join("hal0.toml"), "[relay]\ndatabase_url = \"postgres://u:sekrit@[::1\"\n")
        .unwrap();
    let o = env.run(&["relay", "agents"]);
    assert_ne!(o.code(), 0);
    let err = o.stderr();
    assert!(err.contains("relay.database_url") && err.contains("not a PostgreSQL URL"), "{err}");
    assert!(!err.contains("sekrit"), "the password stays out of the message: {err}");

    // DATABASE_URL is used when the file sets none; a malformed one is refused too.
    let env = Env::new();
    let o = Out(env.cmd(&["relay", "agents"]).env("DATABASE_URL", "postgres://u:sekrit@[::1").output().unwrap());
    assert_ne!(o.code(), 0);
    let err = o.stderr();
    assert!(err.contains("relay.invalid_database_url") || err.contains("database URL"), "{err}");
    assert!(!err.contains("sekrit"), "{err}");
}

#[tokio::test]
async fn an_unreachable_database_gives_a_clear_error_and_the_daemon_still_serves() {
    // A port nothing listens on (bound then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    let toml = format!("[relay]\ndatabase_url = \"postgres://hal0:sekrit@127.0.0.1:{port}/hal0\"\n");
    std::fs::write(env.config_dir().join("hal0.toml"), toml).unwrap();
    let o = env.run(&["relay", "exchanges"]);
    assert_ne!(o.code(), 0);
    let err = o.stderr();
    assert!(err.contains("relay.database_unavailable") || err.contains("cannot be used"), "{err}");
    assert!(err.contains(&format!("127.0.0.1:{port}/hal0")) && !err.contains("sekrit"), "{err}");
    let (status, detail) = doctor_row(&env);
    assert_eq!(status, "fail", "{detail}");
    assert!(detail.contains("relay.database_unavailable") && !detail.contains("sekrit"), "{detail}");
    // The daemon starts anyway (the bridge and memory do not need the relay's database).
    let server = env.serve();
    let r = reqwest::get(server.url("/api/health")).await.unwrap();
    assert!(r.status().is_success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_newest_connection_of_a_bot_wins_across_relays() {
    let Some(db) = Database::create().await else { return };
    let (ea, eb) = (member(&db, "box-a", ""), member(&db, "box-b", ""));
    // bot-a holds a key on both boxes; bot-x asks from A.
    let (ka_a, ka_b, kx) =
        (ea.bridge_key("bot-a", &["relay"]), eb.bridge_key("bot-a", &["relay"]), ea.bridge_key("bot-x", &["relay"]));
    let (sa, sb) = (ea.serve(), eb.serve());
    let (ca, cb, cx) = (relay(&sa, &ka_a).await, Arc::new(relay(&sb, &ka_b).await), Arc::new(relay(&sa, &kx).await));
    let mut old = open_socket(&sa, &ka_a).await.unwrap();
    // The older connection is registered before the newer one opens.
    let located = async || db.query("SELECT coalesce(node, '') FROM hal0_relay_bots WHERE name = 'bot-a'").await;
    assert!(eventually(Duration::from_secs(10), async || located().await == ["box-a"]).await);
    let mut new = open_socket(&sb, &ka_b).await.unwrap();
    assert!(eventually(Duration::from_secs(10), async || located().await == ["box-b"]).await);

    // Once A has heard that bot-a connected to B, A's asks go there, not to A's own socket.
    let mut moved = 0;
    for _ in 0..20 {
        let ask = tokio::spawn({
            let cx = cx.clone();
            async move { call(&cx, "ask_agent", json!({"to": "bot-a", "message": "where are you?"})).await }
        });
        let (w, on_b) = tokio::select! {
            w = new.wake() => (w, true),
            w = old.wake() => (w, false),
        };
        let (e, _) =
            call(if on_b { &cb } else { &ca }, "reply", json!({"request_id": w["request_id"], "answer": "here"})).await;
        assert!(!e);
        let (e, v) = ask.await.unwrap();
        assert!(!e && v["answer"] == "here", "{v}");
        if on_b {
            moved += 1;
            if moved == 3 {
                break;
            }
        } else {
            assert_eq!(moved, 0, "once moved, an ask never goes back to the older connection");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    assert_eq!(moved, 3, "asks made on A reach bot-a's newer connection on B");

    // The newer connection closes: the older one, on A, keeps bot-a online (within a beat).
    drop(new);
    assert!(
        eventually(Duration::from_secs(15), async || {
            located().await == ["box-a"] && online(&agents(&cb).await, "bot-a") == Some(true)
        })
        .await,
        "bot-a registered to A again: {:?} {}",
        db.query("SELECT concat_ws(' ', name, node, generation) FROM hal0_relay_bots").await,
        agents(&cb).await
    );
    let ask = tokio::spawn({
        let cx = cx.clone();
        async move { call(&cx, "ask_agent", json!({"to": "bot-a", "message": "back?"})).await }
    });
    let w = old.wake().await;
    let (e, _) = call(&ca, "reply", json!({"request_id": w["request_id"], "answer": "yes"})).await;
    assert!(!e);
    let (e, v) = ask.await.unwrap();
    assert!(!e && v["answer"] == "yes", "{v}");
}

/// `hal0 store prune` also prunes the shared database: ended exchanges past
/// `[relay].history_retention_days`, conversations left empty, mail for relays that are
/// gone; a pending exchange and a recent one stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pruning_reaches_the_shared_database() {
    let Some(db) = Database::create().await else { return };
    let env = member(&db, "box-a", "history_retention_days = 30\n");
    let server = env.serve();
    server.terminate().await;
    db.query(
        "INSERT INTO hal0_relay_conversations (id, a, b, created_at) VALUES
           ('cv_old', 'a', 'b', now() - interval '90 days'), ('cv_open', 'a', 'b', now() - interval '90 days')",
    )
    .await;
    db.query(
        "INSERT INTO hal0_relay_exchanges
           (request_id, conversation_id, from_agent, to_agent, message, status, started_at, ended_at, node) VALUES
           ('r_old', 'cv_old', 'a', 'b', 'hi', 'answered', now() - interval '90 days', now() - interval '90 days', 'box-a'),
           ('r_pending', 'cv_open', 'a', 'b', 'hi', 'pending', now() - interval '90 days', NULL, 'box-a'),
           ('r_new', 'cv_open', 'a', 'b', 'hi', 'answered', now(), now(), 'box-a')",
    )
    .await;
    db.query(
        "INSERT INTO hal0_relay_mail (node, sender, kind, request_id) VALUES ('box-gone', 'box-a', 'wake', 'r_x')",
    )
    .await;
    let report = env.json(&["store", "prune", "--json"]);
    let pruned = report["pruned"].as_array().unwrap();
    let rows = |t: &str| pruned.iter().find(|p| p["table"] == t).map(|p| p["rows"].as_u64().unwrap());
    assert_eq!(rows("hal0_relay_exchanges"), Some(1), "{report}");
    assert_eq!(rows("hal0_relay_conversations"), Some(1), "{report}");
    assert_eq!(rows("hal0_relay_mail"), Some(1), "{report}");
    let left = db.query("SELECT request_id FROM hal0_relay_exchanges ORDER BY request_id").await;
    assert_eq!(left, ["r_new", "r_pending"]);
    assert_eq!(db.query("SELECT id FROM hal0_relay_conversations").await, ["cv_open"]);
}
