//! The real rmcp client over TCP against `hal0 serve`: handshake, server names and
//! versions, tools/list on each mount, and a tools/call of the admin `version_info` tool.

use crate::support::*;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

async fn connect(url: String, key: &str) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let cfg = StreamableHttpClientTransportConfig::with_uri(url).auth_header(key.to_string());
    ().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake")
}

#[tokio::test]
async fn each_mount_reports_its_name_and_tools() {
    let env = Env::new();
    let key = env.bridge_key("rmcp", &["memory", "admin"]);
    let server = env.serve();
    for (mount, name) in [("agents", "hal0-agents"), ("memory", "hal0-memory"), ("admin", "hal0-admin")] {
        let client = connect(server.url(&format!("/mcp/{mount}/mcp")), &key).await;
        let info = client.peer_info().expect("server info");
        let impl_ = info.server_info.as_ref().expect("serverInfo");
        assert_eq!(impl_.name, name);
        assert_eq!(impl_.version, env!("CARGO_PKG_VERSION"));
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        if mount == "admin" {
            assert!(names.contains(&"version_info".to_string()), "{names:?}");
            assert!(names.contains(&"bridge_client_list".to_string()), "{names:?}");
            let args = serde_json::json!({"args": {}}).as_object().unwrap().clone();
            let r = client
                .call_tool(rmcp::model::CallToolRequestParams::new("version_info").with_arguments(args))
                .await
                .unwrap();
            let v = r.structured_content.expect("structured result");
            assert_eq!(v["name"], "hal0");
            assert_eq!(v["mcp_servers"], serde_json::json!(["hal0-agents", "hal0-memory", "hal0-admin", "hal0-relay"]));
            let r = client.call_tool(rmcp::model::CallToolRequestParams::new("bridge_client_list")).await.unwrap();
            let v = r.structured_content.unwrap();
            assert_eq!(v["count"], 1);
            assert_eq!(v["clients"][0]["name"], "rmcp");
            assert!(!v.to_string().contains(&key), "a key never leaves the store");
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_key_without_the_scope_cannot_connect() {
    let env = Env::new();
    let key = env.bridge_key("narrow", &[]);
    let server = env.serve();
    let cfg = StreamableHttpClientTransportConfig::with_uri(server.url("/mcp/admin/mcp")).auth_header(key);
    let r = ().serve(StreamableHttpClientTransport::from_config(cfg)).await;
    assert!(r.is_err(), "the admin mount refuses a key without the admin scope");
}
