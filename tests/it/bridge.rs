//! The agent bridge's nine run tools over the real rmcp transport against `hal0 serve`,
//! with the in-process fake Hermes 0.19.0 behind it: every tool, code and limit.

use crate::support::fake_hermes::{FakeHermes, FakeHermesOptions};
use crate::support::mcp::{Client, call, connect};
use crate::support::*;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

/// hal0 with a Hermes home whose default profile points at a fake Hermes.
struct Box0 {
    env: Env,
    server: Server,
    hermes: FakeHermes,
    home: tempfile::TempDir,
}

async fn setup(opts: FakeHermesOptions, toml: &str) -> Box0 {
    let hermes = FakeHermes::start(opts).await;
    let home = tempfile::tempdir().unwrap();
    hermes.write_profile(home.path());
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    // The CLI reads Hermes's home from hal0.toml, as an operator would set it.
    let toml = format!("{toml}\n[hermes]\nhome = \"{}\"\n", home.path().display());
    std::fs::write(env.config_dir().join("hal0.toml"), toml).unwrap();
    let server = env.serve();
    Box0 { env, server, hermes, home }
}

impl Box0 {
    async fn client(&self, name: &str) -> Client {
        let key = self.env.bridge_key(name, &[]);
        connect(&self.server, &key).await
    }
}

async fn ok(c: &Client, tool: &str, args: Value) -> Value {
    call(c, tool, args.clone()).await.unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
}

async fn err(c: &Client, tool: &str, args: Value) -> String {
    match call(c, tool, args.clone()).await {
        Ok(v) => panic!("{tool} {args} should fail, got {v}"),
        Err(e) => e,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_completes_and_can_be_followed() {
    let b = setup(FakeHermesOptions::default(), "").await;
    let c = b.client("ws").await;
    let tools: Vec<String> = c.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    for t in [
        "agents_list",
        "agent_run",
        "agent_run_wait",
        "agent_run_status",
        "agent_run_events",
        "agent_run_answer",
        "agent_run_steer",
        "agent_run_stop",
        "agent_runs_list",
    ] {
        assert!(tools.contains(&t.to_string()), "{t} missing from {tools:?}");
    }
    let v = ok(
        &c,
        "agent_run",
        json!({"agent": "hermes", "input": "hello bridge", "session_key": "s1", "instructions": "be terse"}),
    )
    .await;
    let run_id = v["run_id"].as_str().unwrap().to_string();
    assert_eq!(v["client"], "ws");
    assert_eq!(v["agent"], "hermes");
    assert_eq!(v["profile"], "default");
    assert_eq!(v["input_preview"], "hello bridge");
    let w = ok(&c, "agent_run_wait", json!({"run_id": run_id, "timeout_s": 30})).await;
    assert_eq!(w["status"], "completed", "{w}");
    assert_eq!(w["timed_out"], false);
    assert!(w["output"].as_str().unwrap().contains("hello bridge"), "{w}");
    assert!(w["usage"]["total_tokens"].is_number(), "{w}");
    let tail = w["events_tail"].as_array().unwrap();
    assert!(tail.iter().any(|e| e["event"] == "run.completed"), "{w}");
    assert!(tail.iter().any(|e| e["event"] == "message.text"), "{w}");
    // Hermes saw the prefixed session key and the body fields.
    let reqs = b.hermes.requests();
    let start = reqs.iter().find(|r| r.path == "/v1/runs").unwrap();
    assert_eq!(start.header("x-hermes-session-key"), Some("ws:s1"));
    assert_eq!(start.body["instructions"], "be terse");
    assert_eq!(b.hermes.event_reads(&run_id), 1, "one reader per run");
    // Events page and replay.
    let e = ok(&c, "agent_run_events", json!({"run_id": run_id})).await;
    let evs = e["events"].as_array().unwrap();
    assert_eq!(e["last_seq"], evs.last().unwrap()["seq"]);
    let seqs: Vec<i64> = evs.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1) && seqs[0] == 1, "{seqs:?}");
    let text: String =
        evs.iter().filter(|e| e["event"] == "message.text").map(|e| e["text"].as_str().unwrap()).collect();
    assert!(text.contains("hello bridge"), "{text}");
    let rest = ok(&c, "agent_run_events", json!({"run_id": run_id, "since_seq": seqs[1], "limit": 1})).await;
    assert_eq!(rest["events"].as_array().unwrap().len(), 1);
    assert_eq!(rest["events"][0]["seq"], seqs[2]);
    let list = ok(&c, "agent_runs_list", json!({})).await;
    assert_eq!(list["runs"][0]["run_id"], run_id);
    assert!(list["runs"][0]["output_preview"].as_str().unwrap().contains("hello"));
    assert!(list["runs"][0].get("output").is_none());
    let list = ok(&c, "agent_runs_list", json!({"status": "failed"})).await;
    assert_eq!(list["runs"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_list_shows_profiles_and_pi() {
    let b = setup(FakeHermesOptions::default(), "").await;
    let w = b.home.path().join("profiles/worker1");
    std::fs::create_dir_all(&w).unwrap();
    std::fs::write(w.join("config.yaml"), "model: {default: other-model}\n").unwrap();
    std::fs::write(w.join(".env"), "API_SERVER_PORT=1\n").unwrap();
    let c = b.client("ws").await;
    let v = ok(&c, "agents_list", json!({})).await;
    let agents = v["agents"].as_array().unwrap();
    let ids: Vec<&str> = agents.iter().map(|a| a["agent_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["hermes", "hermes/worker1", "pi"]);
    assert_eq!(agents[0]["health"], "ok");
    assert_eq!(agents[0]["keyed"], true);
    assert_eq!(agents[0]["model_id"], "fake-model");
    assert_eq!(agents[1]["health"], "down");
    assert_eq!(agents[1]["keyed"], false);
    assert_eq!(agents[2]["runnable"], false);
    assert!(!v.to_string().contains(b.hermes.key()), "no key leaves hal0");
    let e = err(&c, "agent_run", json!({"agent": "hermes/worker1", "input": "x"})).await;
    assert!(e.starts_with("bridge.agent_unkeyed: "), "{e}");
    let cap = ok(&c, "agent_capabilities", json!({"agent": "hermes"})).await;
    assert_eq!(cap["api_server_version"], "0.19.0");
    assert_eq!(cap["platforms_enabled"], json!(["api_server"]));
    assert!(!cap.to_string().contains(b.hermes.key()));
    let cap = ok(&c, "agent_capabilities", json!({"agent": "hermes/worker1"})).await;
    assert_eq!(cap["api_server_version"], Value::Null, "no key → no version");
    assert_eq!(cap["toolsets_enabled"], Value::Null);
    let e = err(&c, "agent_capabilities", json!({"agent": "hermes/ghost"})).await;
    assert!(e.starts_with("bridge.unknown_agent: "), "{e}");
    let e = err(&c, "agent_run", json!({"agent": "pi", "input": "x"})).await;
    assert!(e.starts_with("bridge.unknown_agent: "), "{e}");
    let e = err(&c, "agent_run", json!({"agent": "hermes/nope", "input": "x"})).await;
    assert!(e.starts_with("bridge.unknown_agent: "), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_is_answered_before_the_cap() {
    let b = setup(FakeHermesOptions::default(), "[bridge]\nmax_concurrent_runs_per_client = 1\n").await;
    let c = b.client("ws").await;
    let a = ok(&c, "agent_run", json!({"agent": "hermes", "input": "SLOW task", "idempotency_key": "k1"})).await;
    let again = ok(&c, "agent_run", json!({"agent": "hermes", "input": "SLOW task", "idempotency_key": "k1"})).await;
    assert_eq!(a["run_id"], again["run_id"], "same request → same run even at the cap");
    let e = err(&c, "agent_run", json!({"agent": "hermes", "input": "other", "idempotency_key": "k1"})).await;
    assert!(e.starts_with("bridge.idempotency_conflict: "), "{e}");
    let e = err(&c, "agent_run", json!({"agent": "hermes", "input": "another"})).await;
    assert!(e.starts_with("bridge.too_many_runs: "), "{e}");
    assert_eq!(b.hermes.requests().iter().filter(|r| r.path == "/v1/runs").count(), 1, "one POST reached Hermes");
    let start = b.hermes.requests().into_iter().find(|r| r.path == "/v1/runs").unwrap();
    assert_eq!(start.header("idempotency-key"), Some("ws:k1"));
    // Another client's same key is its own run.
    let c2 = b.client("other").await;
    let o = ok(&c2, "agent_run", json!({"agent": "hermes", "input": "SLOW task", "idempotency_key": "k1"})).await;
    assert_ne!(o["run_id"], a["run_id"]);
    // Bad keys.
    for (field, code) in
        [("session_key", "bridge.invalid_session_key"), ("idempotency_key", "bridge.invalid_idempotency_key")]
    {
        for bad in [json!(""), json!("has space"), json!("ünïcode"), json!("x".repeat(254))] {
            let e = err(&c, "agent_run", json!({"agent": "hermes", "input": "x", field: bad})).await;
            assert!(e.starts_with(&format!("{code}: ")), "{field}={bad}: {e}");
        }
    }
    // 256 including "ws:" is accepted (the idempotency key reaches the ledger check first).
    let e = err(&c, "agent_run", json!({"agent": "hermes", "input": "x", "idempotency_key": "y".repeat(253)})).await;
    assert!(e.starts_with("bridge.too_many_runs: "), "{e}");
    let e = err(&c, "agent_run", json!({"agent": "hermes", "input": "x", "wait_s": 601})).await;
    assert!(e.contains("600"), "{e}");
    ok(&c, "agent_run_stop", json!({"run_id": a["run_id"]})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_are_isolated_and_admin_sees_all() {
    let b = setup(FakeHermesOptions::default(), "").await;
    let a = b.client("alice").await;
    let m = b.client("mallory").await;
    let run = ok(&a, "agent_run", json!({"agent": "hermes", "input": "secret plans", "wait_s": 20})).await;
    let id = run["run_id"].as_str().unwrap();
    let foreign = err(&m, "agent_run_status", json!({"run_id": id})).await;
    let missing = err(&m, "agent_run_status", json!({"run_id": "run_00000000000000000000000000000000"})).await;
    assert!(foreign.starts_with("bridge.run_not_found: "), "{foreign}");
    assert_eq!(foreign, missing, "another client's run reads exactly like a missing one");
    for tool in ["agent_run_wait", "agent_run_events", "agent_run_stop"] {
        let e = err(&m, tool, json!({"run_id": id})).await;
        assert_eq!(e, missing, "{tool}");
    }
    assert_eq!(ok(&m, "agent_runs_list", json!({})).await["runs"], json!([]));
    let admin_key = b.env.json(&["auth", "rotate", "admin", "--json"])["key"].as_str().unwrap().to_string();
    let admin = connect(&b.server, &admin_key).await;
    let v = ok(&admin, "agent_run_status", json!({"run_id": id})).await;
    assert_eq!(v["client"], "alice");
    assert_eq!(ok(&admin, "agent_runs_list", json!({})).await["runs"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_windows_on_multibyte_text() {
    let b = setup(FakeHermesOptions::default(), "").await;
    let c = b.client("ws").await;
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": "BIG:50000", "wait_s": 30})).await;
    assert_eq!(v["status"], "completed", "{v}");
    let id = v["run_id"].as_str().unwrap();
    let total = v["output_total"].as_u64().unwrap();
    assert!(total >= 50000, "{total}");
    let mut offset = 0u64;
    let mut got = String::new();
    loop {
        let w = ok(&c, "agent_run_status", json!({"run_id": id, "offset": offset})).await;
        let out = w["output"].as_str().unwrap();
        assert!(out.len() <= 16384);
        got.push_str(out);
        match w["next_offset"].as_u64() {
            Some(n) => {
                assert_eq!(w["truncated"], true);
                assert!(w["more"].as_str().unwrap().contains(&n.to_string()));
                offset = n;
            }
            None => break,
        }
    }
    assert_eq!(got.len() as u64, total);
    let u = ok(&c, "agent_run", json!({"agent": "hermes", "input": "UNICODE", "wait_s": 30})).await;
    let text = u["output"].as_str().unwrap();
    assert!(text.contains('é') || text.contains('日'), "{text}");
    let e = err(&c, "agent_run_status", json!({"run_id": id, "offset": -1})).await;
    assert!(e.starts_with("bridge.invalid_offset: "), "{e}");
    for bad in [json!({"limit": 0}), json!({"limit": 501}), json!({"since_seq": -1})] {
        let mut a = bad.clone();
        a["run_id"] = json!(id);
        let e = err(&c, "agent_run_events", a).await;
        assert!(e.starts_with("bridge.invalid_"), "{bad}: {e}");
    }
    let e = err(&c, "agent_runs_list", json!({"limit": 201})).await;
    assert!(e.starts_with("bridge.invalid_limit: "), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_split_across_events_are_masked() {
    let b = setup(FakeHermesOptions::default(), "").await;
    let c = b.client("ws").await;
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": "SECRET", "wait_s": 30})).await;
    assert_eq!(v["status"], "completed", "{v}");
    let id = v["run_id"].as_str().unwrap();
    let secret_bits = ["abcdefghijklmnop", "qrstuvwx123"];
    let e = ok(&c, "agent_run_events", json!({"run_id": id})).await;
    let texts: Vec<&Value> = e["events"].as_array().unwrap().iter().filter(|e| e["event"] == "message.text").collect();
    let all = e.to_string();
    for bit in secret_bits {
        assert!(!all.contains(bit), "events leak {bit}: {all}");
        assert!(!v.to_string().contains(bit), "view leaks {bit}");
    }
    assert!(all.contains("REDACTED"), "{all}");
    // Page one event at a time: each page alone is still masked.
    for t in &texts {
        let seq = t["seq"].as_i64().unwrap();
        let p = ok(&c, "agent_run_events", json!({"run_id": id, "since_seq": seq - 1, "limit": 1})).await;
        for bit in secret_bits {
            assert!(!p.to_string().contains(bit), "single page leaks {bit}: {p}");
        }
    }
    // The operator sees the raw text at the shell only with --raw.
    let shown = b.env.ok(&["runs", "show", id]);
    assert!(!shown.contains("qrstuvwx123"), "{shown}");
    let raw = b.env.ok(&["runs", "show", id, "--raw"]);
    assert!(raw.contains("qrstuvwx123"), "{raw}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_waits_for_the_operator() {
    let b = setup(FakeHermesOptions::default(), "").await;
    let c = b.client("ws").await;
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": "APPROVE rm"})).await;
    let id = v["run_id"].as_str().unwrap().to_string();
    let w = ok(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 2})).await;
    assert_eq!(w["timed_out"], true, "an approval does not end the wait: {w}");
    assert_eq!(w["status"], "waiting_for_approval");
    assert_eq!(w["pending"]["kind"], "approval");
    let e = err(&c, "agent_run_answer", json!({"run_id": id, "request_id": "x", "answer": "yes"})).await;
    assert!(e.starts_with("bridge.no_pending_request: "), "{e}");
    let rows = b.env.json(&["agent", "approvals", "list", "--json", "--status", "pending"]);
    let row = rows.as_array().unwrap().iter().find(|r| r["run_id"] == id.as_str()).expect("inbox row").clone();
    assert_eq!(row["client"], "ws");
    assert_eq!(row["kind"], "hermes_command");
    assert_eq!(w["pending"]["approval_id"], row["id"]);
    let rid = row["id"].as_str().unwrap();
    assert_eq!(b.env.run(&["agent", "approvals", "approve", rid]).code(), 3, "no TTY, no --yes: declined");
    let done = b.env.json(&["agent", "approvals", "approve", rid, "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    let w = ok(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 30})).await;
    assert_eq!(w["status"], "completed", "{w}");
    assert!(w["pending"].is_null());
    assert_eq!(b.hermes.approvals_received(), vec![(id.clone(), "once".to_string())]);
    let o = b.env.run(&["agent", "approvals", "deny", rid, "--yes"]);
    assert_eq!(o.code(), 1, "a decided row cannot be decided again: {}", o.stderr());
    // Deny path.
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": "APPROVE again"})).await;
    let id2 = v["run_id"].as_str().unwrap().to_string();
    let row = loop {
        let rows = b.env.json(&["agent", "approvals", "list", "--json", "--status", "pending"]);
        if let Some(r) = rows.as_array().unwrap().iter().find(|r| r["run_id"] == id2.as_str()) {
            break r.clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    b.env.ok(&["agent", "approvals", "deny", row["id"].as_str().unwrap(), "--reason", "no", "--yes"]);
    let w = ok(&c, "agent_run_wait", json!({"run_id": id2, "timeout_s": 30})).await;
    assert_eq!(w["status"], "completed");
    assert!(b.hermes.approvals_received().contains(&(id2.clone(), "deny".to_string())));
    assert!(!b.hermes.approvals_received().iter().any(|(_, c)| c == "always"), "hal0 never sends always");
}

/// On protocol 2026-07-28 a wait on a run that waits for a person is not held open:
/// `agent_run_wait` answers at once with `input_required` naming the card; the client's
/// person approves it and the SDK's retry waits for the run to end. Driven by the Python
/// SDK 2.3 ("auto" mode) and by the TypeScript SDK v2 client. On 2025-11-25 the same wait
/// holds (`approval_waits_for_the_operator`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_a_wait_on_a_person_names_the_card() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (python, ts) =
        (repo.join(".venv/bin/python"), repo.join(".tools/node/node_modules/@modelcontextprotocol/client"));
    if !python.exists() || !ts.exists() {
        missing_external("the Python venv and @modelcontextprotocol/client 2.4", "bash tests/external/setup.sh");
        return;
    }
    let b = setup(FakeHermesOptions::default(), "").await;
    let url = b.server.url("/mcp/agents/mcp");
    let clients: [(&str, Vec<String>); 2] = [
        (python.to_str().unwrap(), vec![repo.join("tests/external/run_wait_rounds.py").display().to_string()]),
        ("node", vec![repo.join("tests/external/run_wait_rounds.mjs").display().to_string()]),
    ];
    for (i, (program, script)) in clients.into_iter().enumerate() {
        let key = b.env.bridge_key(&format!("client{i}"), &[]);
        let mut cmd = std::process::Command::new(program);
        cmd.args(&script);
        if program == "node" {
            cmd.args([&url, &key, BIN, "APPROVE rm"]).env("HAL0_TS_CLIENT", &ts);
        } else {
            cmd.args(["--url", &url, "--key", &key, "--hal0", BIN, "--input", "APPROVE rm"]);
        }
        let r = run_deciding_client(&b.env, cmd).await;
        assert_eq!(r["protocol"], "2026-07-28", "{r}");
        let seen = r["elicitations"].as_array().unwrap();
        assert_eq!(seen.len(), 1, "one round with the person: {r}");
        assert_eq!(seen[0]["mode"], "url");
        let card = seen[0]["url"].as_str().unwrap().split("#ap-").nth(1).unwrap().to_string();
        assert!(seen[0]["message"].as_str().unwrap().contains(r["run_id"].as_str().unwrap()), "{r}");
        assert_eq!(r["view"]["status"], "completed", "the retry waited for the end: {r}");
        let id = r["run_id"].as_str().unwrap().to_string();
        assert!(b.hermes.approvals_received().contains(&(id, "once".to_string())), "{program}");
        let row = b.env.json(&["approvals", "show", &card, "--json"]);
        assert_eq!(row["status"], "executed", "{row}");
    }
    assert_eq!(b.hermes.approvals_received().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_and_stop_after_finish() {
    let b = setup(FakeHermesOptions::default(), "").await;
    let c = b.client("ws").await;
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": "SLOW"})).await;
    let id = v["run_id"].as_str().unwrap().to_string();
    let s = ok(&c, "agent_run_stop", json!({"run_id": id})).await;
    assert!(["stopping", "cancelled"].contains(&s["status"].as_str().unwrap()), "{s}");
    let w = ok(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 30})).await;
    assert_eq!(w["status"], "cancelled", "{w}");
    let again = ok(&c, "agent_run_stop", json!({"run_id": id})).await;
    assert_eq!(again["status"], "cancelled", "a stop after the end is not an error");
    let e = err(&c, "agent_run_steer", json!({"run_id": id, "input": "go left"})).await;
    assert!(e.starts_with("bridge.run_not_running: ") && e.contains("steer"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_and_answer_when_hermes_offers_them() {
    let opts = FakeHermesOptions { steer: true, clarify: true, ..Default::default() };
    let b = setup(opts, "").await;
    let c = b.client("ws").await;
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": "SLOW"})).await;
    let id = v["run_id"].as_str().unwrap().to_string();
    let mut steered = false;
    for _ in 0..100 {
        match call(&c, "agent_run_steer", json!({"run_id": id, "input": "go left"})).await {
            Ok(_) => {
                steered = true;
                break;
            }
            Err(e) => {
                assert!(e.starts_with("bridge.run_not_running: "), "{e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    }
    assert!(steered, "steering a running run works");
    ok(&c, "agent_run_stop", json!({"run_id": id})).await;
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": "CLARIFY which one"})).await;
    let id = v["run_id"].as_str().unwrap().to_string();
    let w = ok(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 30})).await;
    assert_eq!(w["timed_out"], false, "a question ends the wait: {w}");
    assert_eq!(w["status"], "waiting_for_clarify");
    let rid = w["pending"]["request_id"].as_str().unwrap().to_string();
    let e = err(&c, "agent_run_answer", json!({"run_id": id, "request_id": "wrong", "answer": "a"})).await;
    assert!(e.starts_with("bridge.no_pending_request: "), "{e}");
    ok(&c, "agent_run_answer", json!({"run_id": id, "request_id": rid, "answer": "the left one"})).await;
    let w = ok(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 30})).await;
    assert_eq!(w["status"], "completed", "{w}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hermes_failures_map_to_bridge_codes() {
    let b = setup(FakeHermesOptions { fail_start_with: Some(403), ..Default::default() }, "").await;
    let c = b.client("ws").await;
    let e = err(&c, "agent_run", json!({"agent": "hermes", "input": "x"})).await;
    assert!(e.starts_with("bridge.agent_refused: ") && e.contains("403"), "{e}");
    assert!(!e.contains(b.hermes.key()));
    drop(c);
    let b2 = setup(FakeHermesOptions { fail_start_with: Some(422), ..Default::default() }, "").await;
    let c = b2.client("ws").await;
    let e = err(&c, "agent_run", json!({"agent": "hermes", "input": "x"})).await;
    assert!(e.starts_with("bridge.agent_refused: ") && e.contains("422"), "{e}");
    let b3 = setup(FakeHermesOptions::default(), "").await;
    let c = b3.client("ws").await;
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": "FAIL please", "wait_s": 20})).await;
    assert_eq!(v["status"], "failed");
    assert!(v["error"].is_string());
    b3.hermes.kill();
    let e = err(&c, "agent_run", json!({"agent": "hermes", "input": "x"})).await;
    assert!(e.starts_with("bridge.agent_unavailable: "), "{e}");
}

/// A run's `error` (and its input preview, its list row, its events) never shows a key, of
/// hal0's own shapes or any other: the provider's message quotes keys it refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_runs_error_masks_every_key_shape() {
    let b = setup(FakeHermesOptions::default(), "").await;
    let c = b.client("ws").await;
    let body = "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz1234567";
    let keys = [
        format!("hal0ak_{body}"),
        format!("hal0ck_{body}"),
        "ASIAQZ2XW3VU4TS5RP6N".to_string(),
        format!("xapp-1-A0{}", &body[..30]),
        format!("sk_live_{body}"),
        format!("AIza{}", &body[..35]),
        format!("glpat-{}", &body[..20]),
        format!("npm_{}", &body[..36]),
        format!("123ghp_{}", &body[..36]),
    ];
    let input = format!("FAIL: refused keys {} and Bearer%20{body}", keys.join(", "));
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": input, "wait_s": 20})).await;
    assert_eq!(v["status"], "failed", "{v}");
    let error = v["error"].as_str().unwrap();
    assert!(error.contains("refused keys"), "{error}");
    let id = v["run_id"].as_str().unwrap();
    let list = ok(&c, "agent_runs_list", json!({})).await;
    let events = ok(&c, "agent_run_events", json!({"run_id": id})).await;
    for shown in [v.to_string(), list.to_string(), events.to_string()] {
        assert!(!shown.contains(&body[..12]), "a key body shows: {shown}");
        assert!(!shown.contains("QZ2XW3VU4TS5"), "an ASIA key shows: {shown}");
    }
    assert!(error.matches("REDACTED").count() >= keys.len(), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_hal0_recovers_its_runs() {
    let hermes = FakeHermes::start(FakeHermesOptions {
        slow_interval: std::time::Duration::from_millis(30),
        ..Default::default()
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    hermes.write_profile(home.path());
    let env = Env::new();
    let h = [("HAL0_HERMES_HOME", home.path().to_str().unwrap())];
    let mut server = env.serve_with(&h);
    let key = env.bridge_key("ws", &[]);
    let c = connect(&server, &key).await;
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": "SLOW"})).await;
    let id = v["run_id"].as_str().unwrap().to_string();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let before = ok(&c, "agent_run_status", json!({"run_id": id})).await;
    // kill -9 mid-run.
    unsafe_kill9(&mut server);
    drop(c);
    let server = env.serve_with(&h);
    let c = connect(&server, &key).await;
    let w = ok(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 60})).await;
    assert_eq!(w["status"], "completed", "{w}");
    assert!(w["output"].as_str().unwrap().len() >= before["output"].as_str().unwrap().len());
    let e = ok(&c, "agent_run_events", json!({"run_id": id, "limit": 500})).await;
    assert!(
        e["events"].as_array().unwrap().len() >= before["last_seq"].as_u64().unwrap() as usize,
        "nothing stored was lost"
    );
}

/// A run that ends while hal0 is down is settled from Hermes's run status after the
/// restart: its events still end with its end (`run.completed`, marked `reconciled`), and
/// its stored texts add up to its output (the text missed meanwhile is one more
/// `message.text`). Found by the soak (examples/soak.rs): such runs ended with no end event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_ends_while_hal0_is_down_still_ends_its_events() {
    let hermes = FakeHermes::start(FakeHermesOptions {
        slow_interval: std::time::Duration::from_millis(30),
        ..Default::default()
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    hermes.write_profile(home.path());
    let env = Env::new();
    let h = [("HAL0_HERMES_HOME", home.path().to_str().unwrap())];
    let mut server = env.serve_with(&h);
    let key = env.bridge_key("ws", &[]);
    let c = connect(&server, &key).await;
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": "SLOW"})).await;
    let id = v["run_id"].as_str().unwrap().to_string();
    // Some text stored, then kill -9 while the run goes on; it ends while hal0 is down.
    let stored = eventually(std::time::Duration::from_secs(20), async || {
        ok(&c, "agent_run_status", json!({"run_id": id})).await["last_seq"].as_i64().unwrap_or(0) >= 1
    })
    .await;
    assert!(stored, "hal0 stored no event of the run");
    unsafe_kill9(&mut server);
    drop(c);
    let done = hermes.wait_for_status(&id, "completed", std::time::Duration::from_secs(30)).await;
    let server = env.serve_with(&h);
    let c = connect(&server, &key).await;
    let w = ok(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 60})).await;
    assert_eq!(w["status"], "completed", "{w}");
    let e = ok(&c, "agent_run_events", json!({"run_id": id, "limit": 500})).await;
    let events = e["events"].as_array().unwrap();
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=events.len() as i64).collect::<Vec<_>>(), "seq 1..=n");
    let last = events.last().unwrap();
    assert_eq!((last["event"].as_str(), last["reconciled"].as_bool()), (Some("run.completed"), Some(true)), "{last}");
    let text: String =
        events.iter().filter(|e| e["event"] == "message.text").map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(text, done["output"].as_str().unwrap(), "the stored texts add up to the output");
    assert_eq!(w["output"], done["output"]);
}

fn unsafe_kill9(s: &mut Server) {
    let _ = std::process::Command::new("kill").args(["-9", &s.child.id().to_string()]).status();
    let _ = s.child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_over_rest_at_the_admin_tier() {
    let b = setup(FakeHermesOptions::default(), "").await;
    let bridge_key = b.env.bridge_key("ws", &["admin", "memory"]);
    let c = connect(&b.server, &bridge_key).await;
    let admin = b.env.json(&["auth", "rotate", "admin", "--json"])["key"].as_str().unwrap().to_string();
    let v = ok(&c, "agent_run", json!({"agent": "hermes", "input": "APPROVE it"})).await;
    let id = v["run_id"].as_str().unwrap().to_string();
    let http = reqwest::Client::new();
    let get = |key: String| {
        let (http, url) = (http.clone(), b.server.url("/api/agent/approvals?status=pending"));
        async move { http.get(url).bearer_auth(key).send().await.unwrap() }
    };
    assert_eq!(get(bridge_key.clone()).await.status().as_u16(), 403, "a bridge key never reaches the inbox");
    let row = loop {
        let list: Value = get(admin.clone()).await.json().await.unwrap();
        if let Some(r) = list["approvals"].as_array().unwrap().iter().find(|r| r["run_id"] == id.as_str()) {
            break r.clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let rid = row["id"].as_str().unwrap();
    let post = |path: String, key: String| {
        let (http, url) = (http.clone(), b.server.url(&path));
        async move { http.post(url).bearer_auth(key).send().await.unwrap() }
    };
    let r = post(format!("/api/agent/approvals/{rid}/approve"), bridge_key.clone()).await;
    assert_eq!(r.status().as_u16(), 403);
    // No API key decides, the admin key included (issue 13): a person does, at the shell
    // or in the dashboard.
    for key in [admin.clone(), bridge_key.clone()] {
        for verb in ["approve", "deny"] {
            let r = post(format!("/api/agent/approvals/{rid}/{verb}"), key.clone()).await;
            assert_eq!(r.status().as_u16(), 403);
            let body: Value = r.json().await.unwrap();
            assert_eq!(body["error"]["code"], "approvals.person_required", "{body}");
        }
    }
    let done = b.env.json(&["agent", "approvals", "approve", rid, "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    assert!(done["decided_by"].as_str().unwrap().starts_with("person:"), "{done}");
    let again = b.env.run(&["agent", "approvals", "deny", rid, "--yes"]);
    assert_ne!(again.code(), 0, "decided once");
    assert!(again.stderr().contains("approvals.not_pending"), "{}", again.stderr());
    let w = ok(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 30})).await;
    assert_eq!(w["status"], "completed");
    let tools: Vec<String> = {
        let key = bridge_key.clone();
        let cfg = StreamableHttpClientTransportConfig::with_uri(b.server.url("/mcp/admin/mcp")).auth_header(key);
        let admin_mcp: Client = ().serve(StreamableHttpClientTransport::from_config(cfg)).await.unwrap();
        admin_mcp.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect()
    };
    assert!(!tools.iter().any(|t| t.contains("approve") || t.contains("deny")), "no MCP tool decides: {tools:?}");
}
