//! The guard's auth-off rule through the whole router, in process: requests as if from a
//! peer on the LAN (a documentation address in the connection info; nothing is sent
//! anywhere) and from the box itself, against a store in a temporary directory.

use super::{build_state, router};
use crate::base::paths::Paths;
use crate::config::Config;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use std::net::SocketAddr;
use tower::ServiceExt;

struct Box0 {
    _dir: tempfile::TempDir,
    paths: Paths,
    cancel: tokio_util::sync::CancellationToken,
}

impl Box0 {
    fn new() -> Box0 {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths {
            config_dir: dir.path().join("etc"),
            state_dir: dir.path().join("var"),
            config_source: "test".into(),
            state_source: "test".into(),
        };
        Box0 { _dir: dir, paths, cancel: tokio_util::sync::CancellationToken::new() }
    }

    /// Send one request from `peer` through a router built for `config`.
    async fn send(&self, config: &Config, peer: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        let state = build_state(self.paths.clone(), config.clone(), 8080, &self.cancel).unwrap();
        let app = router(state, &self.cancel);
        let mut b = Request::builder().method(method).uri(path).header("host", "127.0.0.1:8080");
        if body.is_some() {
            b = b.header("content-type", "application/json");
        }
        let mut req = b.body(body.map(|s| Body::from(s.to_string())).unwrap_or_else(Body::empty)).unwrap();
        let peer: SocketAddr = peer.parse().unwrap();
        req.extensions_mut().insert(ConnectInfo(peer));
        let resp = app.oneshot(req).await.unwrap();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), 64 << 20).await.unwrap();
        (status.as_u16(), String::from_utf8_lossy(&bytes).into_owned())
    }
}

impl Drop for Box0 {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

const LAN: &str = "192.0.2.7:50000";
const MINT: &str = r#"{"name":"x","scopes":["agents","memory","admin"]}"#;
const PLANT: &str = r#"{"key":"hermes.restart_command","value":"touch /tmp/pwned"}"#;

#[tokio::test]
async fn with_auth_off_the_network_changes_nothing_and_reads_only_when_allowed() {
    let b = Box0::new();
    let config = Config::default();
    // The audit's two requests, from the LAN: refused before any handler.
    let (s, body) = b.send(&config, LAN, "POST", "/api/bridge/clients", Some(MINT)).await;
    assert_eq!(s, 403, "{body}");
    assert!(body.contains("auth.off_remote_write") && body.contains("hal0 auth rotate admin"), "{body}");
    let (s, body) = b.send(&config, LAN, "PUT", "/api/settings", Some(PLANT)).await;
    assert_eq!((s, body.contains("auth.off_remote_write")), (403, true), "{body}");
    // An MCP message is a write too.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    let (s, body) = b.send(&config, LAN, "POST", "/mcp/memory/mcp", Some(init)).await;
    assert_eq!(s, 403, "{body}");
    // Reads of the admin tier: refused too, unless the operator allowed the network.
    let (s, body) = b.send(&config, LAN, "GET", "/api/settings", None).await;
    assert_eq!((s, body.contains("auth.off_remote")), (403, true), "{body}");
    assert!(!body.contains("restart_command"), "{body}");
    // Open routes stay open.
    assert_eq!(b.send(&config, LAN, "GET", "/api/health", None).await.0, 200);

    let mut allowed = config.clone();
    allowed.network.allow_unauthenticated = true;
    assert_eq!(b.send(&allowed, LAN, "GET", "/api/settings", None).await.0, 200);
    let (s, body) = b.send(&allowed, LAN, "POST", "/api/bridge/clients", Some(MINT)).await;
    assert_eq!((s, body.contains("auth.off_remote_write")), (403, true), "allowed reads, never writes: {body}");

    // Nothing was minted or written by any of it.
    let store = crate::store::Store::open(&b.paths.db()).unwrap();
    assert!(crate::auth::bridge::list(&store).unwrap().is_empty());
    let toml = crate::base::paths::read_optional(&b.paths.hal0_toml()).unwrap().unwrap_or_default();
    assert!(!toml.contains("restart_command"), "{toml}");

    // The box itself still works with auth off (the CLI's and Hermes's way in).
    let (s, body) = b.send(&config, "127.0.0.1:40000", "POST", "/api/bridge/clients", Some(MINT)).await;
    assert_eq!(s, 200, "{body}");
    let (s, _) = b.send(&config, "[::1]:40000", "GET", "/api/settings", None).await;
    assert_eq!(s, StatusCode::OK.as_u16());
}

#[tokio::test]
async fn armed_the_network_is_judged_by_its_key_and_no_key_writes_a_program() {
    let b = Box0::new();
    let key = "hal0_admin_test_key_0123456789abcdef";
    crate::base::paths::write_atomic(&b.paths.api_env(), format!("HAL0_ADMIN_KEY={key}\n").as_bytes()).unwrap();
    let config = Config::default();
    // No key from the LAN: the ordinary 401, not the auth-off refusal.
    let (s, body) = b.send(&config, LAN, "POST", "/api/bridge/clients", Some(MINT)).await;
    assert_eq!(s, 401, "{body}");
    // The admin key over REST cannot plant a command either.
    let state = build_state(b.paths.clone(), config.clone(), 8080, &b.cancel).unwrap();
    let app = router(state, &b.cancel);
    for (k, v) in [
        ("hermes.restart_command", "\"touch /tmp/pwned\""),
        ("Hermes . Restart_Command", "\"x\""),
        ("network.bind", "\"0.0.0.0:80\""),
        ("mcp.catalog_url", "\"https://evil.example/c.json\""),
    ] {
        let mut req = Request::builder()
            .method("PUT")
            .uri("/api/settings")
            .header("host", "127.0.0.1:8080")
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {key}"))
            .body(Body::from(format!(r#"{{"key":"{k}","value":{v}}}"#)))
            .unwrap();
        req.extensions_mut().insert(ConnectInfo(LAN.parse::<SocketAddr>().unwrap()));
        let resp = app.clone().oneshot(req).await.unwrap();
        let status = resp.status().as_u16();
        let body = axum::body::to_bytes(resp.into_body(), 64 << 20).await.unwrap();
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 403, "{k}: {body}");
        assert!(body.contains("config.shell_only") && body.contains("sudo hal0 config set"), "{k}: {body}");
    }
    assert!(crate::base::paths::read_optional(&b.paths.hal0_toml()).unwrap().is_none(), "hal0.toml never written");
}

/// One body limit, hal0's: under it a REST body reaches its operation (axum's own 2 MiB
/// default used to answer a plain-text 413 first), over it the answer is hal0's JSON 413.
#[tokio::test]
async fn the_body_limit_is_the_one_hal0_states() {
    let b = Box0::new();
    let config = Config::default();
    let local = "127.0.0.1:40000";
    let value = "x".repeat(3 * 1024 * 1024);
    let body = format!(r#"{{"key":"network.public_url","value":"{value}"}}"#);
    let (s, text) = b.send(&config, local, "PUT", "/api/settings", Some(&body)).await;
    assert_eq!(s, 400, "{}", &text[..text.len().min(300)]);
    // The refusal names the key, not the 3 MiB it was given back.
    assert!(text.len() < 4096, "a refusal of {} bytes", text.len());
    assert!(text.contains("network.public_url") && !text.contains("request.too_large"), "{}", &text[..300]);
    let body = format!(r#"{{"key":"network.public_url","value":"{}"}}"#, "x".repeat(super::hygiene::MAX_BODY));
    let (s, text) = b.send(&config, local, "PUT", "/api/settings", Some(&body)).await;
    assert_eq!((s, text.contains("request.too_large") && text.contains("4 MiB")), (413, true), "{text}");
}
