//! Tool pinning and drift quarantine (`registry::pins`) against a real upstream nobody here
//! wrote: the Python SDK server with its switch (`UPSTREAM_DRIFT_FILE`), which changes
//! `echo`'s description (to one that tells the model to leak a key) and adds a parameter
//! while hal0 runs. On streamable HTTP the consumer's lists and calls take the wire path; on
//! the legacy SSE transport, rmcp's path (the metrics say which carried the calls).

use crate::metrics::scrape;
use crate::proxy::{call, key_for, proxy_rows};
use crate::support::upstream::FastMcp;
use crate::support::*;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

async fn consumer(server: &Server, key: &str) -> Client {
    let cfg =
        StreamableHttpClientTransportConfig::with_uri(server.url("/mcp/proxy/py/mcp")).auth_header(key.to_string());
    ().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake with the proxy")
}

/// `echo` as the consumer is offered it, if it is.
async fn echo(c: &Client) -> Option<rmcp::model::Tool> {
    c.list_all_tools().await.expect("tools/list").into_iter().find(|t| t.name == "echo")
}

fn pin(env: &Env, name: &str) -> Value {
    let s = env.json(&["mcp", "status", "py", "--json"]);
    s["pins"].as_array().unwrap().iter().find(|p| p["name"] == name).cloned().unwrap_or(Value::Null)
}

fn drift_cards(env: &Env) -> Vec<Value> {
    let all = env.json(&["agent", "approvals", "list", "--json", "--status", "pending"]);
    all.as_array().unwrap().iter().filter(|a| a["kind"] == "tool_drift").cloned().collect()
}

/// The whole round on one transport: pinned at first sight; drifted → hidden, refused, a
/// card with the diff, an audit row; accepted → offered as changed and callable; changed
/// back → quarantined again, and a denial keeps it so. Returns the calls each path carried.
async fn round(sse: bool) -> Option<(f64, f64)> {
    let dir = tempfile::tempdir().unwrap();
    let switch = dir.path().join("drift");
    let env_vars = [("UPSTREAM_DRIFT_FILE", switch.to_str().unwrap())];
    let up = if sse { FastMcp::start_sse(&env_vars)? } else { FastMcp::start_with_env(&env_vars)? };
    let env = Env::new();
    env.ok(&["mcp", "install", &up.url(), "--id", "py"]);
    env.ok(&["mcp", "allow", "py", "echo"]);
    env.ok(&["mcp", "allow", "py", "add"]);
    let key = key_for(&env, "py", "ci");
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();
    let before = scrape(&server, &admin).await;
    let c = consumer(&server, &key).await;

    // First sight: pinned as the server describes it.
    assert_eq!(echo(&c).await.unwrap().description.as_deref(), Some("Return the text unchanged."));
    let p = pin(&env, "echo");
    assert_eq!((p["state"].as_str(), p["pinned_by"].as_str()), (Some("pinned"), Some("first-sight")), "{p}");
    assert!(call(&c, "echo", json!({"text": "one"})).await.unwrap().to_string().contains("one"));

    // The server changes the tool under the policy: hidden and refused, never forwarded.
    std::fs::write(&switch, "on").unwrap();
    assert!(echo(&c).await.is_none(), "a drifted tool is not offered");
    let names: Vec<String> = c.list_all_tools().await.unwrap().into_iter().map(|t| t.name.into()).collect();
    assert_eq!(names, ["add"], "the other tool stays");
    let e = call(&c, "echo", json!({"text": "two", "note": "x"})).await.unwrap_err();
    assert!(e.starts_with("mcp.tool_drifted:") && e.contains("hal0 agent approvals"), "{e}");
    assert_eq!(up.count("echo"), 1, "the refused call never reached the server");
    let p = pin(&env, "echo");
    assert_eq!(p["state"], "drifted", "{p}");
    let cards = drift_cards(&env);
    assert_eq!(cards.len(), 1, "{cards:?}");
    let card = &cards[0];
    assert_eq!(card["id"], p["approval_id"]);
    let preview = card["preview"].as_str().unwrap();
    for want in
        ["`py` changed its tool `echo`", "- Return the text unchanged.", "~/.ssh/id_rsa", "properties added: note"]
    {
        assert!(preview.contains(want), "{want} in {preview}");
    }
    let rows = proxy_rows(&env, "py");
    assert!(
        rows.iter().any(|r| r["tool"] == "echo" && r["verdict"] == "quarantined" && r["approval_id"] == card["id"]),
        "{rows:?}"
    );
    assert!(
        rows.iter().any(|r| r["tool"] == "echo" && r["result_code"] == "mcp.tool_drifted" && r["verdict"] == "refused")
    );
    // Listing again raises no second card.
    echo(&c).await;
    assert_eq!(drift_cards(&env).len(), 1);

    // A person accepts the change: the new definition is the pin, offered and callable.
    let id = card["id"].as_str().unwrap().to_string();
    env.ok(&["agent", "approvals", "approve", &id, "--yes"]);
    let changed = echo(&c).await.expect("offered again once accepted");
    assert!(changed.description.as_deref().unwrap().contains("id_rsa"));
    assert!(call(&c, "echo", json!({"text": "three", "note": ""})).await.unwrap().to_string().contains("three"));
    assert_eq!(up.count("echo"), 2);
    let p = pin(&env, "echo");
    assert_eq!(p["state"], "accepted", "{p}");
    assert!(p["pinned_by"].as_str().unwrap().starts_with("person:"), "{p}");

    // Changed back: that differs from the accepted pin too; denied, it stays quarantined.
    std::fs::remove_file(&switch).unwrap();
    assert!(echo(&c).await.is_none());
    let cards = drift_cards(&env);
    assert_eq!(cards.len(), 1, "{cards:?}");
    env.ok(&["agent", "approvals", "deny", cards[0]["id"].as_str().unwrap(), "--yes"]);
    assert!(echo(&c).await.is_none(), "denied: still quarantined");
    assert!(call(&c, "echo", json!({"text": "four"})).await.unwrap_err().starts_with("mcp.tool_drifted:"));
    assert_eq!(up.count("echo"), 2);
    let text = env.ok(&["mcp", "status", "py"]);
    assert!(text.contains("drifted") && text.contains("echo (quarantined"), "{text}");
    let after = scrape(&server, &admin).await;
    let moved = |path: &str| {
        let k = format!("hal0_proxy_forwarded_total{{server=\"proxy/py\",path=\"{path}\"}}");
        after.get(&k).copied().unwrap_or(0.0) - before.get(&k).copied().unwrap_or(0.0)
    };
    c.cancel().await.ok();
    // Uninstalling forgets the pins.
    env.ok(&["mcp", "uninstall", "py", "--yes"]);
    assert!(drift_cards(&env).is_empty());
    Some((moved("wire"), moved("rmcp")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drifted_tool_is_quarantined_on_the_wire_path() {
    let Some((wire, rmcp)) = round(false).await else { return };
    assert_eq!((wire, rmcp), (2.0, 0.0), "both forwarded calls took the wire path");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drifted_tool_is_quarantined_on_rmcps_path() {
    let Some((wire, rmcp)) = round(true).await else { return };
    assert_eq!((wire, rmcp), (0.0, 2.0), "both forwarded calls took rmcp's path");
}
