//! End to end with the real Hermes (hermes-agent 0.19.0 from PyPI, driven by the scripted fake
//! model in tests/hermes/) and hal0's MCP proxy in front of a real upstream: after `hal0 mcp
//! expose ID --hermes`, a Hermes run started through hal0's agent bridge calls an allowed
//! proxied tool and gets its result; after `hal0 mcp block ID TOOL` the same Hermes (not
//! restarted, so it still advertises the tool) is refused with `mcp.tool_blocked` and the
//! upstream never sees the call; `hal0 mcp expose ID --no-hermes` then takes the entry, the key
//! and the key's access away again. Both decisions are in hal0's audit log under the Hermes
//! consumer. All on 127.0.0.1.
//!
//! The upstream is the Python SDK's FastMCP server (`tests/upstream/fastmcp_server.py`); when
//! that is not installed the in-process rmcp server stands in, except under
//! `HAL0_REQUIRE_EXTERNAL=1`, where a missing FastMCP (or Hermes) is a failure.

use crate::support;

use crate::support::mcp::{Client, connect};
use crate::support::real_hermes::RealHermes;
use crate::support::upstream::{FastMcp, RmcpUpstream};
use crate::support::*;
use serde_json::{Value, json};
use std::time::Instant;

/// The registry id; its `-` exercises both hal0's `HAL0_MCP_<ID>_KEY` mapping and Hermes's
/// tool-name sanitising (`mcp__e2e_up__<tool>`).
const ID: &str = "e2e-up";
const KEY_VAR: &str = "HAL0_MCP_E2E_UP_KEY";
const HERMES_ECHO: &str = "mcp__e2e_up__echo";
const HERMES_ADD: &str = "mcp__e2e_up__add";
/// What the allowed call echoes; never part of a prompt, so seeing it proves the call ran.
const ECHO_TEXT: &str = "proxied-hello-7c1e";

enum Upstream {
    Fast(FastMcp),
    Rmcp(RmcpUpstream),
}

impl Upstream {
    async fn start() -> Upstream {
        // FastMcp::start panics under HAL0_REQUIRE_EXTERNAL=1 when it is not installed.
        match FastMcp::start() {
            Some(f) => Upstream::Fast(f),
            None => {
                eprintln!("hermes_proxy_e2e: FastMCP is not installed; using the in-process rmcp upstream instead");
                Upstream::Rmcp(RmcpUpstream::start().await)
            }
        }
    }
    fn url(&self) -> String {
        match self {
            Upstream::Fast(u) => u.url(),
            Upstream::Rmcp(u) => u.url(),
        }
    }
    fn count(&self, tool: &str) -> u64 {
        match self {
            Upstream::Fast(u) => u.count(tool),
            Upstream::Rmcp(u) => u.count(tool),
        }
    }
}

async fn call(c: &Client, tool: &str, args: Value) -> Value {
    support::mcp::call(c, tool, args.clone()).await.unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
}

/// The audit rows of the proxied server.
fn proxy_rows(env: &Env) -> Vec<Value> {
    let rows = env.json(&["activity", "list", "--json", "--limit", "200"]);
    let rows = rows.as_array().cloned().unwrap_or_else(|| rows["entries"].as_array().cloned().unwrap_or_default());
    rows.into_iter().filter(|r| r["surface"] == format!("mcp:proxy/{ID}")).collect()
}

/// The value of `name` in a `.env` file.
fn env_value(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.trim().trim_start_matches("export ").split_once('=')?;
        (k.trim() == name).then(|| v.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
    })
}

/// Status of an MCP `initialize` POSTed straight to the proxy with `key`.
async fn initialize_status(server: &Server, key: &str) -> u16 {
    let url = server.url(&format!("/mcp/proxy/{ID}/mcp"));
    mcp_post(&reqwest::Client::new(), &url, Some(key), &initialize_body()).send().await.unwrap().status().as_u16()
}

/// The fake model's request that carried the result of a call of `tool`: (the request body,
/// the call's arguments, the result text Hermes handed the model).
fn tool_result_request(hermes: &RealHermes, tool: &str) -> Option<(Value, Value, String)> {
    for req in hermes.fake_llm_requests().into_iter().rev() {
        let msgs = req["body"]["messages"].as_array().cloned().unwrap_or_default();
        let Some(last) = msgs.last().filter(|m| m["role"] == "tool") else { continue };
        let call = msgs
            .iter()
            .rev()
            .filter_map(|m| m["tool_calls"].as_array())
            .flatten()
            .find(|c| c["id"] == last["tool_call_id"] && c["function"]["name"] == tool);
        if let Some(call) = call {
            let args =
                serde_json::from_str(call["function"]["arguments"].as_str().unwrap_or("null")).unwrap_or_default();
            let text = match &last["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            return Some((req["body"].clone(), args, text));
        }
    }
    None
}

/// Exactly one audit row for `tool`: the verdict, the policy that decided it, and the
/// default Hermes profile's consumer as the caller.
fn assert_one_row(env: &Env, tool: &str, verdict: &str) {
    let rows = proxy_rows(env);
    let mine: Vec<&Value> = rows.iter().filter(|r| r["tool"] == tool).collect();
    assert_eq!(mine.len(), 1, "one row for {tool}: {rows:?}");
    let r = mine[0];
    assert_eq!(r["verdict"], verdict, "{r}");
    assert_eq!(r["detail"], format!("policy: {verdict}"), "{r}");
    assert_eq!(r["identity"], "consumer:hermes", "{r}");
}

fn advertised(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|ts| ts.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hermes_calls_an_allowed_proxied_tool_and_is_refused_a_blocked_one() {
    let started = Instant::now();
    // The fake model reads its env once, at stack start: both scripted calls are set up now.
    let echo_args = json!({"text": ECHO_TEXT}).to_string();
    let add_args = json!({"a": 1, "b": 2}).to_string();
    let Some(mut hermes) = RealHermes::start_with_env(
        &[],
        &[
            ("FAKE_LLM_MCP_TOOL", "echo"),
            ("FAKE_LLM_MCP_ARGS", &echo_args),
            ("FAKE_LLM_MCP_BLOCKED_TOOL", "add"),
            ("FAKE_LLM_MCP_BLOCKED_ARGS", &add_args),
        ],
    ) else {
        return;
    };
    let up = Upstream::start().await;
    let env = Env::new();
    env.ok(&["config", "set", "hermes.home", hermes.home().to_str().unwrap()]);
    let server = support::serve_on_configured_port(&env);
    let key = env.bridge_key("e2e", &[]);
    let c = connect(&server, &key).await;

    // Install with echo and add allowed, then join it into Hermes.
    env.ok(&["mcp", "install", &up.url(), "--id", ID]);
    env.ok(&["mcp", "allow", ID, "echo"]);
    env.ok(&["mcp", "allow", ID, "add"]);
    let cfg_path = hermes.home().join("config.yaml");
    let env_path = hermes.home().join(".env");
    let cfg_before = std::fs::read_to_string(&cfg_path).unwrap();
    let v = env.json(&["mcp", "expose", ID, "--hermes", "--json"]);
    let sync = &v["hermes_sync"];
    assert_eq!(sync["hermes"], json!([format!("hermes: {ID}")]), "{v}");
    assert_eq!(sync["applied"], json!([format!("hermes: {ID}")]), "{v}");
    assert_eq!(sync["changed"], json!(["hermes"]), "{v}");
    assert_eq!(sync["errors"], json!([]), "{v}");
    assert_eq!(sync["restart"], "needed", "{v}");
    assert_eq!(v["server"]["exposure"]["hermes"], true, "{v}");

    // What Hermes will read: the entry points at hal0's proxy, the key is only in .env.
    let cfg_text = std::fs::read_to_string(&cfg_path).unwrap();
    let yaml: Value = serde_yaml_ng::from_str(&cfg_text).unwrap();
    let entry = &yaml["mcp_servers"][ID];
    assert_eq!(entry["url"], server.url(&format!("/mcp/proxy/{ID}/mcp")), "{cfg_text}");
    assert_eq!(entry["headers"]["Authorization"], format!("Bearer ${{{KEY_VAR}}}"), "{cfg_text}");
    let env_text = std::fs::read_to_string(&env_path).unwrap();
    let hermes_key = env_value(&env_text, KEY_VAR).unwrap_or_else(|| panic!("no {KEY_VAR} in .env: {env_text}"));
    assert!(hermes_key.starts_with("hal0pk_"), "{hermes_key}");
    assert!(!cfg_text.contains(&hermes_key), "the key is not in config.yaml");
    let no_proxy = env_value(&env_text, "NO_PROXY").unwrap_or_default();
    assert!(no_proxy.split(',').any(|h| h == "127.0.0.1"), "NO_PROXY: {no_proxy}");
    assert_eq!(initialize_status(&server, &hermes_key).await, 200, "the profile's key opens the proxy");

    // Hermes reads mcp_servers only at start.
    hermes.restart("default");

    // An allowed call: forwarded once, its result reaches the model and the run's output.
    let v = call(&c, "agent_run", json!({"agent": "hermes", "input": "please MCPCALL now", "wait_s": 120})).await;
    let log = || hermes.gateway_log_tail("default", 40);
    assert_eq!(v["status"], "completed", "{v}\n{}", log());
    let out = v["output"].as_str().unwrap_or_default();
    assert!(out.contains("DONE after tool:") && out.contains(ECHO_TEXT), "{v}\n{}", log());
    let ev = call(&c, "agent_run_events", json!({"run_id": v["run_id"], "limit": 500})).await;
    assert!(
        ev["events"].as_array().unwrap().iter().any(|e| e["event"] == "tool.started" && e["tool"] == HERMES_ECHO),
        "{ev}"
    );
    let (body, args, result) = tool_result_request(&hermes, HERMES_ECHO).expect("the echo result went to the model");
    assert_eq!(args, json!({"text": ECHO_TEXT}));
    assert!(result.contains(ECHO_TEXT) && !result.contains("\"error\""), "{result}");
    let tools = advertised(&body);
    assert!(tools.contains(&HERMES_ECHO.to_string()) && tools.contains(&HERMES_ADD.to_string()), "{tools:?}");
    assert_eq!(up.count("echo"), 1, "exactly one echo reached the upstream");
    assert_one_row(&env, "echo", "allow");

    // Blocked while Hermes runs: it still advertises `add`, hal0 refuses the call.
    env.ok(&["mcp", "block", ID, "add"]);
    let v = call(&c, "agent_run", json!({"agent": "hermes", "input": "please MCPBLOCKED now", "wait_s": 120})).await;
    assert_eq!(v["status"], "completed", "{v}\n{}", log());
    let out = v["output"].as_str().unwrap_or_default();
    assert!(out.contains("DONE after tool:") && out.contains("mcp.tool_blocked"), "{v}\n{}", log());
    let (body, args, result) = tool_result_request(&hermes, HERMES_ADD).expect("the add refusal went to the model");
    assert_eq!(args, json!({"a": 1, "b": 2}));
    assert!(result.contains("mcp.tool_blocked:") && result.contains("hal0 did not forward the call"), "{result}");
    assert!(advertised(&body).contains(&HERMES_ADD.to_string()), "Hermes was not restarted: add is still listed");
    assert_eq!(up.count("add"), 0, "a blocked call never reaches the upstream");
    assert_eq!(up.count("echo"), 1);
    assert_one_row(&env, "add", "blocked");

    // Withdrawn: the entry and the key variable go, and the key no longer opens the proxy.
    let v = env.json(&["mcp", "expose", ID, "--no-hermes", "--json"]);
    let sync = &v["hermes_sync"];
    assert_eq!(sync["removed"], json!([format!("hermes: {ID}")]), "{v}");
    assert_eq!(sync["hermes"], json!([]), "{v}");
    assert_eq!(sync["errors"], json!([]), "{v}");
    let cfg_after = std::fs::read_to_string(&cfg_path).unwrap();
    let yaml: Value = serde_yaml_ng::from_str(&cfg_after).unwrap();
    assert!(yaml["mcp_servers"].get(ID).is_none(), "{cfg_after}");
    assert!(!cfg_after.contains("/mcp/proxy/") && !cfg_after.contains(KEY_VAR), "{cfg_after}");
    assert!(cfg_after.starts_with(&cfg_before), "nothing else in config.yaml changed:\n{cfg_before}\n---\n{cfg_after}");
    let env_after = std::fs::read_to_string(&env_path).unwrap_or_default();
    assert!(!env_after.contains(KEY_VAR) && !env_after.contains(&hermes_key), "{env_after}");
    assert_eq!(initialize_status(&server, &hermes_key).await, 401, "the withdrawn key is revoked");

    // A Hermes still running with the entry loaded is cut off at once: however it fails (the
    // tool gone from its list, or a refused call), nothing reaches the upstream.
    let v = call(&c, "agent_run", json!({"agent": "hermes", "input": "please MCPCALL again", "wait_s": 120})).await;
    assert_eq!(v["status"], "completed", "{v}\n{}", log());
    assert!(!v["output"].as_str().unwrap_or_default().contains(ECHO_TEXT), "{v}");
    assert_eq!(up.count("echo"), 1, "nothing reached the upstream after the withdrawal");
    let allowed = proxy_rows(&env).into_iter().filter(|r| r["verdict"] == "allow").count();
    assert_eq!(allowed, 1, "no call was let through after the withdrawal");

    c.cancel().await.ok();
    eprintln!("hermes_proxy_e2e: done in {:.1?} (Hermes stack up in {:.1?})", started.elapsed(), hermes.started_in());
}
