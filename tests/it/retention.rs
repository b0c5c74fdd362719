//! Retention and a full store, against the real binary and real SQLite files: `hal0 store
//! prune` removes exactly what is past each window (rows old enough are written straight
//! into the store, as time would have left them), the audit log's triggers still refuse any
//! other delete, the space comes back, `[audit].max_rows` caps the log, a full store refuses
//! calls that change state (never a change without its audit row) while reads go on, audit
//! rows reach a syslog or journald socket, and `activity export --until` bounds the export.

use crate::support::mcp::{call, connect_with};
use crate::support::*;
use rusqlite::Connection;
use serde_json::{Value, json};

fn db(env: &Env) -> Connection {
    Connection::open(env.state_dir().join("hal0.db")).unwrap()
}

fn count(c: &Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

const OLD: &str = "2020-01-01T00:00:00Z";

/// `n` audit rows at `at`, each with `pad` bytes of arguments.
fn audit_rows(c: &Connection, n: usize, at: &str, pad: usize) {
    let args = json!({"pad": "x".repeat(pad)}).to_string();
    let tx = c.unchecked_transaction().unwrap();
    for i in 0..n {
        tx.execute(
            "INSERT INTO audit_log (at, surface, tool, identity, arguments, verdict) VALUES (?1, 'mcp:admin', ?2, 'bridge:ci', ?3, 'ok')",
            rusqlite::params![at, format!("t{i}"), args],
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

#[test]
fn pruning_removes_what_is_past_each_window_and_gives_the_space_back() {
    let env = Env::new();
    env.ok(&["store", "status"]);
    let c = db(&env);
    let now = env.json(&["store", "status", "--json"]);
    assert_eq!(now["rows"]["audit_log"], 0, "{now}");
    audit_rows(&c, 3000, OLD, 400);
    audit_rows(&c, 5, "2999-01-01T00:00:00Z", 10);
    for (id, status, decided) in [
        ("ap_old_denied", "denied", Some(OLD)),
        ("ap_old_pending", "pending", None),
        ("ap_old_approved", "approved", Some(OLD)),
    ] {
        c.execute(
            "INSERT INTO approvals (id, kind, client, tool, arguments, created_at, status, decided_at)
             VALUES (?1, 'admin_call', 'ci', 't', '{}', ?2, ?3, ?4)",
            rusqlite::params![id, OLD, status, decided],
        )
        .unwrap();
    }
    for (id, status) in [("op_done", "completed"), ("op_running", "processing")] {
        c.execute(
            "INSERT INTO memory_operations (id, kind, status, client, created_at, updated_at) VALUES (?1, 'retain', ?2, 'ci', ?3, ?3)",
            rusqlite::params![id, status, OLD],
        )
        .unwrap();
    }
    c.execute("INSERT INTO relay_conversations (id, a, b, created_at) VALUES ('cv1', 'a', 'b', ?1)", [OLD]).unwrap();
    c.execute("INSERT INTO relay_conversations (id, a, b, created_at) VALUES ('cv2', 'a', 'b', ?1)", [OLD]).unwrap();
    for (rid, conv, ended) in [("r_old", "cv1", Some(OLD)), ("r_open", "cv2", None)] {
        c.execute(
            "INSERT INTO relay_exchanges (request_id, conversation_id, from_agent, to_agent, message, status, started_at, ended_at)
             VALUES (?1, ?2, 'a', 'b', 'hi', 'answered', ?3, ?4)",
            rusqlite::params![rid, conv, OLD, ended],
        )
        .unwrap();
    }
    // The log is still append-only for anyone but the pruner.
    let refused = c.execute("DELETE FROM audit_log WHERE id = (SELECT max(id) FROM audit_log)", []).unwrap_err();
    assert!(refused.to_string().contains("append-only"), "{refused}");
    assert!(c.execute("UPDATE audit_prune_mark SET below = -1", []).is_err(), "the mark only moves forward");
    drop(c);
    let before = std::fs::metadata(env.state_dir().join("hal0.db")).unwrap().len();

    let report = env.json(&["store", "prune", "--json"]);
    let pruned: std::collections::BTreeMap<String, u64> = report["pruned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["table"].as_str().unwrap().to_string(), p["rows"].as_u64().unwrap()))
        .collect();
    assert_eq!(pruned.get("audit_log"), Some(&3000), "{report}");
    assert_eq!(pruned.get("approvals"), Some(&1), "only the decided and finished one: {report}");
    assert_eq!(pruned.get("memory_operations"), Some(&1), "{report}");
    assert_eq!(pruned.get("relay_exchanges"), Some(&1), "only the ended one: {report}");
    assert_eq!(pruned.get("relay_conversations"), Some(&1), "only the one left empty: {report}");
    assert!(report["reclaimed_bytes"].as_u64().unwrap() > 1_000_000, "{report}");
    let after = std::fs::metadata(env.state_dir().join("hal0.db")).unwrap().len();
    assert!(after + 1_000_000 < before, "the file shrank: {before} -> {after}");

    let c = db(&env);
    assert_eq!(count(&c, "SELECT count(*) FROM audit_log WHERE at >= '2999'"), 5);
    // The pruning itself is in the log (as the shell's operator).
    assert_eq!(count(&c, "SELECT count(*) FROM audit_log WHERE tool = 'store_prune' AND surface = 'cli'"), 1);
    let left: Vec<String> = c
        .prepare("SELECT id FROM approvals ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(left, ["ap_old_approved", "ap_old_pending"]);
    assert_eq!(count(&c, "SELECT count(*) FROM memory_operations WHERE id = 'op_running'"), 1);
    assert_eq!(count(&c, "SELECT count(*) FROM relay_exchanges WHERE request_id = 'r_open'"), 1);
    assert_eq!(count(&c, "PRAGMA auto_vacuum"), 2, "incremental");
    // The status counts the pruned log's rows from its ids: the same as a scan.
    let status = env.json(&["store", "status", "--json"]);
    assert_eq!(status["rows"]["audit_log"], count(&c, "SELECT count(*) FROM audit_log"), "{status}");
    // Nothing more to do.
    assert_eq!(env.json(&["store", "prune", "--json"])["pruned"], json!([]));
}

#[test]
fn max_rows_keeps_the_newest_and_a_zero_window_keeps_everything() {
    let env = Env::new();
    env.ok(&["config", "set", "audit.retention_days", "0"]);
    env.ok(&["config", "set", "audit.max_rows", "1000"]);
    env.ok(&["store", "status"]);
    audit_rows(&db(&env), 1500, OLD, 10);
    let report = env.json(&["store", "prune", "--json"]);
    assert_eq!(report["pruned"][0], json!({"table": "audit_log", "rows": 500}), "{report}");
    let c = db(&env);
    // The 1000 newest stay (the shell's pruning is recorded after it ran).
    assert_eq!(count(&c, "SELECT count(*) FROM audit_log WHERE tool != 'store_prune'"), 1000);
    assert_eq!(count(&c, "SELECT min(id) FROM audit_log"), 501);
}

#[test]
fn retention_settings_are_checked() {
    let env = Env::new();
    for (key, value, want) in [
        ("audit.max_rows", "10", "audit.max_rows"),
        ("audit.retention_days", "40000", "audit.retention_days"),
        ("store.prune_every_mins", "0", "store.prune_every_mins"),
        ("audit.forward", "kafka", "audit.forward"),
    ] {
        let o = env.run(&["config", "set", key, value]);
        assert_ne!(o.code(), 0, "{key}={value} accepted");
        assert!(o.stderr().contains(want), "{key}: {}", o.stderr());
    }
    // Nothing was written by the refused sets.
    let file = std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap_or_default();
    assert!(!file.contains("max_rows") && !file.contains("kafka"), "{file}");
}

#[test]
fn an_old_store_is_converted_to_incremental_vacuum_once() {
    let env = Env::new();
    env.ok(&["store", "status"]);
    {
        let c = db(&env);
        c.execute_batch("PRAGMA auto_vacuum = NONE; VACUUM;").unwrap();
        assert_eq!(count(&c, "PRAGMA auto_vacuum"), 0);
    }
    env.ok(&["store", "status"]);
    assert_eq!(count(&db(&env), "PRAGMA auto_vacuum"), 2);
}

#[test]
fn export_takes_a_time_window() {
    let env = Env::new();
    env.ok(&["store", "status"]);
    let c = db(&env);
    audit_rows(&c, 2, "2024-01-01T00:00:00Z", 1);
    audit_rows(&c, 3, "2024-06-01T00:00:00Z", 1);
    audit_rows(&c, 1, "2025-01-01T00:00:00Z", 1);
    let out = env.ok(&["activity", "export", "--since", "2024-02-01T00:00:00Z", "--until", "2025-01-01T00:00:00Z"]);
    let rows: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 3, "{out}");
    assert!(rows.iter().all(|r| r["at"] == "2024-06-01T00:00:00Z"), "{out}");
    let bad = env.run(&["activity", "export", "--until", "someday"]);
    assert_eq!(bad.code(), 2, "{}", bad.stderr());
    assert!(bad.stderr().contains("audit.invalid_since"), "{}", bad.stderr());
}

#[test]
fn audit_rows_reach_syslog_and_journald_sockets() {
    for (kind, check) in [
        ("syslog", (|d: &[u8]| String::from_utf8_lossy(d).starts_with("<86>hal0[")) as fn(&[u8]) -> bool),
        ("journald", |d: &[u8]| {
            let t = String::from_utf8_lossy(d);
            t.contains("SYSLOG_IDENTIFIER=hal0\n")
                && t.contains("HAL0_TOOL=store_prune\n")
                && t.contains("PRIORITY=6\n")
        }),
    ] {
        let env = Env::new();
        let sock_path = env.dir.path().join(format!("{kind}.sock"));
        let sock = std::os::unix::net::UnixDatagram::bind(&sock_path).unwrap();
        sock.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
        env.ok(&["config", "set", "audit.forward", kind]);
        env.ok(&["config", "set", "audit.forward_socket", sock_path.to_str().unwrap()]);
        env.ok(&["store", "prune"]);
        let mut buf = vec![0u8; 65536];
        let n = sock.recv(&mut buf).unwrap();
        let got = &buf[..n];
        assert!(check(got), "{kind}: {}", String::from_utf8_lossy(got));
        assert!(String::from_utf8_lossy(got).contains("store_prune"), "{kind}");
        // The row's chain link goes with it: a copy of the chain outside hal0.db.
        let exported: Value = serde_json::from_str(env.ok(&["activity", "export"]).lines().last().unwrap()).unwrap();
        let link = exported["chain"]["hash"].as_str().unwrap();
        let text = String::from_utf8_lossy(got);
        let want = if kind == "syslog" { format!("\"chain\":\"{link}\"") } else { format!("HAL0_CHAIN={link}\n") };
        assert!(text.contains(&want), "{kind}: {want} in {text}");
    }
}

/// Notes whose `memory_add` answered ok, and the audit rows that say so.
fn ok_adds(c: &Connection) -> (i64, i64) {
    (
        count(c, "SELECT count(*) FROM memory_notes"),
        count(c, "SELECT count(*) FROM audit_log WHERE tool = 'memory_add' AND verdict = 'ok'"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_store_refuses_changes_with_no_change_unrecorded_and_reads_go_on() {
    let env = Env::new();
    env.ok(&["config", "set", "store.max_size_mb", "2"]);
    let key = env.bridge_key("filler", &["memory", "admin"]);
    let server = env.serve();
    let mem = connect_with(&server, "memory", &key, false).await;
    let admin = connect_with(&server, "admin", &key, false).await;
    // A gated call queued while there is room, its arguments larger than a page: deciding it
    // once the store cannot grow must be refused (its audit entry needs new pages; a small
    // entry may still fit in a page's spare room, and then the decision rightly goes on),
    // leaving the row pending and hal0.toml untouched.
    let long = format!("svc-{}", "x".repeat(6000));
    let args = json!({"args": {"key": "telemetry.service_name", "value": long}});
    let queued = call(&admin, "config_write", args).await.unwrap();
    let approval = queued["approval_id"].as_str().expect("queued").to_string();
    let mut refused = None;
    for i in 0..2000 {
        // Distinct words, so no two notes are the same text.
        let text = format!("note {i} {}", (0..120).map(|w| format!("w{i}x{w}")).collect::<Vec<_>>().join(" "));
        if let Err(e) = call(&mem, "memory_add", json!({"text": text})).await {
            refused = Some(e);
            break;
        }
    }
    let refused = refused.expect("a 2 MiB store filled up");
    assert!(refused.contains("store.full") || refused.contains("audit.unavailable"), "{refused}");
    // Reads go on: a search and an admin read answer.
    let found = call(&mem, "memory_search", json!({"query": "note"})).await.unwrap();
    assert!(!found.to_string().is_empty());
    let v = call(&admin, "version_info", json!({"args": {}})).await.unwrap();
    assert!(v.to_string().contains("uptime_s"), "{v}");
    // A decision needs its audit entry first: refused, nothing decided or run. Which write
    // finds the store full first (opening the store at the shell, or the audit entry)
    // depends on where the last free page went; either refusal changes nothing.
    let o = env.run(&["agent", "approvals", "approve", &approval, "--yes"]);
    assert_ne!(o.code(), 0, "a decision on a full store went through: {}", o.stdout());
    assert!(o.stderr().contains("audit.unavailable") || o.stderr().contains("store.full"), "{}", o.stderr());
    let row = env.json(&["agent", "approvals", "show", &approval, "--json"]);
    assert_eq!(row["status"], "pending", "{row}");
    let toml = std::fs::read_to_string(env.config_dir().join("hal0.toml")).unwrap();
    assert!(!toml.contains("service_name"), "the refused decision wrote nothing: {toml}");
    // Every note stored has its ok row; the refused call left no note behind.
    let c = db(&env);
    let (notes, rows) = ok_adds(&c);
    assert!(notes > 0 && notes == rows, "notes {notes}, ok rows {rows}");
    assert_eq!(count(&c, "SELECT count(*) FROM audit_log WHERE verdict = 'started'"), 0, "every started entry ended");
    // Doctor says so.
    let doctor = env.run(&["doctor", "--json"]);
    let report: Value = serde_json::from_str(&doctor.stdout()).unwrap();
    let row = report["rows"].as_array().unwrap().iter().find(|r| r["name"] == "store_space").unwrap().clone();
    assert_ne!(row["status"], "ok", "{row}");
    server.terminate().await;
}
