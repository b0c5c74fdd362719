//! Task-augmented calls through hal0's proxy: the TypeScript SDK
//! (`tests/external/proxy_tasks.mjs`) as the consumer of server-everything's
//! `simulate-research-query` (a tool that requires a task), over streamable HTTP.

use crate::proxy::proxy_rows;
use crate::support::upstream::Everything;
use crate::support::*;
use serde_json::{Value, json};
const TOOL: &str = "simulate-research-query";

/// Run `tests/external/proxy_tasks.mjs` (with `extra` arguments) against
/// `/mcp/proxy/<id>/mcp` of `server`.
async fn run_script(env: &Env, server: &Server, id: &str, extra: &[&str]) -> Value {
    crate::proxy_protocol::run_node(env, server, id, "proxy_tasks.mjs", extra).await
}

/// The types of a stream's messages, in order, with repeated statuses folded.
fn shape(messages: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in messages.as_array().unwrap() {
        let s = match m["type"].as_str().unwrap() {
            "taskStatus" => format!("status:{}", m["status"].as_str().unwrap()),
            t => t.to_string(),
        };
        if out.last() != Some(&s) {
            out.push(s);
        }
    }
    out
}

/// server-everything installed as `id` under `policy` (`(verb, tool)`: `hal0 mcp VERB id
/// TOOL`), and hal0 serving it; `None` when tests/external/setup.sh has not run.
fn serve_everything(id: &str, policy: &[(&str, &str)]) -> Option<(Everything, Env, Server)> {
    let up = Everything::start()?;
    let env = Env::new();
    env.ok(&["mcp", "install", &up.url(), "--id", id]);
    for (verb, tool) in policy {
        env.ok(&["mcp", verb, id, tool]);
    }
    let server = env.serve();
    Some((up, env, server))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_runs_tasks_through_the_proxy() {
    let Some((_up, env, server)) = serve_everything("ev-tasks", &[("allow", TOOL), ("allow", "echo")]) else { return };
    let v = run_script(&env, &server, "ev-tasks", &[]).await;

    // The proxy declares tasks, and the tool keeps its `execution` through the listing,
    // so the SDK itself refuses to call it without a task.
    assert_eq!(v["server_tasks"]["requests"]["tools"]["call"], json!({}), "{v}");
    assert_eq!(v["execution"], json!({"echo": "forbidden", TOOL: "required"}), "{v}");
    assert!(v["plain_call"]["error"].as_str().unwrap().contains("requires task-based execution"), "{v}");

    // A task: created, working, completed, its report.
    let research = &v["research"];
    assert_eq!(shape(research), ["taskCreated", "status:working", "status:completed", "result"], "{v}");
    let report = research.as_array().unwrap().last().unwrap()["text"].as_str().unwrap();
    assert!(report.contains("# Research Report: rust"), "{v}");

    // An ambiguous one: the server's question reached this client's person during
    // tasks/result, and the answer is in the report.
    assert_eq!(v["elicited"].as_array().unwrap().len(), 1, "{v}");
    assert!(v["elicited"][0].as_str().unwrap().contains("python"), "{v}");
    let ambiguous = shape(&v["ambiguous"]);
    assert_eq!(ambiguous.first().map(String::as_str), Some("taskCreated"), "{v}");
    assert!(ambiguous.contains(&"status:input_required".to_string()), "{v}");
    let last = v["ambiguous"].as_array().unwrap().last().unwrap();
    assert_eq!(last["type"], "result", "{v}");
    assert!(last["text"].as_str().unwrap().contains("python (historical)"), "{v}");

    // The server's status notifications reached the session whose tasks they are.
    let research_id = &research[0]["taskId"];
    let told = |status: &str| {
        v["statuses"].as_array().unwrap().iter().any(|s| &s["taskId"] == research_id && s["status"] == status)
    };
    assert!(told("working") && told("completed"), "{v}");

    // The session's own tasks are listed; an id it did not create is refused by hal0.
    let mine: Vec<&Value> = v["my_tasks"].as_array().unwrap().iter().collect();
    assert_eq!(mine.len(), 2, "{v}");
    let listed = v["listed"]["ok"].as_array().unwrap();
    assert!(mine.iter().all(|t| listed.contains(t)), "{v}");
    assert!(v["get_unknown"]["error"].as_str().unwrap().contains("mcp.task_unknown"), "{v}");

    // Cancelled: the server says so, and so does the task afterwards.
    assert_eq!(v["cancel"]["ok"], "cancelled", "{v}");
    assert_eq!(v["after_cancel"]["ok"], "cancelled", "{v}");

    // Another session of the same consumer sees none of them: hal0 refused the requests
    // (its code, not the server's "not found") and filtered the list.
    assert!(v["other_get"]["error"].as_str().unwrap().contains("mcp.task_unknown"), "{v}");
    assert!(v["other_result"]["error"].as_str().unwrap().contains("mcp.task_unknown"), "{v}");
    assert_eq!(v["other_list"]["ok"], json!([]), "{v}");

    // Each task-augmented call is an allowed call on record, with its arguments.
    let rows = proxy_rows(&env, "ev-tasks");
    let calls: Vec<&Value> = rows.iter().filter(|r| r["tool"] == TOOL).collect();
    assert_eq!(calls.len(), 3, "{rows:#?}");
    assert!(calls.iter().all(|r| r["verdict"] == "allow" && r["result_code"].is_null()), "{rows:#?}");
    assert!(calls.iter().any(|r| r["arguments"]["topic"] == "python"), "{rows:#?}");
}

/// A gated tool is not run as a task: the call is refused with its own code, before
/// anything reaches the server or the approvals inbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_tool_is_not_run_as_a_task() {
    let Some((_up, env, server)) = serve_everything("ev-gated", &[("gate", TOOL)]) else { return };
    let v = run_script(&env, &server, "ev-gated", &["gated"]).await;
    assert_eq!(v["execution"], json!({TOOL: "required"}), "{v}");
    let gated = v["gated"].as_array().unwrap();
    assert_eq!(gated.len(), 1, "{v}");
    assert_eq!(gated[0]["type"], "error", "{v}");
    let e = gated[0]["error"].as_str().unwrap();
    assert!(e.contains("mcp.task_gated") && e.contains("hal0 mcp allow ev-gated"), "{v}");
    let inbox = env.json(&["agent", "approvals", "list", "--json"]);
    assert_eq!(inbox.as_array().map(Vec::len), Some(0), "{inbox}");
    // The refusal is on record with the policy in force.
    let rows = proxy_rows(&env, "ev-gated");
    let refused: Vec<&Value> = rows.iter().filter(|r| r["tool"] == TOOL).collect();
    assert_eq!(refused.len(), 1, "{rows:#?}");
    assert_eq!(
        (&refused[0]["verdict"], &refused[0]["result_code"]),
        (&json!("refused"), &json!("mcp.task_gated")),
        "{rows:#?}"
    );
    assert_eq!(refused[0]["arguments"]["topic"], "rust", "{rows:#?}");
}
