//! The A2A face (issue 38) against the official Python A2A SDK (a2a-sdk 1.3) and a fake
//! Hermes: discovery, blocking and streaming sends, an input-required round trip, get,
//! list (paged, by state, by context), cancel with a resubscribed stream, and every
//! refusal (unknown task, another client's task, a key without the agents scope, no key).
//! Raw JSON-RPC checks the wire details the SDK hides (version header, error codes, bad
//! input) and that every call is in the audit log.

use crate::support::fake_hermes::{FakeHermes, FakeHermesOptions};
use crate::support::*;
use serde_json::{Value, json};

struct Box0 {
    env: Env,
    server: Server,
    _hermes: FakeHermes,
    _home: tempfile::TempDir,
}

async fn setup() -> Box0 {
    let opts = FakeHermesOptions { clarify: true, steer: true, ..Default::default() };
    let hermes = FakeHermes::start(opts).await;
    let home = tempfile::tempdir().unwrap();
    hermes.write_profile(home.path());
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    let toml = format!("[hermes]\nhome = \"{}\"\n", home.path().display());
    std::fs::write(env.config_dir().join("hal0.toml"), toml).unwrap();
    let server = env.serve();
    Box0 { env, server, _hermes: hermes, _home: home }
}

fn python() -> Option<std::path::PathBuf> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let ok = p.exists()
        && std::process::Command::new(&p).args(["-c", "import a2a"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        missing_external("the Python A2A SDK (a2a-sdk in .venv)", "run tests/external/setup.sh");
        return None;
    }
    Some(p)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_a2a_sdk_delegates_follows_answers_and_cancels_tasks() {
    python_sdk_over("JSONRPC", "JsonRpcTransport").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_a2a_sdk_does_the_same_over_http_json() {
    python_sdk_over("HTTP+JSON", "RestTransport").await;
}

/// The Python SDK's whole scenario over `binding` (its client then uses `transport`).
async fn python_sdk_over(binding: &'static str, transport: &str) {
    let Some(python) = python() else { return };
    let b = setup().await;
    let key = b.env.bridge_key("ci", &[]);
    let other = b.env.bridge_key("other", &[]);
    let relay = b.env.bridge_key("bot", &["relay"]);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/external/a2a_client.py");
    let base = b.server.url("");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(python).arg(script).args([&base, &key, &other, &relay, binding]).output().unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the A2A client failed: {stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));

    assert_eq!(r["transport"], transport, "the SDK chose the {binding} binding: {r}");
    // Discovery: the card names the interfaces on the URL the client came to, and a bearer key.
    let card = &r["root_card"];
    assert_eq!(card["supportedInterfaces"][1]["url"], b.server.url("/a2a/rest/hermes"), "{card}");
    assert_eq!(card["supportedInterfaces"][1]["protocolBinding"], "HTTP+JSON");
    assert_eq!(card["supportedInterfaces"][0]["url"], b.server.url("/a2a/hermes"), "{card}");
    assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(card["securitySchemes"]["hal0BridgeKey"]["httpAuthSecurityScheme"]["scheme"], "Bearer");
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(r["profile_card_url"], b.server.url("/a2a/hermes"));

    // A blocking send ends completed, the agent's answer as the artifact.
    let blocking = &r["blocking"];
    assert_eq!(blocking["state"], "TASK_STATE_COMPLETED", "{r}");
    assert_eq!(blocking["output"], "FAKE ANSWER: hello from a2a");
    assert!(blocking["context"].as_str().unwrap().starts_with("ctx-"), "{blocking}");
    assert_eq!(r["same_message_same_task"], true, "a message id is the start's idempotency key");

    // Streaming: the task first, then output chunks that add up to the answer, then done.
    let stream = &r["stream"];
    let kinds: Vec<&str> = stream["kinds"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"task"), "{stream}");
    assert_eq!(kinds.last(), Some(&"status_update"), "{stream}");
    assert!(kinds.contains(&"artifact_update"), "{stream}");
    assert_eq!(stream["output"], "FAKE ANSWER: stream this please");
    assert_eq!(stream["states"].as_array().unwrap().last().unwrap(), "TASK_STATE_COMPLETED");

    // A question is input-required; the answer, a message naming the task, completes it.
    let asked = &r["input_required"];
    assert_eq!(asked["state"], "TASK_STATE_INPUT_REQUIRED", "{asked}");
    assert!(!asked["question"].as_str().unwrap().is_empty(), "{asked}");
    assert_eq!(asked["after_answer"], "TASK_STATE_COMPLETED", "{asked}");
    assert_eq!(asked["same_task"], true);

    assert_eq!(r["get"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(r["get"]["output"], blocking["output"]);

    // Lists: pages do not overlap and add up, filters hold.
    let list = &r["list"];
    let ids = |k: &str| -> Vec<String> {
        list[k].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
    };
    let (p1, p2, all) = (ids("first_page"), ids("second_page"), ids("all"));
    assert_eq!(p1.len(), 2, "{list}");
    assert!(!p2.is_empty() && p2.iter().all(|x| !p1.contains(x)), "{list}");
    assert_eq!(all[..2], p1[..], "newest first");
    assert_eq!(list["total"].as_u64().unwrap() as usize, all.len());
    assert_eq!(all.len(), 4, "hello, say-it-once, stream, clarify, and nothing else yet: {list}");
    assert_eq!(list["streamed_listed"], true);
    assert_eq!(ids("completed").len(), 4, "{list}");
    assert_eq!(ids("in_context"), vec![blocking["id"].as_str().unwrap().to_string()]);

    // Cancel: the task ends cancelled, the resubscribed stream saw it, a second cancel is refused.
    let cancel = &r["cancel"];
    assert_eq!(cancel["state"], "TASK_STATE_CANCELED", "{cancel}");
    assert_eq!(cancel["again"], "not_cancelable");
    let seen = cancel["subscribed"].as_array().unwrap();
    assert_eq!(seen.first().unwrap(), "task", "{cancel}");
    assert_eq!(seen.last().unwrap(), "TASK_STATE_CANCELED", "{cancel}");

    // Refusals.
    assert_eq!(r["unknown"], "task_not_found");
    assert_eq!(r["other_client_get"], "task_not_found", "one client never sees another's task");
    assert_eq!(r["other_client_list"], json!([]));
    assert!(r["relay_only"].as_str().unwrap().contains("403"), "{r}");
    assert!(r["no_key"].as_str().unwrap().contains("401"), "{r}");

    // Every task is a run in the same ledger, under the client's name.
    let runs = b.env.json(&["runs", "list", "--client", "ci", "--json"]);
    assert_eq!(runs.as_array().unwrap().len(), 5, "the four, and the cancelled one: {runs}");
    let audit = b.env.ok(&["activity", "list", "--json", "--limit", "500"]);
    for method in ["SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask"] {
        assert!(audit.contains(&format!("\"{method}\"")), "{method} not audited");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_a2a_sdk_delegates_answers_and_cancels_tasks() {
    javascript_sdk_over("JSONRPC").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_a2a_sdk_does_the_same_over_http_json() {
    javascript_sdk_over("HTTP+JSON").await;
}

async fn javascript_sdk_over(binding: &'static str) {
    let sdk = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/node/node_modules/@a2a-js/sdk");
    if !sdk.join("package.json").exists() {
        missing_external("the JavaScript A2A SDK (@a2a-js/sdk in .tools/node)", "run tests/external/setup.sh");
        return;
    }
    let b = setup().await;
    let key = b.env.bridge_key("js", &[]);
    let other = b.env.bridge_key("other", &[]);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/external/a2a_client.mjs");
    let base = b.server.url("");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("node")
            .arg(script)
            .args([&base, &key, &other, binding])
            .env("HAL0_A2A_SDK", sdk)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the A2A client failed: {stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(r["card"], "hal0 hermes");
    let transport = if binding == "HTTP+JSON" { "Rest" } else { "JsonRpc" };
    assert!(r["transport"].as_str().unwrap().contains(transport), "the SDK chose the {binding} binding: {r}");
    assert_eq!(r["blocking"]["state"], "COMPLETED", "{r}");
    assert_eq!(r["blocking"]["output"], "FAKE ANSWER: hello from javascript");
    let kinds = r["stream"]["kinds"].as_array().unwrap();
    assert_eq!(kinds.first().unwrap(), "task", "{r}");
    assert!(kinds.iter().any(|k| k == "artifactUpdate"), "{r}");
    assert_eq!(r["stream"]["output"], "FAKE ANSWER: stream from javascript");
    assert_eq!(r["stream"]["last"], "COMPLETED");
    assert_eq!(r["input_required"]["state"], "INPUT_REQUIRED", "{r}");
    assert!(!r["input_required"]["question"].as_str().unwrap().is_empty());
    assert_eq!(r["input_required"]["after"], "COMPLETED");
    assert_eq!(r["input_required"]["same"], true);
    assert_eq!(r["get"]["output"], r["blocking"]["output"]);
    assert_eq!(r["list"]["ids"].as_array().unwrap().len(), 3, "{r}");
    assert_eq!(r["list"]["total"], 3);
    assert_eq!(r["cancel"]["state"], "CANCELED", "{r}");
    let refused = r["other_client_get"].as_str().unwrap();
    assert!(refused.contains("TaskNotFound") || refused.contains("no such task"), "{refused}");
}

async fn rpc(s: &Server, key: Option<&str>, version: Option<&str>, body: Value) -> (u16, Value) {
    let mut r = reqwest::Client::new().post(s.url("/a2a/hermes")).json(&body);
    if let Some(k) = key {
        r = r.bearer_auth(k);
    }
    if let Some(v) = version {
        r = r.header("A2A-Version", v);
    }
    let resp = r.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

fn code(v: &Value) -> i64 {
    v["error"]["code"].as_i64().unwrap_or_else(|| panic!("no error: {v}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_a2as_error_codes_and_change_nothing() {
    let b = setup().await;
    let s = &b.server;
    let key = b.env.bridge_key("ci", &[]);
    let k = Some(key.as_str());
    let v1 = Some("1.0");
    let send = |parts: Value, id: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
               "params": {"message": {"messageId": id, "role": "ROLE_USER", "parts": parts}}})
    };
    let hello = send(json!([{"text": "hi"}]), "m1");

    // No version header: a 0.3 client, refused with the version error and what to send.
    let (status, v) = rpc(s, k, None, hello.clone()).await;
    assert_eq!(status, 200);
    assert_eq!(code(&v), -32009, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("A2A-Version: 1.0"), "{v}");
    assert_eq!(v["error"]["data"][0]["reason"], "VERSION_NOT_SUPPORTED");
    assert_eq!(code(&rpc(s, k, Some("0.3"), hello.clone()).await.1), -32009);

    // The envelope.
    let r = reqwest::Client::new()
        .post(s.url("/a2a/hermes"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(code(&r.json().await.unwrap()), -32700);
    assert_eq!(code(&rpc(s, k, v1, json!({"id": 2, "method": "GetTask"})).await.1), -32600);
    let (_, v) = rpc(s, k, v1, json!({"jsonrpc": "2.0", "id": "x", "method": "tasks/send"})).await;
    assert_eq!(code(&v), -32601);
    assert_eq!(v["id"], "x", "the id comes back as sent");
    let push = json!({"jsonrpc": "2.0", "id": 3, "method": "CreateTaskPushNotificationConfig", "params": {}});
    assert_eq!(code(&rpc(s, k, v1, push).await.1), -32003);

    // Bad messages: no id, an agent's role, no text, a file part; bad ids and filters.
    let cases = [
        (send(json!([{"text": "hi"}]), ""), -32602, "messageId"),
        (send(json!([]), "m2"), -32602, "a2a.empty_message"),
        (send(json!([{"url": "https://example.invalid/f.pdf"}]), "m3"), -32005, "`url` part"),
        (
            json!({"jsonrpc": "2.0", "id": 4, "method": "SendMessage",
                   "params": {"message": {"messageId": "m4", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}}}),
            -32602,
            "ROLE_USER",
        ),
        (json!({"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {}}), -32602, "params.id"),
        (json!({"jsonrpc": "2.0", "id": 6, "method": "GetTask", "params": {"id": "run_nope"}}), -32001, "no such task"),
        (json!({"jsonrpc": "2.0", "id": 6, "method": "GetTask", "params": {"id": "bad id"}}), -32001, "no such task"),
        (json!({"jsonrpc": "2.0", "id": 7, "method": "ListTasks", "params": {"pageSize": 1000}}), -32602, "pageSize"),
        (
            json!({"jsonrpc": "2.0", "id": 8, "method": "ListTasks", "params": {"pageToken": "garbage"}}),
            -32602,
            "a2a.invalid_page_token",
        ),
        (json!({"jsonrpc": "2.0", "id": 9, "method": "ListTasks", "params": {"status": "DONE"}}), -32602, "DONE"),
        (
            json!({"jsonrpc": "2.0", "id": 10, "method": "ListTasks", "params": {"statusTimestampAfter": "yesterday"}}),
            -32602,
            "RFC 3339",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 11, "method": "SendMessage",
                   "params": {"message": {"messageId": "m5", "taskId": "run_nope", "parts": [{"text": "x"}]}}}),
            -32001,
            "no such task",
        ),
    ];
    for (body, want, says) in cases {
        let (_, v) = rpc(s, k, v1, body.clone()).await;
        assert_eq!(code(&v), want, "{body} → {v}");
        assert!(v["error"]["message"].as_str().unwrap().contains(says), "{body} → {v}");
    }
    let runs = b.env.json(&["runs", "list", "--json"]);
    assert_eq!(runs, json!([]), "no bad request started a run");

    // A finished task takes no more messages; a profile that does not exist is not found.
    let (_, v) = rpc(s, k, v1, hello.clone()).await;
    let task = &v["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{v}");
    let again = json!({"jsonrpc": "2.0", "id": 12, "method": "SendMessage",
                       "params": {"message": {"messageId": "m6", "taskId": task["id"], "parts": [{"text": "more"}]}}});
    let (_, v) = rpc(s, k, v1, again).await;
    assert_eq!(code(&v), -32004, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().starts_with("bridge.run_ended: "), "{v}");
    let other_context = json!({"jsonrpc": "2.0", "id": 13, "method": "SendMessage",
        "params": {"message": {"messageId": "m7", "taskId": task["id"], "contextId": "elsewhere", "parts": [{"text": "x"}]}}});
    assert!(
        rpc(s, k, v1, other_context).await.1["error"]["message"].as_str().unwrap().contains("a2a.context_mismatch")
    );
    let r = reqwest::Client::new().get(s.url("/a2a/hermes/nosuch/.well-known/agent-card.json")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    let r =
        reqwest::Client::new().get(s.url("/a2a/hermes/Bad..Name/.well-known/agent-card.json")).send().await.unwrap();
    assert!(r.status().is_client_error(), "{}", r.status());

    // The HTTP+JSON binding answers the same failures as a google.rpc.Status with A2A's
    // reason and HTTP status.
    let http = reqwest::Client::new();
    let rest = |method: reqwest::Method, path: &str, version: bool| {
        let r = http.request(method, s.url(path)).bearer_auth(&key);
        if version { r.header("A2A-Version", "1.0") } else { r }
    };
    let cases = [
        (rest(reqwest::Method::GET, "/a2a/rest/hermes/tasks/run_nope", true), 404, "TASK_NOT_FOUND"),
        (rest(reqwest::Method::GET, "/a2a/rest/hermes/tasks/run_nope", false), 400, "VERSION_NOT_SUPPORTED"),
        (rest(reqwest::Method::POST, "/a2a/rest/hermes/tasks/run_nope:explode", true), 404, "METHOD_NOT_FOUND"),
        (rest(reqwest::Method::GET, "/a2a/rest/hermes/tasks?pageSize=0x10", true), 400, "INVALID_PARAMS"),
        (
            rest(reqwest::Method::POST, "/a2a/rest/hermes/message:send", true)
                .header("content-type", "application/json")
                .body("{oops"),
            400,
            "INVALID_PARAMS",
        ),
        (
            rest(
                reqwest::Method::POST,
                &format!("/a2a/rest/hermes/tasks/{}:cancel", task["id"].as_str().unwrap()),
                true,
            ),
            400,
            "TASK_NOT_CANCELABLE",
        ),
    ];
    for (req, status, reason) in cases {
        let r = req.send().await.unwrap();
        let got = r.status().as_u16();
        let v: Value = r.json().await.unwrap_or(Value::Null);
        assert_eq!(got, status, "{v}");
        assert_eq!(v["error"]["code"], status, "{v}");
        assert_eq!(v["error"]["details"][0]["reason"], reason, "{v}");
    }
    let r = rest(reqwest::Method::GET, "/a2a/rest/hermes.nosuch/tasks", true).send().await.unwrap();
    assert_eq!(r.status(), 404, "a profile hal0 does not serve");

    // Refused calls are audited with their code too.
    let audit = b.env.ok(&["activity", "list", "--json", "--limit", "500"]);
    assert!(audit.contains("bridge.run_ended"), "{audit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_bot_listed_for_a2a_answers_the_python_a2a_sdk() {
    let Some(python) = python() else { return };
    let env = Env::new();
    let bot_key = env.bridge_key("helper", &["relay"]);
    let asker_key = env.bridge_key("asker", &["relay"]);
    env.bridge_key("hidden", &["relay"]);
    env.bridge_key("sleepy", &["relay"]);
    env.ok(&["config", "set", "relay.a2a_bots", "[\"helper\", \"ghost\", \"sleepy\"]"]);
    let o = env.run(&["config", "set", "relay.a2a_bots", "[\"Not A Bot\"]"]);
    assert_ne!(o.code(), 0);
    assert!(o.stderr().contains("relay.a2a_bots"), "{}", o.stderr());
    let server = env.serve();

    // Only a listed bot that exists has a card; the index lists it.
    let http = reqwest::Client::new();
    let card = |bot: &str| http.get(server.url(&format!("/a2a/relay/{bot}/.well-known/agent-card.json"))).send();
    let r = card("helper").await.unwrap();
    assert_eq!(r.status(), 200);
    let c: Value = r.json().await.unwrap();
    assert_eq!(c["supportedInterfaces"][0]["url"], server.url("/a2a/relay/helper"), "{c}");
    assert_eq!(card("hidden").await.unwrap().status(), 404, "not listed");
    assert_eq!(card("ghost").await.unwrap().status(), 404, "listed, but no such bot");
    let index: Value = http.get(server.url("/a2a/agents")).send().await.unwrap().json().await.unwrap();
    let names: Vec<&str> = index["agents"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"hal0 relay bot helper") && !names.iter().any(|n| n.contains("hidden")), "{index}");

    // The bot answers each wake over hal0-relay's reply, as any bot does.
    let mut socket = crate::relay::open_socket(&server, &bot_key).await.unwrap();
    let bot = crate::relay::relay(&server, &bot_key).await;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/external/a2a_relay.py");
    let base = server.url("/a2a/relay/helper");
    let client = tokio::task::spawn_blocking(move || {
        std::process::Command::new(python).arg(script).args([&base, &asker_key]).output().unwrap()
    });
    for _ in 0..2 {
        let wake = socket.wake().await;
        assert_eq!(wake["from"], "asker", "{wake}");
        let answer = format!("answer to {}", wake["message"].as_str().unwrap());
        let (is_error, v) =
            crate::relay::call(&bot, "reply", json!({"request_id": wake["request_id"], "answer": answer})).await;
        assert!(!is_error, "{v}");
    }
    let out = client.await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the A2A client failed: {stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(r["card"], "hal0 relay bot helper");
    assert_eq!(r["first"]["text"], "answer to what is the answer?", "{r}");
    assert_eq!(r["first"]["role"], "ROLE_AGENT");
    assert_eq!(r["second"]["text"], "answer to and again?");
    assert_eq!(r["second"]["context"], r["first"]["context"], "the contextId continues the conversation");
    assert!(r["get_task"].as_str().unwrap().contains("a2a.no_tasks"), "{r}");

    // The relay's history has both asks, in one conversation of the pair.
    let ex = env.json(&["relay", "exchanges", "--json", "--limit", "10"]);
    let ex = ex.as_array().unwrap();
    assert_eq!(ex.len(), 2, "{ex:?}");
    assert!(ex.iter().all(|e| e["from"] == "asker" && e["to"] == "helper" && e["status"] == "ok"), "{ex:?}");
    assert_eq!(ex[0]["conversation_id"], ex[1]["conversation_id"]);
    assert_eq!(ex[0]["conversation_id"], r["first"]["context"]);

    // A bot that is not listed is no A2A agent: not found, whoever asks.
    let asker2 = env.bridge_key("asker2", &["relay"]);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m0", "role": "ROLE_USER", "parts": [{"text": "psst"}]}}});
    for path in ["/a2a/relay/hidden", "/a2a/relay/hermes%2Fdefault", "/a2a/relay/ghost"] {
        let r = http.post(server.url(path)).bearer_auth(&asker2).header("A2A-Version", "1.0").json(&body);
        assert_eq!(r.send().await.unwrap().status(), 404, "{path}");
    }

    // A listed bot that is not connected: the relay's refusal, with its code.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "anyone?"}]}}});
    let v: Value = http
        .post(server.url("/a2a/relay/sleepy"))
        .bearer_auth(&asker2)
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let msg = v["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.starts_with("relay.agent_offline: "), "{v}");
    assert_eq!(v["error"]["code"], -32000);
}

/// `hal0 relay peer add` with the credential on standard input: (exit code, stdout, stderr).
fn add_peer(env: &Env, args: &[&str], token: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = env
        .cmd(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(format!("{token}\n").as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_asks_an_a2a_agent_elsewhere_added_as_a_peer() {
    // Box B: its Hermes profile is the A2A agent; box A holds a bridge key of B's.
    let b = setup().await;
    let b_key = b.env.bridge_key("box-a", &[]);
    // Box A: a relay, a bot, and B added as a peer with that key.
    let a = Env::new();
    let bot_key = a.bridge_key("asker", &["relay"]);
    let url = b.server.url("/a2a/hermes");
    let (code, out, err) =
        add_peer(&a, &["relay", "peer", "add", &url, "--name", "box-b", "--token-stdin", "--json"], &b_key);
    assert_eq!(code, 0, "{err}");
    let peer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(peer["url"], url, "{peer}");
    assert_eq!(peer["agent_name"], "hal0 hermes");
    // The credential is in api.env only: not in the answer, the store's row, or the audit log.
    assert!(!out.contains(&b_key));
    let env_file = std::fs::read_to_string(a.config_dir().join("api.env")).unwrap();
    assert!(
        env_file.contains(&format!("HAL0_A2A_PEER_BOX_B={b_key}")) || env_file.contains(&b_key),
        "stored in api.env"
    );
    let audit = a.ok(&["activity", "list", "--json", "--limit", "100"]);
    assert!(audit.contains("relay_peer_add") && !audit.contains(&b_key), "{audit}");
    let listed = a.json(&["relay", "peer", "list", "--json"]);
    assert_eq!(listed.as_array().unwrap().len(), 1);

    // Bad adds change nothing: a name taken, a bad name, a URL with no card, not a URL.
    let (code, _, err) = add_peer(&a, &["relay", "peer", "add", &url, "--name", "box-b", "--token-stdin"], "x");
    assert_ne!(code, 0);
    assert!(err.contains("relay.peer_exists"), "{err}");
    let (code, _, err) = add_peer(&a, &["relay", "peer", "add", &url, "--name", "box_b", "--token-stdin"], "x");
    assert!(
        code != 0 && err.contains("relay.peer_exists"),
        "box_b's credential would share box-b's api.env name: {err}"
    );
    let env_file = std::fs::read_to_string(a.config_dir().join("api.env")).unwrap();
    assert!(env_file.contains(&b_key), "box-b's credential is untouched");
    let (code, _, err) = add_peer(&a, &["relay", "peer", "add", &url, "--name", "Box B"], "");
    assert!(code != 0 && err.contains("relay.invalid_peer_name"), "{err}");
    let nothing = b.server.url("/nothing-here");
    let (code, _, err) = add_peer(&a, &["relay", "peer", "add", &nothing, "--name", "nope"], "");
    assert!(code != 0 && err.contains("404"), "{err}");
    let (code, _, err) = add_peer(&a, &["relay", "peer", "add", "not a url", "--name", "nope"], "");
    assert!(code != 0 && err.contains("not a valid URL"), "{err}");
    assert_eq!(a.json(&["relay", "peer", "list", "--json"]).as_array().unwrap().len(), 1);

    // The bot sees it and asks it: the answer is B's run's output; B's ledger has the run,
    // under the client A's key names.
    let server = a.serve();
    let c = crate::relay::relay(&server, &bot_key).await;
    let (is_error, agents) = crate::relay::call(&c, "list_agents", json!({})).await;
    assert!(!is_error);
    assert_eq!(crate::relay::online(&agents, "a2a/box-b"), Some(true), "{agents}");
    let (is_error, v) =
        crate::relay::call(&c, "ask_agent", json!({"to": "a2a/box-b", "message": "hello from box a"})).await;
    assert!(!is_error, "{v}");
    assert_eq!(v["answer"], "FAKE ANSWER: hello from box a", "{v}");
    let conversation = v["conversation_id"].as_str().unwrap().to_string();
    let (is_error, v) = crate::relay::call(
        &c,
        "ask_agent",
        json!({"to": "a2a/box-b", "message": "and again", "conversation_id": conversation}),
    )
    .await;
    assert!(!is_error, "{v}");
    let runs = b.env.json(&["runs", "list", "--client", "box-a", "--json"]);
    assert_eq!(runs.as_array().unwrap().len(), 2, "{runs}");
    // The conversation is the A2A context: both runs share B's session for it.
    let tasks = b.env.json(&["runs", "list", "--json"]);
    assert!(tasks.as_array().unwrap().iter().all(|r| r["client"] == "box-a"), "{tasks}");

    // A peer that refuses the credential, and one that is gone: the relay's refusals.
    let (code, _, err) =
        add_peer(&a, &["relay", "peer", "add", &url, "--name", "wrong-key", "--token-stdin"], "hal0bk_wrong");
    assert_eq!(code, 0, "{err}");
    let (is_error, v) = crate::relay::call(&c, "ask_agent", json!({"to": "a2a/wrong-key", "message": "hi"})).await;
    assert!(is_error, "{v}");
    assert_eq!(v["error"], "agent_failed", "{v}");
    assert!(v["detail"].as_str().unwrap().contains("401"), "{v}");
    assert!(!v.to_string().contains("hal0bk_wrong"));
    let (is_error, v) = crate::relay::call(&c, "ask_agent", json!({"to": "a2a/nobody", "message": "hi"})).await;
    assert!(is_error && v["error"] == "unknown_agent", "{v}");

    // Removing a peer forgets its credential too.
    a.ok(&["relay", "peer", "remove", "box-b"]);
    let env_file = std::fs::read_to_string(a.config_dir().join("api.env")).unwrap();
    assert!(!env_file.contains(&b_key), "the credential left api.env");
    let o = a.run(&["relay", "peer", "remove", "box-b"]);
    assert!(o.code() != 0 && o.stderr().contains("relay.peer_not_found"), "{}", o.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_waiting_on_an_approval_says_which_card_a_person_decides() {
    let b = setup().await;
    let key = b.env.bridge_key("ci", &[]);
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "ap-1", "role": "ROLE_USER", "parts": [{"text": "APPROVE please"}]},
        "configuration": {"returnImmediately": true}}});
    let (_, v) = rpc(&b.server, Some(&key), Some("1.0"), send).await;
    let id = v["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("{v}")).to_string();
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": id}});
    let mut task = Value::Null;
    let waiting = eventually(std::time::Duration::from_secs(30), async || {
        task = rpc(&b.server, Some(&key), Some("1.0"), get.clone()).await.1["result"].clone();
        task["metadata"]["hal0"]["run_status"] == "waiting_for_approval"
    })
    .await;
    assert!(waiting, "{task}");
    // Still working (it waits on a person, not on the client); the message names the card.
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{task}");
    let card = task["metadata"]["hal0"]["pending"]["approval_id"].as_str().unwrap().to_string();
    let said = task["status"]["message"]["parts"][0]["text"].as_str().unwrap();
    assert!(said.contains(&card) && said.contains("approve"), "{said}");
    // The client cannot answer it in the person's place.
    let answer = json!({"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": {
        "messageId": "ap-2", "taskId": id, "role": "ROLE_USER", "parts": [{"text": "yes, approve"}]}}});
    let (_, v) = rpc(&b.server, Some(&key), Some("1.0"), answer).await;
    assert!(v["error"]["message"].as_str().unwrap().starts_with("bridge.run_waits_for_person: "), "{v}");
    assert_eq!(v["error"]["code"], -32004, "{v}");
    // A person approves at the shell; the task completes.
    let done = b.env.json(&["agent", "approvals", "approve", &card, "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    let completed = eventually(std::time::Duration::from_secs(30), async || {
        task = rpc(&b.server, Some(&key), Some("1.0"), get.clone()).await.1["result"].clone();
        task["status"]["state"] == "TASK_STATE_COMPLETED"
    })
    .await;
    assert!(completed, "{task}");
}
