//! The real Hermes as a bot of hal0's relay: the gateway of hermes-agent 0.19.0 (PyPI, in
//! `.hermes-venv`) with the hermes-bridge Hermes plugin, unchanged — `adapter/` is copied at
//! test time from `../shared/peers/hermes-bridge/` into the scratch HERMES_HOME's
//! `plugins/hermes-bridge/` by `tests/hermes/stack.py --bridge-plugin` — and configured from
//! what `hal0 bridge add NAME --scope relay --json` prints (`relay_bot`). The scripted fake
//! model (`tests/hermes/fake_llm.py`) answers the plugin's wake text by calling hal0-relay's
//! `reply` through Hermes's own MCP client, with the request_id it read in the wake. An rmcp
//! client asks. One gateway, started once, shows in order that:
//!
//! 1. an ask reaches the bot and returns its answer (the first ask also absorbs the gateway's
//!    first-agent start-up, which happens before the plugin's first heartbeat, so it runs
//!    under the default `[relay].ask_timeout_secs`);
//! 2. the plugin reconnects after hal0 restarts on the same port (SIGTERM, start again): the
//!    bot is online again, and that restart is what applies a short ask window;
//! 3. heartbeats keep a slow answer alive past that window: the agent works through several
//!    tool calls (the plugin's hooks send a heartbeat at the turn's start and after a tool
//!    call at most every 5 s, so the window has to be longer than that); as the control, the
//!    same window ends in `timeout` an ask whose agent goes quiet (one model call longer
//!    than the window: no hook fires);
//! 4. killing the gateway (SIGKILL) takes the bot offline and fails its pending ask with
//!    `agent_disconnected`.
//!
//! Without `.hermes-venv` or the peer folder the test is skipped with a message, unless
//! `HAL0_REQUIRE_EXTERNAL=1` is set. All on 127.0.0.1; only processes this test starts are
//! stopped (hal0 serve; stack.py and its children through [`RealHermes`]).

use crate::support::mcp::{Client, connect_with};
use crate::support::real_hermes::{RealHermes, available, hermes_venv};
use crate::support::*;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The bot's name: its bridge client and its `to`. (No `sk-` in it: Hermes's secret
/// redaction would mangle that in tool output.)
const BOT: &str = "hermes-bot";
const ASKER: &str = "asker";
/// `[relay].ask_timeout_secs` for the slow ask: longer than the plugin's 5 s heartbeat
/// spacing plus a tool call, with room for a loaded 2-core machine.
const WINDOW_SECS: u64 = 10;
/// The fake model's wait before each answer of a `RELAY_BUSY` turn, and the number of tool
/// calls before its reply: the turn lasts over (STEPS + 1) × DELAY = 24 s, over two windows,
/// while no gap between two heartbeats is much longer than DELAY.
const BUSY_DELAY_SECS: &str = "6";
const BUSY_STEPS: &str = "3";
/// hal0-relay's `reply` as Hermes names it for the model (`mcp__<server>__<tool>`).
const REPLY_TOOL: &str = "mcp__hal0_relay__reply";
/// The tool the fake model calls for each step of a `RELAY_BUSY` turn.
const STEP_TOOL: &str = "mcp__hal0_relay__list_agents";
/// What the fake model puts before the wake's message in its reply.
const ANSWER_PREFIX: &str = "bot answer: ";

/// The hermes-bridge plugin folder: `<repo>/../shared/peers/hermes-bridge/adapter`.
fn adapter_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/hermes-bridge/adapter")
}

/// True when the real Hermes and the plugin are there; otherwise prints why it is skipped,
/// or panics when `HAL0_REQUIRE_EXTERNAL=1` is set.
fn prerequisites() -> bool {
    let (what, how) = if !available() {
        (format!("the real Hermes at {}", hermes_venv().display()), "run tests/external/setup.sh")
    } else if !adapter_dir().join("plugin.yaml").is_file() {
        (format!("the hermes-bridge plugin at {}", adapter_dir().display()), "put the hermes-bridge peer there")
    } else {
        return true;
    };
    missing_external(what, how);
    false
}

/// `hal0 serve` on `127.0.0.1:port` (its `[network].bind`), the port a restart keeps.
async fn serve_at(env: &Env, port: u16) -> Server {
    for attempt in 1..=3 {
        if let Some(server) = tokio::task::block_in_place(|| crate::support::serve_on(env, port)) {
            return server;
        }
        // Exited at once (the port still taken, e.g. just after a stop) or hung: retry.
        eprintln!("relay_hermes: hal0 serve did not start on port {port} (attempt {attempt}); retrying");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    panic!("hal0 serve did not start on 127.0.0.1:{port} in three attempts");
}

/// Call a relay tool: (is_error, the JSON of its text).
async fn call(c: &Client, tool: &str, args: Value) -> (bool, Value) {
    let p = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone());
    let r = c.call_tool(p).await.unwrap_or_else(|e| panic!("{tool}: transport error: {e}"));
    let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{tool}: not JSON ({e}): {text}"));
    (r.is_error == Some(true), v)
}

/// `ask_agent` on its own connection `c`, bounded by `limit`: (is_error, result, how long
/// it took).
async fn ask(c: Client, args: Value, limit: Duration) -> (bool, Value, Duration) {
    let t = Instant::now();
    let (e, v) = tokio::time::timeout(limit, call(&c, "ask_agent", args.clone()))
        .await
        .unwrap_or_else(|_| panic!("ask_agent {args} did not end within {limit:?}"));
    c.cancel().await.ok();
    (e, v, t.elapsed())
}

/// The bot's `online` in `list_agents`.
async fn bot_online(c: &Client) -> bool {
    let (e, v) = call(c, "list_agents", json!({})).await;
    assert!(!e, "{v}");
    let bot = v.as_array().unwrap().iter().find(|b| b["name"] == BOT).unwrap_or_else(|| panic!("no {BOT}: {v}"));
    bot["online"] == true
}

/// Wait (at most `limit`) until the bot is `online`, or panic with `why` and the gateway's log.
async fn wait_online(c: &Client, hermes: &RealHermes, online: bool, limit: Duration, why: &str) {
    let reached = eventually(limit, async || bot_online(c).await == online).await;
    assert!(reached, "{why} (not within {limit:?}); gateway log tail:\n{}", hermes.gateway_log_tail("default", 40));
}

fn exchanges(env: &Env) -> Vec<Value> {
    env.json(&["relay", "exchanges", "--json", "--limit", "100"]).as_array().unwrap().clone()
}

/// The JSON a hal0-relay tool answered, out of the tool message Hermes hands the model (an
/// `<untrusted_tool_result>` block holding `{"result": "<the tool's text>"}`).
fn relay_result(text: &str) -> Option<Value> {
    text.lines().find_map(|l| {
        let v: Value = serde_json::from_str(l.trim()).ok()?;
        serde_json::from_str(v["result"].as_str()?).ok()
    })
}

/// The value of `NAME=` in hal0's printed `.env` lines.
fn env_line(lines: &Value, name: &str) -> String {
    let lines = lines.as_array().unwrap_or_else(|| panic!("relay_bot.env is not a list: {lines}"));
    lines
        .iter()
        .find_map(|l| l.as_str()?.strip_prefix(&format!("{name}=")).map(str::to_string))
        .unwrap_or_else(|| panic!("no {name} in relay_bot.env: {lines:?}"))
}

/// One message of a chat request the fake model got.
struct Msg {
    role: String,
    text: String,
    /// The assistant's tool calls: (name, arguments).
    calls: Vec<(String, Value)>,
}

/// The messages of every chat request the fake model got, one list per request.
fn model_requests(hermes: &RealHermes) -> Vec<Vec<Msg>> {
    let msg = |m: &Value| {
        let text = match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(" "),
            _ => String::new(),
        };
        let calls = m["tool_calls"].as_array().into_iter().flatten().map(|c| {
            let args = c["function"]["arguments"].as_str().and_then(|a| serde_json::from_str(a).ok());
            (c["function"]["name"].as_str().unwrap_or_default().to_string(), args.unwrap_or(Value::Null))
        });
        Msg { role: m["role"].as_str().unwrap_or_default().to_string(), text, calls: calls.collect() }
    };
    let requests = hermes.fake_llm_requests();
    requests.iter().filter_map(|r| r["body"]["messages"].as_array()).map(|ms| ms.iter().map(msg).collect()).collect()
}

/// True once a request of the fake model carries a user message containing `marker`.
fn model_got(hermes: &RealHermes, marker: &str) -> bool {
    model_requests(hermes).iter().flatten().any(|m| m.role == "user" && m.text.contains(marker))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_hermes_with_the_hermes_bridge_plugin_answers_heartbeats_and_reconnects() {
    if !prerequisites() {
        return;
    }
    let started = Instant::now();
    let env = Env::new();
    // A fixed loopback port, as [network].bind and public_url: what hal0 prints for the bot
    // names it, and a restart comes back on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    env.ok(&["config", "set", "network.bind", &format!("127.0.0.1:{port}")]);
    env.ok(&["config", "set", "network.public_url", &format!("http://127.0.0.1:{port}")]);
    let server = serve_at(&env, port).await;

    // The bot's setup exactly as hal0 prints it.
    let added = env.json(&["bridge", "add", BOT, "--scope", "relay", "--json"]);
    let key = added["key"].as_str().unwrap().to_string();
    let setup = &added["relay_bot"];
    let relay_url = env_line(&setup["env"], "HERMES_BRIDGE_RELAY_URL");
    assert_eq!(relay_url, format!("ws://127.0.0.1:{port}/bridge/connect"), "{added}");
    assert_eq!(env_line(&setup["env"], "HERMES_BRIDGE_TOKEN"), key, "{added}");
    let yaml: Value = serde_yaml_ng::from_str(setup["config_yaml"].as_str().unwrap()).unwrap();
    let entry = &yaml["mcp_servers"]["hal0-relay"];
    let mcp_url = entry["url"].as_str().unwrap_or_else(|| panic!("no url: {yaml}")).to_string();
    assert_eq!(mcp_url, format!("http://127.0.0.1:{port}/mcp/relay/mcp"), "{added}");
    // stack.py writes this same header into the bot's config.yaml.
    assert_eq!(entry["headers"]["Authorization"], "Bearer ${HERMES_BRIDGE_TOKEN}", "{added}");
    let asker_key = env.bridge_key(ASKER, &["relay"]);

    let adapter = adapter_dir();
    let Some(mut hermes) = tokio::task::block_in_place(|| {
        RealHermes::start_with_args(
            &[],
            &[("FAKE_LLM_RELAY_DELAY_S", BUSY_DELAY_SECS), ("FAKE_LLM_RELAY_STEPS", BUSY_STEPS)],
            &[
                "--bridge-plugin",
                adapter.to_str().unwrap(),
                "--bridge-relay-url",
                &relay_url,
                "--bridge-token",
                &key,
                "--bridge-mcp-url",
                &mcp_url,
            ],
        )
    }) else {
        return;
    };
    // The plugin was copied, not linked: the scratch home holds its own files.
    let installed = hermes.home().join("plugins/hermes-bridge");
    for f in ["plugin.yaml", "__init__.py", "adapter.py", "wake.py"] {
        let (a, b) = (std::fs::read(adapter.join(f)).unwrap(), std::fs::read(installed.join(f)));
        assert_eq!(Some(a), b.ok(), "{f} copied unchanged into {}", installed.display());
    }
    assert!(!std::fs::symlink_metadata(&installed).unwrap().file_type().is_symlink());

    let a = connect_with(&server, "relay", &asker_key, false).await;
    wait_online(&a, &hermes, true, Duration::from_secs(60), "the plugin connects to /bridge/connect").await;
    let (_, v) = call(&a, "list_agents", json!({})).await;
    let listed = |name: &str| v.as_array().unwrap().iter().find(|b| b["name"] == name).cloned();
    assert_eq!(listed(BOT), Some(json!({"name": BOT, "online": true})), "{v}");
    assert_eq!(listed(ASKER), Some(json!({"name": ASKER, "online": false})), "{v}");

    // 1. An ask reaches the bot and its answer comes back. The default window (120 s) covers
    // the gateway's first-agent start-up, which comes before any heartbeat.
    let message = "Quelle heure est-il ? \"vite\"";
    let c = connect_with(&server, "relay", &asker_key, false).await;
    let (e, v, first_took) = ask(c, json!({"to": BOT, "message": message}), Duration::from_secs(150)).await;
    let log = |h: &RealHermes| h.gateway_log_tail("default", 40);
    assert!(!e, "{v}\n{}", log(&hermes));
    assert_eq!(v["ok"], true);
    assert_eq!(v["answer"], format!("{ANSWER_PREFIX}{message}"), "{v}");
    let rows = exchanges(&env);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (rid, conv) = (rows[0]["request_id"].as_str().unwrap(), rows[0]["conversation_id"].as_str().unwrap());
    assert_eq!(v["conversation_id"], conv);
    assert_eq!((&rows[0]["status"], &rows[0]["from"], &rows[0]["to"]), (&json!("ok"), &json!(ASKER), &json!(BOT)));
    // The agent read the plugin's wake text, replied with its request_id, and Hermes's MCP
    // call of hal0-relay's reply succeeded.
    let wake = format!("[hermes-bridge] Message de {ASKER} (request_id={rid}, conversation_id={conv}) : {message}");
    assert!(model_got(&hermes, &wake), "no wake {wake:?} reached the model");
    // The model's call and its result are in the request that follows the reply, which may
    // come just after the asker has its answer.
    let replied = eventually(Duration::from_secs(30), async || {
        model_requests(&hermes).iter().flatten().any(|m| m.role == "tool" && relay_result(&m.text).is_some())
    })
    .await;
    assert!(replied, "the result of the model's reply call was sent back to the model within 30 s");
    let requests = model_requests(&hermes);
    let call = requests.iter().flatten().flat_map(|m| &m.calls).find(|(name, _)| name == REPLY_TOOL);
    let want = json!({"request_id": rid, "answer": format!("{ANSWER_PREFIX}{message}")});
    assert_eq!(call.map(|(_, args)| args), Some(&want), "the model's reply call");
    let result = requests.iter().flatten().filter(|m| m.role == "tool").find_map(|m| relay_result(&m.text));
    assert_eq!(result, Some(json!({"ok": true})), "what Hermes handed the model for the reply");

    // 2. hal0 restarts on the same port (SIGTERM, start again; the restart also applies a
    // short window): the plugin reconnects by itself (its backoff: 2, 5, 10 … s).
    env.ok(&["config", "set", "relay.ask_timeout_secs", &WINDOW_SECS.to_string()]);
    a.cancel().await.ok();
    server.terminate().await;
    let server = serve_at(&env, port).await;
    let a = connect_with(&server, "relay", &asker_key, false).await;
    let t = Instant::now();
    wait_online(&a, &hermes, true, Duration::from_secs(60), "the plugin reconnects after hal0 restarted").await;
    let reconnect_took = t.elapsed();

    // 3. A slow answer outlives the window: the agent works through BUSY_STEPS tool calls, the
    // fake model waiting BUSY_DELAY_SECS before each answer, and the plugin's heartbeats
    // re-arm the window. Its reply also goes through Hermes's new MCP session (hal0's
    // sessions did not survive the restart).
    let message = "long job RELAY_BUSY";
    let c = connect_with(&server, "relay", &asker_key, false).await;
    let (e, v, slow_took) = ask(c, json!({"to": BOT, "message": message}), Duration::from_secs(120)).await;
    assert!(!e, "{v} after {slow_took:?}\n{}", log(&hermes));
    assert_eq!(v["answer"], format!("{ANSWER_PREFIX}{message}"), "{v}");
    assert!(
        slow_took > Duration::from_secs(2 * WINDOW_SECS),
        "the ask outlived two {WINDOW_SECS} s windows ({slow_took:?})"
    );
    // The turn's last request holds all its tool calls.
    let steps = model_requests(&hermes)
        .iter()
        .filter(|ms| ms.iter().any(|m| m.role == "user" && m.text.contains(message)))
        .map(|ms| ms.iter().flat_map(|m| &m.calls).filter(|(name, _)| name == STEP_TOOL).count())
        .max();
    assert_eq!(steps, Some(BUSY_STEPS.parse().unwrap()), "list_agents calls of the busy turn");

    // The control: the same window ends an ask whose agent goes quiet (one model call longer
    // than the window, so no hook fires and the plugin sends no heartbeat after the first).
    let c = connect_with(&server, "relay", &asker_key, false).await;
    let (e, v, quiet_took) =
        ask(c, json!({"to": BOT, "message": "RELAY_STUCK quiet"}), Duration::from_secs(4 * WINDOW_SECS)).await;
    assert!(e && v["error"] == "timeout", "{v}");
    assert!(quiet_took >= Duration::from_secs(WINDOW_SECS), "{quiet_took:?}");

    // 4. The gateway is killed while its agent works on an ask (another conversation, so
    // another session, beside the quiet one still waiting on the model): the ask fails at once
    // with agent_disconnected and the bot is offline.
    let c = connect_with(&server, "relay", &asker_key, false).await;
    let ask_killed = tokio::spawn(ask(c, json!({"to": BOT, "message": "RELAY_STUCK killed"}), Duration::from_secs(60)));
    let at_work = eventually(Duration::from_secs(30), async || model_got(&hermes, "RELAY_STUCK killed")).await;
    assert!(at_work, "the ask reached the model within 30 s\n{}", log(&hermes));
    let killed_at = Instant::now();
    tokio::task::block_in_place(|| hermes.kill("default"));
    let (e, v, _) = tokio::time::timeout(Duration::from_secs(15), ask_killed)
        .await
        .expect("the pending ask ended within 15 s of the kill")
        .unwrap();
    assert!(e && v["error"] == "agent_disconnected", "{v}");
    assert!(killed_at.elapsed() < Duration::from_secs(WINDOW_SECS), "not a timeout: {:?}", killed_at.elapsed());
    assert!(!bot_online(&a).await, "the killed bot is offline");

    let rows = exchanges(&env);
    let statuses: Vec<&str> = rows.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["agent_disconnected", "timeout", "ok", "ok"], "{rows:?}");
    assert!(rows.iter().all(|r| r["ended_at"].is_string()), "{rows:?}");

    a.cancel().await.ok();
    let hermes_up = hermes.started_in();
    drop(hermes);
    eprintln!(
        "relay_hermes: done in {:.1?} (Hermes up in {hermes_up:.1?}, first ask {first_took:.1?}, reconnect \
         {reconnect_took:.1?}, slow ask {slow_took:.1?}, quiet ask {quiet_took:.1?})",
        started.elapsed()
    );
}
