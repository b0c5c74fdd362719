//! The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16 on Node
//! 22, installed by tests/external/setup.sh into .tools/conformance) against hal0's three
//! mounts, with auth armed. The suite sends no credentials of its own, so each run goes
//! through a small forwarder here that adds a bridge key and changes nothing else: a `Host`
//! or `Origin` naming the forwarder names hal0 instead, a foreign one stays foreign (for
//! the DNS-rebinding scenario).
//!
//! Every protocol scenario must pass on every mount. The other scenarios exercise fixture
//! tools, resources, prompts, logging and completion that a conformance test server has and
//! hal0 does not (`test_simple_text`, `resources/read`, …); they are listed in [`FIXTURE`]
//! and must fail for that reason only: a scenario in neither list fails the test.

use crate::support::*;
use axum::response::IntoResponse;
use std::path::PathBuf;
use std::process::Command;

/// Scenarios of the protocol itself: each must pass.
const PROTOCOL: &[&str] =
    &["server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"];

/// Scenarios that need a conformance fixture server's test tools, resources, prompts,
/// logging or completion, which hal0 does not serve.
const FIXTURE: &[&str] = &[
    "logging-set-level",
    "completion-complete",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
];

fn tools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools/conformance/node_modules")
}

/// A forwarder on a free loopback port to `target` (`http://127.0.0.1:PORT`) that adds
/// `Authorization: Bearer key`; the `Host` naming the forwarder becomes the target's.
async fn forwarder(target: String, key: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let own = listener.local_addr().unwrap().to_string();
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let (own2, target_host) = (own.clone(), target.trim_start_matches("http://").to_string());
    let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
        let (client, key, target, own, target_host) =
            (client.clone(), key.clone(), target.clone(), own2.clone(), target_host.clone());
        async move {
            let (parts, body) = req.into_parts();
            let body = axum::body::to_bytes(body, 16 << 20).await.unwrap_or_default();
            let url = format!("{target}{}", parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/"));
            let mut out = client.request(parts.method.clone(), url).body(body);
            for (name, value) in parts.headers.iter() {
                if name == "host" {
                    let host = value.to_str().unwrap_or_default();
                    out = out.header("host", if host == own { target_host.as_str() } else { host });
                } else if name == "origin" && value.to_str().is_ok_and(|o| o == format!("http://{own}")) {
                    out = out.header("origin", format!("http://{target_host}"));
                } else if name != "content-length" {
                    out = out.header(name, value);
                }
            }
            let resp = match out.bearer_auth(&key).send().await {
                Ok(r) => r,
                Err(e) => return (axum::http::StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
            };
            let mut b = axum::http::Response::builder().status(resp.status().as_u16());
            for (name, value) in resp.headers() {
                if name != "content-length" && name != "transfer-encoding" {
                    b = b.header(name, value);
                }
            }
            b.body(axum::body::Body::from_stream(resp.bytes_stream())).unwrap()
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.ok() });
    format!("http://{own}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_scenarios_pass_on_every_mount() {
    let (node, suite) = (tools().join(".bin/node"), tools().join("@modelcontextprotocol/conformance/dist/index.js"));
    if !suite.exists() || !node.exists() {
        missing_external(format!("the conformance suite at {}", suite.display()), "run tests/external/setup.sh");
        return;
    }
    let env = Env::new();
    env.json(&["auth", "rotate", "admin", "--yes", "--json"]);
    let key = env.bridge_key("conformance", &["memory", "admin"]);
    let server = env.serve();
    let base = forwarder(format!("http://127.0.0.1:{}", server.port), key).await;
    for mount in ["agents", "memory", "admin"] {
        let url = format!("{base}/mcp/{mount}/mcp");
        let out = tokio::task::spawn_blocking({
            let (node, suite) = (node.clone(), suite.clone());
            move || Command::new(node).arg(suite).args(["server", "--url", &url]).output().unwrap()
        })
        .await
        .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let summary: Vec<(bool, String)> = text
            .lines()
            .filter_map(|l| {
                let (ok, rest) = match l.chars().next()? {
                    '✓' => (true, &l['✓'.len_utf8()..]),
                    '✗' => (false, &l['✗'.len_utf8()..]),
                    _ => return None,
                };
                Some((ok, rest.trim().split(':').next()?.to_string()))
            })
            .collect();
        assert!(summary.len() >= PROTOCOL.len(), "{mount}: no summary in the suite's output:\n{text}");
        for p in PROTOCOL {
            assert!(
                summary.iter().any(|(ok, s)| *ok && s == p),
                "{mount}: protocol scenario {p} did not pass:\n{text}"
            );
        }
        for (ok, s) in &summary {
            assert!(
                *ok || FIXTURE.contains(&s.as_str()),
                "{mount}: scenario {s} failed and is not a fixture scenario:\n{text}"
            );
        }
    }
    server.terminate().await;
}
