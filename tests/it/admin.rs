//! `hal0-admin` generated from the REST route table: the tool list, autonomous reads with
//! wrapped lists, the path-argument checks, and gated calls that never run without an
//! approved row (and run exactly once when approved at the shell).

use crate::support::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

pub(crate) type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

pub(crate) async fn admin(server: &Server, key: &str) -> Client {
    let cfg = StreamableHttpClientTransportConfig::with_uri(server.url("/mcp/admin/mcp")).auth_header(key.to_string());
    ().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake")
}

/// (is_error, structured content)
pub(crate) async fn call(c: &Client, tool: &str, args: Value) -> (bool, Value) {
    let p =
        CallToolRequestParams::new(tool.to_string()).with_arguments(json!({"args": args}).as_object().unwrap().clone());
    let r = c.call_tool(p).await.expect("transport");
    (r.is_error == Some(true), r.structured_content.unwrap_or(Value::Null))
}

fn pending_rows(env: &Env) -> Vec<Value> {
    env.json(&["agent", "approvals", "list", "--json", "--status", "pending"]).as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_come_from_the_route_table() {
    let env = Env::new();
    let key = env.bridge_key("ops", &["admin"]);
    let server = env.serve();
    let c = admin(&server, &key).await;
    let tools = c.list_all_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let mut want: Vec<String> = hal0::ops::routes::ROUTES.iter().filter_map(|r| r.tool.map(str::to_string)).collect();
    // The memory_* tools are hal0-memory's own, delegated in-process.
    for m in ["memory_add", "memory_search", "memory_list", "memory_delete", "memory_recall"] {
        assert!(names.contains(&m.to_string()), "{m} delegated: {names:?}");
    }
    let mut got: Vec<String> = names.iter().filter(|n| !n.starts_with("memory_")).cloned().collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    // The schema is the op's argument type: fields it does not know are ignored, except by
    // the ops that refuse them (and say so).
    let strict =
        ["mcp_server_install", "mcp_server_config_write", "mcp_server_tools", "mcp_server_exposure", "secret_write"];
    for t in tools.iter().filter(|t| !t.name.starts_with("memory_")) {
        let schema = serde_json::to_value(&t.input_schema).unwrap();
        let open = !strict.contains(&t.name.as_ref());
        assert_eq!(schema["properties"]["args"]["additionalProperties"], open, "{}", t.name);
    }
    // Autonomous reads say they change nothing; every other tool says nothing of the kind.
    for t in tools.iter().filter(|t| !t.name.starts_with("memory_")) {
        let read = hal0::ops::routes::ROUTES
            .iter()
            .any(|r| r.tool == Some(t.name.as_ref()) && r.access == hal0::ops::routes::Access::AutonomousRead);
        let hint = t.annotations.as_ref().and_then(|a| a.read_only_hint);
        assert_eq!(hint, Some(read), "{}", t.name);
    }
    let install = tools.iter().find(|t| t.name == "mcp_server_install").unwrap();
    let schema = serde_json::to_value(&install.input_schema).unwrap();
    // An object or null, written as one type a branch (see mcp::schema).
    assert_eq!(
        schema["properties"]["args"]["properties"]["manifest"]["anyOf"],
        json!([{"type": "object", "additionalProperties": true}, {"type": "null"}]),
        "{schema}"
    );
    let revoke = tools.iter().find(|t| t.name == "bridge_client_revoke").unwrap();
    let schema = serde_json::to_value(&revoke.input_schema).unwrap();
    assert_eq!(schema["properties"]["args"]["required"], json!(["name"]));
    assert_eq!(schema["required"], json!(["args"]));

    let (e, v) = call(&c, "version_info", json!({})).await;
    assert!(!e && v["name"] == "hal0", "{v}");
    let p = CallToolRequestParams::new("memory_add")
        .with_arguments(json!({"text": "delegated note walrus"}).as_object().unwrap().clone());
    let r = c.call_tool(p).await.unwrap();
    assert_ne!(r.is_error, Some(true), "{:?}", r.content);
    let p = CallToolRequestParams::new("memory_search")
        .with_arguments(json!({"query": "walrus"}).as_object().unwrap().clone());
    let r = c.call_tool(p).await.unwrap();
    assert!(serde_json::to_string(&r.structured_content).unwrap().contains("delegated note walrus"), "{r:?}");
    let (e, v) = call(&c, "bridge_client_list", json!({})).await;
    assert!(!e, "{v}");
    assert_eq!(v["count"], 1);
    assert_eq!(v["clients"][0]["name"], "ops");
    let (e, v) = call(&c, "approval_list", json!({"status": "pending"})).await;
    assert!(!e && v["count"] == 0 && v["approvals"] == json!([]), "{v}");
    let (e, v) = call(&c, "settings_schema", json!({})).await;
    assert!(!e && v["network.bind"]["default"] == "127.0.0.1:8080", "{v}");
    // settings_get: the running configuration, and what in the file waits for a restart.
    let (e, v) = call(&c, "settings_get", json!({})).await;
    assert!(!e && v["running"]["network"]["public_url"].is_null() && v["pending_restart"] == json!({}), "{v}");
    env.ok(&["config", "set", "network.public_url", "https://box.example"]);
    env.ok(&["config", "set", "relay.langfuse.flush_ms", "500"]);
    env.ok(&["config", "set", "hermes.restart_command", "curl -H 'token: ghp_ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210' x"]);
    let (e, v) = call(&c, "settings_get", json!({})).await;
    assert!(!e, "{v}");
    let pending = v["pending_restart"].as_object().unwrap();
    assert_eq!(pending.len(), 3, "{v}");
    assert_eq!(
        pending["network.public_url"],
        json!({"file": "https://box.example", "running": null, "applies": "restart"})
    );
    assert_eq!(pending["relay.langfuse.flush_ms"], json!({"file": 500, "running": 1000, "applies": "restart"}));
    assert_eq!(pending["hermes.restart_command"]["applies"], "reload", "{v}");
    let command = pending["hermes.restart_command"]["file"].as_str().unwrap();
    assert!(command.contains("REDACTED") && !command.contains("ghp_ZYX"), "{v}");
    assert!(v["running"]["network"]["public_url"].is_null(), "{v}");
    let (e, v) = call(&c, "mcp_server_list", json!({})).await;
    assert!(!e && v["count"] == 4, "the four bundled servers: {v}");
    let (e, v) = call(&c, "mcp_server_get", json!({"server_id": "nope"})).await;
    assert!(e && v["error"]["code"] == "mcp.not_found", "{v}");
    let (e, v) = call(&c, "approval_get", json!({"id": "ap_nope"})).await;
    assert!(e, "{v}");
    assert_eq!(v["status"], "error");
    assert_eq!(v["error"]["code"], "approvals.not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_arguments_are_checked_before_anything_is_queued() {
    let env = Env::new();
    let key = env.bridge_key("ops", &["admin"]);
    let server = env.serve();
    let c = admin(&server, &key).await;
    for bad in [
        json!(null),
        json!(true),
        json!(1.5),
        json!([]),
        json!({}),
        json!(""),
        json!("."),
        json!(".."),
        json!("a/b"),
        json!("x\u{200B}"),
    ] {
        let (e, v) = call(&c, "bridge_client_revoke", json!({"name": bad})).await;
        assert!(e, "{bad}: {v}");
        assert_eq!(v["error"]["code"], "mcp.invalid_arg", "{bad}: {v}");
    }
    let (e, v) = call(&c, "bridge_client_revoke", json!({})).await;
    assert!(e && v["error"]["code"] == "mcp.missing_arg", "{v}");
    let (e, v) = call(&c, "approval_get", json!({"id": "../etc"})).await;
    assert!(e && v["error"]["code"] == "mcp.invalid_arg", "{v}");
    // A gated call's other arguments are parsed before it is queued, too.
    let (e, v) = call(&c, "mcp_server_install", json!({"url": "http://127.0.0.1:9/mcp", "nope": 1})).await;
    assert!(e && v["error"]["code"] == "mcp.install_invalid", "{v}");
    let (e, v) = call(&c, "bridge_client_scopes", json!({"name": "ops", "scopes": "admin"})).await;
    assert!(e && v["error"]["code"] == "bridge.invalid_request", "{v}");
    assert!(pending_rows(&env).is_empty(), "nothing was queued for refused arguments");
    // A value with URL specials reaches the route as one segment.
    let (e, v) = call(&c, "approval_get", json!({"id": "ap_a b?c#d"})).await;
    assert!(e && v["error"]["code"] == "approvals.not_found", "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("ap_a b?c#d"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_gated_call_runs_without_an_approved_row() {
    let env = Env::new();
    let key = env.bridge_key("ops", &["admin"]);
    env.ok(&["bridge", "add", "victim"]);
    env.ok(&["mcp", "install", "http://127.0.0.1:9/mcp", "--id", "files"]);
    let server = env.serve();
    let c = admin(&server, &key).await;
    let record_before = std::fs::read_to_string(env.config_dir().join("mcp-servers/files.toml")).unwrap();
    let toml_before = std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap_or_default();
    let calls = [
        ("config_write", json!({"key": "network.public_url", "value": "https://box.example"})),
        ("bridge_client_add", json!({"name": "newcomer", "scopes": ["memory"]})),
        ("bridge_client_scopes", json!({"name": "victim", "scopes": ["admin"]})),
        ("bridge_client_rotate", json!({"name": "victim"})),
        ("bridge_client_revoke", json!({"name": "victim"})),
        ("logs_tail", json!({"lines": 5})),
        ("mcp_server_install", json!({"url": "http://127.0.0.1:9/other/mcp", "id": "other"})),
        ("mcp_server_uninstall", json!({"server_id": "files"})),
        ("mcp_server_config_write", json!({"server_id": "files", "enabled": false})),
        ("mcp_server_tools", json!({"server_id": "files", "allow": ["read_file"]})),
        ("mcp_server_exposure", json!({"server_id": "files", "hermes": true})),
        ("mcp_server_action", json!({"server_id": "files", "action": "restart"})),
        ("store_prune", json!({})),
        ("mcp_server_logs", json!({"server_id": "files", "limit": 5})),
        ("secret_write", json!({"name": "FILES_TOKEN", "secret": "tok-7f3e-not-shown"})),
        ("run_stop", json!({"run_id": "run_0123"})),
        ("mcp_key_add", json!({"server_id": "files", "name": "workstation"})),
        ("mcp_key_revoke", json!({"server_id": "files", "name": "workstation"})),
        ("mcp_account_connect", json!({"server_id": "files"})),
        ("mcp_account_disconnect", json!({"server_id": "files"})),
        ("approval_rule_remove", json!({"rule_id": "ar_0000000000000000"})),
        ("bridge_client_purge", json!({"name": "victim"})),
    ];
    let gated: Vec<&str> = hal0::ops::routes::GATED.to_vec();
    assert_eq!(calls.len(), gated.len(), "every gated tool is exercised");
    let mut ids = Vec::new();
    for (tool, args) in &calls {
        let (e, v) = call(&c, tool, args.clone()).await;
        assert!(!e, "{tool}: {v}");
        assert_eq!(v["status"], "pending_approval", "{tool}: {v}");
        ids.push((tool.to_string(), v["approval_id"].as_str().unwrap().to_string()));
    }
    // Nothing happened yet.
    assert_eq!(std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap_or_default(), toml_before);
    assert_eq!(std::fs::read_to_string(env.config_dir().join("mcp-servers/files.toml")).unwrap(), record_before);
    assert!(!env.config_dir().join("mcp-servers/other.toml").exists());
    let list = env.json(&["bridge", "list", "--json"]);
    assert_eq!(list.as_array().unwrap().len(), 2, "{list}");
    assert_eq!(env.json(&["mcp", "keys", "list", "--json"]), json!([]), "no consumer key was minted");
    let victim = list.as_array().unwrap().iter().find(|c| c["name"] == "victim").unwrap().clone();
    assert_eq!(victim["scopes"], json!(["agents", "memory"]));
    assert_eq!(victim["revoked"], false);
    let rows = pending_rows(&env);
    assert_eq!(rows.len(), calls.len());
    assert!(rows.iter().all(|r| r["client"] == "bridge:ops" && r["kind"] == "admin_call"), "{rows:?}");

    // Denied rows never run.
    let deny = |id: &str| env.ok(&["agent", "approvals", "deny", id, "--yes"]);
    deny(&ids[4].1); // revoke
    assert_eq!(
        env.json(&["bridge", "list", "--json"]).as_array().unwrap().iter().find(|c| c["name"] == "victim").unwrap()["revoked"],
        false
    );

    // Approved rows run once, with exactly the stored arguments.
    let out = env.json(&["agent", "approvals", "approve", &ids[0].1, "--yes", "--json"]);
    assert_eq!(out["row"]["status"], "executed", "{out}");
    let toml = std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap();
    assert!(toml.contains("https://box.example"), "{toml}");
    let o = env.run(&["agent", "approvals", "approve", &ids[0].1, "--yes"]);
    assert_eq!(o.code(), 1, "a row runs once: {}", o.stderr());
    let out = env.json(&["agent", "approvals", "approve", &ids[1].1, "--yes", "--json"]);
    let new_key = out["output"]["key"].as_str().expect("the approver sees the key once").to_string();
    assert!(new_key.starts_with("hal0bk_"));
    let card = env.ok(&["agent", "approvals", "show", &ids[1].1, "--json"]);
    assert!(!card.contains(&new_key), "the stored result never holds the key");
    assert!(card.contains("REDACTED"), "{card}");
    let out = env.json(&["agent", "approvals", "approve", &ids[2].1, "--yes", "--json"]);
    assert_eq!(out["output"]["scopes"], json!(["agents", "admin"]), "{out}");
    let out = env.json(&["agent", "approvals", "approve", &ids[5].1, "--yes", "--json"]);
    assert!(out["output"]["lines"].is_array(), "{out}");
    // An approved registry change runs the same route: the policy is now in the record.
    let out = env.json(&["agent", "approvals", "approve", &ids[9].1, "--yes", "--json"]);
    assert_eq!(out["output"]["server"]["tool_policy"]["allow"], json!(["read_file"]), "{out}");
    let status = env.json(&["mcp", "status", "files", "--json"]);
    assert_eq!(status["tool_policy"]["allow"], json!(["read_file"]), "{status}");
    // A secret waits in the inbox without showing its value, and lands in api.env once
    // approved; the answer names it, never the value.
    let secret_row = &ids[14].1;
    let card = env.ok(&["agent", "approvals", "show", secret_row, "--json"]);
    assert!(!card.contains("tok-7f3e-not-shown"), "{card}");
    let out = env.json(&["agent", "approvals", "approve", secret_row, "--yes", "--json"]);
    assert_eq!(
        out["output"],
        json!({"name": "FILES_TOKEN", "created": true,
        "note": "servers whose [secrets] name it send it from their next connection"}),
        "{out}"
    );
    let api_env = std::fs::read_to_string(env.config_dir().join("api.env")).unwrap();
    assert!(api_env.lines().any(|l| l == "FILES_TOKEN=tok-7f3e-not-shown"), "stored");
    let audit = env.ok(&["activity", "export"]);
    assert!(!audit.contains("tok-7f3e-not-shown"), "the audit log never holds the value");
    // An approved consumer key: the approver sees it once with its claude line; the
    // stored card never holds it.
    let out = env.json(&["agent", "approvals", "approve", &ids[16].1, "--yes", "--json"]);
    let key = out["output"]["key"].as_str().unwrap_or_else(|| panic!("{out}")).to_string();
    assert!(key.starts_with("hal0pk_") && out["output"]["claude_mcp_add"].as_str().unwrap().contains(&key), "{out}");
    assert!(!env.ok(&["agent", "approvals", "show", &ids[16].1, "--json"]).contains(&key));
    assert_eq!(env.json(&["mcp", "keys", "list", "files", "--json"])[0]["name"], "workstation");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_call_and_decision_is_audited() {
    let env = Env::new();
    let key = env.bridge_key("ops", &["admin", "memory"]);
    let server = env.serve();
    let c = admin(&server, &key).await;
    call(&c, "version_info", json!({})).await;
    let (_, v) = call(&c, "config_write", json!({"key": "network.public_url", "value": "https://x.example"})).await;
    let id = v["approval_id"].as_str().unwrap().to_string();
    call(&c, "bridge_client_revoke", json!({"name": "a/b"})).await;
    env.ok(&["agent", "approvals", "approve", &id, "--yes"]);
    let (e, v) = call(&c, "activity_list", json!({"client": "bridge:ops"})).await;
    assert!(!e, "{v}");
    let entries = v["entries"].as_array().unwrap();
    let find = |tool: &str, verdict: &str| {
        entries.iter().any(|x| x["tool"] == tool && x["verdict"] == verdict && x["surface"] == "mcp:admin")
    };
    assert!(find("version_info", "ok"), "{v}");
    assert!(find("config_write", "gated"), "{v}");
    assert!(
        entries.iter().any(|x| x["tool"] == "bridge_client_revoke"
            && x["verdict"] == "error"
            && x["result_code"] == "mcp.invalid_arg"),
        "{v}"
    );
    let all = env.json(&["activity", "list", "--json"]);
    let decided =
        all.as_array().unwrap().iter().find(|x| x["approval_id"] == id.as_str() && x["verdict"] == "executed");
    assert!(decided.is_some_and(|d| d["surface"] == "cli"), "{all}");
    let (e, v) = call(&c, "doctor_report", json!({})).await;
    assert!(!e && v["rows"].as_array().is_some_and(|r| r.len() >= 10), "{v}");
    let (e, v) = call(&c, "activity_export", json!({"tool": "version_info"})).await;
    assert!(!e && v["count"].as_u64().unwrap() >= 1, "{v}");
}

/// A malformed REST body, query or path argument is the operation's own `…invalid…` code
/// with 400, never `internal`; and the same malformed arguments through `hal0-admin`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_rest_input_gets_the_operations_invalid_code() {
    let env = Env::new();
    let admin_key = env.json(&["auth", "rotate", "admin", "--json"])["key"].as_str().unwrap().to_string();
    let ops_key = env.bridge_key("ops", &["admin"]);
    let server = env.serve();
    let http = reqwest::Client::new();
    let cases: &[(&str, &str, Option<&str>, &str)] = &[
        ("POST", "/api/bridge/clients", Some(r#"{"name": 5}"#), "bridge.invalid_request"),
        ("POST", "/api/bridge/clients", Some("[1, 2]"), "bridge.invalid_request"),
        ("POST", "/api/bridge/clients", Some("{not json"), "bridge.invalid_request"),
        ("POST", "/api/bridge/clients", Some("{}"), "bridge.invalid_request"),
        ("PUT", "/api/bridge/clients/ops/scopes", Some(r#"{"scopes": "admin"}"#), "bridge.invalid_request"),
        ("PUT", "/api/settings", Some(r#"{"value": 1}"#), "config.invalid_request"),
        ("GET", "/api/runs?limit=many", None, "runs.invalid_filter"),
        ("GET", "/api/agent/approvals/ap_x?wait_s=soon", None, "approvals.invalid_request"),
        ("GET", "/api/agent/approvals/ap_x?wait_s=51", None, "approvals.invalid_request"),
        ("GET", "/api/runs/run_x/events?since=-1", None, "runs.invalid_filter"),
        ("POST", "/api/mcp/x/keys", Some(r#"{"name": 3}"#), "mcp.invalid_arg"),
        ("GET", "/api/runs?limit=0", None, "runs.invalid_limit"),
        ("GET", "/api/activity?limit=1.5", None, "activity.invalid_filter"),
        ("GET", "/api/logs?lines=-3", None, "logs.invalid_lines"),
        ("GET", "/api/mcp/x/logs?limit=abc", None, "mcp.invalid_limit"),
        ("DELETE", "/api/mcp/x?force=maybe", None, "mcp.invalid_arg"),
        ("PATCH", "/api/mcp/x/tools", Some(r#"{"allow": "echo"}"#), "mcp.tools_invalid"),
        ("PATCH", "/api/mcp/x/exposure", Some("{}"), "mcp.exposure_invalid"),
        ("PATCH", "/api/mcp/x/config", Some(r#"{"env": {"A": 1}}"#), "mcp.config_invalid"),
        ("POST", "/api/mcp/install", Some(r#"{"url": "x", "manifest": {}}"#), "mcp.install_invalid"),
    ];
    for (method, path, body, code) in cases {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut r = http.request(m, server.url(path)).bearer_auth(&admin_key);
        if let Some(b) = body {
            r = r.header("content-type", "application/json").body(b.to_string());
        }
        let resp = r.send().await.unwrap();
        let status = resp.status().as_u16();
        let v: Value = resp.json().await.unwrap_or(Value::Null);
        assert_eq!((status, v["error"]["code"].as_str()), (400, Some(*code)), "{method} {path} {body:?}: {v}");
    }
    let c = admin(&server, &ops_key).await;
    for (tool, args, code) in [
        ("run_list", json!({"limit": "many"}), "runs.invalid_filter"),
        ("approval_get", json!({"id": "ap_x", "wait_s": -1}), "approvals.invalid_request"),
        ("run_get", json!({"run_id": "run_x", "offset": "start"}), "runs.invalid_filter"),
        ("activity_list", json!({"limit": [1]}), "activity.invalid_filter"),
        ("logs_tail", json!({"lines": "x"}), "logs.invalid_lines"),
        ("mcp_server_logs", json!({"server_id": "x", "limit": true}), "mcp.invalid_limit"),
        ("bridge_client_add", json!({"name": ["a"]}), "bridge.invalid_request"),
        ("secret_write", json!({"name": "lower", "secret": "x"}), "secrets.invalid_request"),
        ("secret_write", json!({"name": "HAL0_ADMIN_KEY", "secret": "x"}), "secrets.invalid_request"),
        ("secret_write", json!({"name": "OK_NAME", "secret": "two\nlines"}), "secrets.invalid_request"),
    ] {
        let (e, v) = call(&c, tool, args.clone()).await;
        assert!(e && v["error"]["code"] == code, "{tool} {args}: {v}");
    }
    assert!(pending_rows(&env).is_empty(), "nothing was queued for malformed arguments");
}

/// A gated hal0-admin call on protocol 2026-07-28 (the Python SDK's "auto" mode, through
/// `gated_rounds.py`): answered at once with `input_required` naming the card; the client's
/// person approves (the setting is written once and the retry reads the executed card),
/// denies (the retry reads the denied card) or declines (the card is withdrawn).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_a_gated_admin_call_is_answered_round_by_round() {
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if !python.exists() {
        missing_external("the Python venv (.venv/bin/python)", "bash tests/external/setup.sh");
        return;
    }
    let env = Env::new();
    let key = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();
    let url = server.url("/mcp/admin/mcp");
    let mut cmd = std::process::Command::new(python);
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/external/gated_rounds.py"))
        .args(["--url", &url, "--key", &key, "--hal0", BIN, "--tool", "config_write"])
        .args(["--args", r#"{"args":{"key":"network.public_url","value":"https://box.example"}}"#])
        .args(["--answer", "approve", "--answer", "deny", "--answer", "decline"]);
    let r = run_deciding_client(&env, cmd).await;
    assert_eq!(r["protocol"], "2026-07-28", "{r}");
    for (answer, status) in [("approve", "executed"), ("deny", "denied"), ("decline", "withdrawn")] {
        let e = &r[answer]["elicitations"];
        assert_eq!(e.as_array().map(Vec::len), Some(1), "{answer}: {r}");
        assert_eq!(e[0]["mode"], "url", "{r}");
        assert!(e[0]["message"].as_str().unwrap().contains("config_write"), "{r}");
        assert_eq!(r[answer]["result"]["structured"]["status"], status, "{answer}: {r}");
    }
    let toml = std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap();
    assert_eq!(toml.matches("https://box.example").count(), 1, "{toml}");
}
