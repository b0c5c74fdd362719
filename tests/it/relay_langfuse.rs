//! The Langfuse export of relay exchanges over real transports: `hal0 serve` with
//! `[relay.langfuse]` pointed at a local HTTP sink standing in for Langfuse's ingestion API,
//! keys in api.env, bots on real WebSockets and askers through the rmcp client. What the sink
//! receives is checked field by field (Basic auth, `trace-create` / `span-create`, input,
//! output, times); a failing, hanging or absent Langfuse never holds an ask; nothing is sent
//! when the export is off; missing keys and a malformed base_url say what is wrong.

use crate::support::logged::Logged;
use crate::support::mcp::{Client, connect_with};
use crate::support::*;
use futures::{SinkExt, StreamExt};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const PUBLIC: &str = "pk-lf-0123-test";
const SECRET: &str = "sk-lf-9876-very-secret";

/// How the sink answers.
#[derive(Clone, Copy, PartialEq)]
enum Answer {
    /// 207 with no per-event error (what Langfuse answers when all went in).
    Accepted,
    /// 207 with one per-event error.
    OneRefused,
    /// 500.
    Broken,
    /// Never answers.
    Hangs,
}

/// One request the sink received: its Authorization and Content-Type headers and body.
#[derive(Clone, Debug)]
struct Received {
    auth: Option<String>,
    content_type: Option<String>,
    path: String,
    body: Value,
}

/// A stand-in for Langfuse on 127.0.0.1.
struct Sink {
    url: String,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Sink {
    async fn start(answer: Answer) -> Sink {
        let got: Arc<Mutex<Vec<Received>>> = Arc::default();
        let store = got.clone();
        let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
            let store = store.clone();
            async move {
                let (auth, content_type, path) = {
                    let header = |n: &str| req.headers().get(n).and_then(|v| v.to_str().ok()).map(str::to_string);
                    (header("authorization"), header("content-type"), req.uri().path().to_string())
                };
                let bytes = axum::body::to_bytes(req.into_body(), usize::MAX).await.unwrap();
                let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                let first = body["batch"][0]["id"].clone();
                store.lock().unwrap().push(Received { auth, content_type, path, body });
                let (status, body) = match answer {
                    Answer::Accepted => (207, json!({"successes": [], "errors": []})),
                    Answer::OneRefused => (
                        207,
                        json!({"successes": [], "errors": [{"id": first, "status": 400, "message": "bad event"}]}),
                    ),
                    Answer::Broken => (500, json!({"message": "internal error"})),
                    Answer::Hangs => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        (500, json!({}))
                    }
                };
                (axum::http::StatusCode::from_u16(status).unwrap(), axum::Json(body))
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Sink { url, got }
    }

    fn requests(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// Every event received so far, in order.
    fn events(&self) -> Vec<Value> {
        self.requests().iter().flat_map(|r| r.body["batch"].as_array().cloned().unwrap_or_default()).collect()
    }

    /// Wait until `n` events arrived (a liveness bound).
    async fn wait_for(&self, n: usize) -> Vec<Value> {
        let ok = eventually(Duration::from_secs(20), async || self.events().len() >= n).await;
        assert!(ok, "the sink got {} event(s), want {n}: {:#?}", self.events().len(), self.events());
        self.events()
    }
}

/// A port nothing listens on.
fn closed_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", l.local_addr().unwrap())
}

/// Write hal0.toml: `[relay]` with a 1 s window, then `langfuse` (a whole section or "").
fn write_config(env: &Env, langfuse: &str) {
    std::fs::create_dir_all(env.config_dir()).unwrap();
    std::fs::write(env.config_dir().join("hal0.toml"), format!("[relay]\nask_timeout_secs = 1\n\n{langfuse}")).unwrap();
}

fn section(base_url: &str, flush_ms: u64) -> String {
    format!("[relay.langfuse]\nenabled = true\nbase_url = \"{base_url}\"\nflush_ms = {flush_ms}\n")
}

/// Add `lines` to api.env (mode 0600), keeping what is there.
fn add_api_env(env: &Env, lines: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(env.config_dir()).unwrap();
    let p = env.config_dir().join("api.env");
    let mut text = std::fs::read_to_string(&p).unwrap_or_default();
    text.push_str(lines);
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
}

fn keys_line() -> String {
    format!("LANGFUSE_PUBLIC_KEY={PUBLIC}\nLANGFUSE_SECRET_KEY={SECRET}\n")
}

/// A bot's WebSocket: its wakes arrive on the channel; the socket closes when dropped.
struct Bot {
    wakes: mpsc::UnboundedReceiver<Value>,
    _close: tokio::sync::oneshot::Sender<()>,
}

impl Bot {
    async fn connect(server: &Server, key: &str) -> Bot {
        let mut req = format!("ws://127.0.0.1:{}/bridge/connect", server.port).into_client_request().unwrap();
        req.headers_mut().insert("authorization", format!("Bearer {key}").parse().unwrap());
        let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        let (mut sink, mut stream) = ws.split();
        let (tx, wakes) = mpsc::unbounded_channel();
        let (close, mut closed) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut closed => { let _ = sink.close().await; break }
                    f = stream.next() => match f {
                        Some(Ok(Message::Text(t))) => { let _ = tx.send(serde_json::from_str::<Value>(&t).unwrap()); }
                        Some(Ok(_)) => {}
                        _ => break,
                    },
                }
            }
        });
        Bot { wakes, _close: close }
    }

    async fn wake(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(10), self.wakes.recv()).await.expect("a wake within 10 s").unwrap()
    }
}

/// Call a relay tool: (is_error, its JSON).
async fn call(c: &Client, tool: &str, args: Value) -> (bool, Value) {
    let p = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone());
    let r = c.call_tool(p).await.expect("transport");
    let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    (r.is_error == Some(true), serde_json::from_str(&text).unwrap())
}

/// Bot a asks bot b `message`; b answers `answer`. Returns (request_id, conversation_id).
async fn answered_ask(a: &Client, b: &Client, sb: &mut Bot, message: &str, answer: &str) -> (String, String) {
    let ask = call(a, "ask_agent", json!({"to": "bot-b", "message": message}));
    tokio::pin!(ask);
    let w = tokio::select! {
        w = sb.wake() => w,
        (_, v) = &mut ask => panic!("the ask ended before bot-b was woken: {v}"),
    };
    let (e, v) = call(b, "reply", json!({"request_id": w["request_id"], "answer": answer})).await;
    assert!(!e, "{v}");
    let (e, v) = ask.await;
    assert!(!e && v["answer"] == answer, "{v}");
    (w["request_id"].as_str().unwrap().to_string(), w["conversation_id"].as_str().unwrap().to_string())
}

fn exchanges(env: &Env) -> Vec<Value> {
    env.json(&["relay", "exchanges", "--json", "--limit", "100"]).as_array().unwrap().clone()
}

fn row<'a>(rows: &'a [Value], request_id: &str) -> &'a Value {
    rows.iter().find(|r| r["request_id"] == request_id).unwrap_or_else(|| panic!("{request_id} in {rows:?}"))
}

/// The one event of `kind` whose body id is `id`.
fn event<'a>(events: &'a [Value], kind: &str, id: &str) -> &'a Value {
    let found: Vec<&Value> = events.iter().filter(|e| e["type"] == kind && e["body"]["id"] == id).collect();
    assert!(!found.is_empty(), "no {kind} {id} in {events:#?}");
    found[0]
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            out.push(if i <= c.len() { A[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

/// The span of an ended exchange: exactly these fields, its times the history's.
fn assert_span(span: &Value, ex: &Value, trace_id: &str, output: Value) {
    let body = &span["body"];
    let mut keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["endTime", "id", "input", "name", "output", "startTime", "traceId"], "{span}");
    assert_eq!(body["traceId"], trace_id);
    assert_eq!(body["name"], "ask_agent");
    assert_eq!(body["input"], json!({"from": ex["from"], "to": ex["to"], "message": ex["message"]}));
    assert_eq!(body["output"], output);
    assert_eq!(body["startTime"], ex["started_at"]);
    assert_eq!(body["endTime"], ex["ended_at"]);
    assert!(body["endTime"].is_string(), "{span}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ended_asks_reach_langfuse_as_a_trace_and_a_span_each() {
    let sink = Sink::start(Answer::OneRefused).await;
    let env = Env::new();
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    write_config(&env, &section(&format!("{}/", sink.url), 100));
    add_api_env(&env, &keys_line());
    let hal0 = Logged::start(&env);
    let (a, b) =
        (connect_with(&hal0.server, "relay", &ka, false).await, connect_with(&hal0.server, "relay", &kb, false).await);
    let mut sb = Bot::connect(&hal0.server, &kb).await;

    // Answered, then a timeout in the same conversation, then a refusal (no conversation).
    let (ok_id, conv) = answered_ask(&a, &b, &mut sb, "Quelle heure est-il ? \"vite\" ✓", "midi").await;
    let (e, v) = call(&a, "ask_agent", json!({"to": "bot-b", "message": "et demain ?", "conversation_id": conv})).await;
    assert!(e && v["error"] == "timeout", "{v}");
    let timeout_id = sb.wake().await["request_id"].as_str().unwrap().to_string();
    let (e, v) = call(&a, "ask_agent", json!({"to": "nobody", "message": "hello?"})).await;
    assert!(e && v["error"] == "unknown_agent", "{v}");

    // An asker that cancels its call mid-wait: the ask ends asker_gone.
    let p = CallToolRequestParams::new("ask_agent")
        .with_arguments(json!({"to": "bot-b", "message": "attends"}).as_object().unwrap().clone());
    let req = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(p));
    let waiting =
        a.peer().send_cancellable_request(req, rmcp::service::PeerRequestOptions::no_options()).await.unwrap();
    let gone_id = sb.wake().await["request_id"].as_str().unwrap().to_string();
    waiting.cancel(None).await.unwrap();

    let events = sink.wait_for(8).await;
    let rows = exchanges(&env);
    let refused_id = rows.iter().find(|r| r["status"] == "unknown_agent").unwrap()["request_id"].as_str().unwrap();

    // Transport: the ingestion path, JSON, Basic auth with the keys of api.env.
    let want_auth = format!("Basic {}", base64(format!("{PUBLIC}:{SECRET}").as_bytes()));
    for r in sink.requests() {
        assert_eq!(r.path, "/api/public/ingestion");
        assert_eq!(r.auth.as_deref(), Some(want_auth.as_str()));
        assert!(r.content_type.as_deref().is_some_and(|c| c.starts_with("application/json")), "{r:?}");
        assert_eq!(r.body.as_object().unwrap().keys().collect::<Vec<_>>(), ["batch"]);
    }
    assert_eq!(events.len(), 8, "two events per exchange, nothing for pending ones: {events:#?}");
    // Envelopes: a fresh id each, a timestamp, the type.
    let mut ids: Vec<&str> = events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 8, "{events:#?}");
    for e in &events {
        let mut keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["body", "id", "timestamp", "type"], "{e}");
        assert!(e["timestamp"].as_str().unwrap().starts_with("20"), "{e}");
    }

    // The conversation's trace (sent once per exchange, as the hermes-bridge relay does).
    let traces: Vec<&Value> = events.iter().filter(|e| e["type"] == "trace-create").collect();
    assert_eq!(traces.len(), 4);
    assert_eq!(event(&events, "trace-create", &conv)["body"], json!({"id": conv, "name": "hermes-conversation"}));
    assert_span(event(&events, "span-create", &ok_id), row(&rows, &ok_id), &conv, json!({"answer": "midi"}));
    assert_eq!(event(&events, "span-create", &ok_id)["body"]["input"]["message"], "Quelle heure est-il ? \"vite\" ✓");
    assert_span(
        event(&events, "span-create", &timeout_id),
        row(&rows, &timeout_id),
        &conv,
        json!({"error": "timeout"}),
    );
    let gone_conv = row(&rows, &gone_id)["conversation_id"].as_str().unwrap().to_string();
    assert_span(
        event(&events, "span-create", &gone_id),
        row(&rows, &gone_id),
        &gone_conv,
        json!({"error": "asker_gone"}),
    );
    // A refused ask had no conversation: it is its own trace.
    assert_eq!(
        event(&events, "trace-create", refused_id)["body"],
        json!({"id": refused_id, "name": "hermes-conversation"})
    );
    assert_span(
        event(&events, "span-create", refused_id),
        row(&rows, refused_id),
        refused_id,
        json!({"error": "unknown_agent"}),
    );

    // A 207's per-event errors are warned, once a minute at most, and the secret never shows.
    let log = hal0.wait_log("refused 1 of").await;
    assert!(log.contains("bad event"), "{log}");
    assert_eq!(log.matches("refused 1 of").count(), 1, "throttled: {log}");
    let log = hal0.stop().await;
    assert!(!log.contains(SECRET), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_hanging_or_absent_langfuse_never_holds_an_ask() {
    let broken = Sink::start(Answer::Broken).await;
    let hanging = Sink::start(Answer::Hangs).await;
    for (url, says) in
        [(broken.url.clone(), "answered HTTP 500"), (hanging.url.clone(), ""), (closed_url(), "cannot reach Langfuse")]
    {
        let env = Env::new();
        let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
        write_config(&env, &section(&url, 50));
        add_api_env(&env, &keys_line());
        let hal0 = Logged::start(&env);
        let (a, b) = (
            connect_with(&hal0.server, "relay", &ka, false).await,
            connect_with(&hal0.server, "relay", &kb, false).await,
        );
        let mut sb = Bot::connect(&hal0.server, &kb).await;
        // Every answer arrives, while the export fails behind them.
        for i in 0..5 {
            answered_ask(&a, &b, &mut sb, &format!("question {i}"), &format!("answer {i}")).await;
        }
        let (e, v) = call(&a, "ask_agent", json!({"to": "nobody", "message": "x"})).await;
        assert!(e && v["error"] == "unknown_agent", "{v}");
        if !says.is_empty() {
            let log = hal0.wait_log(says).await;
            assert_eq!(log.matches(says).count(), 1, "warned once a minute at most: {log}");
        }
        // Stopping with a request still hanging ends within the flush bound.
        let log = hal0.stop().await;
        assert!(!log.contains(SECRET), "{log}");
    }
    assert!(!broken.requests().is_empty() && !hanging.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_is_queued_is_sent_when_hal0_stops() {
    let sink = Sink::start(Answer::Accepted).await;
    let env = Env::new();
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    // A batch would wait a minute: only the shutdown flush sends it.
    write_config(&env, &section(&sink.url, 60_000));
    add_api_env(&env, &keys_line());
    let hal0 = Logged::start(&env);
    let (a, b) =
        (connect_with(&hal0.server, "relay", &ka, false).await, connect_with(&hal0.server, "relay", &kb, false).await);
    let mut sb = Bot::connect(&hal0.server, &kb).await;
    let (id, conv) = answered_ask(&a, &b, &mut sb, "avant l'arrêt", "ok").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(sink.requests().is_empty(), "nothing before the minute or the stop");
    hal0.stop().await;
    let events = sink.events();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(event(&events, "trace-create", &conv)["body"]["name"], "hermes-conversation");
    assert_eq!(event(&events, "span-create", &id)["body"]["output"], json!({"answer": "ok"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_sent_when_the_export_is_off() {
    let sink = Sink::start(Answer::Accepted).await;
    let env = Env::new();
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    add_api_env(&env, &keys_line());
    // The section present but off, then absent.
    let off = format!("[relay.langfuse]\nenabled = false\nbase_url = \"{}\"\nflush_ms = 50\n", sink.url);
    for langfuse in [off.as_str(), ""] {
        write_config(&env, langfuse);
        let hal0 = Logged::start(&env);
        let (a, b) = (
            connect_with(&hal0.server, "relay", &ka, false).await,
            connect_with(&hal0.server, "relay", &kb, false).await,
        );
        let mut sb = Bot::connect(&hal0.server, &kb).await;
        answered_ask(&a, &b, &mut sb, "hors ligne ?", "non").await;
        let (e, _) = call(&a, "ask_agent", json!({"to": "nobody", "message": "x"})).await;
        assert!(e);
        let log = hal0.stop().await;
        assert!(!log.contains("Langfuse"), "{log}");
        assert!(sink.requests().is_empty(), "{:?}", sink.requests());
        assert_eq!(doctor_row(&env), ("ok".to_string(), "off".to_string()));
    }
}

/// `hal0 doctor --json`'s relay_langfuse row: (status, detail).
fn doctor_row(env: &Env) -> (String, String) {
    let o = Out(env
        .cmd(&["doctor", "--json"])
        .env_remove("HAL0_HERMES_HOME")
        .env("HOME", env.dir.path().join("home"))
        .output()
        .unwrap());
    let v: Value = serde_json::from_str(&o.stdout()).unwrap_or_else(|e| panic!("{e}: {}", o.stdout()));
    let r = v["rows"].as_array().unwrap().iter().find(|r| r["name"] == "relay_langfuse").expect("a relay_langfuse row");
    (r["status"].as_str().unwrap().to_string(), r["detail"].as_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enabled_without_keys_names_the_missing_key_and_asks_still_work() {
    let sink = Sink::start(Answer::Accepted).await;
    let env = Env::new();
    let (ka, kb) = (env.bridge_key("bot-a", &["relay"]), env.bridge_key("bot-b", &["relay"]));
    write_config(&env, &section(&sink.url, 50));
    add_api_env(&env, &format!("LANGFUSE_PUBLIC_KEY={PUBLIC}\n"));
    let (status, detail) = doctor_row(&env);
    assert_eq!(status, "warn", "{detail}");
    assert!(
        detail.contains("LANGFUSE_SECRET_KEY is not set") && detail.contains("relay.langfuse_keys_missing"),
        "{detail}"
    );

    let hal0 = Logged::start(&env);
    let log = hal0.wait_log("relay.langfuse_keys_missing").await;
    let line = log.lines().find(|l| l.contains("relay.langfuse_keys_missing")).unwrap();
    assert!(line.contains("ERROR") && line.contains("LANGFUSE_SECRET_KEY is not set in"), "{line}");
    assert!(line.contains("api.env") && line.contains("restart hal0 serve"), "{line}");
    let (a, b) =
        (connect_with(&hal0.server, "relay", &ka, false).await, connect_with(&hal0.server, "relay", &kb, false).await);
    let mut sb = Bot::connect(&hal0.server, &kb).await;
    answered_ask(&a, &b, &mut sb, "toujours là ?", "oui").await;
    hal0.stop().await;
    assert!(sink.requests().is_empty());

    // Both keys set: the doctor says where the exchanges go.
    add_api_env(&env, &format!("LANGFUSE_SECRET_KEY={SECRET}\n"));
    let (status, detail) = doctor_row(&env);
    assert_eq!(status, "ok", "{detail}");
    assert!(detail.contains(&sink.url) && !detail.contains(SECRET), "{detail}");
}

#[test]
fn a_malformed_base_url_is_refused_with_its_key() {
    let env = Env::new();
    let o = env.run(&["config", "set", "relay.langfuse.base_url", "langfuse.internal:3000"]);
    assert_eq!(o.code(), 2, "{}", o.stderr());
    assert!(
        o.stderr().contains("[config.invalid_value]") && o.stderr().contains("valid relay.langfuse.base_url"),
        "{}",
        o.stderr()
    );
    assert!(o.stderr().contains("is not an http:// or https:// URL"), "{}", o.stderr());
    let o = env.run(&["config", "set", "relay.langfuse.base_url", &format!("https://{PUBLIC}:{SECRET}@lf.example")]);
    assert_eq!(o.code(), 2, "{}", o.stderr());
    assert!(o.stderr().contains("the keys go in api.env") && !o.stderr().contains(SECRET), "{}", o.stderr());

    // Set through the CLI, the nested keys land in [relay.langfuse].
    env.ok(&["config", "set", "relay.langfuse.enabled", "true"]);
    env.ok(&["config", "set", "relay.langfuse.base_url", "https://lf.example"]);
    let cfg = env.json(&["config", "show", "--json"]);
    assert_eq!(cfg["relay"]["langfuse"], json!({"enabled": true, "base_url": "https://lf.example", "flush_ms": 1000}));

    // A file written by hand: hal0 serve refuses to start and says where.
    std::fs::write(env.config_dir().join("hal0.toml"), "[relay.langfuse]\nenabled = true\nbase_url = \"ftp://lf\"\n")
        .unwrap();
    let o = env.run(&["serve", "--bind", "127.0.0.1:0"]);
    assert_eq!(o.code(), 2, "{}", o.stderr());
    assert!(
        o.stderr().contains("line 3, key `relay.langfuse.base_url`") && o.stderr().contains("[config.invalid]"),
        "{}",
        o.stderr()
    );
    std::fs::write(env.config_dir().join("hal0.toml"), "[relay.langfuse]\nsecret_key = \"x\"\n").unwrap();
    let o = env.run(&["serve", "--bind", "127.0.0.1:0"]);
    assert_eq!(o.code(), 2, "{}", o.stderr());
    assert!(o.stderr().contains("secret_key") && o.stderr().contains("[config.invalid]"), "{}", o.stderr());
}
