//! `hal0-memory` over the real rmcp client against `hal0 serve`: the 26 typed tools, the
//! note lifecycle (add, search, recall, list pages, curate, history, invalidation), tags,
//! stats, directives, operations, consolidation, namespace isolation between callers,
//! validation envelopes, hostile search text, and gated deletes landing in the inbox.

use crate::support::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::collections::HashMap;

struct Mem(RunningService<rmcp::RoleClient, ()>);

impl Mem {
    async fn connect(server: &Server, key: &str, headers: &[(&str, &str)]) -> Mem {
        let h: HashMap<_, _> = headers
            .iter()
            .map(|(k, v)| {
                (
                    reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    reqwest::header::HeaderValue::from_str(v).unwrap(),
                )
            })
            .collect();
        let cfg = StreamableHttpClientTransportConfig::with_uri(server.url("/mcp/memory/mcp"))
            .auth_header(key.to_string())
            .custom_headers(h);
        Mem(().serve(StreamableHttpClientTransport::from_config(cfg)).await.expect("MCP handshake"))
    }

    /// Call and return (isError, structured content).
    async fn call(&self, tool: &str, args: Value) -> (bool, Value) {
        let args = args.as_object().expect("arguments are an object").clone();
        let r = self
            .0
            .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
            .await
            .unwrap_or_else(|e| panic!("{tool}: transport error {e}"));
        (r.is_error.unwrap_or(false), r.structured_content.unwrap_or_else(|| panic!("{tool}: no structured content")))
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        let (is_err, v) = self.call(tool, args).await;
        assert!(!is_err, "{tool} failed: {v}");
        v
    }

    /// A failing call: the error envelope's `error` object.
    async fn err(&self, tool: &str, args: Value) -> Value {
        let (is_err, v) = self.call(tool, args).await;
        assert!(is_err, "{tool} should have failed: {v}");
        assert_eq!(v["status"], "error", "{v}");
        v["error"].clone()
    }

    async fn schema_err(&self, tool: &str, args: Value) -> String {
        let e = self.err(tool, args).await;
        assert_eq!(e["code"], "mcp.memory_schema", "{e}");
        e["detail"].as_str().unwrap().to_string()
    }

    async fn add(&self, text: &str) -> Value {
        self.ok("memory_add", json!({"text": text})).await
    }

    async fn search(&self, query: &str, extra: Value) -> Vec<Value> {
        let mut args = json!({"query": query, "limit": 200});
        args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        self.ok("memory_search", args).await["results"].as_array().unwrap().clone()
    }
}

fn texts(results: &[Value]) -> Vec<String> {
    results.iter().map(|r| r["text"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn tools_list_has_26_typed_tools() {
    let env = Env::new();
    let key = env.bridge_key("lister", &["memory"]);
    let server = env.serve();
    let m = Mem::connect(&server, &key, &[]).await;
    let tools = m.0.list_all_tools().await.unwrap();
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    let mut want = vec![
        "memory_add",
        "memory_search",
        "memory_recall",
        "memory_list",
        "memory_delete",
        "memory_curate",
        "memory_history",
        "memory_tags_list",
        "memory_bank_stats",
        "memory_bank_consolidate",
        "memory_directive_create",
        "memory_directive_update",
        "memory_directive_list",
        "memory_directive_get",
        "memory_directive_delete",
        "memory_operation_list",
        "memory_operation_get",
        "memory_operation_cancel",
        "memory_operation_retry",
    ];
    want.sort();
    assert_eq!(names, want);
    let schema = |n: &str| Value::Object((*tools.iter().find(|t| t.name == n).unwrap().input_schema).clone());
    let search = schema("memory_search");
    assert_eq!(search["required"], json!(["query"]));
    for p in ["query", "limit", "dataset", "tags", "before", "after"] {
        assert!(search["properties"].get(p).is_some(), "memory_search lacks {p}: {search}");
    }
    let add = schema("memory_add");
    assert!(add["properties"].get("source").is_none(), "source is not an argument: {add}");
    assert!(add["properties"].get("document_id").is_some());
    assert_eq!(schema("memory_delete")["required"], json!(["ids"]));
    m.0.cancel().await.unwrap();
}

#[tokio::test]
async fn notes_lifecycle_search_recall_list_tags_stats() {
    let env = Env::new();
    let key = env.bridge_key("life", &["memory"]);
    let server = env.serve();
    let m = Mem::connect(&server, &key, &[]).await;

    let a = m
        .ok("memory_add", json!({"text": "The staging deploy runs every night at 02:00", "tags": "Deploy, ops"}))
        .await;
    assert!(a["id"].as_str().unwrap().starts_with("mem_"));
    assert_eq!(a["dataset"], "shared");
    assert_eq!(a["source"], "life");
    assert_eq!(a["facts_extracted"], 1);
    assert!(a["timestamp"].as_str().unwrap().ends_with('Z'));
    m.ok(
        "memory_add",
        json!({"text": "Foxes deploy nothing; they jump", "tags": ["animals", "ops"], "metadata": {"k": 1}}),
    )
    .await;
    m.add("Production deploys need two approvals").await;

    // Search: ranked, filtered, shaped as the spec table.
    let hits = m.search("deploy", json!({})).await;
    assert_eq!(hits.len(), 3);
    for h in &hits {
        for f in ["id", "text", "score", "timestamp", "dataset", "tags", "source", "metadata"] {
            assert!(h.get(f).is_some(), "hit lacks {f}: {h}");
        }
    }
    assert_eq!(m.search("deploy", json!({"tags": ["deploy"]})).await.len(), 1);
    assert_eq!(m.search("deploy", json!({"limit": 1})).await.len(), 1);
    assert_eq!(m.search("deploy", json!({"after": "2999-01-01"})).await.len(), 0);
    assert_eq!(m.search("deploy", json!({"before": "2999-01-01T00:00:00Z", "after": "2000-01-01"})).await.len(), 3);
    assert_eq!(m.search("jumping foxes", json!({})).await.len(), 1, "porter stemming");
    assert_eq!(m.search("deploy", json!({"dataset": "agents"})).await.len(), 0);

    // Known content: zero yield, and the retain operation says so.
    let again = m.add("Production deploys need two approvals").await;
    assert_eq!(again["facts_extracted"], 0);
    let op = m.ok("memory_operation_get", json!({"id": again["operation_id"]})).await;
    assert_eq!(op["kind"], "retain");
    assert_eq!(op["status"], "completed");
    assert_eq!(op["result"]["facts_extracted"], 0);
    assert_eq!(op["result"]["nothing_learned"], true);
    assert_eq!(op["result"]["notice"], "content was already known");
    let op = m.ok("memory_operation_get", json!({"id": a["operation_id"]})).await;
    assert_eq!(op["result"]["facts_extracted"], 1);

    // document_id upserts one document.
    let d1 = m.ok("memory_add", json!({"text": "runbook v1", "document_id": "runbook"})).await;
    let d2 = m.ok("memory_add", json!({"text": "runbook v2", "document_id": "runbook"})).await;
    assert_eq!(d1["id"], d2["id"]);
    assert_eq!(d2["upserted"], true);
    assert_eq!(texts(&m.search("runbook", json!({})).await), ["runbook v2"]);

    // Recall: budgeted.
    let r = m.ok("memory_recall", json!({"query": "deploy", "max_tokens": 12})).await;
    assert!(r["token_estimate"].as_u64().unwrap() <= 12, "{r}");
    assert!(!r["results"].as_array().unwrap().is_empty());
    let r = m.ok("memory_recall", json!({"query": "deploy"})).await;
    assert_eq!(r["results"].as_array().unwrap().len(), 3);
    assert_eq!(r["max_tokens"], 4096);

    // List: cursor pages, newest first, no overlap.
    for i in 0..5 {
        m.add(&format!("page filler {i}")).await;
    }
    let mut seen: Vec<String> = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut args = json!({"limit": 3});
        if !cursor.is_null() {
            args["cursor"] = cursor.clone();
        }
        let p = m.ok("memory_list", args).await;
        let items = p["items"].as_array().unwrap();
        assert!(items.len() <= 3);
        seen.extend(items.iter().map(|n| n["id"].as_str().unwrap().to_string()));
        cursor = p["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(seen.len(), 9);
    let mut dedup = seen.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), 9, "pages never overlap");
    assert!(m.schema_err("memory_list", json!({"cursor": "nope"})).await.contains("cursor"));

    // Tags and stats.
    let t = m.ok("memory_tags_list", json!({})).await;
    assert_eq!(t["tags"][0], json!({"tag": "ops", "count": 2}));
    let s = m.ok("memory_bank_stats", json!({})).await;
    assert_eq!(s["active"], 9);
    assert_eq!(s["datasets"]["shared"]["active"], 9);
    assert_eq!(s["documents"], 1);
    assert!(s["operation_count"].as_i64().unwrap() >= 10);
    m.0.cancel().await.unwrap();
}

#[tokio::test]
async fn curate_history_and_invalidation() {
    let env = Env::new();
    let key = env.bridge_key("cur", &["memory"]);
    let server = env.serve();
    let m = Mem::connect(&server, &key, &[]).await;
    let id = m.add("The office wifi password rotates on Mondays").await["id"].clone();

    assert!(m.schema_err("memory_curate", json!({"id": id})).await.contains("at least one"));
    let c = m
        .ok(
            "memory_curate",
            json!({"id": id, "text": "The office wifi password rotates on Fridays", "context": "IT notice",
                   "fact_type": "experience", "entities": ["office", "wifi"], "occurred_start": "2025-01-03"}),
        )
        .await;
    assert_eq!(c["changed"].as_array().unwrap().len(), 5);
    assert_eq!(c["memory"]["text"], "The office wifi password rotates on Fridays");
    assert_eq!(c["memory"]["occurred_start"], "2025-01-03T00:00:00Z");
    assert_eq!(m.search("mondays", json!({})).await.len(), 0);
    assert_eq!(m.search("fridays", json!({})).await.len(), 1);
    m.schema_err("memory_curate", json!({"id": id, "state": "deleted"})).await;
    m.schema_err("memory_curate", json!({"id": id, "fact_type": "rumour"})).await;

    m.ok("memory_curate", json!({"id": id, "state": "invalidated"})).await;
    assert!(m.search("wifi", json!({})).await.is_empty());
    assert!(m.ok("memory_recall", json!({"query": "wifi"})).await["results"].as_array().unwrap().is_empty());
    assert!(m.ok("memory_list", json!({})).await["items"].as_array().unwrap().is_empty());
    let h = m.ok("memory_history", json!({"id": id})).await;
    assert_eq!(h["state"], "invalidated");
    let actions: Vec<&str> = h["history"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["created", "curated", "curated"]);
    assert_eq!(h["history"][1]["actor"], "cur");
    assert_eq!(h["history"][1]["changes"]["text"]["before"], "The office wifi password rotates on Mondays");
    assert_eq!(h["history"][2]["changes"]["state"], json!({"before": "active", "after": "invalidated"}));
    assert_eq!(m.err("memory_history", json!({"id": "mem_0000000000000000"})).await["code"], "memory.not_found");
    m.0.cancel().await.unwrap();
}

#[tokio::test]
async fn directives_operations_consolidation_and_unsupported() {
    let env = Env::new();
    let key = env.bridge_key("ops", &["memory"]);
    let server = env.serve();
    let m = Mem::connect(&server, &key, &[]).await;

    let d =
        m.ok("memory_directive_create", json!({"name": "tone", "content": "Answer briefly.", "tags": ["style"]})).await;
    let did = d["id"].as_str().unwrap().to_string();
    assert!(did.starts_with("dir_"));
    assert_eq!(d["is_active"], true);
    m.ok("memory_directive_create", json!({"name": "safety", "content": "Ask before deleting.", "priority": 5})).await;
    let l = m.ok("memory_directive_list", json!({})).await;
    assert_eq!(l["count"], 2);
    assert_eq!(l["directives"][0]["name"], "safety");
    let u = m.ok("memory_directive_update", json!({"id": did, "is_active": false, "content": "Be brief."})).await;
    assert_eq!((u["is_active"].clone(), u["content"].clone()), (json!(false), json!("Be brief.")));
    assert_eq!(m.ok("memory_directive_list", json!({"active_only": true})).await["count"], 1);
    assert_eq!(m.ok("memory_directive_get", json!({"id": did})).await["name"], "tone");
    m.schema_err("memory_directive_update", json!({"id": did})).await;
    m.schema_err("memory_directive_create", json!({"name": "x"})).await;
    let p = m.ok("memory_directive_delete", json!({"id": did})).await;
    assert_eq!(p["status"], "pending_approval");
    assert!(p["approval_id"].as_str().unwrap().starts_with("ap_"));
    assert!(p["detail"].as_str().is_some());
    assert_eq!(m.ok("memory_directive_get", json!({"id": did})).await["id"], json!(did), "still there");

    // Operations: every add is a completed retain; consolidation dedupes documents'
    // identical texts.
    m.add("the same fact").await;
    m.ok("memory_add", json!({"text": "the same fact", "document_id": "d1", "tags": ["t1"]})).await;
    let ops = m.ok("memory_operation_list", json!({"kind": "retain"})).await;
    assert_eq!(ops["count"], 2);
    let op_id = ops["operations"][0]["id"].clone();
    assert_eq!(m.err("memory_operation_cancel", json!({"id": op_id})).await["code"], "memory.operation_finished");
    assert_eq!(m.err("memory_operation_retry", json!({"id": op_id})).await["code"], "memory.operation_not_failed");
    m.schema_err("memory_operation_list", json!({"status": "sleeping"})).await;
    let c = m.ok("memory_bank_consolidate", json!({})).await;
    assert_eq!(c["deduplicated"], 1);
    let op = m.ok("memory_operation_get", json!({"id": c["operation_id"]})).await;
    assert_eq!((op["kind"].clone(), op["status"].clone()), (json!("consolidation"), json!("completed")));
    let hits = m.search("same fact", json!({})).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["tags"], json!(["t1"]), "tags of the duplicate are merged");
    assert_eq!(m.ok("memory_bank_stats", json!({})).await["invalidated"], 1);

    // No language model: not listed (see the list test), and an honest answer when called.
    for (tool, args) in [
        ("memory_reflect", json!({"query": "what do we know?"})),
        ("memory_mental_model_list", json!({})),
        ("memory_mental_model_get", json!({"id": "mm_1"})),
        ("memory_mental_model_create", json!({"name": "n", "source_query": "q"})),
        ("memory_mental_model_update", json!({"id": "mm_1"})),
        ("memory_mental_model_refresh", json!({"id": "mm_1"})),
        ("memory_mental_model_delete", json!({"id": "mm_1"})),
    ] {
        let v = m.ok(tool, args).await;
        assert_eq!(v["status"], "unsupported", "{tool}: {v}");
        assert!(v["detail"].as_str().unwrap().contains("language model"));
    }
    m.0.cancel().await.unwrap();
}

#[tokio::test]
async fn namespaces_isolate_callers() {
    let env = Env::new();
    let key_a = env.bridge_key("a", &["memory"]);
    let key_b = env.bridge_key("b", &["memory"]);
    // A box client key identifies by X-hal0-Agent.
    let client = env.json(&["auth", "rotate", "client", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();

    // For a bridge key the writer is the client name; X-hal0-Agent is ignored.
    let a_priv = Mem::connect(&server, &key_a, &[("X-hal0-Private", "1"), ("X-hal0-Agent", "mallory")]).await;
    let a = Mem::connect(&server, &key_a, &[("X-hal0-Agent", "b")]).await;
    let b = Mem::connect(&server, &key_b, &[]).await;
    let b_priv = Mem::connect(&server, &key_b, &[("X-hal0-Private", "true")]).await;

    let n = a_priv.add("a's secret: the vault code is 1234").await;
    assert_eq!(n["dataset"], "private:a");
    assert_eq!(n["source"], "a");
    let s = a.add("a shares the vault location").await;
    assert_eq!(s["source"], "a", "X-hal0-Agent does not change a bridge client's identity");
    assert_eq!(s["dataset"], "shared");
    // Private mode overrides a named dataset.
    assert_eq!(a_priv.ok("memory_add", json!({"text": "x1", "dataset": "shared"})).await["dataset"], "private:a");

    // A sees its private note in private mode and by naming it; B never does.
    assert_eq!(a_priv.search("vault", json!({})).await.len(), 2);
    assert_eq!(a.search("vault", json!({"dataset": ["shared", "private:a"]})).await.len(), 2);
    assert_eq!(texts(&b.search("vault", json!({})).await), ["a shares the vault location"]);
    assert_eq!(b_priv.search("vault", json!({})).await.len(), 1);
    assert!(b.ok("memory_recall", json!({"query": "vault code"})).await["results"].as_array().unwrap().len() <= 1);
    for tool in ["memory_search", "memory_recall"] {
        let d = b.schema_err(tool, json!({"query": "vault", "dataset": "private:a"})).await;
        assert!(d.contains("private"), "{d}");
        b.schema_err(tool, json!({"query": "vault", "dataset": ["shared", "private:a"]})).await;
    }
    b.schema_err("memory_list", json!({"dataset": "private:a"})).await;
    b.schema_err("memory_tags_list", json!({"dataset": "private:a"})).await;
    let listed = b.ok("memory_list", json!({"limit": 200})).await;
    assert!(!listed.to_string().contains("1234"));
    // B cannot write into A's namespace, nor name any private dataset without private mode.
    let d = b.schema_err("memory_add", json!({"text": "planted", "dataset": "private:a"})).await;
    assert!(d.contains("X-hal0-Private"), "{d}");
    b.schema_err("memory_add", json!({"text": "x", "dataset": "private:b"})).await;
    b.schema_err("memory_add", json!({"text": "x", "dataset": "elsewhere"})).await;
    assert_eq!(b.ok("memory_add", json!({"text": "x", "dataset": "project:hal0"})).await["dataset"], "project:hal0");
    // B in private mode writes to its own namespace only.
    let bp = b_priv.ok("memory_add", json!({"text": "b's own", "dataset": "private:a"})).await;
    assert_eq!(bp["dataset"], "private:b");
    // By id, A's private note does not exist for B.
    let id = n["id"].clone();
    for tool in ["memory_history", "memory_curate"] {
        let e = b.err(tool, json!({"id": id, "state": "invalidated"})).await;
        assert_eq!(e["code"], "memory.not_found", "{tool}: {e}");
    }
    assert_eq!(b.err("memory_delete", json!({"ids": [id]})).await["code"], "memory.not_found");
    assert_eq!(b.err("memory_operation_get", json!({"id": n["operation_id"]})).await["code"], "memory.not_found");
    assert_eq!(b.ok("memory_bank_stats", json!({})).await["datasets"].get("private:a"), None);
    assert_eq!(a.ok("memory_bank_stats", json!({})).await["datasets"]["private:a"]["active"], 2);

    // A box key: identity from X-hal0-Agent; private mode needs one.
    let ws = Mem::connect(&server, &client, &[("X-hal0-Agent", "ws"), ("X-hal0-Private", "1")]).await;
    let w = ws.add("ws private").await;
    assert_eq!((w["dataset"].clone(), w["source"].clone()), (json!("private:ws"), json!("ws")));
    let anon = Mem::connect(&server, &client, &[("X-hal0-Private", "1")]).await;
    assert!(anon.schema_err("memory_add", json!({"text": "x"})).await.contains("identity"));
    let anon_shared = Mem::connect(&server, &client, &[]).await;
    assert_eq!(anon_shared.add("anonymous note").await["source"], "anonymous");
    for c in [a_priv, a, b, b_priv, ws, anon, anon_shared] {
        c.0.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn validation_envelopes_and_hostile_queries() {
    let env = Env::new();
    let key = env.bridge_key("val", &["memory"]);
    let server = env.serve();
    let m = Mem::connect(&server, &key, &[]).await;
    m.add("NEAR the river: a:b, x-ray (parens) \"quoted\" and stars*").await;

    // source is hal0's to set.
    assert!(m.schema_err("memory_add", json!({"text": "t", "source": "someone"})).await.contains("source"));
    m.schema_err("memory_add", json!({"text": "t", "source": null})).await;
    m.schema_err("memory_add", json!({"text": "   "})).await;
    m.schema_err("memory_add", json!({})).await;
    m.schema_err("memory_add", json!({"text": "t", "document_id": "no/slash"})).await;
    m.schema_err("memory_add", json!({"text": "t", "metadata": [1, 2]})).await;
    // Limits.
    for limit in [0, 201, -1] {
        assert!(m.schema_err("memory_search", json!({"query": "river", "limit": limit})).await.contains("limit"));
        m.schema_err("memory_list", json!({"limit": limit})).await;
    }
    m.schema_err("memory_search", json!({"query": "river", "limit": "ten"})).await;
    assert_eq!(m.search("river", json!({"limit": 200})).await.len(), 1);
    for t in [0, 32769] {
        assert!(m.schema_err("memory_recall", json!({"query": "river", "max_tokens": t})).await.contains("max_tokens"));
    }
    m.ok("memory_recall", json!({"query": "river", "max_tokens": 1})).await;
    m.ok("memory_recall", json!({"query": "river", "max_tokens": 32768})).await;
    m.schema_err("memory_search", json!({})).await;
    m.schema_err("memory_search", json!({"query": " "})).await;
    m.schema_err("memory_search", json!({"query": "river", "before": "last week"})).await;
    m.schema_err("memory_delete", json!({"ids": []})).await;
    m.schema_err("memory_delete", json!({"ids": "mem_1"})).await;

    // Hostile FTS text: results or nothing, never an error.
    for q in [
        "\"",
        "\"\"\"",
        "*",
        "river*",
        "NEAR(",
        "NEAR(river a, 1)",
        "a:b",
        "text:river",
        "-x",
        "-",
        "(river",
        "river)",
        "((",
        "AND",
        "OR NOT AND",
        "^river",
        "{text context}: river",
        "'; DROP TABLE memory_notes; --",
    ] {
        for tool in ["memory_search", "memory_recall"] {
            let (is_err, v) = m.call(tool, json!({"query": q})).await;
            assert!(!is_err, "{tool} {q:?} failed: {v}");
            assert!(v["results"].is_array(), "{tool} {q:?}: {v}");
        }
    }
    assert_eq!(m.search("NEAR(", json!({})).await.len(), 1);
    assert_eq!(m.search("a:b", json!({})).await.len(), 1);
    assert_eq!(m.search("\"quoted", json!({})).await.len(), 1);
    assert_eq!(m.search("((", json!({})).await.len(), 0);
    m.0.cancel().await.unwrap();
}

#[tokio::test]
async fn bulk_delete_waits_in_the_inbox() {
    let env = Env::new();
    let key = env.bridge_key("del", &["memory"]);
    let server = env.serve();
    let m = Mem::connect(&server, &key, &[]).await;
    let one = m.add("delete me one").await["id"].clone();
    let two = m.add("delete me two").await["id"].clone();
    let agents = m.ok("memory_add", json!({"text": "delete me agents", "dataset": "agents"})).await["id"].clone();

    let p = m.ok("memory_delete", json!({"ids": [one, two]})).await;
    assert_eq!(p["status"], "pending_approval", "{p}");
    let approval_id = p["approval_id"].as_str().unwrap().to_string();
    assert!(p["detail"].as_str().unwrap().contains("approval"));
    // A repeat is the same row.
    assert_eq!(m.ok("memory_delete", json!({"ids": [two, one]})).await["approval_id"], json!(approval_id));
    // A foreign dataset, or a list of datasets, waits too.
    assert_eq!(m.ok("memory_delete", json!({"ids": [agents]})).await["status"], "pending_approval");
    assert_eq!(m.ok("memory_delete", json!({"ids": [one], "dataset": ["shared"]})).await["status"], "pending_approval");

    let rows = env.json(&["agent", "approvals", "list", "--status", "pending", "--json"]);
    let row = rows.as_array().unwrap().iter().find(|r| r["id"] == json!(approval_id)).expect("the pending row");
    assert_eq!(row["kind"], "memory_delete");
    assert_eq!(row["tool"], "memory_delete");
    assert_eq!(row["client"], "del");
    assert_eq!(row["status"], "pending");
    let mut ids = vec![one.as_str().unwrap().to_string(), two.as_str().unwrap().to_string()];
    ids.sort();
    assert_eq!(row["arguments"]["ids"], json!(ids));
    assert!(row["preview"].as_str().unwrap().contains("delete me one"));
    assert_eq!(rows.as_array().unwrap().len(), 3);
    // Nothing was deleted.
    assert_eq!(m.search("delete", json!({})).await.len(), 2);

    // One id in the caller's own namespace goes at once.
    assert_eq!(m.ok("memory_delete", json!({"ids": [one]})).await, json!({"deleted": 1}));
    assert_eq!(texts(&m.search("delete", json!({})).await), ["delete me two"]);
    assert_eq!(m.err("memory_delete", json!({"ids": [one]})).await["code"], "memory.not_found");

    // Approving at the shell performs exactly the stored call (the one id left of it).
    let done = env.json(&["agent", "approvals", "approve", &approval_id, "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    assert!(done["result"].to_string().contains("\"deleted\":1"), "{done}");
    assert!(m.search("delete", json!({})).await.is_empty());
    assert_eq!(m.search("agents", json!({"dataset": "agents"})).await.len(), 1, "other rows wait");
    m.0.cancel().await.unwrap();
}

/// A bridge client's private memory is its own: the client box key naming the client with
/// X-hal0-Agent cannot read, search, list, write or delete it; the admin box key may read
/// it, but its deletes and changes wait in the inbox and it writes nothing new there; a name
/// no bridge client holds (a Hermes profile's) keeps its own private memory (issue 10, item 7).
#[tokio::test]
async fn box_keys_do_not_take_a_bridge_clients_private_memory() {
    let env = Env::new();
    let bob_key = env.bridge_key("bob", &["memory"]);
    let client = env.json(&["auth", "rotate", "client", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let admin = env.json(&["auth", "rotate", "admin", "--yes", "--json"])["key"].as_str().unwrap().to_string();
    let server = env.serve();
    let bob = Mem::connect(&server, &bob_key, &[("X-hal0-Private", "1")]).await;
    let note = bob.add("bob's secret: the deploy token rotates on fridays").await;
    assert_eq!(note["dataset"], "private:bob");
    let id = note["id"].clone();

    // The client box key claiming bob, in private mode: refused with one stable code.
    let fake = Mem::connect(&server, &client, &[("X-hal0-Agent", "bob"), ("X-hal0-Private", "1")]).await;
    for (tool, args) in [
        ("memory_search", json!({"query": "secret"})),
        ("memory_recall", json!({"query": "secret"})),
        ("memory_list", json!({})),
        ("memory_tags_list", json!({})),
        ("memory_add", json!({"text": "planted"})),
        ("memory_delete", json!({"ids": [id]})),
    ] {
        let e = fake.err(tool, args).await;
        assert_eq!(e["code"], "memory.private_forbidden", "{tool}: {e}");
        assert!(e["detail"].as_str().unwrap().contains("only with its own bridge key"), "{tool}: {e}");
    }
    // Without private mode: naming the dataset is refused the same way, and by id the note
    // does not exist for this caller.
    let fake_plain = Mem::connect(&server, &client, &[("X-hal0-Agent", "bob")]).await;
    for tool in ["memory_search", "memory_list"] {
        let e = fake_plain.err(tool, json!({"query": "secret", "dataset": "private:bob"})).await;
        assert_eq!(e["code"], "memory.private_forbidden", "{tool}: {e}");
    }
    assert!(fake_plain.search("secret", json!({})).await.is_empty());
    for (tool, args) in
        [("memory_history", json!({"id": id})), ("memory_curate", json!({"id": id, "text": "overwritten"}))]
    {
        let e = fake_plain.err(tool, args).await;
        assert_eq!(e["code"], "memory.not_found", "{tool}: {e}");
    }
    assert_eq!(fake_plain.err("memory_delete", json!({"ids": [id]})).await["code"], "memory.not_found");
    assert_eq!(fake_plain.ok("memory_bank_stats", json!({})).await["datasets"].get("private:bob"), None);
    assert_eq!(fake_plain.ok("memory_bank_consolidate", json!({})).await["deduplicated"], 0);

    // A name no bridge client holds (how a Hermes profile names itself) keeps its own.
    let profile = Mem::connect(&server, &client, &[("X-hal0-Agent", "work"), ("X-hal0-Private", "1")]).await;
    assert_eq!(profile.add("the work profile's own secret").await["dataset"], "private:work");
    assert_eq!(
        texts(&profile.search("secret", json!({"dataset": "private:work"})).await),
        ["the work profile's own secret"]
    );

    // The admin box key claiming bob reads bob's private memory ...
    let adm = Mem::connect(&server, &admin, &[("X-hal0-Agent", "bob"), ("X-hal0-Private", "1")]).await;
    assert_eq!(texts(&adm.search("secret", json!({})).await), ["bob's secret: the deploy token rotates on fridays"]);
    adm.ok("memory_history", json!({"id": id})).await;
    // ... writes nothing new into it, and consolidating it is refused ...
    let e = adm.err("memory_add", json!({"text": "planted by the admin key"})).await;
    assert_eq!(e["code"], "memory.private_forbidden", "{e}");
    let e = adm.err("memory_bank_consolidate", json!({"dataset": "private:bob"})).await;
    assert_eq!(e["code"], "memory.private_forbidden", "{e}");
    // ... and its delete and curate of bob's note wait for the operator.
    let del = adm.ok("memory_delete", json!({"ids": [id]})).await;
    assert_eq!(del["status"], "pending_approval", "{del}");
    let cur = adm.ok("memory_curate", json!({"id": id, "text": "bob's secret, corrected by the operator"})).await;
    assert_eq!(cur["status"], "pending_approval", "{cur}");
    assert_eq!(
        adm.ok("memory_curate", json!({"id": id, "text": "bob's secret, corrected by the operator"})).await["approval_id"],
        cur["approval_id"],
        "a repeat is the same row"
    );
    // Also when the admin key names the dataset outside private mode.
    let adm_plain = Mem::connect(&server, &admin, &[("X-hal0-Agent", "bob")]).await;
    let again = adm_plain.ok("memory_delete", json!({"ids": [id], "dataset": "private:bob"})).await;
    assert_eq!(again["status"], "pending_approval", "{again}");

    // Bob still sees his note as he wrote it.
    assert_eq!(texts(&bob.search("secret", json!({})).await), ["bob's secret: the deploy token rotates on fridays"]);

    let rows = env.json(&["agent", "approvals", "list", "--status", "pending", "--json"]);
    let row = |id: &Value| rows.as_array().unwrap().iter().find(|r| &r["id"] == id).expect("a pending row").clone();
    let (d, c) = (row(&del["approval_id"]), row(&cur["approval_id"]));
    assert_eq!((d["kind"].as_str(), d["client"].as_str()), (Some("memory_delete"), Some("admin:bob")));
    assert_eq!((c["kind"].as_str(), c["client"].as_str()), (Some("memory_curate"), Some("admin:bob")));
    assert!(c["preview"].as_str().unwrap().contains("private:bob"), "{c}");

    // Approved, the change lands exactly as asked, recorded as the admin key's.
    let done = env.json(&["agent", "approvals", "approve", cur["approval_id"].as_str().unwrap(), "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    assert_eq!(texts(&bob.search("secret", json!({})).await), ["bob's secret, corrected by the operator"]);
    let h = bob.ok("memory_history", json!({"id": id})).await;
    let last = h["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((last["actor"].as_str(), last["action"].as_str()), (Some("admin:bob"), Some("curated")), "{h}");
    let done = env.json(&["agent", "approvals", "approve", del["approval_id"].as_str().unwrap(), "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    assert!(bob.search("secret", json!({})).await.is_empty());
    for m in [bob, fake, fake_plain, profile, adm, adm_plain] {
        m.0.cancel().await.unwrap();
    }
}

/// `memory_add` with `items`: many notes in one call (one transaction, one operation),
/// each searchable at once; a bad item refuses the whole call and stores nothing.
#[tokio::test]
async fn add_with_items_stores_many_in_one_call() {
    let env = Env::new();
    let key = env.bridge_key("bulk", &["memory"]);
    let server = env.serve();
    let m = Mem::connect(&server, &key, &[]).await;
    let items: Vec<Value> = (0..50)
        .map(|i| json!({"text": format!("bulk note quokka{i}"), "tags": ["bulk"], "dataset": if i == 0 { "agents" } else { "shared" }}))
        .collect();
    let r = m.ok("memory_add", json!({"items": items})).await;
    assert_eq!(r["count"], 50);
    let items = r["items"].as_array().unwrap();
    assert_eq!(items[0]["dataset"], "agents");
    assert_eq!(items[1]["dataset"], "shared");
    assert!(items.iter().all(|i| i["operation_id"] == r["operation_id"] && i["facts_extracted"] == 1));
    let op = m.ok("memory_operation_get", json!({"id": r["operation_id"]})).await;
    assert_eq!(op["result"]["items"], 50);
    assert_eq!(m.search("quokka7", json!({})).await.len(), 1);
    assert_eq!(m.search("quokka0", json!({"dataset": "agents"})).await.len(), 1);
    // Known text is not stored twice, in a batch as in a single add.
    let again = m.ok("memory_add", json!({"items": [{"text": "bulk note quokka3"}]})).await;
    assert_eq!(again["items"][0]["facts_extracted"], 0);
    assert_eq!(again["items"][0]["id"], items[3]["id"]);
    // One bad item: the call is refused and nothing lands.
    let bad = m.schema_err("memory_add", json!({"items": [{"text": "fine wombat"}, {"text": "  "}]})).await;
    assert!(bad.contains("items[1]"), "{bad}");
    assert!(m.search("wombat", json!({})).await.is_empty());
    assert!(m.schema_err("memory_add", json!({"items": []})).await.contains("at least one"));
    assert!(m.schema_err("memory_add", json!({"text": "x", "items": [{"text": "y"}]})).await.contains("not both"));
    assert!(m.schema_err("memory_add", json!({})).await.contains("`text` is required"));
    let many: Vec<Value> = (0..1001).map(|i| json!({"text": format!("n{i}")})).collect();
    assert!(m.schema_err("memory_add", json!({"items": many})).await.contains("at most 1000"));
    m.0.cancel().await.unwrap();
}

/// The search index lives in memory and is rebuilt from the rows: `hal0 serve` killed with
/// SIGKILL (once after its writes, once in the middle of a bulk add) comes back finding
/// every committed note, none of the deleted ones, and nothing half-written.
#[tokio::test]
async fn search_survives_sigkill_of_the_daemon() {
    use std::os::unix::process::ExitStatusExt;
    let env = Env::new();
    let key = env.bridge_key("crash", &["memory"]);
    let kill9 = |mut s: Server| {
        let pid = s.child.id().to_string();
        assert!(std::process::Command::new("kill").args(["-KILL", &pid]).status().unwrap().success());
        assert_eq!(s.child.wait().unwrap().signal(), Some(9), "killed by SIGKILL");
    };

    let server = env.serve();
    let m = Mem::connect(&server, &key, &[]).await;
    let items: Vec<Value> = (0..300).map(|i| json!({"text": format!("crashproof zebra{i}")})).collect();
    let r = m.ok("memory_add", json!({"items": items})).await;
    let first = r["items"][0]["id"].as_str().unwrap().to_string();
    m.add("a lone durable walrus").await;
    assert_eq!(m.ok("memory_delete", json!({"ids": [first]})).await["deleted"], 1);
    assert!(m.search("zebra0", json!({})).await.is_empty(), "a delete leaves results at once");
    kill9(server);

    let server = env.serve();
    let m = Mem::connect(&server, &key, &[]).await;
    assert!(m.search("zebra0", json!({})).await.is_empty());
    assert_eq!(m.search("zebra299", json!({})).await.len(), 1);
    assert_eq!(m.search("walrus", json!({})).await.len(), 1);
    assert_eq!(m.search("crashproof", json!({})).await.len(), 200, "limit 200 of 299");

    // Killed while a bulk add is in flight: all of that call's notes or none, and search
    // agrees with the rows.
    let big: Vec<Value> = (0..1000).map(|i| json!({"text": format!("inflight yak{i} with some more words")})).collect();
    // The call's own client: its transport fails when the server dies (the task panics).
    let call = tokio::spawn(async move { m.call("memory_add", json!({"items": big})).await });
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    kill9(server);
    // Its client may keep retrying a server that is gone: drop it.
    call.abort();

    let server = env.serve();
    let m = Mem::connect(&server, &key, &[]).await;
    let active = m.ok("memory_bank_stats", json!({})).await["active"].as_i64().unwrap();
    let found = m.search("inflight", json!({})).await.len();
    assert!(
        (active == 300 && found == 0) || (active == 1300 && found == 200),
        "rows and index disagree after SIGKILL: {active} active notes, {found} found"
    );
    assert_eq!(m.search("zebra299", json!({})).await.len(), 1);
    m.0.cancel().await.unwrap();
}
