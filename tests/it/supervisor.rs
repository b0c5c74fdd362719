//! hal0's stdio supervisor: an installed stdio server (the Python SDK's FastMCP server in
//! stdio mode, nobody here wrote its transport) started by hal0, probed by `hal0 mcp test`,
//! served through the proxy with the same policy, given its `[env]` and `[secrets]` as
//! environment variables and nothing of hal0's own, and started, stopped and restarted over
//! REST.

use crate::support::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The SDK's python, or None (skipped) / a panic under HAL0_REQUIRE_EXTERNAL=1.
fn python() -> Option<PathBuf> {
    let p = repo().join(".venv/bin/python");
    if p.exists() {
        return Some(p);
    }
    missing_external(p.display(), "run tests/external/setup.sh");
    None
}

/// Install a stdio record `id` whose command is the FastMCP server in stdio mode, counting
/// calls into `counts`, with one secret from api.env.
fn install_stdio(env: &Env, id: &str, python: &Path, counts: &Path) {
    env.ok(&["mcp", "install", "uvx:hal0-placeholder", "--id", id]);
    let path = env.config_dir().join(format!("mcp-servers/{id}.toml"));
    let mut doc: toml_edit::DocumentMut = std::fs::read_to_string(&path).unwrap().parse().unwrap();
    doc["command"] = toml_edit::value(python.to_str().unwrap());
    let mut args = toml_edit::Array::new();
    args.push(repo().join("tests/upstream/fastmcp_server.py").to_str().unwrap());
    args.push("stdio");
    doc["args"] = toml_edit::value(args);
    doc["env"]["UPSTREAM_COUNTS"] = toml_edit::value(counts.to_str().unwrap());
    doc["secrets"]["UPSTREAM_SECRET"] = toml_edit::value("UP_SECRET");
    std::fs::write(&path, doc.to_string()).unwrap();
    let api_env = env.config_dir().join("api.env");
    let mut text = std::fs::read_to_string(&api_env).unwrap_or_default();
    text.push_str("UP_SECRET=stdio-secret-value-4821\n");
    std::fs::write(&api_env, text).unwrap();
}

fn count(counts: &Path, tool: &str) -> u64 {
    let v: Value = std::fs::read_to_string(counts).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
    v[tool].as_u64().unwrap_or(0)
}

async fn call(c: &rmcp::service::RunningService<rmcp::RoleClient, ()>, tool: &str, args: Value) -> (bool, String) {
    let p = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone());
    let r = c.call_tool(p).await.expect("transport");
    let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    (r.is_error == Some(true), text)
}

async fn rest(server: &Server, key: &str, method: &str, path: &str) -> (u16, Value) {
    let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let resp = reqwest::Client::new().request(m, server.url(path)).bearer_auth(key).send().await.unwrap();
    let s = resp.status().as_u16();
    (s, resp.json().await.unwrap_or(Value::Null))
}

fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.split_whitespace().nth(2).is_none_or(|state| state != "Z"))
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_is_started_policed_and_controlled() {
    let Some(python) = python() else { return };
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let counts = dir.path().join("counts.json");
    install_stdio(&env, "py", &python, &counts);

    // `hal0 mcp test` starts the child, lists its tools and stops it.
    let probe = env.json(&["mcp", "test", "py", "--json"]);
    let tools: Vec<&str> = probe["tools"].as_array().unwrap().iter().map(|t| t["tool"].as_str().unwrap()).collect();
    assert!(tools.contains(&"echo") && tools.contains(&"getenv"), "{probe}");
    assert!(probe["url"].as_str().unwrap().contains("fastmcp_server.py stdio"), "{probe}");

    env.ok(&["mcp", "allow", "py", "echo"]);
    env.ok(&["mcp", "allow", "py", "getenv"]);
    env.ok(&["mcp", "block", "py", "add"]);
    let key = env.json(&["mcp", "keys", "add", "py", "ci", "--json"])["key"].as_str().unwrap().to_string();
    let admin = env.json(&["auth", "rotate", "admin", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve_with(&[("HAL0_LEAK_CHECK", "only-hal0-has-this")]);
    let (s, v) = rest(&server, &admin, "GET", "/api/mcp/servers").await;
    assert_eq!(s, 200);
    let rec = v["servers"].as_array().unwrap().iter().find(|x| x["id"] == "py").unwrap().clone();
    assert_eq!(rec["state"], "stopped", "started on demand: {rec}");

    let cfg = StreamableHttpClientTransportConfig::with_uri(server.url("/mcp/proxy/py/mcp")).auth_header(key.clone());
    let c = ().serve(StreamableHttpClientTransport::from_config(cfg)).await.unwrap();
    let mut names: Vec<String> = c.list_all_tools().await.unwrap().into_iter().map(|t| t.name.into()).collect();
    names.sort();
    assert_eq!(names, vec!["echo", "getenv"]);
    let (err, text) = call(&c, "echo", json!({"text": "over stdio"})).await;
    assert!(!err && text.contains("over stdio"), "{text}");
    assert_eq!(count(&counts, "echo"), 1, "[env] reached the child: it wrote its counts where told");
    let (err, text) = call(&c, "add", json!({"a": 1, "b": 2})).await;
    assert!(err && text.starts_with("mcp.tool_blocked:"), "{text}");
    assert_eq!(count(&counts, "add"), 0, "blocked: never reached the child");

    // The secret is in the child's environment, and masked on the way back; hal0's own
    // environment is not passed on.
    let (err, text) = call(&c, "getenv", json!({"name": "UPSTREAM_SECRET"})).await;
    assert!(!err && !text.contains("stdio-secret-value-4821") && text.contains("REDACTED"), "{text}");
    let (_, text) = call(&c, "getenv", json!({"name": "HAL0_LEAK_CHECK"})).await;
    assert_eq!(text, "null", "hal0's environment stays out of the child");
    let (_, text) = call(&c, "getenv", json!({"name": "PATH"})).await;
    assert_ne!(text, "null", "PATH is passed on");

    // Running now, with a pid; stop kills it; the next call starts it again.
    let (_, v) = rest(&server, &admin, "GET", "/api/mcp/servers").await;
    let rec = v["servers"].as_array().unwrap().iter().find(|x| x["id"] == "py").unwrap().clone();
    assert_eq!(rec["state"], "running", "{rec}");
    let pid = rec["pid"].as_u64().unwrap();
    assert!(alive(pid));
    let (s, v) = rest(&server, &admin, "POST", "/api/mcp/py/stop").await;
    assert_eq!((s, v["state"].as_str()), (200, Some("stopped")), "{v}");
    assert!(eventually(Duration::from_secs(10), async || !alive(pid)).await, "the child {pid} was killed");
    let (err, text) = call(&c, "echo", json!({"text": "again"})).await;
    assert!(!err && text.contains("again"), "started again on demand: {text}");
    let (s, v) = rest(&server, &admin, "POST", "/api/mcp/py/restart").await;
    assert_eq!((s, v["state"].as_str()), (200, Some("running")), "{v}");
    let new_pid = v["pid"].as_u64().unwrap();
    assert_ne!(new_pid, pid);
    let (s, v) = rest(&server, &admin, "POST", "/api/mcp/py/start").await;
    assert_eq!((s, v["pid"].as_u64()), (200, Some(new_pid)), "start is idempotent: {v}");

    // Disabling stops serving it (and the next start would be refused).
    env.ok(&["mcp", "disable", "py"]);
    let (s, v) = rest(&server, &admin, "POST", "/api/mcp/py/start").await;
    assert_eq!((s, v["error"]["code"].as_str()), (404, Some("mcp.server_disabled")), "{v}");
    c.cancel().await.ok();
}

#[test]
fn a_stdio_server_with_a_command_can_be_exposed() {
    let Some(python) = python() else { return };
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.yaml"), "model:\n  default: x\n").unwrap();
    env.ok(&["config", "set", "hermes.home", home.path().to_str().unwrap()]);
    let dir = tempfile::tempdir().unwrap();
    install_stdio(&env, "py", &python, &dir.path().join("counts.json"));
    let out = env.json(&["mcp", "expose", "py", "--hermes", "--json"]);
    assert_eq!(out["hermes_sync"]["hermes"], json!(["hermes: py"]), "{out}");
    let yaml = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    assert!(yaml.contains("/mcp/proxy/py/mcp"), "{yaml}");
    // Without a command (a git install) it cannot be started, so it is refused.
    env.ok(&["mcp", "install", "git+https://example.com/x/tool.git", "--id", "nocmd"]);
    let o = env.run(&["mcp", "expose", "nocmd", "--hermes"]);
    assert!(o.stderr().contains("[mcp.exposure_needs_supervisor]"), "{}", o.stderr());
    let o = env.run(&["mcp", "test", "nocmd"]);
    assert!(o.stderr().contains("[mcp.supervisor_unavailable]"), "{}", o.stderr());
}

/// `hal0 mcp start|stop|restart ID` asks the running daemon (loopback, the admin key from
/// api.env) and prints its answer; with no daemon it says so, with its own code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shell_controls_a_stdio_child_through_the_daemon() {
    let Some(python) = python() else { return };
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    install_stdio(&env, "py", &python, &dir.path().join("counts.json"));
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "web"]);
    env.json(&["auth", "rotate", "admin", "--yes", "--json"]);

    let o = env.run(&["mcp", "start", "py"]);
    assert_eq!(o.code(), 1, "{}", o.stderr());
    assert!(o.stderr().contains("[mcp.daemon_unreachable]") && o.stderr().contains("hal0 serve"), "{}", o.stderr());

    let server = serve_on_configured_port(&env);
    let v = env.json(&["mcp", "start", "py", "--json"]);
    assert_eq!(v["state"], "running", "{v}");
    let pid = v["pid"].as_u64().expect("a pid");
    assert!(alive(pid));
    let text = env.ok(&["mcp", "restart", "py"]);
    assert!(text.starts_with("`py`: running (pid "), "{text}");
    assert!(eventually(Duration::from_secs(10), async || !alive(pid)).await, "the old child {pid} is gone");
    assert_eq!(env.json(&["mcp", "stop", "py", "--json"])["state"], "stopped");
    // Refusals keep the daemon's code: an http server has no child; an unknown id is
    // refused before anything is asked.
    let o = env.run(&["mcp", "stop", "web"]);
    assert!(o.stderr().contains("[mcp.not_supervised]"), "{}", o.stderr());
    let o = env.run(&["mcp", "restart", "nope"]);
    assert!(o.stderr().contains("[mcp.not_found]"), "{}", o.stderr());
    server.terminate().await;
}
