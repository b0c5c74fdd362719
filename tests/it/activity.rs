//! The audit log: entries recorded through the library land in the store redacted and
//! append-only; `hal0 activity list|export` filters and exports them.

use crate::support::*;
use hal0::audit::{self, Entry};
use hal0::store::Store;
use serde_json::{Value, json};

const HF: &str = "hf_abcdefghijklmnopqrstuvwxyz";
const BEARER: &str = "abcdefghijklmnop0123456789QRSTUV";

fn seed(env: &Env) -> Store {
    let store = Store::open(&env.state_dir().join("hal0.db")).unwrap();
    let a1 = json!({"token": HF, "query": "release notes"});
    let a2 =
        json!({"command": format!("curl -H 'Authorization: Bearer {BEARER}' https://example.com"), "unit": "hal0"});
    let a3 = json!({"agent": "hermes", "input": "summarise the logs"});
    let entries = [
        Entry {
            surface: "mcp:memory",
            tool: "memory_recall",
            identity: "bridge:ci",
            arguments: &a1,
            verdict: hal0::audit::Verdict::Allow,
            result_code: Some("ok"),
            approval_id: None,
            detail: None,
        },
        Entry {
            surface: "mcp:admin",
            tool: "service_restart",
            identity: "admin",
            arguments: &a2,
            verdict: hal0::audit::Verdict::Gated,
            result_code: None,
            approval_id: Some("appr_0001"),
            detail: Some("queued; HF_TOKEN=hf_zyxwvutsrqponmlkjihgfedcba seen in env"),
        },
        Entry {
            surface: "mcp:agents",
            tool: "agent_run",
            identity: "bridge:laptop",
            arguments: &a3,
            verdict: hal0::audit::Verdict::Executed,
            result_code: Some("ok"),
            approval_id: None,
            detail: None,
        },
    ];
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(audit::record(&store, e).unwrap(), i as i64 + 1);
    }
    store
}

fn ids(v: &Value) -> Vec<i64> {
    v.as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect()
}

#[test]
fn list_filters_and_export() {
    let env = Env::new();
    assert_eq!(env.ok(&["activity", "list"]).trim(), "No activity.");
    seed(&env);

    let all = env.json(&["activity", "list", "--json"]);
    assert_eq!(ids(&all), [3, 2, 1], "newest first");
    let r = &all[1];
    assert_eq!(r["surface"], "mcp:admin");
    assert_eq!(r["tool"], "service_restart");
    assert_eq!(r["identity"], "admin");
    assert_eq!(r["verdict"], "gated");
    assert_eq!(r["approval_id"], "appr_0001");
    assert_eq!(r["result_code"], Value::Null);
    assert!(r["at"].as_str().unwrap().ends_with('Z'));

    assert_eq!(ids(&env.json(&["activity", "list", "--json", "--client", "ci"])), [1]);
    assert_eq!(ids(&env.json(&["activity", "list", "--json", "--client", "bridge:laptop"])), [3]);
    assert_eq!(ids(&env.json(&["activity", "list", "--json", "--client", "admin"])), [2]);
    assert_eq!(ids(&env.json(&["activity", "list", "--json", "--tool", "agent_run"])), [3]);
    assert_eq!(ids(&env.json(&["activity", "list", "--json", "--tool", "agent_run", "--client", "ci"])), [0i64; 0]);
    assert_eq!(ids(&env.json(&["activity", "list", "--json", "--limit", "1"])), [3]);
    assert_eq!(ids(&env.json(&["activity", "list", "--json", "--since", "1h"])), [3, 2, 1]);
    assert_eq!(ids(&env.json(&["activity", "list", "--json", "--since", "2000-01-01T02:00:00+02:00"])), [3, 2, 1]);
    assert_eq!(ids(&env.json(&["activity", "list", "--json", "--since", "2999-01-01T00:00:00Z"])), [0i64; 0]);

    let text = env.ok(&["activity", "list"]);
    for want in ["VERDICT", "memory_recall", "service_restart", "appr_0001", "bridge:laptop"] {
        assert!(text.contains(want), "{want} in {text}");
    }

    // Export: JSON lines, oldest first, same filters.
    let out = env.ok(&["activity", "export"]);
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.iter().map(|l| l["id"].as_i64().unwrap()).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(lines[0]["tool"], "memory_recall");
    let out = env.ok(&["activity", "export", "--tool", "memory_recall", "--since", "7d"]);
    assert_eq!(out.lines().count(), 1);
    assert!(env.ok(&["activity", "export", "--client", "nobody"]).is_empty());

    // Bad input is a usage error with one `error:` line.
    for args in [
        &["activity", "list", "--since", "yesterday"][..],
        &["activity", "export", "--since", "5 minutes"],
        &["activity", "list", "--limit", "0"],
    ] {
        let o = env.run(args);
        assert_eq!(o.code(), 2, "{args:?}: {}", o.stderr());
        assert!(o.stderr().starts_with("error: "), "{}", o.stderr());
        assert_eq!(o.stderr().lines().count(), 1, "{}", o.stderr());
    }
    let o = env.run(&["activity", "list", "--since", "yesterday"]);
    assert!(o.stderr().contains("audit.invalid_since") && o.stderr().contains("30m"), "{}", o.stderr());
}

#[test]
fn secrets_are_masked_in_the_stored_row() {
    let env = Env::new();
    let store = seed(&env);
    let (args, detail): (Vec<String>, Vec<Option<String>>) = store
        .with(|c| {
            let mut st = c.prepare("SELECT arguments, detail FROM audit_log ORDER BY id")?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
        .unwrap()
        .into_iter()
        .unzip();
    let raw = format!("{args:?} {detail:?}");
    for secret in [HF, BEARER, "hf_zyxwvutsrqponmlkjihgfedcba"] {
        assert!(!raw.contains(secret), "{secret} stored: {raw}");
    }
    let a1: Value = serde_json::from_str(&args[0]).unwrap();
    assert_eq!(a1["token"], "***REDACTED***");
    assert_eq!(a1["query"], "release notes", "other arguments are kept");
    let a2: Value = serde_json::from_str(&args[1]).unwrap();
    assert_eq!(a2["command"], "curl -H 'Authorization: Bearer ***REDACTED***' https://example.com");
    assert!(detail[1].as_deref().unwrap().contains("HF_TOKEN=***REDACTED***"));
    // Nothing the CLI prints carries them either.
    let printed = format!("{}{}", env.ok(&["activity", "list", "--json"]), env.ok(&["activity", "export"]));
    for secret in [HF, BEARER] {
        assert!(!printed.contains(secret));
    }
}

#[test]
fn the_table_is_append_only() {
    let env = Env::new();
    let store = seed(&env);
    for sql in [
        "UPDATE audit_log SET verdict = 'allow' WHERE id = 2",
        "UPDATE audit_log SET arguments = '{}'",
        "DELETE FROM audit_log WHERE id = 1",
        "DELETE FROM audit_log",
    ] {
        let e = store.with(|c| Ok(c.execute(sql, [])?)).unwrap_err();
        assert!(e.message.contains("append-only"), "{sql}: {}", e.message);
    }
    let rows = env.json(&["activity", "list", "--json"]);
    assert_eq!(ids(&rows), [3, 2, 1]);
    assert_eq!(rows[1]["verdict"], "gated");
    // Appending still works.
    let a = json!({});
    let e = Entry {
        surface: "cli",
        tool: "bridge_revoke",
        identity: "cli:alice",
        arguments: &a,
        verdict: hal0::audit::Verdict::Ok,
        result_code: None,
        approval_id: None,
        detail: None,
    };
    assert_eq!(audit::record(&store, &e).unwrap(), 4);
}

/// The sqlite3 shell, or `None` (skipped, or failed under HAL0_REQUIRE_EXTERNAL=1).
fn sqlite3() -> Option<&'static str> {
    let ok = std::process::Command::new("sqlite3").arg("-version").output().is_ok_and(|o| o.status.success());
    if !ok {
        missing_external("the sqlite3 shell", "apt-get install sqlite3");
    }
    ok.then_some("sqlite3")
}

/// Run `sql` on `db` with the sqlite3 shell, every trigger that guards the log dropped first:
/// someone editing the file behind hal0's back.
fn behind_the_back(db: &std::path::Path, sql: &str) {
    let drop = "DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete; \
                DROP TRIGGER audit_outcomes_no_update; DROP TRIGGER audit_outcomes_no_delete;";
    let o = std::process::Command::new("sqlite3").arg(db).arg(format!("{drop} {sql}")).output().unwrap();
    assert!(o.status.success(), "{sql}: {}", String::from_utf8_lossy(&o.stderr));
}

/// A copy of `env`'s store in a new state dir, made by the sqlite3 shell's online backup.
fn copy_of(env: &Env) -> Env {
    let copy = Env::new();
    std::fs::create_dir_all(copy.state_dir()).unwrap();
    let o = std::process::Command::new("sqlite3")
        .arg(env.state_dir().join("hal0.db"))
        .arg(format!(".backup '{}'", copy.state_dir().join("hal0.db").display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    copy
}

/// Calls audited through the daemon (hal0-admin over MCP: a read, a gated call, a refused
/// one, a decision at the shell) make a chain that verifies, on the store and on an export;
/// an edit, a removal or an addition made in the file with the triggers dropped is named,
/// with its row and code, and `hal0 activity verify` exits 7.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_edited_behind_hals_back_is_caught() {
    let Some(_) = sqlite3() else { return };
    let env = Env::new();
    let key = env.bridge_key("ops", &["admin"]);
    let server = env.serve();
    let c = crate::admin::admin(&server, &key).await;
    for _ in 0..3 {
        assert!(!crate::admin::call(&c, "version_info", json!({})).await.0);
    }
    let (_, v) =
        crate::admin::call(&c, "config_write", json!({"key": "network.public_url", "value": "https://x.example"}))
            .await;
    let approval = v["approval_id"].as_str().unwrap().to_string();
    crate::admin::call(&c, "bridge_client_revoke", json!({"name": "a/b"})).await;
    env.ok(&["agent", "approvals", "approve", &approval, "--yes"]);
    let (e, v) = crate::admin::call(&c, "activity_verify", json!({})).await;
    assert!(!e && v["intact"] == true, "{v}");
    // Auth is off: the box's own REST answers on loopback without a key.
    let rest: Value =
        reqwest::Client::new().get(server.url("/api/activity/verify")).send().await.unwrap().json().await.unwrap();
    assert_eq!(rest["intact"], true, "{rest}");
    drop(c);
    drop(server);

    let report = env.json(&["activity", "verify", "--json"]);
    assert_eq!(report["intact"], true, "{report}");
    let rows = env.json(&["activity", "list", "--json"]);
    let rows = rows.as_array().unwrap();
    assert!(report["rows"].as_u64().unwrap() >= 7 && report["rows"].as_u64() == Some(rows.len() as u64), "{report}");
    let text = env.ok(&["activity", "verify"]);
    assert!(text.starts_with("audit log intact: ") && text.contains(report["head"].as_str().unwrap()), "{text}");

    // A copy shipped elsewhere checks alone; an edit to it does not.
    let copy = env.state_dir().join("export.jsonl");
    std::fs::write(&copy, env.ok(&["activity", "export"])).unwrap();
    let path = copy.to_str().unwrap();
    let o = env.run(&["activity", "verify", "--file", path, "--complete", "--json"]);
    assert_eq!(o.code(), 0, "{}", o.stderr());
    let back: Value = serde_json::from_str(&o.stdout()).unwrap();
    assert_eq!(back["head"], report["head"]);
    let edited = std::fs::read_to_string(&copy).unwrap().replace("https://x.example", "https://y.example");
    std::fs::write(&copy, edited).unwrap();
    let o = env.run(&["activity", "verify", "--file", path]);
    assert_eq!(o.code(), 7, "{}{}", o.stdout(), o.stderr());
    assert!(o.stdout().contains("TAMPERED") && o.stdout().contains("[audit.row_changed]"), "{}", o.stdout());
    let o = env.run(&["activity", "verify", "--file", "/nonexistent/export.jsonl"]);
    assert_eq!(o.code(), 2);
    assert!(o.stderr().contains("audit.invalid_copy"), "{}", o.stderr());

    // The gated call's row: stored `started`, then given its outcome.
    let gated = rows.iter().find(|r| r["tool"] == "config_write" && r["verdict"] == "gated").unwrap();
    let gated = gated["id"].as_i64().unwrap();
    let decided = rows.iter().find(|r| r["verdict"] == "executed").unwrap()["id"].as_i64().unwrap();
    let last = rows[0]["id"].as_i64().unwrap();
    for (sql, row, code) in [
        (format!("UPDATE audit_log SET identity = 'admin' WHERE id = {gated}"), gated, "audit.row_changed"),
        (format!("UPDATE audit_log SET verdict = 'denied' WHERE id = {decided}"), decided, "audit.outcome_changed"),
        (format!("DELETE FROM audit_log WHERE id = {gated}"), gated, "audit.row_removed"),
        (format!("DELETE FROM audit_outcomes WHERE row_id = {decided}"), decided, "audit.links_removed"),
        (
            "INSERT INTO audit_log (at, surface, tool, identity, arguments, verdict) \
             VALUES ('2026-01-01T00:00:00Z', 'cli', 'bridge_client_add', 'cli:root', '{}', 'ok')"
                .to_string(),
            last + 1,
            "audit.row_added",
        ),
    ] {
        let tampered = copy_of(&env);
        behind_the_back(&tampered.state_dir().join("hal0.db"), &sql);
        let o = tampered.run(&["activity", "verify", "--json"]);
        assert_eq!(o.code(), 7, "{sql}: {}{}", o.stdout(), o.stderr());
        let r: Value = serde_json::from_str(&o.stdout()).unwrap();
        assert_eq!((r["intact"].clone(), r["problem"]["row"].clone()), (json!(false), json!(row)), "{sql}: {r}");
        assert_eq!(r["problem"]["code"], code, "{sql}: {r}");
    }
}
