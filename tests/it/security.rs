//! The outside audit's holes in the daemon's front door, each tried the way it was found:
//! cross-site and DNS-rebinding requests against a default install (auth off), records that
//! run a program, a probe that must not start one, secrets in the approvals inbox and the
//! settings, MCP sessions opened in a loop, and clients that trickle their request.

use crate::support;
use crate::support::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// An inline manifest whose stdio command would leave `marker` behind if it ever ran.
fn evil_manifest(marker: &std::path::Path) -> Value {
    json!({"manifest": {"name": "evil", "id": "evil", "transport": "stdio", "command": "/bin/sh",
                        "args": ["-c", format!("touch {}", marker.display())]}})
}

async fn send(r: reqwest::RequestBuilder) -> (u16, String) {
    let resp = r.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap_or_default())
}

#[tokio::test]
async fn a_web_page_cannot_reach_the_api_of_a_default_install() {
    let env = Env::new();
    let server = env.serve();
    let http = reqwest::Client::new();
    let marker = env.dir.path().join("pwned");
    let record = env.config_dir().join("mcp-servers/evil.toml");
    let body = evil_manifest(&marker).to_string();

    // The audit's first request: a text/plain "simple" request (no CORS preflight).
    let (s, b) =
        send(http.post(server.url("/api/mcp/install")).header("content-type", "text/plain").body(body.clone())).await;
    assert_eq!(s, 415, "{b}");
    assert!(b.contains("request.unsupported_media_type"), "{b}");
    // Form-encoded and untyped bodies are refused the same way.
    let (s, _) = send(
        http.post(server.url("/api/mcp/install"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("a=1"),
    )
    .await;
    assert_eq!(s, 415);
    // A page that did send JSON (after a preflight nobody answers) still names its Origin.
    let (s, b) = send(
        http.post(server.url("/api/mcp/install"))
            .header("content-type", "application/json")
            .header("origin", "https://evil.example")
            .body(body.clone()),
    )
    .await;
    assert_eq!(s, 403, "{b}");
    assert!(b.contains("auth.forbidden") && b.contains("Origin"), "{b}");
    // The second request of the audit: starting it through the test route.
    let (s, _) = send(http.post(server.url("/api/mcp/evil/test")).header("origin", "https://evil.example")).await;
    assert_eq!(s, 403);

    // DNS rebinding: the page's own name as Host, on every route but /api/health.
    let foreign = format!("rebind.example:{}", server.port);
    let (s, b) = send(
        http.post(server.url("/api/bridge/clients"))
            .header("host", &foreign)
            .json(&json!({"name": "rebound", "scopes": ["admin"]})),
    )
    .await;
    assert_eq!((s, b.as_str()), (421, "Invalid Host header"));
    for path in ["/api/status", "/api/settings", "/api/agent/approvals", "/api/mcp/servers"] {
        let (s, _) = send(http.get(server.url(path)).header("host", &foreign)).await;
        assert_eq!(s, 421, "{path}");
    }
    let (s, _) = send(http.get(server.url("/api/health")).header("host", &foreign)).await;
    assert_eq!(s, 200, "health stays open to probes by any name");
    // Same-box pages and non-browser clients keep working.
    let (s, _) = send(http.get(server.url("/api/status")).header("origin", server.base.clone())).await;
    assert_eq!(s, 200);

    assert!(env.json(&["bridge", "list", "--json"]).as_array().unwrap().is_empty(), "no key was minted");
    assert!(!record.exists(), "no record was written");
    assert!(!marker.exists(), "nothing ran");
}

#[tokio::test]
async fn only_the_shell_or_an_armed_api_makes_a_record_that_runs_a_program() {
    let env = Env::new();
    let server = env.serve();
    let http = reqwest::Client::new();
    let marker = env.dir.path().join("pwned");
    let record = env.config_dir().join("mcp-servers/evil.toml");

    // Auth off: a well-formed, same-box JSON request still cannot create a program record.
    let (s, b) = send(http.post(server.url("/api/mcp/install")).json(&evil_manifest(&marker))).await;
    assert_eq!(s, 403, "{b}");
    assert!(b.contains("mcp.program_needs_auth") && b.contains("hal0 auth rotate admin"), "{b}");
    assert!(!record.exists());
    // Records that run nothing here stay installable over the API.
    let (s, b) = send(
        http.post(server.url("/api/mcp/install")).json(&json!({"url": "https://mcp.example.com/mcp", "id": "web"})),
    )
    .await;
    assert_eq!(s, 201, "{b}");

    // The shell may, and the environment of a program record is then the shell's too.
    env.ok(&["mcp", "install", "npm:@modelcontextprotocol/server-memory", "--id", "notes"]);
    let (s, b) = send(
        http.patch(server.url("/api/mcp/notes/config")).json(&json!({"env": {"NODE_OPTIONS": "--require /tmp/x.js"}})),
    )
    .await;
    assert_eq!(s, 403, "{b}");
    assert!(b.contains("mcp.program_needs_auth"), "{b}");
    assert!(
        !std::fs::read_to_string(env.config_dir().join("mcp-servers/notes.toml")).unwrap().contains("NODE_OPTIONS")
    );

    // Once auth is armed, the admin key may (the daemon re-reads api.env on the next request).
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let (s, b) =
        send(http.post(server.url("/api/mcp/install")).bearer_auth(&admin).json(&evil_manifest(&marker))).await;
    assert_eq!(s, 201, "{b}");
    assert!(record.exists());
    assert!(!marker.exists(), "installing runs nothing");
}

#[tokio::test]
async fn a_probe_from_the_api_never_starts_a_stdio_server() {
    let env = Env::new();
    let marker = env.dir.path().join("started");
    env.ok(&["mcp", "install", "uvx:hal0-placeholder", "--id", "tool"]);
    let path = env.config_dir().join("mcp-servers/tool.toml");
    let mut doc: toml_edit::DocumentMut = std::fs::read_to_string(&path).unwrap().parse().unwrap();
    doc["command"] = toml_edit::value("/bin/sh");
    let mut args = toml_edit::Array::new();
    args.push("-c");
    args.push(format!("touch {}; sleep 5", marker.display()));
    doc["args"] = toml_edit::value(args);
    std::fs::write(&path, doc.to_string()).unwrap();
    let key = env.bridge_key("ops", &["admin"]);
    let server = env.serve();

    let (s, b) = send(reqwest::Client::new().post(server.url("/api/mcp/tool/test"))).await;
    assert_eq!(s, 501, "{b}");
    assert!(b.contains("mcp.supervisor_unavailable") && b.contains("not running"), "{b}");
    // The autonomous admin tool is the same route.
    let c = support::mcp::connect_with(&server, "admin", &key, false).await;
    let err = support::mcp::call(&c, "mcp_server_test", json!({"args": {"server_id": "tool"}})).await;
    let text = format!("{err:?}");
    assert!(text.contains("mcp.supervisor_unavailable"), "{text}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!marker.exists(), "the probe started the command");
}

/// Queue gated admin calls carrying secrets, as another admin-scope caller would.
async fn queue_secret_calls(server: &Server, key: &str) -> Vec<String> {
    let c = support::mcp::connect_with(server, "admin", key, false).await;
    let mut ids = Vec::new();
    for (tool, args) in [
        ("mcp_server_config_write", json!({"server_id": "files", "env": {"REGION": "eu-plain-value-7731"}})),
        (
            "config_write",
            json!({"key": "telemetry.service_name",
                   "value": "hal0 --password=Sup3rS3cretPass ghp_0123456789abcdefABCDEF0123456789abcd"}),
        ),
    ] {
        let v = support::mcp::call(&c, tool, json!({"args": args})).await.unwrap();
        assert_eq!(v["status"], "pending_approval", "{v}");
        ids.push(v["approval_id"].as_str().unwrap().to_string());
    }
    ids
}

const SECRETS: [&str; 3] = ["eu-plain-value-7731", "Sup3rS3cretPass", "ghp_0123456789abcdefABCDEF0123456789abcd"];

#[tokio::test]
async fn the_inbox_and_the_settings_are_redacted_for_remote_callers() {
    let env = Env::new();
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "files"]);
    env.ok(&[
        "config",
        "set",
        "hermes.restart_command",
        "curl -H 'Authorization: Bearer ghp_ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210' x",
    ]);
    let key = env.bridge_key("ops", &["admin"]);
    let server = env.serve();
    let ids = queue_secret_calls(&server, &key).await;
    let http = reqwest::Client::new();

    let mut outward = vec![send(http.get(server.url("/api/agent/approvals"))).await.1];
    for id in &ids {
        outward.push(send(http.get(server.url(&format!("/api/agent/approvals/{id}")))).await.1);
    }
    let c = support::mcp::connect_with(&server, "admin", &key, false).await;
    outward.push(support::mcp::call(&c, "approval_list", json!({})).await.unwrap().to_string());
    outward.push(support::mcp::call(&c, "approval_get", json!({"args": {"id": ids[1]}})).await.unwrap().to_string());
    for text in &outward {
        assert!(text.contains("REDACTED"), "{text}");
        for s in SECRETS {
            assert!(!text.contains(s), "{s} leaked: {text}");
        }
    }
    let (s, settings) = send(http.get(server.url("/api/settings"))).await;
    assert_eq!(s, 200);
    assert!(!settings.contains("ghp_ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210"), "{settings}");
    let running: Value = serde_json::from_str(&settings).unwrap();
    assert!(running["running"]["hermes"]["restart_command"].as_str().unwrap().contains("REDACTED"), "{settings}");

    // The person deciding, at the shell, sees the raw card.
    let card = env.ok(&["agent", "approvals", "show", &ids[1]]);
    assert!(card.contains("Sup3rS3cretPass") && card.contains("ghp_0123456789abcdefABCDEF0123456789abcd"), "{card}");
}

async fn initialize(http: &reqwest::Client, server: &Server, key: Option<&str>) -> (u16, String, Option<String>) {
    let resp = mcp_post(http, &server.url("/mcp/memory/mcp"), key, &initialize_body()).send().await.unwrap();
    let sid = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    (resp.status().as_u16(), resp.text().await.unwrap_or_default(), sid)
}

#[tokio::test]
async fn mcp_sessions_are_bounded_per_credential_and_in_total() {
    let env = Env::new();
    env.ok(&["config", "set", "limits.max_sessions_per_key", "3"]);
    env.ok(&["config", "set", "limits.max_sessions", "5"]);
    let a = env.bridge_key("a", &[]);
    let b = env.bridge_key("b", &[]);
    let server = env.serve();
    let http = reqwest::Client::new();
    let mut mine = Vec::new();
    for _ in 0..3 {
        let (s, body, sid) = initialize(&http, &server, Some(&a)).await;
        assert_eq!(s, 200, "{body}");
        mine.push(sid.expect("a session id"));
    }
    let (s, body, _) = initialize(&http, &server, Some(&a)).await;
    assert_eq!(s, 429, "{body}");
    assert!(body.contains("mcp.too_many_sessions") && body.contains("max_sessions_per_key"), "{body}");
    // Another key has its own count, up to the total.
    for _ in 0..2 {
        assert_eq!(initialize(&http, &server, Some(&b)).await.0, 200);
    }
    let (s, body, _) = initialize(&http, &server, Some(&b)).await;
    assert_eq!(s, 429, "{body}");
    assert!(body.contains("[limits].max_sessions = 5"), "{body}");
    // Ending a session frees its slot.
    let r = http
        .delete(server.url("/mcp/memory/mcp"))
        .bearer_auth(&a)
        .header("mcp-session-id", &mine[0])
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    assert_eq!(initialize(&http, &server, Some(&a)).await.0, 200);
}

/// Open a socket and send the start of a request that never ends.
fn slow_client(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a").unwrap();
    s
}

#[tokio::test]
async fn clients_that_trickle_their_request_are_cut_off() {
    let env = Env::new();
    env.ok(&["config", "set", "limits.header_timeout_secs", "2"]);
    env.ok(&["config", "set", "limits.body_timeout_secs", "2"]);
    // Every socket here comes from 127.0.0.1: one peer's share must not refuse them first.
    env.ok(&["config", "set", "limits.max_connections_per_peer", "1000"]);
    let server = env.serve();
    let slow: Vec<TcpStream> = (0..300).map(|_| slow_client(server.port)).collect();
    let http = reqwest::Client::new();
    let r = tokio::time::timeout(Duration::from_secs(10), http.get(server.url("/api/health")).send()).await;
    assert_eq!(r.expect("health answered while 300 sockets trickle").unwrap().status().as_u16(), 200);

    // Each slow socket is closed by hal0 once its header deadline passed.
    let port = server.port;
    let closed = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let mut closed = 0;
        for mut s in slow {
            s.set_read_timeout(Some(
                Duration::from_secs(15).saturating_sub(start.elapsed()).max(Duration::from_millis(10)),
            ))
            .unwrap();
            let mut buf = [0u8; 512];
            // hyper answers 408 or just closes; either way the socket reaches EOF.
            loop {
                match s.read(&mut buf) {
                    Ok(0) => {
                        closed += 1;
                        break;
                    }
                    Ok(_) => continue,
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                        closed += 1;
                        break;
                    }
                    Err(_) => break,
                }
            }
        }
        let _ = port;
        closed
    })
    .await
    .unwrap();
    assert_eq!(closed, 300, "every trickling socket was closed");

    // A body that trickles gets 408 with a stable code.
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.write_all(
        b"PUT /api/settings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"key\":",
    )
    .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 408"), "{out}");
    assert!(out.contains("request.body_timeout"), "{out}");
}

#[test]
fn limits_are_validated() {
    let env = Env::new();
    let o = env.run(&["config", "set", "limits.max_sessions", "0"]);
    assert_eq!(o.code(), 2, "{}", o.stderr());
    assert!(o.stderr().contains("limits.max_sessions") && o.stderr().contains("between 1 and"), "{}", o.stderr());
    assert!(
        !env.config_dir().join("hal0.toml").exists()
            || !std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap().contains("max_sessions")
    );
}
