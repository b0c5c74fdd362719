//! Versioned schema migrations, applied in order inside one transaction each and tracked
//! with `PRAGMA user_version`. Append new steps; never edit a shipped one.

use crate::error::{Error, Result};
use rusqlite::Connection;

/// Each entry moves the schema from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // 1: bridge clients (per-client keys; only the sha256 of a key is stored).
    "CREATE TABLE bridge_clients (
        name        TEXT PRIMARY KEY,
        key_sha256  TEXT NOT NULL UNIQUE,
        scopes      TEXT NOT NULL,
        note        TEXT NOT NULL DEFAULT '',
        created_at  TEXT NOT NULL,
        rotated_at  TEXT,
        last_seen   TEXT,
        revoked_at  TEXT
    );",
    // 2: the agent bridge's run ledger, its stored events, and the approvals inbox.
    "CREATE TABLE runs (
        run_id          TEXT PRIMARY KEY,
        agent           TEXT NOT NULL,
        profile         TEXT NOT NULL,
        client          TEXT NOT NULL,
        status          TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL,
        input_preview   TEXT NOT NULL DEFAULT '',
        fingerprint     TEXT NOT NULL,
        idempotency_key TEXT,
        session_key     TEXT,
        output          TEXT NOT NULL DEFAULT '',
        error           TEXT,
        usage           TEXT,
        pending         TEXT,
        last_seq        INTEGER NOT NULL DEFAULT 0,
        finished        INTEGER NOT NULL DEFAULT 0
    );
    CREATE UNIQUE INDEX runs_idempotency ON runs(agent, idempotency_key) WHERE idempotency_key IS NOT NULL;
    CREATE INDEX runs_client ON runs(client, created_at);
    CREATE INDEX runs_unfinished ON runs(finished);
    CREATE TABLE run_events (
        run_id  TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        seq     INTEGER NOT NULL,
        event   TEXT NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE approvals (
        id          TEXT PRIMARY KEY,
        kind        TEXT NOT NULL,
        client      TEXT NOT NULL,
        tool        TEXT NOT NULL,
        arguments   TEXT NOT NULL,
        preview     TEXT NOT NULL DEFAULT '',
        created_at  TEXT NOT NULL,
        status      TEXT NOT NULL,
        decided_at  TEXT,
        decided_by  TEXT,
        reason      TEXT,
        result      TEXT,
        run_id      TEXT
    );
    CREATE INDEX approvals_status ON approvals(status, created_at);",
];

pub fn current_version(conn: &Connection) -> Result<i64> {
    Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
}

pub fn migrate(conn: &Connection) -> Result<()> {
    let want = MIGRATIONS.len() as i64;
    loop {
        // Check and step under the write lock, so a CLI and a daemon starting together
        // never apply the same step twice.
        conn.execute_batch("BEGIN IMMEDIATE;")?;
        let step = (|| -> Result<bool> {
            let have = current_version(conn)?;
            if have > want {
                return Err(Error::unavailable(
                    "store.too_new",
                    format!("the store is at schema version {have}, newer than this hal0 ({want}); upgrade hal0"),
                ));
            }
            if have == want {
                return Ok(false);
            }
            let v = have + 1;
            conn.execute_batch(&format!("{} PRAGMA user_version = {v};", MIGRATIONS[have as usize]))
                .map_err(|e| Error::unavailable("store.migration_failed", format!("migration {v} failed: {e}")))?;
            Ok(true)
        })();
        match step {
            Ok(more) => {
                conn.execute_batch("COMMIT;")?;
                if !more {
                    return Ok(());
                }
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK;");
                return Err(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_once_and_is_idempotent() {
        let d = tempfile::tempdir().unwrap();
        let c = Connection::open(d.path().join("t.db")).unwrap();
        migrate(&c).unwrap();
        migrate(&c).unwrap();
        assert_eq!(current_version(&c).unwrap(), MIGRATIONS.len() as i64);
    }

    #[test]
    fn newer_store_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let c = Connection::open(d.path().join("t.db")).unwrap();
        c.pragma_update(None, "user_version", 999).unwrap();
        assert_eq!(migrate(&c).unwrap_err().code, "store.too_new");
    }
}
