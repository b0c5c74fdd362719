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
