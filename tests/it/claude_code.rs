//! The real Claude Code CLI (npm `@anthropic-ai/claude-code`, pinned in
//! `tests/external/setup.sh`) as a client of `hal0-agents` over TCP, driven by
//! `../shared/tools/fake_anthropic.py` (the workplace's scripted stand-in for the Messages API on loopback):
//! a long `agent_run_wait` on a run that stays busy, with Claude Code's default settings.
//!
//! Needs `tests/external/setup.sh` (`.tools/node` with the CLI, `.venv` for Python). Without
//! them the test prints a "skipped" line and passes, unless `HAL0_REQUIRE_EXTERNAL=1`.

use crate::support;
use crate::support::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const AGENTS: &str = "hal0-agents";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn claude_bin() -> PathBuf {
    repo().join(".tools/node/node_modules/.bin/claude")
}

/// True when the CLI and Python are there; else skip (or fail with `HAL0_REQUIRE_EXTERNAL=1`).
fn available() -> bool {
    for p in [claude_bin(), repo().join(".venv/bin/python"), repo().join("../shared/tools/fake_anthropic.py")] {
        if !p.exists() {
            missing_external(p.display(), "run tests/external/setup.sh");
            return false;
        }
    }
    true
}

/// A run of the key's client: `input` `SLOW` streams for about two minutes on a
/// [`slow_box`]; `APPROVE hold` waits for an approval nobody gives.
async fn busy_run(server: &Server, key: &str, input: &str) -> String {
    let c = support::mcp::connect(server, key).await;
    let v = support::mcp::call(&c, "agent_run", json!({"agent": "hermes", "input": input})).await.unwrap();
    let run_id = v["run_id"].as_str().unwrap().to_string();
    c.cancel().await.unwrap();
    run_id
}

/// What one `claude -p` session did: its stream-json lines and how long it ran.
struct Session {
    lines: Vec<Value>,
    elapsed: Duration,
    stderr: String,
}

impl Session {
    /// The text of the first tool result Claude Code handed back to the model.
    fn tool_result(&self) -> Option<(bool, String)> {
        self.lines.iter().filter(|l| l["type"] == "user").find_map(|l| {
            l["message"]["content"].as_array()?.iter().find(|c| c["type"] == "tool_result").map(|c| {
                let text = match &c["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(a) => a.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(""),
                    other => other.to_string(),
                };
                (c["is_error"] == true, text)
            })
        })
    }
}

/// Register hal0-agents with `claude mcp add` in a scratch HOME, start the fake Messages API
/// with a one-call plan, and run `claude -p` until it prints its final answer.
fn claude_session(url: &str, key: &str, tool: &str, input: &Value) -> Session {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let base_env = |c: &mut Command| {
        c.env_clear()
            .env("HOME", home.path())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .current_dir(&work);
    };
    let mut add = Command::new(claude_bin());
    base_env(&mut add);
    add.args(["mcp", "add", "--transport", "http", AGENTS, url, "--header", &format!("Authorization: Bearer {key}")]);
    let out = add.output().unwrap();
    assert!(out.status.success(), "claude mcp add: {}", String::from_utf8_lossy(&out.stderr));

    let port = free_port();
    let log = home.path().join("requests.jsonl");
    let plan = json!([[format!("mcp__{AGENTS}__{tool}"), input]]);
    let mut fake = Command::new(repo().join(".venv/bin/python"))
        .arg(repo().join("../shared/tools/fake_anthropic.py"))
        .arg(port.to_string())
        .env("FAKE_PLAN", plan.to_string())
        .env("FAKE_LOG", &log)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let up = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(up.elapsed() < Duration::from_secs(30), "fake_anthropic.py did not start");
        std::thread::sleep(Duration::from_millis(50));
    }

    let mut c = Command::new(claude_bin());
    base_env(&mut c);
    c.env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args(["-p", "go", "--output-format", "stream-json", "--verbose", "--allowedTools"])
        .arg(format!("mcp__{AGENTS}__{tool}"))
        .stdin(Stdio::null());
    let start = Instant::now();
    let out = c.output().unwrap();
    let elapsed = start.elapsed();
    let _ = fake.kill();
    let _ = fake.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    Session { lines, elapsed, stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Claude Code ends an MCP request whose response has not started within 60 s (its
/// `MCP_TOOL_TIMEOUT` can only raise that); hal0's first progress report starts it, and
/// progress every `[mcp].progress_secs` (default 5 s) keeps the call open. A 65 s
/// `agent_run_wait` on a run that streams for two minutes answers `timed_out: true`
/// (before progress it ended with "The operation timed out." at 60 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_keeps_a_long_wait_open_past_60_s() {
    if !available() {
        return;
    }
    let options =
        support::fake_hermes::FakeHermesOptions { slow_interval: Duration::from_secs(2), ..Default::default() };
    let (env, _hermes, _home) = fake_hermes_env(options, "").await;
    let server = env.serve();
    let key = env.bridge_key("claude", &[]);
    let run_id = busy_run(&server, &key, "SLOW").await;
    let args = json!({"run_id": run_id, "timeout_s": 65});
    let url = server.url("/mcp/agents/mcp");
    let s = tokio::task::spawn_blocking(move || claude_session(&url, &key, "agent_run_wait", &args)).await.unwrap();
    let (is_error, text) = s.tool_result().unwrap_or_else(|| panic!("no tool result: {:?}\n{}", s.lines, s.stderr));
    assert!(!is_error, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(v["timed_out"], true, "{v}");
    assert_eq!(v["status"], "running", "{v}");
    assert!(s.elapsed >= Duration::from_secs(65), "{:?}", s.elapsed);
}

/// Claude Code speaks protocol 2026-07-28, where a wait on a run that waits for a person is
/// not held open: hal0 answers at once with the card as an input request; headless
/// (`-p`), Claude Code does not take it to a person, and hal0 answers the run as it is,
/// with the card it waits on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_hears_of_the_card_at_once() {
    if !available() {
        return;
    }
    let b = busy_hermes_box("").await;
    let key = b.env.bridge_key("claude", &[]);
    let run_id = busy_run(&b.server, &key, "APPROVE hold").await;
    let args = json!({"run_id": run_id, "timeout_s": 65});
    let url = b.server.url("/mcp/agents/mcp");
    let s = tokio::task::spawn_blocking(move || claude_session(&url, &key, "agent_run_wait", &args)).await.unwrap();
    let (is_error, text) = s.tool_result().unwrap_or_else(|| panic!("no tool result: {:?}\n{}", s.lines, s.stderr));
    assert!(!is_error, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(v["status"], "waiting_for_approval", "{v}");
    assert!(v["pending"]["approval_id"].is_string(), "{v}");
    assert!(v.get("timed_out").is_none(), "the run as it is, not a held wait: {v}");
}

/// Claude Code given no key: its health check tries OAuth, finds none, and shows the reason
/// hal0 gives at `/register` (which key to send, and the `claude mcp add --header` line)
/// instead of a bare registration failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_without_a_key_is_told_what_to_do() {
    if !available() {
        return;
    }
    let env = Env::new();
    env.json(&["auth", "rotate", "admin", "--yes", "--json"]);
    let server = env.serve();
    let home = tempfile::tempdir().unwrap();
    let claude = |args: &[&str]| {
        let out = Command::new(claude_bin())
            .env_clear()
            .env("HOME", home.path())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .current_dir(home.path())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    };
    let url = server.url("/mcp/memory/mcp");
    claude(&["mcp", "add", "--transport", "http", "hal0-memory", &url]);
    let shown = claude(&["mcp", "get", "hal0-memory"]);
    assert!(shown.contains("does not do OAuth") && shown.contains("Authorization: Bearer <key>"), "{shown}");
    assert!(shown.contains("claude mcp add --transport http"), "{shown}");
    server.terminate().await;
}
