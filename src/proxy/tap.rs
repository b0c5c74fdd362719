//! The HTTP client under rmcp's streamable-HTTP transport to an upstream, with one addition:
//! it notes the upstream's `Mcp-Session-Id` as rmcp sends it (rmcp keeps it private), so
//! the proxy's wire path ([`super::wire`]) can post to the same upstream session. Every
//! request is reqwest's own, unchanged.

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The upstream session rmcp last used (`None` for a server that issues none).
#[derive(Clone, Default)]
pub struct SessionNote(Arc<Mutex<Option<Arc<str>>>>);

impl SessionNote {
    pub fn get(&self) -> Option<Arc<str>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set(&self, id: &Option<Arc<str>>) {
        if let Some(id) = id {
            let mut cur = self.0.lock().unwrap_or_else(|p| p.into_inner());
            if cur.as_deref() != Some(id) {
                *cur = Some(id.clone());
            }
        }
    }
}

/// reqwest's client, noting the session id of every message rmcp posts.
#[derive(Clone)]
pub struct Tapped {
    pub http: reqwest::Client,
    pub session: SessionNote,
}

type Post = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;
type Events =
    Result<futures::stream::BoxStream<'static, Result<sse_stream::Sse, SseError>>, StreamableHttpError<reqwest::Error>>;

impl StreamableHttpClient for Tapped {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Post {
        self.post_message_with_response_limits(uri, message, session_id, auth, headers, Default::default()).await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Post {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(uri, message, session_id, auth, headers, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Post {
        self.session.set(&session_id);
        let out = self.http.post_message_with_response_limits(uri, message, session_id, auth, headers, limits).await;
        // The answer to `initialize` names the session before any message carries it.
        if let Ok(StreamableHttpPostResponse::Json(_, Some(id)) | StreamableHttpPostResponse::Sse(_, Some(id))) = &out {
            self.session.set(&Some(Arc::from(id.as_str())));
        }
        out
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        self.http.delete_session(uri, session_id, auth, headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Events {
        self.http.get_stream(uri, session_id, last_event_id, auth, headers).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Events {
        self.http
            .get_stream_with_max_sse_event_size(uri, session_id, last_event_id, auth, headers, max_sse_event_size)
            .await
    }
}
