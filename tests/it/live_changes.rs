//! Changes made at the shell while `hal0 serve` runs: revoke and rotate stop the old key on
//! the next request, and an open SSE stream ends with an `event: revoked` frame.

use crate::support::*;
use std::time::Duration;

async fn status_with(http: &reqwest::Client, server: &Server, key: &str) -> u16 {
    mcp_post(http, &server.url("/mcp/agents/mcp"), Some(key), &initialize_body())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn revoke_and_rotate_apply_on_the_next_request() {
    let env = Env::new();
    let key = env.bridge_key("ws", &[]);
    let server = env.serve();
    let http = reqwest::Client::new();
    assert_eq!(status_with(&http, &server, &key).await, 200);
    let new = env.json(&["bridge", "rotate", "ws", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    assert_eq!(status_with(&http, &server, &key).await, 401, "old key right after rotate");
    assert_eq!(status_with(&http, &server, &new).await, 200);
    env.ok(&["bridge", "scopes", "ws", "memory"]);
    let r = mcp_post(&http, &server.url("/mcp/memory/mcp"), Some(&new), &initialize_body()).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200, "a new scope applies at once");
    env.ok(&["bridge", "revoke", "ws", "--yes"]);
    assert_eq!(status_with(&http, &server, &new).await, 401, "revoked key right after revoke");

    let admin = env.json(&["auth", "rotate", "admin", "--json"])["key"].as_str().unwrap().to_string();
    let get = |k: String| {
        let http = http.clone();
        let url = server.url("/api/status");
        async move { http.get(url).header("authorization", format!("Bearer {k}")).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(get(admin.clone()).await, 200);
    let admin2 = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    assert_eq!(get(admin.clone()).await, 401, "old admin key right after rotate");
    assert_eq!(get(admin2).await, 200);
}

/// Open an MCP session and its standalone GET SSE stream; return the streaming response.
pub(crate) async fn open_stream(http: &reqwest::Client, url: &str, key: &str) -> reqwest::Response {
    let r = mcp_post(http, url, Some(key), &initialize_body()).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let sid = r.headers().get("mcp-session-id").unwrap().to_str().unwrap().to_string();
    let _ = r.text().await;
    let n = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = mcp_post(http, url, Some(key), &n).header("mcp-session-id", &sid).send().await.unwrap();
    assert!(r.status().is_success());
    let s = http
        .get(url)
        .header("accept", "text/event-stream")
        .header("authorization", format!("Bearer {key}"))
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(s.status().as_u16(), 200);
    assert!(s.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    s
}

/// Read the stream until it ends; the collected text.
pub(crate) async fn drain(mut s: reqwest::Response, limit: Duration) -> String {
    let mut text = String::new();
    let _ = tokio::time::timeout(limit, async {
        while let Ok(Some(chunk)) = s.chunk().await {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    text
}

#[tokio::test]
async fn open_streams_end_with_revoked_frame() {
    let env = Env::new();
    let key = env.bridge_key("ws", &[]);
    let other = env.bridge_key("other", &[]);
    let server = env.serve();
    let http = reqwest::Client::new();
    let url = server.url("/mcp/agents/mcp");
    let stream = open_stream(&http, &url, &key).await;
    let bystander = open_stream(&http, &url, &other).await;
    env.ok(&["bridge", "revoke", "ws", "--yes"]);
    let text = drain(stream, Duration::from_secs(20)).await;
    assert!(text.contains("event: revoked"), "stream text: {text:?}");
    // The other client's stream is untouched: it neither ends nor says revoked.
    let mut b = bystander;
    let mut seen = String::new();
    let ended = tokio::time::timeout(Duration::from_millis(1500), async {
        while let Ok(Some(c)) = b.chunk().await {
            seen.push_str(&String::from_utf8_lossy(&c));
        }
    })
    .await;
    assert!(ended.is_err(), "the other client's stream must stay open: {seen:?}");
    assert!(!seen.contains("revoked"), "{seen:?}");

    // Rotation of a box key ends admin streams the same way.
    let admin = env.json(&["auth", "rotate", "admin", "--json"])["key"].as_str().unwrap().to_string();
    let s = open_stream(&http, &server.url("/mcp/admin/mcp"), &admin).await;
    env.ok(&["auth", "rotate", "admin", "--yes"]);
    let text = drain(s, Duration::from_secs(20)).await;
    assert!(text.contains("event: revoked"), "stream text: {text:?}");
}
