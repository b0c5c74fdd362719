//! DNS-rebinding defence on `/mcp/*`: a foreign Host is a bare 421, a foreign Origin is
//! refused, and HAL0_MCP_ALLOWED_HOSTS / HAL0_MCP_ALLOWED_ORIGINS widen the lists.

use crate::support::*;

async fn post(server: &Server, key: &str, host: Option<&str>, origin: Option<&str>) -> (u16, String) {
    let http = reqwest::Client::new();
    let mut r = mcp_post(&http, &server.url("/mcp/agents/mcp"), Some(key), &initialize_body());
    if let Some(h) = host {
        r = r.header("host", h);
    }
    if let Some(o) = origin {
        r = r.header("origin", o);
    }
    let resp = r.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap_or_default())
}

#[tokio::test]
async fn host_and_origin_defaults() {
    let env = Env::new();
    let key = env.bridge_key("ws", &[]);
    let server = env.serve();
    let port = server.port;
    assert_eq!(post(&server, &key, None, None).await.0, 200);
    for ok in [format!("localhost:{port}"), format!("127.0.0.1:{port}"), "localhost".into(), format!("[::1]:{port}")] {
        assert_eq!(post(&server, &key, Some(&ok), None).await.0, 200, "{ok}");
    }
    let (s, body) = post(&server, &key, Some("evil.example"), None).await;
    assert_eq!(s, 421);
    assert_eq!(body, "Invalid Host header");
    assert_eq!(post(&server, &key, Some(&format!("127.0.0.1:{}", port.wrapping_add(1))), None).await.0, 421);
    // The hostname and <hostname>.local are in the default list.
    let host = gethostname();
    assert_eq!(post(&server, &key, Some(&format!("{host}:{port}")), None).await.0, 200, "{host}");
    assert_eq!(post(&server, &key, Some(&format!("{host}.local:{port}")), None).await.0, 200, "{host}.local");
    // Origins: same-box origins pass, foreign ones are refused with auth.forbidden.
    assert_eq!(post(&server, &key, None, Some(&format!("http://127.0.0.1:{port}"))).await.0, 200);
    let (s, body) = post(&server, &key, None, Some("https://evil.example")).await;
    assert_eq!(s, 403);
    assert!(body.contains("auth.forbidden"), "{body}");
    // REST routes are not subject to the MCP host list.
    let r = reqwest::Client::new().get(server.url("/api/health")).header("host", "evil.example").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
}

#[tokio::test]
async fn env_widens_and_star_disables() {
    let env = Env::new();
    let key = env.bridge_key("ws", &[]);
    let server = env.serve_with(&[
        ("HAL0_MCP_ALLOWED_HOSTS", "proxy.example:8443,wild.example:*"),
        ("HAL0_MCP_ALLOWED_ORIGINS", "https://app.example"),
    ]);
    assert_eq!(post(&server, &key, Some("proxy.example:8443"), None).await.0, 200);
    assert_eq!(post(&server, &key, Some("proxy.example:9"), None).await.0, 421);
    assert_eq!(post(&server, &key, Some("wild.example:1234"), None).await.0, 200);
    assert_eq!(post(&server, &key, None, Some("https://app.example")).await.0, 200);
    assert_eq!(post(&server, &key, None, Some("https://proxy.example:8443")).await.0, 200);
    assert_eq!(post(&server, &key, None, Some("https://other.example")).await.0, 403);
    drop(server);
    let server = env.serve_with(&[("HAL0_MCP_ALLOWED_HOSTS", "*")]);
    assert_eq!(post(&server, &key, Some("anything.example"), None).await.0, 200);
    assert_eq!(post(&server, &key, None, Some("https://anything.example")).await.0, 200);
}

fn gethostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string()
}
