//! hal0's MCP client of a remote box's `hal0-agents`: the real rmcp Streamable-HTTP client
//! with the remote's bridge key, hal0's TLS trust (the system store, the webpki roots and
//! the remote's own `ca_file`), and the box's tool errors (`<code>: <message>`) turned back
//! into hal0 errors with the same codes, so a script sees what the box said.

use super::Target;
use crate::base::error::{Error, Kind, Result};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;
use std::time::Duration;

/// The handshake and each call's transport limit (a run wait answers well before it).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// A connected session with a box's `hal0-agents`.
pub struct Client {
    session: rmcp::service::RunningService<rmcp::RoleClient, ()>,
    /// Which box, for messages.
    pub label: String,
}

fn label(t: &Target) -> String {
    match &t.name {
        Some(n) => format!("remote `{n}` ({})", t.url),
        None => t.url.clone(),
    }
}

fn refused(t: &Target) -> Error {
    let again = match &t.name {
        Some(n) => format!("`hal0 remote add {n} {} --key-stdin`", t.url),
        None => "HAL0_KEY".to_string(),
    };
    Error::unauthorized(
        "remote.key_refused",
        format!(
            "{} refused the key (revoked or rotated?): on the box, `hal0 bridge list` shows the client; get a new key with `hal0 bridge rotate NAME` and store it with {again}",
            label(t)
        ),
    )
}

fn unreachable(t: &Target, why: &str) -> Error {
    Error::unavailable("remote.unreachable", format!("cannot reach {}: {why}", label(t)))
}

/// Check the key: the box's `GET /api/bridge/me` (the client's name and scopes).
pub async fn whoami(t: &Target) -> Result<Value> {
    let http = crate::base::outbound::build(crate::base::outbound::builder(t.ca_file.as_deref())?)?;
    whoami_with(&http, t).await
}

async fn whoami_with(http: &reqwest::Client, t: &Target) -> Result<Value> {
    let me = http.get(format!("{}/api/bridge/me", t.url)).bearer_auth(&t.key).timeout(CONNECT_TIMEOUT).send().await;
    let r = match me {
        Err(e) => {
            let text = crate::base::outbound::chain(&e);
            if let Some(tls) = crate::base::outbound::tls_error(&t.url, &text) {
                return Err(tls);
            }
            return Err(unreachable(t, &crate::base::redact::redact(&text)));
        }
        Ok(r) if r.status() == reqwest::StatusCode::UNAUTHORIZED => return Err(refused(t)),
        Ok(r) if r.status() == reqwest::StatusCode::FORBIDDEN => {
            return Err(Error::forbidden(format!(
                "{} does not take this key on hal0-agents: it is not a bridge key (see `hal0 bridge add` on the box)",
                label(t)
            )));
        }
        Ok(r) if !r.status().is_success() => {
            return Err(unreachable(t, &format!("GET /api/bridge/me answered {}", r.status())));
        }
        Ok(r) => r,
    };
    r.json().await.map_err(|e| unreachable(t, &format!("GET /api/bridge/me did not answer JSON: {e}")))
}

/// Check the key (`GET /api/bridge/me`), then open an MCP session with `hal0-agents`.
pub async fn connect(t: &Target) -> Result<Client> {
    let http = crate::base::outbound::build(crate::base::outbound::builder(t.ca_file.as_deref())?)?;
    whoami_with(&http, t).await?;
    let cfg =
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp/agents/mcp", t.url)).auth_header(t.key.clone());
    let serving =
        tokio::time::timeout(CONNECT_TIMEOUT, ().serve(StreamableHttpClientTransport::with_client(http, cfg)));
    match serving.await {
        Err(_) => Err(unreachable(t, "the MCP handshake did not finish in time")),
        Ok(Err(e)) => Err(unreachable(t, &crate::base::redact::redact(&crate::base::outbound::chain(&e)))),
        Ok(Ok(session)) => Ok(Client { session, label: label(t) }),
    }
}

/// The kind of a box's error code, for the exit code: bad input, a missing thing, a
/// conflict, too many, or the box failing.
fn kind_of(code: &str) -> Kind {
    let what = code.split_once('.').map_or(code, |(_, w)| w);
    if code.starts_with("auth.") || what == "forbidden" || what.ends_with("_refused") {
        Kind::Forbidden
    } else if what.starts_with("invalid") || what.ends_with("_invalid") {
        Kind::Unprocessable
    } else if what.ends_with("not_found") || what.ends_with("unknown_agent") {
        Kind::NotFound
    } else if what.starts_with("too_many") || what.ends_with("limit") {
        Kind::TooMany
    } else if what.starts_with("run_not_running") || what.ends_with("conflict") {
        Kind::Conflict
    } else {
        Kind::BadGateway
    }
}

/// A tool's error text (`<code>: <message>`) as a hal0 error with that code, when hal0
/// knows it (`remote.failed` with the whole text otherwise).
fn tool_error(text: &str) -> Error {
    if let Some((code, message)) = text.split_once(": ")
        && let Some(known) = crate::base::codes::listed(code)
    {
        return Error::new(known, kind_of(code), message.to_string());
    }
    Error::new("remote.failed", Kind::BadGateway, text.to_string())
}

impl Client {
    /// Call tool `name` with `args` (the tool's own argument type); its structured answer.
    pub async fn call(&self, name: &str, args: &impl serde::Serialize) -> Result<Value> {
        let Ok(Value::Object(args)) = serde_json::to_value(args) else {
            return Err(Error::internal("tool arguments must be an object"));
        };
        let p = CallToolRequestParams::new(name.to_string()).with_arguments(args);
        let r = self.session.call_tool(p).await.map_err(|e| {
            Error::unavailable(
                "remote.unreachable",
                format!("{}: {name} failed: {}", self.label, crate::base::redact::redact(&e.to_string())),
            )
        })?;
        if r.is_error == Some(true) {
            let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
            return Err(tool_error(&text));
        }
        Ok(r.structured_content.unwrap_or(Value::Null))
    }

    /// End the session (the box forgets it at once).
    pub async fn close(self) {
        let _ = self.session.cancel().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_errors_keep_the_boxs_code() {
        let e = tool_error("bridge.run_not_found: no such run");
        assert_eq!((e.code, e.kind, e.message.as_str()), ("bridge.run_not_found", Kind::NotFound, "no such run"));
        assert_eq!(crate::base::exit::of(&tool_error("bridge.invalid_timeout: at most 600").kind), 2);
        assert_eq!(crate::base::exit::of(&tool_error("auth.forbidden: no scope").kind), 4);
        let e = tool_error("something odd happened");
        assert_eq!((e.code, e.message.as_str()), ("remote.failed", "something odd happened"));
        assert_eq!(tool_error("nope.not_a_code: x").code, "remote.failed");
    }
}
