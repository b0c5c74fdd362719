//! An MCP client for tests: the real rmcp Streamable-HTTP client over TCP against a running
//! `hal0 serve`, and tool calls read back as structured JSON or the error text.

use super::Server;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;

pub type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// Connect to `/mcp/<mount>/mcp` with a bearer key (and `X-hal0-Private: 1` when `private`).
pub async fn connect_with(server: &Server, mount: &str, key: &str, private: bool) -> Client {
    let mut headers = std::collections::HashMap::new();
    if private {
        headers.insert(
            reqwest::header::HeaderName::from_static("x-hal0-private"),
            reqwest::header::HeaderValue::from_static("1"),
        );
    }
    let cfg = StreamableHttpClientTransportConfig::with_uri(server.url(&format!("/mcp/{mount}/mcp")))
        .auth_header(key.to_string())
        .custom_headers(headers);
    ().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake")
}

/// Connect to `hal0-agents`.
pub async fn connect(server: &Server, key: &str) -> Client {
    connect_with(server, "agents", key, false).await
}

/// Call a tool the server must refuse with a JSON-RPC error: `(code, hal0's code in data,
/// message)`. Panics on a result.
pub async fn call_rpc_error(c: &Client, tool: &str, args: Value) -> (i32, String, String) {
    let p = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().expect("object args").clone());
    match c.call_tool(p).await {
        Err(rmcp::ServiceError::McpError(e)) => {
            let code = e.data.as_ref().and_then(|d| d["code"].as_str()).unwrap_or_default().to_string();
            (e.code.0, code, e.message.to_string())
        }
        other => panic!("{tool}: expected a JSON-RPC error, got {other:?}"),
    }
}

/// Call a tool: `Ok(structured content)` or `Err(the error text)`. Takes a client, or its
/// peer (cloned into a task that calls while the test goes on).
pub async fn call(c: &rmcp::Peer<rmcp::RoleClient>, tool: &str, args: Value) -> Result<Value, String> {
    let p = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().expect("object args").clone());
    let r = c.call_tool(p).await.expect("transport");
    if r.is_error == Some(true) {
        return Err(r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect());
    }
    Ok(r.structured_content.unwrap_or(Value::Null))
}

/// A client that declares sampling: it answers a sampling request at once, or (`patient`)
/// never, waiting to be told the request was withdrawn. It counts the requests it got and
/// the ones it was told were cancelled, and notes when it was last told.
#[derive(Clone, Default)]
pub struct Sampler {
    pub patient: bool,
    pub asked: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    pub cancelled: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    pub told_at: std::sync::Arc<std::sync::Mutex<Option<std::time::Instant>>>,
}

impl Sampler {
    /// How long before `t` the client was last told a request was withdrawn (zero when it
    /// was told after `t`; `None` when never).
    pub fn told_before(&self, t: std::time::Instant) -> Option<std::time::Duration> {
        self.told_at.lock().unwrap().map(|at| t.saturating_duration_since(at))
    }
}

#[allow(deprecated)] // sampling (SEP-2577); hal0 still relays it for the servers that ask
impl rmcp::ClientHandler for Sampler {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut caps = rmcp::model::ClientCapabilities::default();
        caps.sampling = Some(Default::default());
        rmcp::model::ClientConfig::new(caps, rmcp::model::Implementation::new("sampler", "1"))
    }

    async fn create_message(
        &self,
        _: rmcp::model::CreateMessageRequestParams,
        ctx: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        use std::sync::atomic::Ordering;
        self.asked.fetch_add(1, Ordering::SeqCst);
        if !self.patient {
            let m = rmcp::model::SamplingMessage::assistant_text("from the consumer's model");
            return Ok(rmcp::model::CreateMessageResult::new(m, "consumer-model".into()));
        }
        tokio::select! {
            () = ctx.ct.cancelled() => {
                *self.told_at.lock().unwrap() = Some(std::time::Instant::now());
                self.cancelled.fetch_add(1, Ordering::SeqCst);
            }
            () = tokio::time::sleep(std::time::Duration::from_secs(30)) => {}
        }
        Err(rmcp::ErrorData::internal_error("no answer", None))
    }
}
