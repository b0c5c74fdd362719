//! Self-test of the in-process Hermes 0.19.0 fake (`tests/it/support/fake_hermes.rs`), driven with
//! reqwest directly.

use std::time::Duration;

use crate::support::fake_hermes::*;
use futures::StreamExt;
use serde_json::{Value, json};

const T: Duration = Duration::from_secs(10);

fn http() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap()
}

async fn post(h: &FakeHermes, path: &str, body: Value) -> reqwest::Response {
    http().post(h.url(path)).bearer_auth(h.key()).json(&body).send().await.unwrap()
}

async fn get(h: &FakeHermes, path: &str) -> reqwest::Response {
    http().get(h.url(path)).bearer_auth(h.key()).send().await.unwrap()
}

async fn status_json(resp: reqwest::Response) -> (u16, Value) {
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

async fn start_run(h: &FakeHermes, input: &str) -> String {
    let (status, body) = status_json(post(h, "/v1/runs", json!({"input": input})).await).await;
    assert_eq!(status, 202, "{body}");
    body["run_id"].as_str().unwrap().to_string()
}

#[derive(Debug, Clone)]
enum Frame {
    Data(Value),
    Comment(String),
}

/// Incremental SSE reader that checks the 0.19.0 framing: every frame is exactly one
/// `data: <json>` line or one `: comment` line, terminated by a blank line.
struct Sse {
    stream: futures::stream::BoxStream<'static, reqwest::Result<axum::body::Bytes>>,
    buf: Vec<u8>,
    raw: String,
}

impl Sse {
    async fn open(h: &FakeHermes, id: &str) -> Sse {
        let resp = get(h, &format!("/v1/runs/{id}/events")).await;
        assert_eq!(resp.status().as_u16(), 200);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        Sse { stream: resp.bytes_stream().boxed(), buf: Vec::new(), raw: String::new() }
    }

    /// Next frame; `Ok(None)` at a clean end of stream, `Err` if the connection broke.
    async fn next(&mut self) -> Result<Option<Frame>, String> {
        loop {
            if let Some(pos) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buf.drain(..pos + 2).collect();
                let text = String::from_utf8(frame[..pos].to_vec()).expect("utf-8 frame");
                assert!(!text.contains('\n'), "one line per frame: {text:?}");
                assert!(!text.starts_with("event:"), "no event: lines: {text:?}");
                if let Some(json) = text.strip_prefix("data: ") {
                    assert!(json.is_ascii(), "json.dumps escapes non-ASCII: {json}");
                    return Ok(Some(Frame::Data(serde_json::from_str(json).expect("data is JSON"))));
                }
                let comment = text.strip_prefix(": ").unwrap_or_else(|| panic!("unexpected frame {text:?}"));
                return Ok(Some(Frame::Comment(comment.to_string())));
            }
            match tokio::time::timeout(T, self.stream.next()).await.expect("SSE stalled") {
                Some(Ok(chunk)) => {
                    self.raw.push_str(&String::from_utf8_lossy(&chunk));
                    self.buf.extend_from_slice(&chunk);
                }
                Some(Err(e)) => return Err(e.to_string()),
                None => {
                    assert!(self.buf.is_empty(), "trailing partial frame {:?}", String::from_utf8_lossy(&self.buf));
                    return Ok(None);
                }
            }
        }
    }

    /// Read data frames until one has `event == name`; returns it.
    async fn until(&mut self, name: &str) -> Value {
        loop {
            match self.next().await.unwrap() {
                Some(Frame::Data(v)) if v["event"] == name => return v,
                Some(_) => {}
                None => panic!("stream ended before {name}"),
            }
        }
    }

    /// Read to the end; returns every frame (the stream must end cleanly).
    async fn rest(&mut self) -> Vec<Frame> {
        let mut frames = Vec::new();
        while let Some(f) = self.next().await.unwrap() {
            frames.push(f);
        }
        frames
    }
}

fn data(frames: &[Frame]) -> Vec<Value> {
    frames.iter().filter_map(|f| if let Frame::Data(v) = f { Some(v.clone()) } else { None }).collect()
}

fn deltas(events: &[Value]) -> Vec<String> {
    events.iter().filter(|e| e["event"] == "message.delta").map(|e| e["delta"].as_str().unwrap().to_string()).collect()
}

fn assert_common_fields(events: &[Value], run_id: &str) {
    for e in events {
        assert!(e["event"].is_string(), "{e}");
        assert_eq!(e["run_id"], run_id, "{e}");
        assert!(e["timestamp"].is_f64(), "timestamp is a float epoch: {e}");
        assert!(e["timestamp"].as_f64().unwrap() > 1.6e9);
    }
}

fn fast() -> FakeHermesOptions {
    FakeHermesOptions { keepalive: Duration::from_millis(200), ..Default::default() }
}

#[tokio::test]
async fn health_needs_no_auth_and_reports_version() {
    let h = FakeHermes::start(fast()).await;
    for path in ["/health", "/v1/health"] {
        let resp = http().get(h.url(path)).send().await.unwrap();
        assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
        let (status, body) = status_json(resp).await;
        assert_eq!(status, 200);
        assert_eq!(body, json!({"status": "ok", "platform": "hermes-agent", "version": "0.19.0"}));
    }
    assert!(h.base_url().starts_with("http://127.0.0.1:"));
    h.configure(|o| o.version = "not-a-version".into());
    let (_, body) = status_json(http().get(h.url("/health")).send().await.unwrap()).await;
    assert_eq!(body["version"], "not-a-version");
    // Profile prefix.
    let (status, _) = status_json(http().get(h.url("/p/worker1/health")).send().await.unwrap()).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn bad_or_missing_key_is_401_and_origin_is_403() {
    let h = FakeHermes::start(fast()).await;
    let expected =
        json!({"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": "invalid_api_key"}});
    let (s, b) = status_json(http().get(h.url("/v1/capabilities")).send().await.unwrap()).await;
    assert_eq!((s, &b), (401, &expected));
    let (s, b) =
        status_json(http().get(h.url("/v1/capabilities")).bearer_auth("wrong-key-0123456789").send().await.unwrap())
            .await;
    assert_eq!((s, &b), (401, &expected));
    let (s, _) = status_json(http().post(h.url("/v1/runs")).json(&json!({"input": "hi"})).send().await.unwrap()).await;
    assert_eq!(s, 401);
    assert_eq!(h.counters().runs_started, 0);
    assert_eq!(h.counters().unauthorized, 3);

    // Any Origin header is refused, with or without a key, even on /health.
    let r = http().get(h.url("/health")).header("origin", "http://evil.example").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let r =
        http().get(h.url("/v1/capabilities")).bearer_auth(h.key()).header("origin", "http://x").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 403);
    assert!(r.text().await.unwrap().is_empty());

    // Unknown routes are aiohttp's plain 404.
    let r = get(&h, "/v1/nope").await;
    assert_eq!(r.status().as_u16(), 404);
    assert_eq!(r.text().await.unwrap(), "404: Not Found");

    let log = h.requests();
    assert_eq!(log.len(), 6);
    assert_eq!(log[0].authorization, None);
    assert_eq!(log[1].authorization.as_deref(), Some("Bearer wrong-key-0123456789"));
    assert_eq!(log[3].origin.as_deref(), Some("http://evil.example"));
    assert_eq!(log[3].status, 403);
}

#[test]
#[should_panic(expected = "at least 16")]
fn short_key_is_refused() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        FakeHermes::start(FakeHermesOptions { key: "short".into(), ..Default::default() }).await;
    });
}

#[tokio::test]
async fn capabilities_without_and_with_upstream_extras() {
    let h = FakeHermes::start(fast()).await;
    let (s, caps) = status_json(get(&h, "/v1/capabilities").await).await;
    assert_eq!(s, 200);
    assert_eq!(caps["object"], "hermes.api_server.capabilities");
    for f in ["run_submission", "run_status", "run_events_sse", "run_stop", "run_approval_response", "approval_events"]
    {
        assert_eq!(caps["features"][f], true, "{f}");
    }
    assert!(caps["features"].get("run_steer").is_none());
    assert!(caps["features"].get("run_clarify").is_none());
    assert!(caps["endpoints"].get("run_steer").is_none());
    assert_eq!(caps["endpoints"]["run_events"], json!({"method": "GET", "path": "/v1/runs/{run_id}/events"}));

    // Without the options, steer and clarify routes do not exist (plain 404), even for a live run.
    let id = start_run(&h, "hello").await;
    for what in ["steer", "clarify"] {
        let r =
            post(&h, &format!("/v1/runs/{id}/{what}"), json!({"input": "x", "clarify_id": "c", "response": "r"})).await;
        assert_eq!(r.status().as_u16(), 404, "{what}");
    }
    // And CLARIFY is just text.
    let mut sse = Sse::open(&h, &id).await;
    sse.rest().await;
    let id = start_run(&h, "please CLARIFY").await;
    let v = h.wait_for_status(&id, "completed", T).await;
    assert_eq!(v["output"], "FAKE ANSWER: please CLARIFY");

    let h2 = FakeHermes::start(FakeHermesOptions { steer: true, clarify: true, ..fast() }).await;
    let (_, caps) = status_json(get(&h2, "/v1/capabilities").await).await;
    assert_eq!(caps["features"]["run_steer"], true);
    assert_eq!(caps["features"]["run_clarify"], true);
    assert_eq!(caps["endpoints"]["run_steer"], json!({"method": "POST", "path": "/v1/runs/{run_id}/steer"}));
    assert_eq!(caps["endpoints"]["run_clarify"], json!({"method": "POST", "path": "/v1/runs/{run_id}/clarify"}));
}

#[tokio::test]
async fn default_run_end_to_end_over_sse() {
    let h = FakeHermes::start(fast()).await;
    let resp = http()
        .post(h.url("/v1/runs"))
        .bearer_auth(h.key())
        .header("X-Hermes-Session-Key", "user-42")
        .header("Idempotency-Key", "idem-1")
        .json(&json!({"input": "hello bridge", "session_id": "bridge-sess-1", "instructions": "be terse"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 202);
    assert_eq!(resp.headers()["x-hermes-session-key"], "user-42");
    let body: Value = resp.json().await.unwrap();
    let id = body["run_id"].as_str().unwrap().to_string();
    assert_eq!(body, json!({"run_id": id, "status": "started"}));
    let hex = id.strip_prefix("run_").unwrap();
    assert_eq!(hex.len(), 32);
    assert!(hex.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));

    // Subscribe after the run has finished: every buffered event is still delivered.
    h.wait_for_status(&id, "completed", T).await;
    let mut sse = Sse::open(&h, &id).await;
    let frames = sse.rest().await;
    assert!(matches!(frames.last(), Some(Frame::Comment(c)) if c == "stream closed"), "{frames:?}");
    let events = data(&frames);
    assert_common_fields(&events, &id);
    let names: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert!(names.iter().filter(|n| **n == "message.delta").count() >= 2, "{names:?}");
    assert_eq!(&names[names.len() - 2..], ["reasoning.available", "run.completed"]);
    let text = deltas(&events).concat();
    assert_eq!(text, "FAKE ANSWER: hello bridge");
    let done = events.last().unwrap();
    assert_eq!(done["output"], text);
    assert_eq!(events[events.len() - 2]["text"], text);
    let usage = &done["usage"];
    assert_eq!(
        usage["total_tokens"].as_u64().unwrap(),
        usage["input_tokens"].as_u64().unwrap() + usage["output_tokens"].as_u64().unwrap()
    );
    // Python json.dumps spacing on the wire.
    assert!(sse.raw.starts_with("data: {\""), "{}", sse.raw);
    assert!(sse.raw.contains("\", \"") && sse.raw.contains("\": "), "{}", sse.raw);

    // The queue is gone: a second read is 404 run_not_found.
    let (s, b) = status_json(get(&h, &format!("/v1/runs/{id}/events")).await).await;
    assert_eq!(s, 404);
    assert_eq!(b["error"]["code"], "run_not_found");
    assert!(b["error"].as_object().unwrap().contains_key("param"));
    assert_eq!(h.event_reads(&id), 2);
    assert_eq!(h.counters().event_streams_opened, 1);

    let (s, st) = status_json(get(&h, &format!("/v1/runs/{id}")).await).await;
    assert_eq!(s, 200);
    assert_eq!(st["object"], "hermes.run");
    assert_eq!(st["status"], "completed");
    assert_eq!(st["session_id"], "bridge-sess-1");
    assert_eq!(st["model"], "hermes-agent");
    assert_eq!(st["last_event"], "run.completed");
    assert_eq!(st["output"], text);
    assert_eq!(st["usage"], *usage);
    assert!(st["created_at"].as_f64().unwrap() <= st["updated_at"].as_f64().unwrap());
    // Same events as the accessor reports (timestamps aside: f64 text round-trips are not exact).
    let strip = |v: &[Value]| {
        v.iter()
            .map(|e| {
                let mut e = e.clone();
                e.as_object_mut().unwrap().remove("timestamp");
                e
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&h.run_events(&id)), strip(&events));

    let (s, b) = status_json(get(&h, "/v1/runs/run_00000000000000000000000000000000").await).await;
    assert_eq!((s, b["error"]["code"].as_str()), (404, Some("run_not_found")));

    let posts = h.requests_to("POST", "/v1/runs");
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].session_key.as_deref(), Some("user-42"));
    assert_eq!(posts[0].idempotency_key.as_deref(), Some("idem-1"));
    assert_eq!(posts[0].authorization.as_deref(), Some(format!("Bearer {}", h.key()).as_str()));
    assert_eq!(posts[0].body["instructions"], "be terse");
    assert!(posts[0].body_text.contains("\"session_id\""));
    assert_eq!(posts[0].header("X-Hermes-Session-Key"), Some("user-42"));
    assert_eq!(posts[0].status, 202);
}

#[tokio::test]
async fn idempotency_key_is_ignored_and_inputs_are_validated() {
    let h = FakeHermes::start(fast()).await;
    let send = |key: &'static str, body: Value| {
        let req = http().post(h.url("/v1/runs")).bearer_auth(h.key()).header("Idempotency-Key", key).json(&body);
        async move { status_json(req.send().await.unwrap()).await }
    };
    let (s1, a) = send("k1", json!({"input": "x"})).await;
    let (s2, b) = send("k1", json!({"input": "x"})).await;
    assert_eq!((s1, s2), (202, 202));
    assert_ne!(a["run_id"], b["run_id"]);

    let (s, b) = send("k2", json!({"instructions": "no input"})).await;
    assert_eq!((s, b["error"]["message"].as_str()), (400, Some("Missing 'input' field")));
    let (s, b) = send("k3", json!({"input": [{"role": "user", "content": ""}]})).await;
    assert_eq!((s, b["error"]["message"].as_str()), (400, Some("No user message found in input")));
    let r = http().post(h.url("/v1/runs")).bearer_auth(h.key()).body("{not json").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 400);

    // A message list: the last item is the user message.
    let (s, b) = send(
        "k4",
        json!({"input": [{"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"},
                          {"role": "user", "content": "second"}]}),
    )
    .await;
    assert_eq!(s, 202);
    let id = b["run_id"].as_str().unwrap();
    let st = h.wait_for_status(id, "completed", T).await;
    assert_eq!(st["output"], "FAKE ANSWER: second");
    // Without session_id the run id is the session id.
    assert_eq!(st["session_id"], id);
}

#[tokio::test]
async fn approve_once_via_alias() {
    let h = FakeHermes::start(fast()).await;
    let id = start_run(&h, "APPROVE please").await;
    let mut sse = Sse::open(&h, &id).await;
    let started = sse.until("tool.started").await;
    assert_eq!(started["tool"], "terminal");
    let req = sse.until("approval.request").await;
    assert_eq!(req["command"], APPROVAL_COMMAND);
    assert_eq!(req["choices"], json!(["once", "session", "always", "deny"]));
    for k in ["pattern_key", "pattern_keys", "description", "allow_permanent"] {
        assert!(req.get(k).is_some(), "{k}");
    }
    let (_, st) = status_json(get(&h, &format!("/v1/runs/{id}")).await).await;
    assert_eq!(st["status"], "waiting_for_approval");

    let (s, b) = status_json(post(&h, &format!("/v1/runs/{id}/approval"), json!({"choice": "maybe"})).await).await;
    assert_eq!((s, b["error"]["code"].as_str()), (400, Some("invalid_approval_choice")));
    let (s, b) = status_json(post(&h, &format!("/v1/runs/{id}/approval"), json!({"choice": "approve"})).await).await;
    assert_eq!(s, 200);
    assert_eq!(b, json!({"object": "hermes.run.approval_response", "run_id": id, "choice": "once", "resolved": 1}));
    let (s, b) = status_json(post(&h, &format!("/v1/runs/{id}/approval"), json!({"choice": "once"})).await).await;
    assert_eq!((s, b["error"]["code"].as_str()), (409, Some("approval_not_pending")));

    let responded = sse.until("approval.responded").await;
    assert_eq!((responded["choice"].as_str(), responded["resolved"].as_i64()), (Some("once"), Some(1)));
    let completed = sse.until("tool.completed").await;
    assert_eq!(completed["error"], false);
    let done = sse.until("run.completed").await;
    assert!(done["output"].as_str().unwrap().contains("approved"), "{done}");
    assert!(matches!(sse.rest().await.as_slice(), [Frame::Comment(c)] if c == "stream closed"));

    let (s, b) = status_json(post(&h, &format!("/v1/runs/{id}/approval"), json!({"choice": "once"})).await).await;
    assert_eq!((s, b["error"]["code"].as_str()), (409, Some("approval_not_active")));
    let (s, _) = status_json(post(&h, "/v1/runs/run_unknown/approval", json!({"choice": "once"})).await).await;
    assert_eq!(s, 404);
    assert_eq!(h.approvals_received(), vec![(id.clone(), "once".to_string())]);
}

#[tokio::test]
async fn approve_deny_blocks_the_command() {
    let h = FakeHermes::start(fast()).await;
    let id = start_run(&h, "APPROVE rm it").await;
    let mut sse = Sse::open(&h, &id).await;
    sse.until("approval.request").await;
    let (s, _) = status_json(post(&h, &format!("/v1/runs/{id}/approval"), json!({"choice": "deny"})).await).await;
    assert_eq!(s, 200);
    let done = sse.until("run.completed").await;
    let output = done["output"].as_str().unwrap();
    assert!(output.contains("BLOCKED: Command denied by user"), "{output}");
    let st = h.run_status(&id).unwrap();
    assert_eq!(st["status"], "completed");
    assert_eq!(h.counters().approvals, 1);
}

#[tokio::test]
async fn approval_timeout_blocks_silently() {
    let h = FakeHermes::start(FakeHermesOptions { approval_timeout: Some(Duration::from_millis(200)), ..fast() }).await;
    let id = start_run(&h, "APPROVE").await;
    let st = h.wait_for_status(&id, "completed", T).await;
    assert!(st["output"].as_str().unwrap().contains(TIMED_OUT_TEXT));
    let names: Vec<Value> = h.run_events(&id).iter().map(|e| e["event"].clone()).collect();
    assert!(!names.contains(&json!("approval.responded")));
}

#[tokio::test]
async fn slow_run_keepalive_stop_and_cancel() {
    let h = FakeHermes::start(FakeHermesOptions {
        keepalive: Duration::from_millis(150),
        slow_interval: Duration::from_millis(400),
        ..Default::default()
    })
    .await;
    let id = start_run(&h, "SLOW please").await;
    let mut sse = Sse::open(&h, &id).await;
    let (mut keepalives, mut got_deltas) = (0, 0);
    while keepalives < 1 || got_deltas < 2 {
        match sse.next().await.unwrap().expect("stream ended early") {
            Frame::Comment(c) => {
                assert_eq!(c, "keepalive");
                keepalives += 1;
            }
            Frame::Data(v) => {
                assert_eq!(v["event"], "message.delta");
                got_deltas += 1;
            }
        }
    }
    let (s, b) = status_json(post(&h, &format!("/v1/runs/{id}/stop"), json!({})).await).await;
    assert_eq!(s, 200);
    assert_eq!(b, json!({"run_id": id, "status": "stopping"}));
    let st = h.run_status(&id).unwrap();
    assert!(st["status"] == "stopping" || st["status"] == "cancelled", "{st}");

    let frames = sse.rest().await;
    let events = data(&frames);
    assert_eq!(events.last().unwrap()["event"], "run.cancelled");
    assert!(matches!(frames.last(), Some(Frame::Comment(c)) if c == "stream closed"));
    let st = h.wait_for_status(&id, "cancelled", T).await;
    assert_eq!(st["last_event"], "run.cancelled");
    assert!(deltas(&h.run_events(&id)).len() < 60);

    // Stop after the run settled, or on an unknown run: 404 run_not_found.
    for target in [id.as_str(), "run_ffffffffffffffffffffffffffffffff"] {
        let (s, b) = status_json(post(&h, &format!("/v1/runs/{target}/stop"), json!({})).await).await;
        assert_eq!((s, b["error"]["code"].as_str()), (404, Some("run_not_found")));
    }
    assert_eq!(h.counters().stops, 1);
}

#[tokio::test]
async fn concurrency_cap_is_429_with_retry_after() {
    let h = FakeHermes::start(FakeHermesOptions { max_concurrent_runs: 2, ..fast() }).await;
    let a = start_run(&h, "SLOW a").await;
    let _b = start_run(&h, "SLOW b").await;
    let resp = post(&h, "/v1/runs", json!({"input": "third"})).await;
    assert_eq!(resp.headers()["retry-after"], "1");
    let (s, b) = status_json(resp).await;
    assert_eq!((s, b["error"]["code"].as_str()), (429, Some("rate_limit_exceeded")));
    assert_eq!(h.counters().runs_rejected, 1);

    post(&h, &format!("/v1/runs/{a}/stop"), json!({})).await;
    h.wait_for_status(&a, "cancelled", T).await;
    start_run(&h, "now there is room").await;
}

#[tokio::test]
async fn forced_start_errors() {
    let h = FakeHermes::start(FakeHermesOptions { fail_start_with: Some(503), ..fast() }).await;
    let resp = post(&h, "/v1/runs", json!({"input": "x"})).await;
    assert_eq!(resp.headers()["retry-after"], "1");
    let (s, b) = status_json(resp).await;
    assert_eq!((s, b["error"]["code"].as_str()), (503, Some("gateway_draining")));
    for code in [500u16, 403, 422] {
        h.configure(|o| o.fail_start_with = Some(code));
        let (s, b) = status_json(post(&h, "/v1/runs", json!({"input": "x"})).await).await;
        assert_eq!(s, code);
        for k in ["message", "type", "param", "code"] {
            assert!(b["error"].as_object().unwrap().contains_key(k), "{b}");
        }
    }
    h.configure(|o| o.fail_start_with = None);
    start_run(&h, "ok now").await;
    assert_eq!(h.requests_to("POST", "/v1/runs").len(), 5);
}

#[tokio::test]
async fn steer_only_while_running() {
    let h =
        FakeHermes::start(FakeHermesOptions { steer: true, slow_interval: Duration::from_millis(10), ..fast() }).await;
    let id = start_run(&h, "SLOW").await;
    h.wait_for_status(&id, "running", T).await;
    let (s, b) =
        status_json(post(&h, &format!("/v1/runs/{id}/steer"), json!({"input": "use metric units"})).await).await;
    assert_eq!(s, 200);
    assert_eq!(b, json!({"object": "hermes.run.steer", "run_id": id, "accepted": true}));
    let mut sse = Sse::open(&h, &id).await;
    let steered = sse.until("run.steered").await;
    assert_eq!(steered["text"], "use metric units");
    let done = sse.until("run.completed").await;
    assert!(done["output"].as_str().unwrap().contains("use metric units"));
    let (s, b) = status_json(post(&h, &format!("/v1/runs/{id}/steer"), json!({"input": "late"})).await).await;
    assert_eq!((s, b["error"]["code"].as_str()), (409, Some("run_not_accepting_steer")));
    let (s, _) = status_json(post(&h, "/v1/runs/run_nope/steer", json!({"input": "x"})).await).await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn clarify_round_trip() {
    let h = FakeHermes::start(FakeHermesOptions { clarify: true, ..fast() }).await;
    let id = start_run(&h, "CLARIFY the colour").await;
    let mut sse = Sse::open(&h, &id).await;
    let req = sse.until("clarify.request").await;
    let cid = req["clarify_id"].as_str().unwrap().to_string();
    assert!(req["question"].is_string() && req["choices"].is_array());
    assert_eq!(h.run_status(&id).unwrap()["status"], "waiting_for_clarify");

    let path = format!("/v1/runs/{id}/clarify");
    let (s, b) = status_json(post(&h, &path, json!({"clarify_id": "clarify_wrong", "response": "red"})).await).await;
    assert_eq!((s, b["error"]["code"].as_str()), (409, Some("clarify_not_pending")));
    let (s, _) = status_json(post(&h, &path, json!({"clarify_id": cid, "response": "blue"})).await).await;
    assert_eq!(s, 200);
    let responded = sse.until("clarify.responded").await;
    assert_eq!(responded["response"], "blue");
    let done = sse.until("run.completed").await;
    assert!(done["output"].as_str().unwrap().contains("blue"));
    let (s, _) = status_json(post(&h, &path, json!({"clarify_id": cid, "response": "blue"})).await).await;
    assert_eq!(s, 409);
}

#[tokio::test]
async fn scripted_tool_fail_unicode_secret_big() {
    let h = FakeHermes::start(fast()).await;

    let id = start_run(&h, "TOOLCALL now").await;
    let events = data(&Sse::open(&h, &id).await.rest().await);
    let started = events.iter().find(|e| e["event"] == "tool.started").unwrap();
    assert_eq!((started["tool"].as_str(), started["preview"].is_string()), (Some("terminal"), true));
    let completed = events.iter().find(|e| e["event"] == "tool.completed").unwrap();
    assert_eq!((completed["tool"].as_str(), completed["error"].as_bool()), (Some("terminal"), Some(false)));
    assert!(completed["duration"].is_number());
    assert_eq!(events.last().unwrap()["event"], "run.completed");

    let id = start_run(&h, "FAIL please").await;
    let events = data(&Sse::open(&h, &id).await.rest().await);
    let failed = events.last().unwrap();
    assert_eq!(failed["event"], "run.failed");
    let st = h.run_status(&id).unwrap();
    assert_eq!(st["status"], "failed");
    assert_eq!(st["error"], failed["error"]);
    assert!(st.get("output").is_none());

    let id = start_run(&h, "UNICODE").await;
    let mut sse = Sse::open(&h, &id).await;
    let events = data(&sse.rest().await);
    assert!(sse.raw.contains("\\u00e9") && sse.raw.contains("\\ud83c\\udf89"), "{}", sse.raw);
    let parts = deltas(&events);
    let text = parts.concat();
    assert_eq!(events.last().unwrap()["output"], text);
    assert!(text.contains("café") && text.contains("日本") && text.contains('🎉'));
    // A delta boundary falls inside a word.
    assert!(parts.windows(2).any(|w| w[0].ends_with(char::is_alphabetic) && w[1].starts_with(char::is_alphabetic)));

    let id = start_run(&h, "SECRET").await;
    let events = data(&Sse::open(&h, &id).await.rest().await);
    let parts = deltas(&events);
    assert!(parts.iter().all(|p| !p.contains("sk-abcdefghijklmnopqrstuvwx123")));
    assert!(parts.concat().contains(SECRET_TEXT));

    let id = start_run(&h, "BIG:25000").await;
    let events = data(&Sse::open(&h, &id).await.rest().await);
    let parts = deltas(&events);
    assert!(parts.len() >= 10);
    assert_eq!(parts.concat().len(), 25000);
    assert_eq!(events.last().unwrap()["output"].as_str().unwrap().len(), 25000);
}

#[tokio::test]
async fn dropped_stream_then_reconcile_by_status() {
    let h = FakeHermes::start(FakeHermesOptions { drop_stream_after: Some(2), ..fast() }).await;
    let id = start_run(&h, "hello there, a somewhat longer input").await;
    let mut sse = Sse::open(&h, &id).await;
    let mut seen = 0;
    let err = loop {
        match sse.next().await {
            Ok(Some(Frame::Data(_))) => seen += 1,
            Ok(Some(Frame::Comment(c))) => panic!("unexpected comment {c}"),
            Ok(None) => panic!("stream ended cleanly"),
            Err(e) => break e,
        }
    };
    assert_eq!(seen, 2, "{err}");
    assert!(!sse.raw.contains("stream closed"));
    let (s, _) = status_json(get(&h, &format!("/v1/runs/{id}/events")).await).await;
    assert_eq!(s, 404);
    let st = h.wait_for_status(&id, "completed", T).await;
    assert_eq!(st["output"], "FAKE ANSWER: hello there, a somewhat longer input");
}

#[tokio::test]
async fn kill_refuses_connections_and_restart_forgets_runs() {
    let h = FakeHermes::start(fast()).await;
    let id = start_run(&h, "SLOW").await;
    let mut sse = Sse::open(&h, &id).await;
    sse.until("message.delta").await;
    let base = h.base_url();
    h.kill();
    assert!(!h.is_running());
    h.wait_stopped().await;
    assert!(sse.rest_or_error().await.is_err());
    let err = http().get(format!("{base}/health")).send().await.unwrap_err();
    assert!(err.is_connect(), "{err:?}");

    h.restart_same_port().await;
    assert_eq!(h.base_url(), base);
    let (s, _) = status_json(http().get(h.url("/health")).send().await.unwrap()).await;
    assert_eq!(s, 200);
    let (s, b) = status_json(get(&h, &format!("/v1/runs/{id}")).await).await;
    assert_eq!((s, b["error"]["code"].as_str()), (404, Some("run_not_found")));
    assert!(h.counters().requests >= 4);
    h.shutdown().await;
}

impl Sse {
    /// Read to the end, reporting a broken connection as `Err`.
    async fn rest_or_error(&mut self) -> Result<Vec<Frame>, String> {
        let mut frames = Vec::new();
        while let Some(f) = self.next().await? {
            frames.push(f);
        }
        Ok(frames)
    }
}
