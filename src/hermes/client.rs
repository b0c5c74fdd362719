//! HTTP client for one Hermes profile's API server (0.19.0 and newer): health,
//! capabilities, runs (start, status, the one-reader SSE event stream, approval, stop,
//! steer, clarify), with Hermes's answers mapped onto hal0's bridge error codes.

use super::Profile;
use crate::base::error::{Error, Kind, Result};
use futures::{Stream, StreamExt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

/// One event of a run's SSE stream: the `event` name and the whole JSON payload.
#[derive(Debug, Clone)]
pub struct HermesEvent {
    pub event: String,
    pub payload: Value,
}

#[derive(Clone)]
pub struct HermesClient {
    http: reqwest::Client,
    base: String,
    key: Option<String>,
    agent: String,
}

const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// The shared HTTP client (connection pool) for every profile: hal0's outbound client
/// (whose TLS trust does not need the system's CA store: a minimal box has none) with a
/// short connect timeout, Hermes being local.
pub fn http_client() -> reqwest::Client {
    crate::base::outbound::builder(None)
        .and_then(|b| crate::base::outbound::build(b.connect_timeout(Duration::from_secs(3))))
        .unwrap_or_else(|e| {
            tracing::error!("cannot build the HTTP client for Hermes: {}", e.message);
            reqwest::Client::new()
        })
}

impl HermesClient {
    pub fn new(http: reqwest::Client, profile: &Profile) -> HermesClient {
        HermesClient { http, base: profile.base_url.clone(), key: profile.key.clone(), agent: profile.agent_id.clone() }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn authed(&self, r: reqwest::RequestBuilder) -> Result<reqwest::RequestBuilder> {
        let key = self.key.as_deref().ok_or_else(|| {
            Error::new(
                "bridge.agent_unkeyed",
                Kind::Unavailable,
                format!("hal0 holds no API key for `{}` (set API_SERVER_KEY in the profile's .env)", self.agent),
            )
        })?;
        Ok(r.bearer_auth(key))
    }

    fn unavailable(&self, e: reqwest::Error) -> Error {
        tracing::warn!(agent = %self.agent, error = %e, "Hermes does not answer");
        Error::new("bridge.agent_unavailable", Kind::BadGateway, format!("Hermes (`{}`) does not answer", self.agent))
    }

    /// Map a non-success Hermes answer: 401/403 and 5xx are 502, other 4xx pass through.
    async fn refused(&self, resp: reqwest::Response) -> Error {
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        let msg = body["error"]["message"].as_str().or(body["error"].as_str()).unwrap_or("").to_string();
        let code = body["error"]["code"].as_str().unwrap_or("").to_string();
        let detail = crate::base::redact::redact(&msg).into_owned();
        let kind = match status.as_u16() {
            401 | 403 => Kind::BadGateway,
            s if s >= 500 => Kind::BadGateway,
            s => Kind::Upstream(s),
        };
        let what = if matches!(status.as_u16(), 401 | 403) { " (hal0's key for this profile was refused)" } else { "" };
        let code_part = if code.is_empty() { String::new() } else { format!(" {code}") };
        Error::new(
            "bridge.agent_refused",
            kind,
            format!(
                "Hermes (`{}`) refused the request: HTTP {}{code_part}{what}{}",
                self.agent,
                status.as_u16(),
                if detail.is_empty() { String::new() } else { format!(": {detail}") }
            ),
        )
    }

    async fn send(&self, r: reqwest::RequestBuilder) -> Result<reqwest::Response> {
        r.send().await.map_err(|e| self.unavailable(e))
    }

    /// `GET /health` (no auth) with a short timeout.
    pub async fn health(&self, timeout: Duration) -> Result<Value> {
        let resp = self.send(self.http.get(self.url("/health")).timeout(timeout)).await?;
        if !resp.status().is_success() {
            return Err(self.refused(resp).await);
        }
        resp.json().await.map_err(|e| self.unavailable(e))
    }

    /// `GET /v1/capabilities`.
    pub async fn capabilities(&self) -> Result<Value> {
        let resp =
            self.send(self.authed(self.http.get(self.url("/v1/capabilities")).timeout(REQUEST_TIMEOUT))?).await?;
        if !resp.status().is_success() {
            return Err(self.refused(resp).await);
        }
        resp.json().await.map_err(|e| self.unavailable(e))
    }

    /// `POST /v1/runs`; returns Hermes's run id.
    pub async fn start_run(
        &self,
        body: &Value,
        session_key: Option<&str>,
        idempotency_key: Option<&str>,
    ) -> Result<String> {
        let mut r = self.authed(self.http.post(self.url("/v1/runs")).json(body).timeout(REQUEST_TIMEOUT))?;
        if let Some(k) = session_key {
            r = r.header("X-Hermes-Session-Key", k);
        }
        if let Some(k) = idempotency_key {
            r = r.header("Idempotency-Key", k);
        }
        let resp = self.send(r).await?;
        if !resp.status().is_success() {
            return Err(self.refused(resp).await);
        }
        let v: Value = resp.json().await.map_err(|e| self.unavailable(e))?;
        v["run_id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| Error::new("bridge.agent_refused", Kind::BadGateway, "Hermes answered without a run_id"))
    }

    /// `GET /v1/runs/{id}`; `None` when Hermes does not know the run.
    pub async fn run(&self, id: &str) -> Result<Option<Value>> {
        let resp = self
            .send(self.authed(self.http.get(self.url(&format!("/v1/runs/{id}"))).timeout(REQUEST_TIMEOUT))?)
            .await?;
        if resp.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !resp.status().is_success() {
            return Err(self.refused(resp).await);
        }
        resp.json().await.map(Some).map_err(|e| self.unavailable(e))
    }

    /// `GET /v1/runs/{id}/events`: the run's one SSE stream; `None` on 404 (already read,
    /// expired, or unknown).
    pub async fn events(&self, id: &str) -> Result<Option<impl Stream<Item = Result<HermesEvent>> + Send + use<>>> {
        let resp = self.send(self.authed(self.http.get(self.url(&format!("/v1/runs/{id}/events"))))?).await?;
        if resp.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !resp.status().is_success() {
            return Err(self.refused(resp).await);
        }
        let agent = self.agent.clone();
        let bytes = resp.bytes_stream();
        let ready: std::collections::VecDeque<Result<HermesEvent>> = std::collections::VecDeque::new();
        let state = (bytes, crate::base::sse::SseParser::new(), ready, agent);
        let parsed = futures::stream::unfold(state, |(mut bytes, mut parser, mut ready, agent)| async move {
            loop {
                if let Some(item) = ready.pop_front() {
                    return Some((item, (bytes, parser, ready, agent)));
                }
                let broke = match bytes.next().await {
                    Some(Ok(chunk)) => match parser.push(&chunk) {
                        Ok(events) => {
                            ready.extend(events.iter().filter_map(|e| parse_event(&e.data)).map(Ok));
                            continue;
                        }
                        Err(o) => {
                            // The events before the oversize one still count; the break follows them.
                            ready.extend(o.before.iter().filter_map(|e| parse_event(&e.data)).map(Ok));
                            "an event larger than the limit".to_string()
                        }
                    },
                    Some(Err(e)) => e.to_string(),
                    None => return None,
                };
                tracing::warn!(agent = %agent, error = %broke, "Hermes event stream broke");
                parser = crate::base::sse::SseParser::new();
                ready.push_back(Err(Error::new(
                    "bridge.agent_unavailable",
                    Kind::BadGateway,
                    "the event stream broke",
                )));
            }
        });
        Ok(Some(parsed))
    }

    async fn post_json(&self, path: &str, body: Value) -> Result<Option<Value>> {
        let resp = self.send(self.authed(self.http.post(self.url(path)).json(&body).timeout(REQUEST_TIMEOUT))?).await?;
        if resp.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !resp.status().is_success() {
            return Err(self.refused(resp).await);
        }
        Ok(Some(resp.json().await.unwrap_or(Value::Null)))
    }

    /// `POST /v1/runs/{id}/approval` with the person's choice: `once`, `session`, `always` or `deny`.
    pub async fn approval(&self, id: &str, choice: &str) -> Result<Option<Value>> {
        self.post_json(&format!("/v1/runs/{id}/approval"), json!({"choice": choice})).await
    }

    /// `POST /v1/runs/{id}/stop`; `None` when Hermes answers 404 (the run finished).
    pub async fn stop(&self, id: &str) -> Result<Option<Value>> {
        self.post_json(&format!("/v1/runs/{id}/stop"), json!({})).await
    }

    /// `POST /v1/runs/{id}/steer` (newer Hermes).
    pub async fn steer(&self, id: &str, input: &str) -> Result<Option<Value>> {
        self.post_json(&format!("/v1/runs/{id}/steer"), json!({"input": input})).await
    }

    /// Answer a pending clarification through the path the profile advertises.
    pub async fn clarify(&self, path: &str, clarify_id: &str, answer: &str) -> Result<Option<Value>> {
        self.post_json(path, json!({"clarify_id": clarify_id, "response": answer})).await
    }
}

/// A Hermes event from one SSE event's data; comments, keep-alives and data that is not a
/// JSON object with an `event` name give `None`.
fn parse_event(data: &str) -> Option<HermesEvent> {
    let payload: Value = serde_json::from_str(data).ok()?;
    let event = payload["event"].as_str()?.to_string();
    Some(HermesEvent { event, payload })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames() {
        let events = |p: &mut crate::base::sse::SseParser, bytes: &[u8]| -> Vec<HermesEvent> {
            p.push(bytes).unwrap().iter().filter_map(|e| parse_event(&e.data)).collect()
        };
        let mut p = crate::base::sse::SseParser::new();
        let got = events(&mut p, b": keepalive\n\ndata: {\"event\":\"message.delta\",\"delta\":\"hi\"}\n\ndata: {\"ev");
        assert_eq!(got.len(), 1, "the keep-alive is no event; the partial frame waits");
        assert_eq!(got[0].event, "message.delta");
        assert_eq!(got[0].payload["delta"], "hi");
        let got = events(&mut p, b"ent\":\"run.completed\"}\r\n\r\n");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].event, "run.completed");
        let mut crlf = crate::base::sse::SseParser::new();
        assert_eq!(events(&mut crlf, b"data: {\"event\":\"run.completed\"}\r\n\r\n")[0].event, "run.completed");
    }
}
