//! The agent relay over real transports: bots hold a WebSocket (`/bridge/connect`, a
//! tokio-tungstenite client speaking the hermes-bridge wire format) and call `hal0-relay`
//! with the rmcp client; the history is read back with `hal0 relay …`. Each defect the
//! reference lists for the old relay (§11) has a check here that the old relay would fail.

use crate::support::mcp::{Client, connect_with};
use crate::support::*;
use futures::{SinkExt, StreamExt};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// A bot's WebSocket: wakes arrive on `wakes`; `send` puts a frame on the socket.
pub(crate) struct Socket {
    wakes: mpsc::UnboundedReceiver<Value>,
    send: mpsc::UnboundedSender<Message>,
    /// The close code the relay sent, once the socket ended.
    closed: tokio::sync::watch::Receiver<Option<u16>>,
}

pub(crate) async fn open_socket(server: &Server, key: &str) -> Result<Socket, String> {
    let url = format!("ws://127.0.0.1:{}/bridge/connect", server.port);
    let mut req = url.into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {key}").parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async(req).await.map_err(|e| e.to_string())?;
    let (mut sink, mut stream) = ws.split();
    let (wake_tx, wakes) = mpsc::unbounded_channel();
    let (send, mut out) = mpsc::unbounded_channel::<Message>();
    let (closed_tx, closed) = tokio::sync::watch::channel(None);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                m = out.recv() => match m {
                    Some(m) => { if sink.send(m).await.is_err() { break } }
                    None => { let _ = sink.close().await; break }
                },
                f = stream.next() => match f {
                    Some(Ok(Message::Text(t))) => {
                        // The exact wire format: these four keys, in this order.
                        assert!(t.starts_with("{\"request_id\":\""), "{t}");
                        let v: Value = serde_json::from_str(&t).unwrap();
                        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
                        assert_eq!(keys.len(), 4, "{t}");
                        let _ = wake_tx.send(v);
                    }
                    Some(Ok(Message::Close(f))) => {
                        let _ = closed_tx.send(Some(f.map(|f| u16::from(f.code)).unwrap_or(1005)));
                        break;
                    }
                    Some(Ok(_)) => {}
                    _ => { let _ = closed_tx.send(Some(1006)); break }
                },
            }
        }
    });
    Ok(Socket { wakes, send, closed })
}

/// A bot's socket that is opened, then never read (no wake, no pong is ever taken).
pub(crate) async fn silent_socket(
    server: &Server,
    key: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    let mut req = format!("ws://127.0.0.1:{}/bridge/connect", server.port).into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {key}").parse().unwrap());
    tokio_tungstenite::connect_async(req).await.unwrap().0
}

impl Socket {
    pub(crate) async fn wake(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(10), self.wakes.recv()).await.expect("a wake within 10 s").unwrap()
    }
    pub(crate) fn heartbeat(&self, request_id: &str) {
        let f = json!({"type": "heartbeat", "request_id": request_id}).to_string();
        self.send.send(Message::Text(f.into())).unwrap();
    }
    async fn close_code(&mut self) -> u16 {
        let c = tokio::time::timeout(Duration::from_secs(10), self.closed.wait_for(Option::is_some))
            .await
            .expect("closed within 10 s")
            .unwrap();
        c.unwrap()
    }
}

/// Whether `name` is online in a `list_agents` answer (`None`: not listed).
pub(crate) fn online(list: &Value, name: &str) -> Option<bool> {
    list.as_array()?.iter().find(|a| a["name"] == name)?["online"].as_bool()
}

/// Call a relay tool: (is_error, the JSON of its one text block).
pub(crate) async fn call(c: &Client, tool: &str, args: Value) -> (bool, Value) {
    let p = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone());
    let r = c.call_tool(p).await.expect("transport");
    let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    assert!(text.contains("\n  "), "indented like the hermes-bridge relay: {text}");
    (r.is_error == Some(true), serde_json::from_str(&text).unwrap())
}

pub(crate) async fn relay(server: &Server, key: &str) -> Client {
    connect_with(server, "relay", key, false).await
}

fn exchanges(env: &Env) -> Vec<Value> {
    env.json(&["relay", "exchanges", "--json", "--limit", "1000"]).as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_wakes_the_bot_and_returns_its_reply_in_a_conversation_of_the_pair() {
    let env = Env::new();
    let (ka, kb, kc) =
        (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]), env.bridge_key("bot-c", &["relay"]));
    env.bridge_key("laptop", &["memory"]); // not a bot
    let server = env.serve();
    let (a, b, c) = (relay(&server, &ka).await, relay(&server, &kb).await, relay(&server, &kc).await);
    let mut sb = open_socket(&server, &kb).await.unwrap();

    let (e, v) = call(&a, "list_agents", json!({})).await;
    assert!(!e);
    assert_eq!(
        v,
        json!([
            // The local Hermes profile (its gateway is not running here), then the bots.
            {"name": "hermes", "online": false},
            {"name": "bot-a", "online": false},
            {"name": "bot-b", "online": true},
            {"name": "bot-c", "online": false}
        ])
    );

    let ask = tokio::spawn(async move {
        let r = call(&a, "ask_agent", json!({"to": "bot-b", "message": "Quelle heure est-il ? \"vite\""})).await;
        (a, r)
    });
    let w = sb.wake().await;
    assert_eq!(w["from"], "bot-a");
    assert_eq!(w["message"], "Quelle heure est-il ? \"vite\"");
    let (e, v) = call(&b, "reply", json!({"request_id": w["request_id"], "answer": "midi"})).await;
    assert!(!e && v == json!({"ok": true}), "{v}");
    let (a, (e, v)) = ask.await.unwrap();
    assert!(!e, "{v}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["answer"], "midi");
    assert_eq!(v["conversation_id"], w["conversation_id"]);
    let conv = v["conversation_id"].as_str().unwrap().to_string();

    // The same pair continues the conversation; a second reply to it is unknown.
    let ask = tokio::spawn({
        let conv = conv.clone();
        async move { call(&a, "ask_agent", json!({"to": "bot-b", "message": "et demain ?", "conversation_id": conv})).await }
    });
    let w2 = sb.wake().await;
    assert_eq!(w2["conversation_id"], conv.as_str());
    call(&b, "reply", json!({"request_id": w2["request_id"], "answer": "aussi midi"})).await;
    let (e, v) = ask.await.unwrap();
    assert!(!e && v["answer"] == "aussi midi", "{v}");
    let (e, v) = call(&b, "reply", json!({"request_id": w2["request_id"], "answer": "encore"})).await;
    assert!(e && v["error"] == "unknown_request", "{v}");

    // §11.4: a conversation belongs to its pair; another bot cannot use it.
    let (e, v) = call(&c, "ask_agent", json!({"to": "bot-b", "message": "hi", "conversation_id": conv})).await;
    assert!(e && v["error"] == "unknown_conversation", "{v}");
    assert!(v["detail"].as_str().unwrap().contains("between bot-c and bot-b"), "{v}");

    // History: every exchange ended, refusals included (§11.7), nothing left pending. The
    // daemon stores history in group commits an ask never waits for, and the CLI reads from
    // another process: the refusal's row may land a few milliseconds after its answer.
    let stored = eventually(std::time::Duration::from_secs(10), async || exchanges(&env).len() >= 3).await;
    assert!(stored, "{:?}", exchanges(&env));
    let rows = exchanges(&env);
    let statuses: Vec<&str> = rows.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["unknown_conversation", "ok", "ok"], "{rows:?}");
    assert!(rows.iter().all(|r| r["ended_at"].is_string()), "{rows:?}");
    assert_eq!(rows[2]["answer"], "midi");
    assert_eq!(rows[2]["from"], "bot-a");
    assert_eq!(rows[2]["to"], "bot-b");
    let bots = env.json(&["relay", "agents", "--json"]);
    let presence: Vec<(&str, bool)> =
        bots.as_array().unwrap().iter().map(|b| (b["name"].as_str().unwrap(), b["online"] == true)).collect();
    assert_eq!(presence, [("bot-a", false), ("bot-b", true), ("bot-c", false)]);
    let text = env.ok(&["relay", "exchanges", "--agent", "bot-c"]);
    assert!(text.contains("bot-c → bot-b") && text.contains("unknown_conversation"), "{text}");

    // The conversation survives a restart of hal0 (§11.4).
    drop(sb);
    drop(server);
    let server = env.serve();
    let (a, b) = (relay(&server, &ka).await, relay(&server, &kb).await);
    let mut sb = open_socket(&server, &kb).await.unwrap();
    // The socket is registered once its upgrade ran, a moment after the handshake answered.
    let online_again = eventually(std::time::Duration::from_secs(10), async || {
        let (_, v) = call(&a, "list_agents", json!({})).await;
        online(&v, "bot-b") == Some(true)
    })
    .await;
    assert!(online_again, "bot-b's new socket was registered");
    let ask = tokio::spawn({
        let conv = conv.clone();
        async move {
            call(&a, "ask_agent", json!({"to": "bot-b", "message": "toujours là ?", "conversation_id": conv})).await
        }
    });
    let w3 = sb.wake().await;
    call(&b, "reply", json!({"request_id": w3["request_id"], "answer": "oui"})).await;
    let (e, v) = ask.await.unwrap();
    assert!(!e && v["conversation_id"] == conv.as_str(), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_say_what_is_wrong_and_only_the_asked_bot_may_answer() {
    let env = Env::new();
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    let laptop = env.bridge_key("laptop", &["memory"]);
    let server = env.serve();
    let (a, b) = (relay(&server, &ka).await, relay(&server, &kb).await);

    let cases = [
        (json!({"to": "nobody", "message": "x"}), "unknown_agent"),
        (json!({"to": "laptop", "message": "x"}), "unknown_agent"),
        (json!({"to": "Not A Name!", "message": "x"}), "unknown_agent"),
        (json!({"to": "bot-b", "message": "x"}), "agent_offline"),
        // §11.5: empty message or conversation id are refused, not dropped by the bot.
        (json!({"to": "bot-b", "message": ""}), "invalid_argument"),
        (json!({"to": "bot-b", "message": "x", "conversation_id": ""}), "invalid_argument"),
        (json!({"to": "", "message": "x"}), "invalid_argument"),
    ];
    for (args, want) in &cases {
        let (e, v) = call(&a, "ask_agent", args.clone()).await;
        assert!(e && v["ok"] == false && v["error"] == *want, "{args}: {v}");
        assert!(!v["detail"].as_str().unwrap().is_empty(), "{v}");
    }

    // §11.3: a bot may answer and heartbeat only the asks addressed to it.
    let mut sb = open_socket(&server, &kb).await.unwrap();
    let a2 = relay(&server, &ka).await;
    let ask = tokio::spawn(async move { call(&a2, "ask_agent", json!({"to": "bot-b", "message": "q"})).await });
    let w = sb.wake().await;
    let (e, v) = call(&a, "reply", json!({"request_id": w["request_id"], "answer": "forged"})).await;
    assert!(e && v["error"] == "unknown_request", "{v}");
    call(&b, "reply", json!({"request_id": w["request_id"], "answer": "real"})).await;
    let (e, v) = ask.await.unwrap();
    assert!(!e && v["answer"] == "real", "{v}");

    // Who may come in: no key 401, a key without the relay scope 403, on both surfaces.
    let http = reqwest::Client::new();
    let r = mcp_post(&http, &server.url("/mcp/relay/mcp"), None, &initialize_body()).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = mcp_post(&http, &server.url("/mcp/relay/mcp"), Some(&laptop), &initialize_body()).send().await.unwrap();
    assert_eq!(r.status(), 403);
    let err = open_socket(&server, &laptop).await.err().expect("refused");
    assert!(err.contains("403"), "{err}");
    let err = open_socket(&server, "hal0bk_notakey").await.err().expect("refused");
    assert!(err.contains("401"), "{err}");

    // The wake the bot would refuse (over 1 MiB, §11.10) is refused before it is sent.
    let big = "x".repeat(1 << 20);
    let (e, v) = call(&a, "ask_agent", json!({"to": "bot-b", "message": big})).await;
    assert!(e && v["error"] == "message_too_large", "{}", v["error"]);
    assert!(tokio::time::timeout(Duration::from_millis(300), sb.wakes.recv()).await.is_err(), "nothing was sent");

    let rows = exchanges(&env);
    assert!(rows.iter().all(|r| r["status"] != "pending" && r["ended_at"].is_string()), "{rows:?}");
    let count = |s: &str| rows.iter().filter(|r| r["status"] == s).count();
    assert_eq!((count("unknown_agent"), count("agent_offline"), count("message_too_large"), count("ok")), (3, 1, 1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_of_the_asked_bot_keep_an_ask_open_and_silence_times_it_out() {
    let env = Env::new();
    env.ok(&["config", "set", "relay.ask_timeout_secs", "1"]);
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    let server = env.serve();
    let (a, b) = (relay(&server, &ka).await, relay(&server, &kb).await);
    let mut sb = open_socket(&server, &kb).await.unwrap();
    let sa = open_socket(&server, &ka).await.unwrap();

    // The asked bot's heartbeats carry the ask past three windows.
    let a2 = relay(&server, &ka).await;
    let ask = tokio::spawn(async move { call(&a2, "ask_agent", json!({"to": "bot-b", "message": "slow job"})).await });
    let w = sb.wake().await;
    let id = w["request_id"].as_str().unwrap().to_string();
    for _ in 0..8 {
        tokio::time::sleep(Duration::from_millis(400)).await;
        sb.heartbeat(&id);
    }
    call(&b, "reply", json!({"request_id": id, "answer": "done"})).await;
    let (e, v) = ask.await.unwrap();
    assert!(!e && v["answer"] == "done", "{v}");

    // §11.3: another bot's heartbeats do not: the ask times out after one window.
    let ask = tokio::spawn(async move { call(&a, "ask_agent", json!({"to": "bot-b", "message": "ignored"})).await });
    let w = sb.wake().await;
    let id = w["request_id"].as_str().unwrap().to_string();
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(400)).await;
        sa.heartbeat(&id);
    }
    let (e, v) = tokio::time::timeout(Duration::from_secs(10), ask).await.unwrap().unwrap();
    assert!(e && v["error"] == "timeout", "{v}");
    let (e, v) = call(&b, "reply", json!({"request_id": id, "answer": "too late"})).await;
    assert!(e && v["error"] == "unknown_request", "{v}");
    let rows = exchanges(&env);
    assert_eq!(rows[0]["status"], "timeout");
    assert!(rows[0]["ended_at"].is_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_newest_connection_gets_the_wakes_and_an_older_one_closing_changes_nothing() {
    let env = Env::new();
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    let server = env.serve();
    let (a, b) = (relay(&server, &ka).await, relay(&server, &kb).await);
    let old = open_socket(&server, &kb).await.unwrap();
    let mut new = open_socket(&server, &kb).await.unwrap();
    // §11.2: the older socket closes; the bot stays online and its new socket gets wakes.
    drop(old.send);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, v) = call(&a, "list_agents", json!({})).await;
    assert_eq!(online(&v, "bot-b"), Some(true), "{v}");
    let a2 = relay(&server, &ka).await;
    let ask =
        tokio::spawn(async move { call(&a2, "ask_agent", json!({"to": "bot-b", "message": "still there?"})).await });
    let w = new.wake().await;
    call(&b, "reply", json!({"request_id": w["request_id"], "answer": "yes"})).await;
    let (e, v) = ask.await.unwrap();
    assert!(!e && v["answer"] == "yes", "{v}");

    // The connection holding an ask closes: the ask fails at once, agent_disconnected.
    let ask = tokio::spawn(async move { call(&a, "ask_agent", json!({"to": "bot-b", "message": "bye?"})).await });
    new.wake().await;
    drop(new.send);
    let (e, v) = tokio::time::timeout(Duration::from_secs(10), ask).await.unwrap().unwrap();
    assert!(e && v["error"] == "agent_disconnected", "{v}");
    let bots = env.json(&["relay", "agents", "--json"]);
    assert_eq!(bots[1]["online"], false, "{bots}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_bot_closes_its_socket_and_stopping_hal0_ends_waiting_asks() {
    let env = Env::new();
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    let server = env.serve();
    let mut sb = open_socket(&server, &kb).await.unwrap();
    env.ok(&["bridge", "revoke", "bot-b", "--yes"]);
    assert_eq!(sb.close_code().await, 4401);

    // §11.8: SIGTERM with a bot connected and an ask waiting: hal0 exits promptly and the
    // ask ends relay_stopping, recorded.
    let kb = env.bridge_key("bot-c", &["relay"]);
    let mut sc = open_socket(&server, &kb).await.unwrap();
    let a = relay(&server, &ka).await;
    let ask = tokio::spawn(async move {
        let p = CallToolRequestParams::new("ask_agent")
            .with_arguments(json!({"to": "bot-c", "message": "wait"}).as_object().unwrap().clone());
        a.call_tool(p).await.ok()
    });
    sc.wake().await;
    let mut server = server;
    let pid = server.child.id().to_string();
    let t0 = std::time::Instant::now();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = tokio::task::spawn_blocking(move || {
        let s = server.child.wait().unwrap();
        (s, server)
    });
    let (status, _server) = tokio::time::timeout(Duration::from_secs(10), status).await.expect("exits").unwrap();
    assert!(status.success(), "{status:?}");
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    // The asker hears why: its answer goes out before the sessions close.
    let r = tokio::time::timeout(Duration::from_secs(5), ask).await.unwrap().unwrap().expect("an answer");
    let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    assert!(r.is_error == Some(true) && text.contains("relay_stopping"), "{text}");
    assert!(t0.elapsed() < Duration::from_secs(3), "exited {:?} after SIGTERM", t0.elapsed());
    assert_eq!(sc.close_code().await, 1001);
    let rows = exchanges(&env);
    assert_eq!(rows[0]["status"], "relay_stopping", "{rows:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_that_stops_answering_pings_is_dropped() {
    let env = Env::new();
    env.ok(&["config", "set", "relay.ping_secs", "1"]);
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    let server = env.serve();
    let a = relay(&server, &ka).await;
    // A half-open socket: the handshake succeeded, then nothing is read (no pong ever).
    let silent = silent_socket(&server, &kb).await;
    let (_, v) = call(&a, "list_agents", json!({})).await;
    assert_eq!(online(&v, "bot-b"), Some(true), "{v}");
    let gone = eventually(Duration::from_secs(15), async || {
        let (_, v) = call(&a, "list_agents", json!({})).await;
        online(&v, "bot-b") == Some(false)
    })
    .await;
    assert!(gone, "the relay dropped the silent socket");
    drop(silent);
}

/// The hermes-bridge plugin's own wake parsing, socket settings (1 MiB frames) and the
/// Python MCP SDK, as a bot of hal0's relay (`tests/external/relay_bot.py`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_built_from_the_hermes_bridge_plugin_code_answers_through_hal0() {
    use crate::support::real_hermes::{available, hermes_venv};
    use std::io::BufRead;
    if !available() {
        missing_external(format!("the real Hermes at {}", hermes_venv().display()), "run tests/external/setup.sh");
        return;
    }
    let env = Env::new();
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    let server = env.serve();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/external/relay_bot.py");
    let mut bot = std::process::Command::new(hermes_venv().join("bin/python"))
        .arg(script)
        .args([&server.base, &kb, "2"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, mut lines) = mpsc::unbounded_channel::<String>();
    let out = bot.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let mut next = async || tokio::time::timeout(Duration::from_secs(30), lines.recv()).await.unwrap().unwrap();
    assert_eq!(next().await, "READY");
    let a = relay(&server, &ka).await;
    let (e, v) = call(&a, "ask_agent", json!({"to": "bot-b", "message": "ping from bot-a"})).await;
    assert!(!e && v["answer"] == "echo: ping from bot-a", "{v}");
    assert!(next().await.starts_with("WAKE "));
    // A wake of exactly 1 MiB is the largest the plugin's socket takes: it arrives whole.
    let frame_without_message = format!(
        "{{\"request_id\":\"{}\",\"conversation_id\":\"{}\",\"from\":\"bot-a\",\"message\":\"\"}}",
        "x".repeat(36),
        "x".repeat(36)
    )
    .len();
    let big = "m".repeat((1 << 20) - frame_without_message);
    let (e, v) = call(&a, "ask_agent", json!({"to": "bot-b", "message": big})).await;
    assert!(!e && v["answer"] == "echo: mmmmmmmmmmmmmmmmmmmm", "{}", v["error"]);
    assert_eq!(next().await.rsplit(' ').next().unwrap(), (1 << 20).to_string());
    assert_eq!(next().await, "DONE");
    assert!(bot.wait().unwrap().success());
}

/// Local Hermes profiles are agents: an ask to `hermes` runs the profile through the
/// bridge (a fake Hermes here) and the run's output is the answer; the conversation is the
/// run's Hermes session; a run that keeps producing events outlives the window, a silent
/// one is stopped when it ends; a profile's own client asks under the profile's name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_profiles_answer_through_runs_and_ask_as_themselves() {
    use crate::support::fake_hermes::{FakeHermes, FakeHermesOptions};
    let opts = FakeHermesOptions { approval_timeout: None, ..Default::default() };
    let hermes = FakeHermes::start(opts).await;
    let home = tempfile::tempdir().unwrap();
    hermes.write_profile(home.path());
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    let toml = format!("[relay]\nask_timeout_secs = 2\n\n[hermes]\nhome = \"{}\"\n", home.path().display());
    std::fs::write(env.config_dir().join("hal0.toml"), toml).unwrap();
    // Asking a local profile starts runs: bot-a's key holds agents as well as relay.
    let (ka, kb) = (env.bridge_key("bot-a", &["relay", "agents"]), env.bridge_key("bot-b", &["relay"]));
    let kh = env.bridge_key("hermes", &["relay"]); // the default profile's own client
    let server = env.serve();
    let a = relay(&server, &ka).await;

    let (_, v) = call(&a, "list_agents", json!({})).await;
    assert_eq!(online(&v, "hermes"), Some(true), "{v}");
    assert_eq!(v.as_array().unwrap().iter().filter(|x| x["name"] == "hermes").count(), 1, "{v}");

    let (e, v) = call(&a, "ask_agent", json!({"to": "hermes", "message": "bonjour"})).await;
    assert!(!e && v["answer"] == "FAKE ANSWER: bonjour", "{v}");
    let conv = v["conversation_id"].as_str().unwrap().to_string();
    let (e, v) = call(&a, "ask_agent", json!({"to": "hermes", "message": "encore", "conversation_id": conv})).await;
    assert!(!e && v["answer"] == "FAKE ANSWER: encore" && v["conversation_id"] == conv.as_str(), "{v}");
    // Both runs went to Hermes in the conversation's session.
    let keys: Vec<Option<String>> = hermes
        .requests_to("POST", "/v1/runs")
        .iter()
        .map(|r| r.header("x-hermes-session-key").map(str::to_string))
        .collect();
    assert_eq!(keys, vec![Some(format!("bot-a:{conv}")); 2]);

    // 60 deltas 100 ms apart: 6 s of a run that keeps going, past the 2 s window.
    let (e, v) = call(&a, "ask_agent", json!({"to": "hermes", "message": "SLOW"})).await;
    assert!(!e && v["answer"].as_str().unwrap().len() > 60, "{v}");
    // A run waiting on an approval nobody gives is silent: the window ends it.
    let (e, v) = call(&a, "ask_agent", json!({"to": "hermes", "message": "APPROVE"})).await;
    assert!(e && v["error"] == "timeout", "{v}");
    assert!(v["detail"].as_str().unwrap().contains("hal0 stopped it"), "{v}");
    let (e, v) = call(&a, "ask_agent", json!({"to": "hermes", "message": "FAIL"})).await;
    assert!(e && v["error"] == "agent_failed" && v["detail"].as_str().unwrap().contains("failed"), "{v}");
    let (e, v) = call(&a, "ask_agent", json!({"to": "hermes/nope", "message": "hi"})).await;
    assert!(e && v["error"] == "unknown_agent", "{v}");

    // The profile's own client asks a bot as `hermes`; the bot's wake says so.
    let mut sb = open_socket(&server, &kb).await.unwrap();
    let h = relay(&server, &kh).await;
    let ask =
        tokio::spawn(async move { call(&h, "ask_agent", json!({"to": "bot-b", "message": "from the box"})).await });
    let wake = sb.wake().await;
    assert_eq!(wake["from"], "hermes");
    let b = relay(&server, &kb).await;
    let (e, _) = call(&b, "reply", json!({"request_id": wake["request_id"], "answer": "got it"})).await;
    assert!(!e);
    let (e, v) = ask.await.unwrap();
    assert!(!e && v["answer"] == "got it", "{v}");

    let rows = exchanges(&env);
    let statuses: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r["from"].as_str().unwrap(), r["to"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("hermes", "bot-b", "ok"),
            ("bot-a", "hermes/nope", "unknown_agent"),
            ("bot-a", "hermes", "agent_failed"),
            ("bot-a", "hermes", "timeout"),
            ("bot-a", "hermes", "ok"),
            ("bot-a", "hermes", "ok"),
            ("bot-a", "hermes", "ok"),
        ]
    );
}

/// The TypeScript SDK as an asker (`tests/external/relay_progress_client.mjs`): with a 2 s
/// request timeout reset on progress, an ask answered after 5 s completes (hal0 reports
/// progress every `[mcp].progress_secs` while it waits); without the reset it ends at 2 s,
/// as every ask to the old relay did past the SDK's timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_keeps_a_slow_ask_open_on_progress() {
    use std::io::BufRead;
    let sdk =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/node/node_modules/@modelcontextprotocol/sdk");
    if !sdk.exists() {
        missing_external(format!("the TypeScript SDK at {}", sdk.display()), "run tests/external/setup.sh");
        return;
    }
    let env = Env::new();
    env.ok(&["config", "set", "mcp.progress_secs", "1"]);
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    let server = env.serve();
    let mut sb = open_socket(&server, &kb).await.unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/external/relay_progress_client.mjs");
    let mut node = std::process::Command::new("node")
        .arg(script)
        .args([&server.url("/mcp/relay/mcp"), &ka, "bot-b"])
        .env("HAL0_TS_SDK", &sdk)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = node.stdout.take().unwrap();
    let (tx, mut lines) = mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let mut next = async || tokio::time::timeout(Duration::from_secs(60), lines.recv()).await.unwrap().unwrap();
    assert_eq!(next().await, "READY");
    let (w1, w2) = (sb.wake().await, sb.wake().await);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let b = relay(&server, &kb).await;
    for w in [&w1, &w2] {
        let message = w["message"].as_str().unwrap();
        let answer = format!("late answer to {message}");
        let (e, r) = call(&b, "reply", json!({"request_id": w["request_id"], "answer": answer})).await;
        // The asker that gave up is gone: its ask ended, a late reply has nobody to reach.
        let expected_failure = message == "cut one";
        assert_eq!(e, expected_failure, "{message}: {r}");
    }
    let v: Value = serde_json::from_str(&next().await).unwrap();
    assert!(node.wait().unwrap().success());
    let long = &v["reset_on_progress"];
    assert_eq!(long["error"], Value::Null, "{v}");
    assert_eq!(long["result"]["answer"], "late answer to long one", "{v}");
    assert!(long["progress"].as_array().unwrap().len() >= 3, "{v}");
    assert!(long["elapsed_ms"].as_u64().unwrap() >= 5_000, "{v}");
    let cut = &v["no_reset"];
    assert_eq!(cut["error_code"], -32001, "{v}");
    let mut statuses: Vec<String> = exchanges(&env).iter().map(|r| r["status"].as_str().unwrap().to_string()).collect();
    statuses.sort();
    assert_eq!(statuses, ["asker_gone", "ok"], "no exchange is left pending");
}
