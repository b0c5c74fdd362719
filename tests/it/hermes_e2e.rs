//! End to end against the real Hermes agent (hermes-agent 0.19.0 from PyPI) driven by the
//! scripted fake model in tests/hermes/: a run that completes (over MCP and over A2A), a real tool call, an
//! approval decided with `hal0 agent approvals approve`, a stop, and a kill -9 of
//! `hal0 serve` mid-run followed by a restart that recovers the run; and a note a client
//! teaches a profile (`agent_memory_add`) that the profile's own `memory_search` finds. All
//! on 127.0.0.1.

use crate::support;
use crate::support::mcp::{Client, connect};
use crate::support::real_hermes::RealHermes;
use crate::support::*;
use serde_json::{Value, json};
use std::time::Duration;

async fn call(c: &Client, tool: &str, args: Value) -> Value {
    support::mcp::call(c, tool, args.clone()).await.unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
}

fn kill9(s: &mut Server) {
    let _ = std::process::Command::new("kill").args(["-9", &s.child.id().to_string()]).status();
    let _ = s.child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_hermes_end_to_end() {
    let Some(hermes) = RealHermes::start(&["worker1"]) else { return };
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    std::fs::write(env.config_dir().join("hal0.toml"), format!("[hermes]\nhome = \"{}\"\n", hermes.home().display()))
        .unwrap();
    let mut server = env.serve();
    let key = env.bridge_key("e2e", &[]);
    let c = connect(&server, &key).await;

    // Profiles are discovered from config.yaml and .env, and both answer.
    let agents = call(&c, "agents_list", json!({})).await;
    let list = agents["agents"].as_array().unwrap();
    for id in ["hermes", "hermes/worker1"] {
        let a = list.iter().find(|a| a["agent_id"] == id).unwrap_or_else(|| panic!("{id} in {agents}"));
        assert_eq!(a["health"], "ok", "{a}");
        assert_eq!(a["keyed"], true, "{a}");
        assert_eq!(a["version"], "0.19.0", "{a}");
    }

    // A run that completes.
    let v = call(&c, "agent_run", json!({"agent": "hermes", "input": "hello from hal0", "wait_s": 120})).await;
    assert_eq!(v["status"], "completed", "{v}\n{}", hermes.gateway_log_tail("default", 30));
    assert!(v["output"].as_str().unwrap().contains("FAKE ANSWER"), "{v}");
    assert!(v["events_tail"].as_array().unwrap().iter().any(|e| e["event"] == "run.completed"));

    // The same through the A2A face (the JSON-RPC binding), on the named profile: the task
    // is a run of it, its output the artifact.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "e2e-a2a-1", "role": "ROLE_USER", "parts": [{"text": "hello over a2a"}]}}});
    let a2a: Value = reqwest::Client::new()
        .post(server.url("/a2a/hermes/worker1"))
        .bearer_auth(&key)
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let task = &a2a["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{a2a}");
    assert_eq!(task["metadata"]["hal0"]["agent"], "hermes/worker1", "{a2a}");
    assert!(task["artifacts"][0]["parts"][0]["text"].as_str().unwrap().contains("FAKE ANSWER"), "{a2a}");

    // A real tool call, on the named profile.
    let v =
        call(&c, "agent_run", json!({"agent": "hermes/worker1", "input": "please TOOLCALL now", "wait_s": 120})).await;
    assert_eq!(v["status"], "completed", "{v}");
    let ev = call(&c, "agent_run_events", json!({"run_id": v["run_id"], "limit": 500})).await;
    assert!(
        ev["events"].as_array().unwrap().iter().any(|e| e["event"] == "tool.started" && e["tool"] == "terminal"),
        "{ev}"
    );
    assert!(v["output"].as_str().unwrap().contains("hello-from-tool"), "{v}");

    // An approval answered at the shell.
    assert!(hermes.victim().exists());
    let v = call(&c, "agent_run", json!({"agent": "hermes", "input": "APPROVE please"})).await;
    let id = v["run_id"].as_str().unwrap().to_string();
    let mut w = json!({});
    for _ in 0..30 {
        // An approval does not end the wait: each short wait times out.
        w = call(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 2})).await;
        if w["status"] == "waiting_for_approval" {
            break;
        }
    }
    assert_eq!(w["status"], "waiting_for_approval", "{w}");
    assert_eq!(w["timed_out"], true, "{w}");
    assert_eq!(w["pending"]["kind"], "approval", "{w}");
    let row = loop {
        let rows = env.json(&["agent", "approvals", "list", "--json", "--status", "pending"]);
        if let Some(r) = rows.as_array().unwrap().iter().find(|r| r["run_id"] == id.as_str()) {
            break r.clone();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(row["preview"].as_str().unwrap().contains("rm -r"), "{row}");
    let done = env.json(&["agent", "approvals", "approve", row["id"].as_str().unwrap(), "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    let w = call(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 120})).await;
    assert_eq!(w["status"], "completed", "{w}");
    assert!(!hermes.victim().exists(), "the approved command ran");

    // A stop.
    let v = call(&c, "agent_run", json!({"agent": "hermes", "input": "SLOW please"})).await;
    let id = v["run_id"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    call(&c, "agent_run_stop", json!({"run_id": id})).await;
    let w = call(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 60})).await;
    assert_eq!(w["status"], "cancelled", "{w}");

    // kill -9 of hal0 mid-run, then a restart that recovers the run.
    let v = call(&c, "agent_run", json!({"agent": "hermes", "input": "SLOW again"})).await;
    let id = v["run_id"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = call(&c, "agent_run_status", json!({"run_id": id})).await;
    assert_eq!(before["status"], "running", "{before}");
    drop(c);
    kill9(&mut server);
    let server = env.serve();
    let c = connect(&server, &key).await;
    let w = call(&c, "agent_run_wait", json!({"run_id": id, "timeout_s": 120})).await;
    assert_eq!(w["status"], "completed", "{w}");
    assert!(w["output"].as_str().unwrap().contains("w59"), "the whole output is recovered: {w}");
    let runs = call(&c, "agent_runs_list", json!({"limit": 10})).await;
    assert_eq!(runs["runs"].as_array().unwrap().len(), 6, "nothing stored was lost: {runs}");
}

/// What a client teaches a profile reaches that profile: `agent_memory_add(agent="hermes")`
/// files the note under `private:hermes`, and a run of that profile, wired to hal0-memory by
/// `hal0 agent reprovision hermes` (its key is the bridge client `hermes`, no private mode),
/// finds it with its own `memory_search` call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_taught_to_a_profile_is_found_by_that_profile() {
    const WORD: &str = "quokka7319";
    let args = json!({"query": WORD}).to_string();
    let Some(mut hermes) =
        RealHermes::start_with_env(&[], &[("FAKE_LLM_MCP_TOOL", "memory_search"), ("FAKE_LLM_MCP_ARGS", &args)])
    else {
        return;
    };
    let env = Env::new();
    env.ok(&["config", "set", "hermes.home", hermes.home().to_str().unwrap()]);
    let server = support::serve_on_configured_port(&env);
    env.ok(&["agent", "reprovision", "hermes"]);
    // hal0-admin and hal0-memory bring 86 tools, past Hermes's tool-search threshold, which
    // would hide them behind its tool_search bridge; the scripted model calls tools by name.
    let cfg = hermes.home().join("config.yaml");
    let mut yaml = std::fs::read_to_string(&cfg).unwrap();
    yaml.push_str("\ntools:\n  tool_search:\n    enabled: false\n");
    std::fs::write(&cfg, yaml).unwrap();
    // Hermes reads mcp_servers only at start.
    hermes.restart("default");
    let key = env.bridge_key("teacher", &[]);
    let c = connect(&server, &key).await;
    let taught =
        call(&c, "agent_memory_add", json!({"agent": "hermes", "text": format!("the deploy word is {WORD}")})).await;
    assert_eq!(taught["status"], "ok", "{taught}");

    let v = call(&c, "agent_run", json!({"agent": "hermes", "input": "MCPCALL memory please", "wait_s": 120})).await;
    assert_eq!(v["status"], "completed", "{v}\n{}", hermes.gateway_log_tail("default", 40));
    // The result Hermes handed its model is the search's answer: it holds the note.
    let result = hermes
        .fake_llm_requests()
        .into_iter()
        .rev()
        .find_map(|req| {
            let msgs = req["body"]["messages"].as_array().cloned().unwrap_or_default();
            let last = msgs.last()?.clone();
            (last["role"] == "tool").then(|| last["content"].to_string())
        })
        .unwrap_or_else(|| panic!("Hermes never called a tool: {v}\n{}", hermes.gateway_log_tail("default", 40)));
    assert!(result.contains(WORD), "the profile's search found the taught note: {result}");
    // It was the profile's own call, as the bridge client `hermes`.
    let rows = env.json(&["activity", "list", "--tool", "memory_search", "--json"]);
    assert!(rows.as_array().unwrap().iter().any(|r| r["identity"] == "bridge:hermes"), "{rows}");
}
