//! The teach tools for skills: every refusal before anything is queued, the pending-row
//! rules with two clients, and an approval end to end (put over MCP → `hal0 agent
//! approvals approve` at the shell while the daemon runs → the skill appears).

use crate::support::mcp::{call, connect};
use crate::support::*;
use serde_json::{Value, json};

fn md(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: A test skill\n---\n\n# {name}\n\n{body}\n")
}

fn setup() -> (Env, tempfile::TempDir) {
    let dirs = tempfile::tempdir().unwrap();
    let shipped = dirs.path().join("shipped/web-search");
    std::fs::create_dir_all(&shipped).unwrap();
    std::fs::write(shipped.join("SKILL.md"), md("web-search", "Shipped.")).unwrap();
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    std::fs::write(
        env.config_dir().join("hal0.toml"),
        format!(
            "[skills]\nshipped_dir = \"{}\"\ndropin_dir = \"{}\"\n",
            dirs.path().join("shipped").display(),
            dirs.path().join("dropin").display()
        ),
    )
    .unwrap();
    (env, dirs)
}

fn pending(env: &Env) -> Vec<Value> {
    env.json(&["agent", "approvals", "list", "--json", "--status", "pending"]).as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_come_before_anything_is_queued() {
    let (env, _d) = setup();
    let k = env.bridge_key("ws", &[]);
    let server = env.serve();
    let c = connect(&server, &k).await;
    let cases = [
        (json!({"name": "Bad_Name", "skill_md": md("Bad_Name", "x")}), "bridge.skill_invalid"),
        (json!({"name": "demo", "skill_md": "no frontmatter"}), "bridge.skill_invalid"),
        (json!({"name": "demo", "skill_md": md("other", "x")}), "bridge.skill_invalid"),
        (
            json!({"name": "demo", "skill_md": md("demo", "token: ghp_abcdefghijklmnopqrstuvwxyz0123456789")}),
            "bridge.skill_invalid",
        ),
        (json!({"name": "demo", "skill_md": md("demo", "ok"), "files": {"../x": "y"}}), "bridge.skill_invalid"),
        (
            json!({"name": "demo", "skill_md": md("demo", "ok"), "files": {"notes.md": "zero\u{200B}width"}}),
            "bridge.skill_invalid",
        ),
        (json!({"name": "demo", "skill_md": md("demo", &"x".repeat(17 * 1024))}), "bridge.skill_invalid"),
        (json!({"name": "web-search", "skill_md": md("web-search", "mine")}), "bridge.skill_readonly"),
    ];
    for (args, code) in cases {
        let e = call(&c, "agent_skill_put", args.clone()).await.unwrap_err();
        assert!(e.starts_with(&format!("{code}: ")), "{args}: {e}");
    }
    let e = call(
        &c,
        "agent_skill_put",
        json!({"name": "demo", "skill_md": md("demo", "ok"), "files": {"notes.md": "a\u{200B}"}}),
    )
    .await
    .unwrap_err();
    assert!(e.contains("'notes.md'"), "the message names the file: {e}");
    let e = call(&c, "agent_skill_delete", json!({"name": "web-search"})).await.unwrap_err();
    assert!(e.starts_with("bridge.skill_readonly: "), "{e}");
    let e = call(&c, "agent_skill_delete", json!({"name": "nope"})).await.unwrap_err();
    assert!(e.starts_with("bridge.skill_not_found: "), "{e}");
    let e = call(&c, "agent_skill_get", json!({"name": "nope"})).await.unwrap_err();
    assert!(e.starts_with("bridge.skill_not_found: "), "{e}");
    assert!(pending(&env).is_empty(), "nothing was queued");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_rows_with_two_clients_and_an_approval_end_to_end() {
    let (env, _d) = setup();
    let ka = env.bridge_key("alice", &[]);
    let kb = env.bridge_key("bob", &[]);
    let server = env.serve();
    let a = connect(&server, &ka).await;
    let b = connect(&server, &kb).await;
    let put =
        |body: &str| json!({"name": "demo", "skill_md": md("demo", body), "files": {"notes.md": "Use $API_KEY."}});
    let r1 = call(&a, "agent_skill_put", put("v1")).await.unwrap();
    assert_eq!(r1["status"], "pending_approval");
    assert_eq!(r1["name"], "demo");
    let again = call(&a, "agent_skill_put", put("v1")).await.unwrap();
    assert_eq!(again["approval_id"], r1["approval_id"], "same content, same client → same row");
    let twin = call(&b, "agent_skill_put", put("v1")).await.unwrap();
    assert_ne!(twin["approval_id"], r1["approval_id"], "another client's identical push is its own row");
    let e = call(&b, "agent_skill_put", put("bob's edit")).await.unwrap_err();
    assert!(e.starts_with("bridge.skill_pending_elsewhere: "), "{e}");
    // While Bob's put of that name is pending, Alice's edit is refused too.
    let e = call(&a, "agent_skill_put", put("v2")).await.unwrap_err();
    assert!(e.starts_with("bridge.skill_pending_elsewhere: "), "{e}");
    env.ok(&["agent", "approvals", "deny", twin["approval_id"].as_str().unwrap(), "--yes"]);
    let r2 = call(&a, "agent_skill_put", put("v2")).await.unwrap();
    assert_ne!(r2["approval_id"], r1["approval_id"]);
    let rows = pending(&env);
    assert!(!rows.iter().any(|r| r["id"] == r1["approval_id"]), "the edited push withdrew the older row");
    let withdrawn = env.json(&["agent", "approvals", "show", r1["approval_id"].as_str().unwrap(), "--json"]);
    assert_eq!(withdrawn["status"], "withdrawn");
    // The card shows the client, the whole SKILL.md and every file with size and sha256.
    let card = env.json(&["agent", "approvals", "show", r2["approval_id"].as_str().unwrap(), "--json"]);
    let c = &card["arguments"]["card"];
    assert_eq!(c["client"], "alice");
    assert_eq!(c["preview"], md("demo", "v2"));
    assert_eq!(c["preview_truncated"], false);
    assert_eq!(c["files"]["notes.md"]["content"], "Use $API_KEY.");
    assert_eq!(c["files"]["notes.md"]["size"], 13);
    assert_eq!(c["files"]["notes.md"]["sha256"].as_str().unwrap().len(), 64);
    assert!(c["digest"].is_string() && c["bytes"].is_number());
    // Approve at the shell while the daemon runs: the skill appears.
    let listed = call(&a, "agent_skills_list", json!({})).await.unwrap();
    assert!(!listed.to_string().contains("\"demo\""), "nothing written before approval");
    let done = env.json(&["agent", "approvals", "approve", r2["approval_id"].as_str().unwrap(), "--yes", "--json"]);
    assert_eq!(done["status"], "executed", "{done}");
    let listed = call(&a, "agent_skills_list", json!({})).await.unwrap();
    let demo = listed["skills"].as_array().unwrap().iter().find(|s| s["name"] == "demo").expect("demo listed").clone();
    assert_eq!(demo["source"], "dropin");
    assert_eq!(demo["files"], json!(["notes.md"]));
    let got = call(&b, "agent_skill_get", json!({"name": "demo"})).await.unwrap();
    assert!(got["skill_md"].as_str().unwrap().contains("v2"), "{got}");
    // Deletes: a repeat is the same row; the ninth pending change is refused.
    let d1 = call(&b, "agent_skill_delete", json!({"name": "demo"})).await.unwrap();
    let d2 = call(&b, "agent_skill_delete", json!({"name": "demo"})).await.unwrap();
    assert_eq!(d1["approval_id"], d2["approval_id"]);
    for i in 0..7 {
        let n = format!("s{i}");
        call(&b, "agent_skill_put", json!({"name": n, "skill_md": md(&n, "x")})).await.unwrap();
    }
    let e = call(&b, "agent_skill_put", json!({"name": "s9", "skill_md": md("s9", "x")})).await.unwrap_err();
    assert!(e.starts_with("bridge.too_many_pending: "), "{e}");
    env.ok(&["agent", "approvals", "approve", d1["approval_id"].as_str().unwrap(), "--yes"]);
    let e = call(&a, "agent_skill_get", json!({"name": "demo"})).await.unwrap_err();
    assert!(e.starts_with("bridge.skill_not_found: "), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inbox_rows_survive_a_restart() {
    let (env, _d) = setup();
    let k = env.bridge_key("ws", &[]);
    let server = env.serve();
    let c = connect(&server, &k).await;
    let r = call(&c, "agent_skill_put", json!({"name": "keep", "skill_md": md("keep", "x")})).await.unwrap();
    drop(c);
    drop(server);
    let server = env.serve();
    let rows = pending(&env);
    assert!(rows.iter().any(|x| x["id"] == r["approval_id"]), "{rows:?}");
    let c = connect(&server, &k).await;
    let again = call(&c, "agent_skill_put", json!({"name": "keep", "skill_md": md("keep", "x")})).await.unwrap();
    assert_eq!(again["approval_id"], r["approval_id"], "the same row after the restart");
}
