//! Upgrades keep the data: a `hal0.db` at the first wave's schema (version 5, what the
//! first landed hal0 wrote: bridge clients, runs and their events, approvals, memory notes
//! with tags, history, directives and operations, the audit log, proxy consumer keys) is
//! opened by the current binary, which migrates it; every row is checked afterwards, column
//! by column. A migration that fails leaves the file byte for byte as it was.

use crate::support::*;
use hal0::store::migrations::MIGRATIONS;
use rusqlite::Connection;
use rusqlite::types::Value as Sql;
use std::collections::BTreeMap;
use std::path::Path;

/// The schema the first wave shipped (the migrations never change once shipped).
const FIRST_RELEASED: usize = 5;

/// Rows as the first wave's code wrote them (its own SQL shapes and values).
const ROWS: &str = r#"
INSERT INTO bridge_clients VALUES
  ('ci', 'aa11', '["agents:run","memory:read"]', 'the CI runner', '2026-11-29T10:00:00Z', NULL, '2026-11-30T08:00:00Z', NULL),
  ('laptop', 'bb22', '["agents:run"]', '', '2026-11-29T10:05:00Z', '2026-11-29T12:00:00Z', NULL, '2026-11-30T09:00:00Z');
INSERT INTO runs VALUES
  ('run_0001', 'hermes/default', 'default', 'ci', 'completed', '2026-11-29T11:00:00Z', '2026-11-29T11:01:00Z',
   'summarise the build log', 'fp1', 'idem-1', 'sess-1', 'The build failed at step 3.', NULL, '{"input_tokens":12,"output_tokens":30}', NULL, 3, 1),
  ('run_0002', 'hermes/work', 'work', 'laptop', 'running', '2026-11-29T11:05:00Z', '2026-11-29T11:05:02Z',
   'refactor the parser', 'fp2', NULL, NULL, 'partial out', NULL, NULL, '{"kind":"approval","id":"h1"}', 1, 0);
INSERT INTO run_events VALUES
  ('run_0001', 1, 'run.started', '{"run_id":"run_0001"}'),
  ('run_0001', 2, 'message.delta', '{"delta":"The build failed"}'),
  ('run_0001', 3, 'run.completed', '{"output":"The build failed at step 3."}'),
  ('run_0002', 1, 'run.started', '{"run_id":"run_0002"}');
INSERT INTO approvals VALUES
  ('apr_0001', 'skill', 'ci', 'agent_skill_put', '{"name":"deploy","files":{"SKILL.md":"---\nname: deploy\n---\n"}}',
   'skill deploy', '2026-11-29T11:10:00Z', 'approved', '2026-11-29T11:20:00Z', 'cli:root', 'looks right', '{"ok":true}', NULL),
  ('apr_0002', 'admin_call', 'api:admin', 'mcp_server_config', '{"tool":"mcp_server_config","args":{"id":"files","env":{"ROOT":"/srv"}}}',
   'config files', '2026-11-29T11:30:00Z', 'pending', NULL, NULL, NULL, NULL, NULL),
  ('apr_0003', 'run_approval', 'laptop', 'terminal', '{"command":"rm -rf build"}',
   'rm -rf build', '2026-11-29T11:40:00Z', 'denied', '2026-11-29T11:41:00Z', 'cli:root', 'not today', NULL, 'run_0002');
INSERT INTO memory_notes (id, dataset, text, text_sha, context, tags, metadata, source, created_by, document_id,
                          occurred_start, occurred_end, fact_type, entities, state, timestamp, created_at, updated_at) VALUES
  ('mem_1', 'shared', 'The deploy host is gamma.', 's1', 'ops', '["deploy"]', '{}', 'agent', 'ci', NULL,
   NULL, NULL, 'world', '["gamma"]', 'active', '2026-11-29T12:00:00Z', '2026-11-29T12:00:00Z', '2026-11-29T12:00:00Z'),
  ('mem_2', 'client:ci', 'Builds run on Tuesdays.', 's2', NULL, '[]', '{"k":1}', 'agent', 'ci', 'doc-7',
   '2026-11-01', '2026-11-02', 'experience', '[]', 'archived', '2026-11-29T12:01:00Z', '2026-11-29T12:01:00Z', '2026-11-29T12:05:00Z');
INSERT INTO memory_note_tags VALUES ('deploy', 1);
INSERT INTO memory_history VALUES (1, 2, '2026-11-29T12:05:00Z', 'ci', 'archive', '{"state":["active","archived"]}');
INSERT INTO memory_directives VALUES ('dir_1', 'tone', 'Answer briefly.', 2, 1, '[]', 'ci', '2026-11-29T12:10:00Z', '2026-11-29T12:10:00Z');
INSERT INTO memory_operations VALUES ('op_1', 'add', 'completed', 'ci', 'shared', 'mem_1', '{"text":"The deploy host is gamma."}',
  '{"id":"mem_1"}', NULL, 1, '2026-11-29T12:00:00Z', '2026-11-29T12:00:00Z');
INSERT INTO audit_log (at, surface, tool, identity, arguments, verdict, result_code, approval_id, detail) VALUES
  ('2026-11-29T11:00:00Z', 'mcp:agents', 'agent_run', 'bridge:ci', '{"task":"summarise"}', 'ok', NULL, NULL, NULL),
  ('2026-11-29T11:30:00Z', 'mcp:admin', 'mcp_server_config', 'api:admin', '{"id":"files"}', 'gated', NULL, 'apr_0002', NULL),
  ('2026-11-29T11:41:00Z', 'cli', 'approval_deny', 'cli:root', '{"id":"apr_0003"}', 'denied', NULL, 'apr_0003', 'not today'),
  ('2026-11-29T11:50:00Z', 'mcp:memory', 'memory_add', 'bridge:laptop', '{}', 'error', 'auth.revoked', NULL, NULL);
INSERT INTO mcp_consumers VALUES ('files', 'hermes', 'for the default profile', 'cc33', '2026-11-30T08:00:00Z', NULL, NULL, NULL);
"#;

/// Every row of every first-wave table (FTS5's own tables aside: migration 7 replaced
/// that index), each column the first wave had, by table, in rowid / key order.
type Dump = BTreeMap<String, Vec<Vec<Sql>>>;

fn dump(c: &Connection, tables: &[(String, Vec<String>)]) -> Dump {
    let mut out = Dump::new();
    for (table, cols) in tables {
        let sql = format!("SELECT {} FROM {table} ORDER BY 1, 2", cols.join(", "));
        let mut st = c.prepare(&sql).unwrap();
        let rows = st
            .query_map([], |r| (0..cols.len()).map(|i| r.get::<_, Sql>(i)).collect::<Result<Vec<_>, _>>())
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        out.insert(table.clone(), rows);
    }
    out
}

/// The first wave's tables and their columns.
fn first_wave_tables(c: &Connection) -> Vec<(String, Vec<String>)> {
    let mut st = c
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
               AND name NOT LIKE 'memory_fts%' ORDER BY name",
        )
        .unwrap();
    let names: Vec<String> = st.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    names
        .into_iter()
        .map(|t| {
            let mut st = c.prepare(&format!("SELECT name FROM pragma_table_info('{t}')")).unwrap();
            let cols = st.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
            (t, cols)
        })
        .collect()
}

/// A store at the first wave's schema, filled with [`ROWS`], as the first wave opened it
/// (WAL, no incremental vacuum: that came with retention).
fn first_wave_store(path: &Path) -> (Vec<(String, Vec<String>)>, Dump) {
    let c = Connection::open(path).unwrap();
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    for (i, step) in MIGRATIONS[..FIRST_RELEASED].iter().enumerate() {
        c.execute_batch(&format!("BEGIN; {step} PRAGMA user_version = {}; COMMIT;", i + 1)).unwrap();
    }
    c.execute_batch(ROWS).unwrap();
    let tables = first_wave_tables(&c);
    let before = dump(&c, &tables);
    for (t, rows) in &before {
        assert!(!rows.is_empty(), "the fixture fills every first-wave table; {t} is empty");
    }
    (tables, before)
}

#[test]
fn a_first_wave_store_is_migrated_with_every_row_kept() {
    let env = Env::new();
    let db = env.state_dir().join("hal0.db");
    std::fs::create_dir_all(env.state_dir()).unwrap();
    let (tables, mut want) = first_wave_store(&db);
    assert_eq!(tables.len(), 11, "{tables:?}");

    // The current binary opens (and migrates) the store on its first command.
    let listed = env.json(&["runs", "list", "--json"]);
    let c = Connection::open(&db).unwrap();
    let v: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(v, MIGRATIONS.len() as i64);

    // Migration 9 renamed the one pending admin call's tool and path argument (spec 003);
    // nothing else may differ.
    let pending = &mut want.get_mut("approvals").unwrap()[1];
    assert_eq!(pending[0], Sql::Text("apr_0002".into()));
    pending[3] = Sql::Text("mcp_server_config_write".into());
    pending[4] =
        Sql::Text(r#"{"tool":"mcp_server_config_write","args":{"env":{"ROOT":"/srv"},"server_id":"files"}}"#.into());
    let got = dump(&c, &tables);
    for (t, rows) in &want {
        assert_eq!(&got[t], rows, "table {t} after the upgrade");
    }

    // And the current code reads them through its own views.
    let runs = listed.as_array().unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(runs.len(), 2, "{listed}");
    let pending = env.json(&["agent", "approvals", "list", "--json"]);
    let text = pending.to_string();
    assert!(text.contains("apr_0002") && text.contains("mcp_server_config_write"), "{text}");
    let bridge = env.ok(&["bridge", "list"]);
    assert!(bridge.contains("ci") && bridge.contains("laptop"), "{bridge}");
    let activity = env.ok(&["activity", "list", "--limit", "10"]);
    assert!(activity.contains("agent_run") && activity.contains("auth.revoked"), "{activity}");
    // Retention's conversion to incremental vacuum ran once the migrations were in.
    let mode: i64 = c.pragma_query_value(None, "auto_vacuum", |r| r.get(0)).unwrap();
    assert_eq!(mode, 2);
}

#[test]
fn a_migration_that_fails_leaves_the_old_store_untouched() {
    let env = Env::new();
    let db = env.state_dir().join("hal0.db");
    std::fs::create_dir_all(env.state_dir()).unwrap();
    let (tables, want) = first_wave_store(&db);
    // Fold the WAL into the file, as a first-wave hal0 did when it closed.
    let c = Connection::open(&db).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    drop(c);
    let bytes = std::fs::read(&db).unwrap();

    // A table the upgrade wants to create already exists in this store (say, made by hand):
    // migration 8 fails, after 6 and 7 ran in the same transaction.
    let c = Connection::open(&db).unwrap();
    c.execute_batch("CREATE TABLE audit_prune_mark (x);").unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    drop(c);
    let bytes_with_table = std::fs::read(&db).unwrap();
    assert_ne!(bytes, bytes_with_table);

    let out = env.run(&["runs", "list", "--json"]);
    assert_ne!(out.code(), 0);
    let err = out.stderr();
    assert!(err.contains("store.migration_failed") && err.contains("migration 8 failed"), "{err}");
    assert!(err.contains("unchanged at schema version 5"), "{err}");

    let c = Connection::open(&db).unwrap();
    let v: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(v, FIRST_RELEASED as i64, "no step of the failed upgrade stayed");
    let relay: i64 =
        c.query_row("SELECT count(*) FROM sqlite_master WHERE name LIKE 'relay_%'", [], |r| r.get(0)).unwrap();
    assert_eq!(relay, 0, "migration 6's tables were rolled back with the rest");
    assert_eq!(dump(&c, &tables), want);
    drop(c);
    // The main file is byte for byte as it was (the failed steps only ever reached the WAL,
    // and were rolled back there).
    assert_eq!(std::fs::read(&db).unwrap(), bytes_with_table, "the store file changed");
}
