//! How hal0 answers MCP clients where the protocol leaves a choice (issue 15's manners):
//! a call of a tool the mount does not offer gets the same JSON-RPC error on every mount,
//! with hal0's code in `data`, and lands in the audit log with that code.

use crate::support::mcp::{call_rpc_error, connect_with};
use crate::support::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_answered_alike_on_every_mount() {
    let env = Env::new();
    let key = env.bridge_key("ci", &["agents", "memory", "admin", "relay"]);
    let server = env.serve();
    for mount in ["agents", "memory", "admin", "relay"] {
        let c = connect_with(&server, mount, &key, false).await;
        let (rpc, code, message) = call_rpc_error(&c, "no_such_tool", json!({"x": 1})).await;
        assert_eq!(rpc, -32602, "{mount}: {message}");
        assert_eq!(code, "mcp.unknown_tool", "{mount}: {message}");
        assert!(message.contains("no_such_tool") && message.contains("tools/list"), "{mount}: {message}");
        // The session goes on: a known tool still answers.
        let tools = c.list_all_tools().await.expect("tools/list after the refusal");
        assert!(!tools.is_empty(), "{mount}");
        c.cancel().await.ok();
    }
    // hal0-admin's delegated memory_* tools answer the same way.
    let admin = connect_with(&server, "admin", &key, false).await;
    assert_eq!(call_rpc_error(&admin, "memory_no_such_tool", json!({})).await.1, "mcp.unknown_tool");
    let rows = env.json(&["activity", "list", "--tool", "no_such_tool", "--json"]);
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 4, "one row per mount: {rows:?}");
    assert!(rows.iter().all(|r| r["verdict"] == "error" && r["result_code"] == "mcp.unknown_tool"), "{rows:?}");
    server.terminate().await;
}
