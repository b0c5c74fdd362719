//! The optional export of ended relay exchanges to Langfuse (`[relay.langfuse]`), meaning
//! for meaning what the hermes-bridge relay exports: each exchange, once it ended (answered,
//! failed or refused; never while pending), is a `trace-create` for its conversation (id =
//! conversation_id, name `hermes-conversation`) and a `span-create` for the ask (id =
//! request_id, name `ask_agent`, input `{from, to, message}`, output `{answer}` or `{error}`,
//! startTime and endTime the exchange's). An ask refused before it had a conversation is its
//! own trace (id = request_id).
//!
//! This module owns the keys (`LANGFUSE_PUBLIC_KEY` and `LANGFUSE_SECRET_KEY`, read from
//! api.env, never from hal0.toml, never formatted into a log or an error), the queue and the
//! one task that sends. An ask never waits for Langfuse: [`Exporter::end`] puts the exchange
//! on a bounded queue (when full the exchange is dropped and counted); the task gathers
//! batches (up to [`MAX_EVENTS`] events or `flush_ms`) and POSTs them to Langfuse's public
//! ingestion API (`/api/public/ingestion`, HTTP Basic auth) with hal0's outbound client.
//! Failures, per-event errors of a 207 answer and drops are warned at most once a minute;
//! nothing is retried. [`Exporter::flush`] sends what is queued when the daemon stops,
//! within a bound.

use super::history::{Exchange, Write};
use crate::base::error::{Error, Result};
use crate::base::logfmt::throttle::{Throttle, held_back};
use crate::config::Config;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The api.env variable holding the Langfuse project's public key (the Basic auth user).
pub const PUBLIC_KEY: &str = "LANGFUSE_PUBLIC_KEY";
/// The api.env variable holding the Langfuse project's secret key (the Basic auth password).
pub const SECRET_KEY: &str = "LANGFUSE_SECRET_KEY";
/// Trace name of a conversation, as the hermes-bridge relay names it.
pub const TRACE_NAME: &str = "hermes-conversation";
/// Span name of one ask, as the hermes-bridge relay names it.
pub const SPAN_NAME: &str = "ask_agent";
/// Ended exchanges waiting to be sent at most; past it new ones are dropped (and counted).
pub const QUEUE: usize = 10_000;
/// Events in one request at most (each exchange is two).
pub const MAX_EVENTS: usize = 100;
/// Bytes of one request body at most (Langfuse takes 3.5 MB); a single larger exchange
/// still goes alone.
const MAX_BODY_BYTES: usize = 3_000_000;
/// How long one request to Langfuse may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of Langfuse's answer a warning quotes.
const QUOTE_BYTES: usize = 300;

/// The Langfuse project's keys. `Debug` never shows the secret.
#[derive(Clone)]
pub struct Keys {
    public: String,
    secret: String,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys").field("public", &self.public).field("secret", &"****").finish()
    }
}

impl Keys {
    pub fn new(public: impl Into<String>, secret: impl Into<String>) -> Keys {
        Keys { public: public.into(), secret: secret.into() }
    }

    /// The keys set in the env file `api_env`; `relay.langfuse_keys_missing` names each one
    /// that is not set and what to do.
    pub fn read(api_env: &Path) -> Result<Keys> {
        let public = crate::base::envfile::get_var(api_env, PUBLIC_KEY)?;
        let secret = crate::base::envfile::get_var(api_env, SECRET_KEY)?;
        match (public, secret) {
            (Some(public), Some(secret)) => Ok(Keys { public, secret }),
            (public, secret) => {
                let missing: Vec<&str> = [(public.is_none(), PUBLIC_KEY), (secret.is_none(), SECRET_KEY)]
                    .into_iter()
                    .filter_map(|(gone, name)| gone.then_some(name))
                    .collect();
                Err(Error::invalid(
                    "relay.langfuse_keys_missing",
                    format!(
                        "[relay.langfuse] is enabled but {} {} not set in {}: ended exchanges are not exported. \
                         Add {PUBLIC_KEY}=… and {SECRET_KEY}=… (the keys of your Langfuse project's settings) to \
                         that file and restart hal0 serve, or set relay.langfuse.enabled = false",
                        missing.join(" and "),
                        if missing.len() == 1 { "is" } else { "are" },
                        api_env.display()
                    ),
                ))
            }
        }
    }
}

/// Whether `config` asks for the export: `Ok(None)` when it does not (the relay or the
/// export is off), the keys when it does and they are set, `relay.langfuse_keys_missing`
/// when one is not.
pub fn keys_for(config: &Config, api_env: &Path) -> Result<Option<Keys>> {
    if !(config.relay.enabled && config.relay.langfuse.enabled) {
        return Ok(None);
    }
    Keys::read(api_env).map(Some)
}

/// The ingestion endpoint under `base_url`.
pub fn ingestion_url(base_url: &str) -> String {
    format!("{}/api/public/ingestion", base_url.trim().trim_end_matches('/'))
}

/// The current time, RFC 3339 with fractional seconds (an event's envelope timestamp).
fn now_precise() -> String {
    time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// The two ingestion events of ended exchange `ex`, their envelopes stamped `now`:
/// `trace-create` (the conversation) then `span-create` (the ask). `None` while `ex` is
/// pending.
pub fn events(ex: &Exchange, now: &str) -> Result<Option<[Value; 2]>> {
    let Some(ended_at) = &ex.ended_at else { return Ok(None) };
    if ex.status == "pending" {
        return Ok(None);
    }
    // An ask refused before it had a conversation has no conversation id: its own trace.
    let trace_id = if ex.conversation_id.is_empty() { &ex.request_id } else { &ex.conversation_id };
    let output = match &ex.answer {
        Some(answer) => json!({"answer": answer}),
        None => json!({"error": ex.error.as_deref().unwrap_or(&ex.status)}),
    };
    let trace = json!({
        "id": crate::base::token::uuid4()?,
        "timestamp": now,
        "type": "trace-create",
        "body": {"id": trace_id, "name": TRACE_NAME},
    });
    let span = json!({
        "id": crate::base::token::uuid4()?,
        "timestamp": now,
        "type": "span-create",
        "body": {
            "id": ex.request_id,
            "traceId": trace_id,
            "name": SPAN_NAME,
            "startTime": ex.started_at,
            "endTime": ended_at,
            "input": {"from": ex.from, "to": ex.to, "message": ex.message},
            "output": output,
        },
    });
    Ok(Some([trace, span]))
}

/// `start` as `end` (the history's end of the same ask) leaves it.
fn ended(start: &Exchange, end: &Write) -> Exchange {
    match end {
        Write::Start(ex, _) => (**ex).clone(),
        Write::End { outcome, at, .. } => {
            let mut ex = start.clone();
            match outcome {
                Ok(answer) => {
                    ex.status = "ok".into();
                    ex.answer = Some(answer.clone());
                    ex.error = None;
                }
                Err(why) => {
                    ex.status = why.clone();
                    ex.answer = None;
                    ex.error = Some(why.clone());
                }
            }
            ex.ended_at = Some(at.clone());
            ex
        }
    }
}

/// The daemon's exporter: the queue's sending side and the task that empties it.
pub struct Exporter {
    tx: mpsc::Sender<Exchange>,
    dropped: AtomicU64,
    full: Throttle,
    stop: CancellationToken,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Exporter {
    /// The exporter `config` asks for, its task started (on the current Tokio runtime):
    /// `Ok(None)` when the export is off, `relay.langfuse_keys_missing` when a key is not set
    /// in `api_env`.
    pub fn from_config(config: &Config, api_env: &Path) -> Result<Option<Exporter>> {
        match keys_for(config, api_env)? {
            Some(keys) => {
                Exporter::start(&config.relay.langfuse.base_url, config.relay.langfuse.flush_ms, keys).map(Some)
            }
            None => Ok(None),
        }
    }

    /// Start the task sending to the Langfuse at `base_url`, a batch at least every
    /// `flush_ms` while exchanges wait.
    pub fn start(base_url: &str, flush_ms: u64, keys: Keys) -> Result<Exporter> {
        let client = crate::base::outbound::build(
            crate::base::outbound::builder(None)?
                .timeout(REQUEST_TIMEOUT)
                .user_agent(concat!("hal0/", env!("CARGO_PKG_VERSION"))),
        )?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let stop = CancellationToken::new();
        let sink = Sink { client, url: ingestion_url(base_url), keys, failed: Throttle::default() };
        let task = tokio::spawn(run(rx, sink, Duration::from_millis(flush_ms), stop.clone()));
        tracing::info!("relay: exporting ended exchanges to Langfuse at {}", crate::base::term::safe_line(base_url));
        Ok(Exporter { tx, dropped: AtomicU64::new(0), full: Throttle::default(), stop, task: Mutex::new(Some(task)) })
    }

    /// Export the ask `start` as `end` (its history end) leaves it. Never waits.
    pub fn end(&self, start: &Exchange, end: &Write) {
        let ex = ended(start, end);
        if ex.ended_at.is_none() {
            return;
        }
        match self.tx.try_send(ex) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if let Some(held) = self.full.pass() {
                    tracing::warn!(
                        "relay: the Langfuse export queue is full ({QUEUE} exchanges waiting; is Langfuse slow or \
                         unreachable?): {n} exchange(s) not exported so far{}",
                        held_back(held)
                    );
                }
            }
            // The daemon is stopping and the queue was flushed.
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    /// Exchanges dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The daemon stops: send what is queued, within `bound`; then the task ends (what is
    /// left is dropped, and said).
    pub async fn flush(&self, bound: Duration) {
        self.stop.cancel();
        let task = self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(mut task) = task
            && tokio::time::timeout(bound, &mut task).await.is_err()
        {
            task.abort();
            tracing::warn!(
                "relay: the Langfuse export did not finish within {} ms at shutdown; what was left is not exported",
                bound.as_millis()
            );
        }
    }
}

/// Where the batches go.
struct Sink {
    client: reqwest::Client,
    url: String,
    keys: Keys,
    failed: Throttle,
}

/// The task: wait for an exchange, gather more until the batch is full or `every` passed,
/// send; on `stop`, send everything queued and end.
async fn run(mut rx: mpsc::Receiver<Exchange>, sink: Sink, every: Duration, stop: CancellationToken) {
    let per_batch = MAX_EVENTS / 2;
    loop {
        let first = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            x = rx.recv() => x,
        };
        let Some(first) = first else { break };
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + every;
        while batch.len() < per_batch {
            tokio::select! {
                biased;
                _ = stop.cancelled() => break,
                x = rx.recv() => match x {
                    Some(x) => batch.push(x),
                    None => break,
                },
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        sink.send(&batch).await;
    }
    rx.close();
    let mut rest = Vec::new();
    while let Ok(x) = rx.try_recv() {
        rest.push(x);
    }
    for batch in rest.chunks(per_batch) {
        sink.send(batch).await;
    }
}

impl Sink {
    /// Send `exchanges` (as many requests as the body bound needs).
    async fn send(&self, exchanges: &[Exchange]) {
        let now = now_precise();
        let mut bodies: Vec<Vec<String>> = vec![Vec::new()];
        let mut bytes = 0;
        for ex in exchanges {
            let events = match events(ex, &now) {
                Ok(Some(e)) => e,
                Ok(None) => continue,
                Err(e) => {
                    self.warn(&format!("cannot build the events of {}: {}", ex.request_id, e.message));
                    continue;
                }
            };
            let texts: Vec<String> = events.iter().map(Value::to_string).collect();
            let size: usize = texts.iter().map(|t| t.len() + 1).sum();
            let current = bodies.last_mut().expect("one body at least");
            if !current.is_empty() && bytes + size > MAX_BODY_BYTES {
                bodies.push(Vec::new());
                bytes = 0;
            }
            bytes += size;
            bodies.last_mut().expect("one body at least").extend(texts);
        }
        for events in bodies.iter().filter(|b| !b.is_empty()) {
            self.post(events).await;
        }
    }

    /// One POST of `events` (JSON texts); every failure is warned (throttled), never raised.
    async fn post(&self, events: &[String]) {
        let body = format!("{{\"batch\":[{}]}}", events.join(","));
        let sent = self
            .client
            .post(&self.url)
            .basic_auth(&self.keys.public, Some(&self.keys.secret))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await;
        let resp = match sent {
            Ok(r) => r,
            Err(e) => {
                let chain = crate::base::outbound::chain(&e);
                let why = match crate::base::outbound::tls_error(&self.url, &chain) {
                    Some(tls) => tls.message,
                    None if e.is_timeout() => format!("no answer within {} s", REQUEST_TIMEOUT.as_secs()),
                    None => chain,
                };
                self.warn(&format!(
                    "cannot reach Langfuse at {}: {why}; {} event(s) not exported",
                    self.url,
                    events.len()
                ));
                return;
            }
        };
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        if !status.is_success() {
            let hint = match status.as_u16() {
                401 | 403 => format!(" (check {PUBLIC_KEY} and {SECRET_KEY} in api.env)"),
                _ => String::new(),
            };
            self.warn(&format!(
                "Langfuse at {} answered HTTP {}{hint}: {}; {} event(s) not exported",
                self.url,
                status.as_u16(),
                quote(&text),
                events.len()
            ));
            return;
        }
        // 207 (or 200) lists the events Langfuse refused one by one.
        let errors = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("errors").and_then(Value::as_array).cloned())
            .unwrap_or_default();
        if let Some(first) = errors.first() {
            self.warn(&format!(
                "Langfuse at {} refused {} of {} event(s), e.g. {}",
                self.url,
                errors.len(),
                events.len(),
                quote(&first.to_string())
            ));
        }
    }

    /// Log `what` unless the same warning went out within the minute; the secret key is
    /// masked whatever the text holds.
    fn warn(&self, what: &str) {
        if let Some(held) = self.failed.pass() {
            let text = what.replace(&self.keys.secret, "****");
            tracing::warn!("relay: Langfuse export: {}{}", crate::base::redact::redact(&text), held_back(held));
        }
    }
}

/// The start of `text` on one line, for a log.
fn quote(text: &str) -> String {
    let one = text.replace(['\n', '\r'], " ");
    let (cut, more) = crate::base::redact::cut(one.trim(), QUOTE_BYTES);
    let shown = crate::base::term::safe_line(cut);
    if more { format!("{shown} …") } else { shown.into_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange() -> Exchange {
        Exchange {
            request_id: "req-1".into(),
            conversation_id: "conv-1".into(),
            from: "bot-a".into(),
            to: "bot-b".into(),
            message: "Quelle heure ? \"vite\"".into(),
            status: "pending".into(),
            answer: None,
            error: None,
            started_at: "2026-01-02T03:04:05Z".into(),
            ended_at: None,
        }
    }

    fn end(outcome: std::result::Result<&str, &str>) -> Write {
        Write::End {
            request_id: "req-1".into(),
            outcome: outcome.map(str::to_string).map_err(str::to_string),
            at: "2026-01-02T03:04:07Z".into(),
        }
    }

    fn strip_envelope_ids(mut v: [Value; 2]) -> [Value; 2] {
        for e in &mut v {
            let id = e["id"].as_str().unwrap();
            assert_eq!(id.len(), 36, "a UUID: {id}");
            e["id"] = json!("<uuid>");
        }
        v
    }

    #[test]
    fn an_answered_ask_is_a_trace_and_a_span_with_its_answer() {
        let ex = ended(&exchange(), &end(Ok("midi")));
        let got = strip_envelope_ids(events(&ex, "2026-01-02T03:04:08.5Z").unwrap().unwrap());
        assert_eq!(
            got,
            [
                json!({"id": "<uuid>", "timestamp": "2026-01-02T03:04:08.5Z", "type": "trace-create",
                       "body": {"id": "conv-1", "name": "hermes-conversation"}}),
                json!({"id": "<uuid>", "timestamp": "2026-01-02T03:04:08.5Z", "type": "span-create",
                       "body": {"id": "req-1", "traceId": "conv-1", "name": "ask_agent",
                                "startTime": "2026-01-02T03:04:05Z", "endTime": "2026-01-02T03:04:07Z",
                                "input": {"from": "bot-a", "to": "bot-b", "message": "Quelle heure ? \"vite\""},
                                "output": {"answer": "midi"}}}),
            ]
        );
    }

    #[test]
    fn a_failed_ask_outputs_its_error_and_a_refusal_without_conversation_is_its_own_trace() {
        let ex = ended(&exchange(), &end(Err("timeout")));
        let [_, span] = events(&ex, "t").unwrap().unwrap();
        assert_eq!(span["body"]["output"], json!({"error": "timeout"}));
        assert_eq!(span["body"]["endTime"], "2026-01-02T03:04:07Z");

        let mut refused = exchange();
        refused.conversation_id = String::new();
        refused.status = "unknown_agent".into();
        refused.error = Some("unknown_agent".into());
        refused.ended_at = Some(refused.started_at.clone());
        let [trace, span] = events(&ended(&exchange(), &Write::Start(Box::new(refused), None)), "t").unwrap().unwrap();
        assert_eq!(trace["body"]["id"], "req-1");
        assert_eq!(span["body"]["traceId"], "req-1");
        assert_eq!(span["body"]["output"], json!({"error": "unknown_agent"}));
        assert_eq!(span["body"]["startTime"], span["body"]["endTime"]);
    }

    #[test]
    fn nothing_is_sent_for_a_pending_exchange() {
        assert!(events(&exchange(), "t").unwrap().is_none());
    }

    #[test]
    fn keys_are_read_from_api_env_and_a_missing_one_is_named() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("api.env");
        std::fs::write(&p, "HAL0_ADMIN_KEY=x\nLANGFUSE_PUBLIC_KEY=pk-lf-1\n").unwrap();
        let e = Keys::read(&p).unwrap_err();
        assert_eq!(e.code, "relay.langfuse_keys_missing");
        assert!(
            e.message.contains("LANGFUSE_SECRET_KEY is not set") && !e.message.contains("PUBLIC_KEY is"),
            "{}",
            e.message
        );
        std::fs::write(&p, "LANGFUSE_PUBLIC_KEY=pk-lf-1\nLANGFUSE_SECRET_KEY=sk-lf-2\n").unwrap();
        let k = Keys::read(&p).unwrap();
        assert_eq!((k.public.as_str(), k.secret.as_str()), ("pk-lf-1", "sk-lf-2"));
        assert!(!format!("{k:?}").contains("sk-lf-2"));
        std::fs::remove_file(&p).unwrap();
        let e = Keys::read(&p).unwrap_err();
        assert!(e.message.contains("LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are not set"), "{}", e.message);
    }

    #[test]
    fn the_export_is_off_unless_the_relay_and_the_section_are_on() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("api.env");
        let mut c = Config::default();
        assert!(keys_for(&c, &p).unwrap().is_none());
        c.relay.langfuse.enabled = true;
        assert_eq!(keys_for(&c, &p).unwrap_err().code, "relay.langfuse_keys_missing");
        c.relay.enabled = false;
        assert!(keys_for(&c, &p).unwrap().is_none());
        assert_eq!(ingestion_url("https://lf.example/base/ "), "https://lf.example/base/api/public/ingestion");
    }
}
