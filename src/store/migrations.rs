//! Versioned schema migrations, the pending ones applied in order inside one transaction and tracked
//! with `PRAGMA user_version`. Append new steps; never edit a shipped one.

use crate::base::error::{Error, Result};
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
    // 3: the memory engine: notes with an FTS5 index (external content, kept in sync by
    // triggers), their tags and curation history, directives and the operations log.
    "CREATE TABLE memory_notes (
        seq            INTEGER PRIMARY KEY AUTOINCREMENT,
        id             TEXT NOT NULL UNIQUE,
        dataset        TEXT NOT NULL,
        text           TEXT NOT NULL,
        text_sha       TEXT NOT NULL,
        context        TEXT,
        tags           TEXT NOT NULL DEFAULT '[]',
        metadata       TEXT NOT NULL DEFAULT '{}',
        source         TEXT NOT NULL,
        created_by     TEXT NOT NULL,
        document_id    TEXT,
        occurred_start TEXT,
        occurred_end   TEXT,
        fact_type      TEXT NOT NULL DEFAULT 'world',
        entities       TEXT NOT NULL DEFAULT '[]',
        state          TEXT NOT NULL DEFAULT 'active',
        timestamp      TEXT NOT NULL,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL
    );
    CREATE UNIQUE INDEX memory_notes_document ON memory_notes(dataset, document_id) WHERE document_id IS NOT NULL;
    CREATE INDEX memory_notes_text ON memory_notes(dataset, text_sha);
    CREATE INDEX memory_notes_list ON memory_notes(dataset, state, seq);
    CREATE VIRTUAL TABLE memory_fts USING fts5(
        text, context, content = 'memory_notes', content_rowid = 'seq', tokenize = 'porter unicode61'
    );
    CREATE TRIGGER memory_notes_fts_insert AFTER INSERT ON memory_notes BEGIN
        INSERT INTO memory_fts(rowid, text, context) VALUES (new.seq, new.text, new.context);
    END;
    CREATE TRIGGER memory_notes_fts_delete AFTER DELETE ON memory_notes BEGIN
        INSERT INTO memory_fts(memory_fts, rowid, text, context) VALUES ('delete', old.seq, old.text, old.context);
    END;
    CREATE TRIGGER memory_notes_fts_update AFTER UPDATE OF text, context ON memory_notes BEGIN
        INSERT INTO memory_fts(memory_fts, rowid, text, context) VALUES ('delete', old.seq, old.text, old.context);
        INSERT INTO memory_fts(rowid, text, context) VALUES (new.seq, new.text, new.context);
    END;
    CREATE TABLE memory_note_tags (
        tag TEXT NOT NULL,
        seq INTEGER NOT NULL REFERENCES memory_notes(seq) ON DELETE CASCADE,
        PRIMARY KEY (tag, seq)
    ) WITHOUT ROWID;
    CREATE INDEX memory_note_tags_seq ON memory_note_tags(seq);
    CREATE TABLE memory_history (
        hid     INTEGER PRIMARY KEY,
        seq     INTEGER NOT NULL REFERENCES memory_notes(seq) ON DELETE CASCADE,
        at      TEXT NOT NULL,
        actor   TEXT NOT NULL,
        action  TEXT NOT NULL,
        changes TEXT NOT NULL
    );
    CREATE INDEX memory_history_seq ON memory_history(seq, hid);
    CREATE TABLE memory_directives (
        id         TEXT PRIMARY KEY,
        name       TEXT NOT NULL,
        content    TEXT NOT NULL,
        priority   INTEGER NOT NULL DEFAULT 0,
        is_active  INTEGER NOT NULL DEFAULT 1,
        tags       TEXT NOT NULL DEFAULT '[]',
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE memory_operations (
        id         TEXT PRIMARY KEY,
        kind       TEXT NOT NULL,
        status     TEXT NOT NULL,
        client     TEXT NOT NULL,
        dataset    TEXT,
        note_id    TEXT,
        request    TEXT NOT NULL DEFAULT '{}',
        result     TEXT,
        error      TEXT,
        attempts   INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX memory_operations_created ON memory_operations(created_at);",
    // 4: the audit log: every MCP tool call and every decision, append-only (triggers abort
    // any UPDATE or DELETE).
    "CREATE TABLE audit_log (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        at          TEXT NOT NULL,
        surface     TEXT NOT NULL,
        tool        TEXT NOT NULL,
        identity    TEXT NOT NULL,
        arguments   TEXT NOT NULL,
        verdict     TEXT NOT NULL,
        result_code TEXT,
        approval_id TEXT,
        detail      TEXT
    );
    CREATE INDEX audit_log_at ON audit_log(at);
    CREATE INDEX audit_log_tool ON audit_log(tool, id);
    CREATE INDEX audit_log_identity ON audit_log(identity, id);
    CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN
        SELECT RAISE(ABORT, 'audit_log is append-only');
    END;
    CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN
        SELECT RAISE(ABORT, 'audit_log is append-only');
    END;",
    // 5: keys hal0 mints for consumers of its MCP proxy (`/mcp/proxy/<server>/mcp`), one per
    // (server, consumer); only the sha256 is kept. A revoked row keeps its name until re-minted.
    "CREATE TABLE mcp_consumers (
        server       TEXT NOT NULL,
        name         TEXT NOT NULL,
        note         TEXT NOT NULL DEFAULT '',
        key_hash     TEXT UNIQUE,
        created_at   TEXT NOT NULL,
        rotated_at   TEXT,
        last_used_at TEXT,
        revoked_at   TEXT,
        PRIMARY KEY (server, name)
    );",
    // 6: the agent relay. Every exchange (an ask from one bot to another) is written when it
    // starts and again when it ends, refusals included, so none stays `pending` after its
    // ask ended. A conversation belongs to the pair of bots that opened it (`a` < `b`).
    // Presence: the bots connected now (the daemon clears it when it starts).
    "CREATE TABLE relay_exchanges (
        request_id      TEXT PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        from_agent      TEXT NOT NULL,
        to_agent        TEXT NOT NULL,
        message         TEXT NOT NULL,
        status          TEXT NOT NULL,
        answer          TEXT,
        error           TEXT,
        started_at      TEXT NOT NULL,
        ended_at        TEXT
    );
    CREATE INDEX relay_exchanges_started ON relay_exchanges(started_at);
    CREATE INDEX relay_exchanges_from ON relay_exchanges(from_agent, started_at);
    CREATE INDEX relay_exchanges_to ON relay_exchanges(to_agent, started_at);
    CREATE TABLE relay_conversations (
        id         TEXT PRIMARY KEY,
        a          TEXT NOT NULL,
        b          TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE relay_presence (
        name         TEXT PRIMARY KEY,
        generation   INTEGER NOT NULL,
        connected_at TEXT NOT NULL
    );",
    // 7: memory search moves from FTS5 to hal0's in-memory index (bm25 in FTS5 scores every
    // matching row, however small the LIMIT). The notes stay the only truth; the index
    // follows this change log (one row per note inserted, deleted, or changed in its text,
    // context, state or dataset), written by triggers, so every process catches up.
    "DROP TRIGGER memory_notes_fts_insert;
    DROP TRIGGER memory_notes_fts_delete;
    DROP TRIGGER memory_notes_fts_update;
    DROP TABLE memory_fts;
    -- Only the oldest rows are ever deleted (the log is kept to its newest rows), so ids
    -- grow without AUTOINCREMENT's extra write per row.
    CREATE TABLE memory_changes (
        id  INTEGER PRIMARY KEY,
        seq INTEGER NOT NULL
    );
    CREATE TRIGGER memory_notes_change_insert AFTER INSERT ON memory_notes BEGIN
        INSERT INTO memory_changes (seq) VALUES (new.seq);
    END;
    CREATE TRIGGER memory_notes_change_delete AFTER DELETE ON memory_notes BEGIN
        INSERT INTO memory_changes (seq) VALUES (old.seq);
    END;
    CREATE TRIGGER memory_notes_change_update AFTER UPDATE OF text, context, state, dataset ON memory_notes BEGIN
        INSERT INTO memory_changes (seq) VALUES (new.seq);
    END;",
    // 8: retention. The audit log stays append-only, except that rows leave oldest first
    // below a mark that only moves forward (set by the pruner), and that an entry written
    // before its call ran (`started`) takes the call's outcome once. Indexes for pruning.
    "CREATE TABLE audit_prune_mark (
        one   INTEGER PRIMARY KEY CHECK (one = 1),
        below INTEGER NOT NULL
    );
    INSERT INTO audit_prune_mark VALUES (1, 0);
    CREATE TRIGGER audit_prune_mark_forward BEFORE UPDATE ON audit_prune_mark
        WHEN new.below < old.below OR new.one != old.one BEGIN
        SELECT RAISE(ABORT, 'the audit prune mark only moves forward');
    END;
    CREATE TRIGGER audit_prune_mark_no_delete BEFORE DELETE ON audit_prune_mark BEGIN
        SELECT RAISE(ABORT, 'the audit prune mark cannot be removed');
    END;
    DROP TRIGGER audit_log_no_delete;
    CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
        WHEN old.id >= (SELECT below FROM audit_prune_mark) BEGIN
        SELECT RAISE(ABORT, 'audit_log is append-only: rows leave only by retention, oldest first');
    END;
    DROP TRIGGER audit_log_no_update;
    CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
        WHEN NOT (old.verdict = 'started' AND new.id = old.id AND new.at = old.at AND new.surface = old.surface
                  AND new.tool = old.tool AND new.identity = old.identity AND new.arguments = old.arguments
                  AND new.detail IS old.detail) BEGIN
        SELECT RAISE(ABORT, 'audit_log is append-only');
    END;
    CREATE INDEX relay_exchanges_conversation ON relay_exchanges(conversation_id);
    CREATE INDEX approvals_decided ON approvals(decided_at) WHERE decided_at IS NOT NULL;",
    // 9: hal0-admin takes spec 003's tool names and path arguments (`mcp_server_config` is
    // `mcp_server_config_write`, `mcp_server_control` is `mcp_server_action`, a server is
    // `server_id`, not `id`): calls still waiting in the inbox run under the new ones.
    "UPDATE approvals
        SET tool = CASE tool WHEN 'mcp_server_config' THEN 'mcp_server_config_write' ELSE 'mcp_server_action' END,
            arguments = json_set(arguments, '$.tool',
                CASE tool WHEN 'mcp_server_config' THEN 'mcp_server_config_write' ELSE 'mcp_server_action' END)
      WHERE kind = 'admin_call' AND status = 'pending' AND tool IN ('mcp_server_config', 'mcp_server_control');
    UPDATE approvals
        SET arguments = json_set(json_remove(arguments, '$.args.id'), '$.args.server_id', json_extract(arguments, '$.args.id'))
      WHERE kind = 'admin_call' AND status = 'pending' AND json_type(arguments, '$.args.id') IS NOT NULL
        AND tool IN ('mcp_server_uninstall', 'mcp_server_config_write', 'mcp_server_tools', 'mcp_server_exposure',
                     'mcp_server_action', 'mcp_server_logs');",
    // 10: dashboard sessions (a person's, opened by a one-time login link that `hal0 ui
    // login` prints on the box). Only the sha256 of a link or session token is stored.
    "CREATE TABLE ui_links (
        token_sha256 TEXT PRIMARY KEY,
        created_at   TEXT NOT NULL,
        expires_at   TEXT NOT NULL,
        used_at      TEXT,
        created_by   TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE ui_sessions (
        id           TEXT PRIMARY KEY,
        token_sha256 TEXT NOT NULL UNIQUE,
        csrf         TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        expires_at   TEXT NOT NULL,
        last_seen    TEXT NOT NULL,
        ended_at     TEXT,
        user_agent   TEXT NOT NULL DEFAULT ''
    );",
    // 11: OAuth 2.1 in. Clients that registered (DCR) or were added at the shell; the
    // authorization requests a person approves or denies (the code a decision issues is
    // stored as its sha256); the grants a decision made, each bound to one mount and tied
    // to a bridge client; the access and refresh tokens of a grant (sha256 only). A bridge
    // client says where it came from (`origin`: empty for a key, `oauth:<client_id>`).
    "CREATE TABLE oauth_clients (
        client_id           TEXT PRIMARY KEY,
        name                TEXT NOT NULL,
        redirect_uris       TEXT NOT NULL,
        kind                TEXT NOT NULL,
        auth_method         TEXT NOT NULL,
        secret_sha256       TEXT,
        registration_sha256 TEXT,
        created_at          TEXT NOT NULL,
        created_by          TEXT NOT NULL,
        removed_at          TEXT
    ) WITHOUT ROWID;
    CREATE TABLE oauth_requests (
        id             TEXT PRIMARY KEY,
        client_id      TEXT NOT NULL REFERENCES oauth_clients(client_id),
        redirect_uri   TEXT NOT NULL,
        state          TEXT,
        code_challenge TEXT NOT NULL,
        mount          TEXT NOT NULL,
        scopes         TEXT NOT NULL,
        created_at     TEXT NOT NULL,
        expires_at     TEXT NOT NULL,
        decision       TEXT,
        decided_at     TEXT,
        decided_by     TEXT,
        granted        TEXT,
        code_sha256    TEXT UNIQUE,
        code_at        TEXT,
        code_used_at   TEXT,
        grant_id       TEXT,
        approval_id    TEXT
    ) WITHOUT ROWID;
    CREATE TABLE oauth_grants (
        id            TEXT PRIMARY KEY,
        client_id     TEXT NOT NULL REFERENCES oauth_clients(client_id),
        bridge_client TEXT NOT NULL REFERENCES bridge_clients(name),
        mount         TEXT NOT NULL,
        scopes        TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        revoked_at    TEXT,
        revoked_why   TEXT
    ) WITHOUT ROWID;
    CREATE INDEX oauth_grants_bridge ON oauth_grants(bridge_client);
    CREATE TABLE oauth_tokens (
        token_sha256 TEXT PRIMARY KEY,
        grant_id     TEXT NOT NULL REFERENCES oauth_grants(id),
        kind         TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        expires_at   TEXT NOT NULL,
        spent_at     TEXT
    ) WITHOUT ROWID;
    CREATE INDEX oauth_tokens_grant ON oauth_tokens(grant_id);
    ALTER TABLE bridge_clients ADD COLUMN origin TEXT NOT NULL DEFAULT '';",
    // 12: an approval is bound to the exact call: the SHA-256 of its canonical arguments,
    // the version of the policy that gated it, and when it expires undecided. The standing
    // rules a person chose instead of "once" (a tool for a caller for N minutes, or always
    // these exact arguments).
    "ALTER TABLE approvals ADD COLUMN args_sha256 TEXT;
    ALTER TABLE approvals ADD COLUMN policy_version TEXT;
    ALTER TABLE approvals ADD COLUMN expires_at TEXT;
    CREATE INDEX approvals_expiry ON approvals(expires_at) WHERE status = 'pending';
    CREATE TABLE approval_rules (
        id          TEXT PRIMARY KEY,
        server      TEXT NOT NULL,
        tool        TEXT NOT NULL,
        client      TEXT NOT NULL,
        args_sha256 TEXT,
        expires_at  TEXT,
        created_at  TEXT NOT NULL,
        created_by  TEXT NOT NULL,
        approval_id TEXT
    ) WITHOUT ROWID;
    CREATE INDEX approval_rules_call ON approval_rules(server, tool, client);",
    // 13: the audit log's hash chain (`crate::audit::chain`). Each row carries its link
    // (`chain`: SHA-256 of the previous row's link and the row as stored); an outcome given
    // to a `started` row is a link of its own in `audit_outcomes`, which the row names
    // (`outcome_seq`). The anchor holds where each chain starts: the first chained row, the
    // link of the last pruned row, the first kept outcome link and the last pruned one's
    // hash. A row changes only once, from `started`, and never its link.
    "ALTER TABLE audit_log ADD COLUMN chain BLOB;
    ALTER TABLE audit_log ADD COLUMN outcome_seq INTEGER;
    CREATE TABLE audit_outcomes (
        seq    INTEGER PRIMARY KEY,
        row_id INTEGER NOT NULL,
        hash   BLOB NOT NULL CHECK (length(hash) = 32)
    );
    CREATE TABLE audit_chain_anchor (
        one            INTEGER PRIMARY KEY CHECK (one = 1),
        rows_from      INTEGER NOT NULL,
        row_hash       BLOB NOT NULL CHECK (length(row_hash) = 32),
        outcomes_below INTEGER NOT NULL,
        outcome_hash   BLOB NOT NULL CHECK (length(outcome_hash) = 32)
    );
    INSERT INTO audit_chain_anchor
        SELECT 1, max(coalesce((SELECT max(id) FROM audit_log), 0),
                      coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'), 0)) + 1,
               zeroblob(32), 1, zeroblob(32);
    CREATE TRIGGER audit_outcomes_no_update BEFORE UPDATE ON audit_outcomes BEGIN
        SELECT RAISE(ABORT, 'audit_outcomes is append-only');
    END;
    CREATE TRIGGER audit_outcomes_no_delete BEFORE DELETE ON audit_outcomes
        WHEN old.seq >= (SELECT outcomes_below FROM audit_chain_anchor) BEGIN
        SELECT RAISE(ABORT, 'audit_outcomes is append-only: links leave only by retention, oldest first');
    END;
    CREATE TRIGGER audit_chain_anchor_forward BEFORE UPDATE ON audit_chain_anchor
        WHEN new.outcomes_below < old.outcomes_below OR new.one != old.one OR new.rows_from != old.rows_from BEGIN
        SELECT RAISE(ABORT, 'the audit chain anchor only moves forward');
    END;
    CREATE TRIGGER audit_chain_anchor_no_delete BEFORE DELETE ON audit_chain_anchor BEGIN
        SELECT RAISE(ABORT, 'the audit chain anchor cannot be removed');
    END;
    DROP TRIGGER audit_log_no_update;
    CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
        WHEN NOT (old.verdict = 'started' AND old.outcome_seq IS NULL AND new.id = old.id AND new.at = old.at
                  AND new.surface = old.surface AND new.tool = old.tool AND new.identity = old.identity
                  AND new.arguments = old.arguments AND new.detail IS old.detail AND new.chain IS old.chain) BEGIN
        SELECT RAISE(ABORT, 'audit_log is append-only');
    END;",
    // 14: pinned definitions of what the proxy offers (`crate::registry::pins`): the digest
    // and definition a tool (resource, prompt) had when first offered or last accepted, and
    // the one the server shows instead while it is quarantined.
    "CREATE TABLE tool_pins (
        server           TEXT NOT NULL,
        item             TEXT NOT NULL CHECK (item IN ('tool', 'resource', 'prompt')),
        name             TEXT NOT NULL,
        digest           TEXT NOT NULL,
        definition       TEXT NOT NULL,
        pinned_at        TEXT NOT NULL,
        pinned_by        TEXT NOT NULL,
        drift_digest     TEXT,
        drift_definition TEXT,
        drift_at         TEXT,
        approval_id      TEXT,
        PRIMARY KEY (server, item, name)
    ) WITHOUT ROWID;",
    // 15: A2A agents elsewhere that the relay's bots may ask (`crate::relay::peers`): the
    // card as fetched when the operator added it, its JSON-RPC interface, the name of the
    // secret (in api.env) holding the credential sent to it, and whether its host was on a
    // private or loopback address when added (only then is it let through the SSRF guard).
    "CREATE TABLE relay_peers (
        name       TEXT PRIMARY KEY,
        card_url   TEXT NOT NULL,
        url        TEXT NOT NULL,
        card       TEXT NOT NULL,
        secret     TEXT UNIQUE,
        trust_host INTEGER NOT NULL DEFAULT 0,
        added_at   TEXT NOT NULL
    ) WITHOUT ROWID;",
    // 16: named people of the dashboard (`hal0 ui user`): each may have a password (an
    // argon2id PHC string) and passkeys (WebAuthn credentials: the COSE public key, its
    // algorithm and the authenticator's signature counter). A link is minted for a person;
    // a session belongs to one and says how it was opened (`via`: link, password, passkey).
    // Sessions and links from before have no person (their identity stays `ui:<id>`).
    "CREATE TABLE ui_people (
        name          TEXT PRIMARY KEY,
        handle        TEXT NOT NULL UNIQUE,
        password_hash TEXT,
        created_at    TEXT NOT NULL,
        created_by    TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE ui_passkeys (
        id         TEXT PRIMARY KEY,
        person     TEXT NOT NULL REFERENCES ui_people(name) ON DELETE CASCADE,
        label      TEXT NOT NULL,
        alg        INTEGER NOT NULL,
        cose_key   BLOB NOT NULL,
        sign_count INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        last_used  TEXT
    ) WITHOUT ROWID;
    CREATE INDEX ui_passkeys_person ON ui_passkeys(person);
    ALTER TABLE ui_links ADD COLUMN person TEXT;
    ALTER TABLE ui_sessions ADD COLUMN person TEXT;
    ALTER TABLE ui_sessions ADD COLUMN via TEXT;",
];

/// Whether the store at `path` exists and is at this hal0's schema, read without changing
/// it (no migration, no conversion): a store an older or newer hal0 wrote is `false`.
pub fn is_current(path: &std::path::Path) -> bool {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let Ok(c) = Connection::open_with_flags(path, flags) else { return false };
    current_version(&c).is_ok_and(|v| v == MIGRATIONS.len() as i64)
}

pub fn current_version(conn: &Connection) -> Result<i64> {
    Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
}

pub fn migrate(conn: &Connection) -> Result<()> {
    migrate_with(conn, MIGRATIONS)
}

/// Bring the store to `steps.len()`: every pending step in one transaction, under the
/// write lock (so a CLI and a daemon starting together never apply a step twice). A step
/// that fails rolls back all of them: an older store is left exactly as it was, still
/// readable by the hal0 that wrote it.
pub(crate) fn migrate_with(conn: &Connection, steps: &[&str]) -> Result<()> {
    let want = steps.len() as i64;
    conn.execute_batch("BEGIN IMMEDIATE;")?;
    let run = (|| -> Result<()> {
        let have = current_version(conn)?;
        if have > want {
            return Err(Error::unavailable(
                "store.too_new",
                format!("the store is at schema version {have}, newer than this hal0 ({want}); upgrade hal0"),
            ));
        }
        for (i, step) in steps.iter().enumerate().skip(have.max(0) as usize) {
            let v = i + 1;
            conn.execute_batch(&format!("{step} PRAGMA user_version = {v};")).map_err(|e| {
                Error::unavailable(
                    "store.migration_failed",
                    format!(
                        "migration {v} failed: {e}; the store is unchanged at schema version {have} \
                         (keep this hal0's previous version until the cause is fixed)"
                    ),
                )
            })?;
        }
        Ok(())
    })();
    match run {
        Ok(()) => Ok(conn.execute_batch("COMMIT;")?),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK;");
            Err(e)
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

    /// Migration 9: an admin call queued under an old tool name or path argument runs
    /// under the new ones; decided rows keep what they were.
    #[test]
    fn pending_admin_calls_take_the_spec_names() {
        let d = tempfile::tempdir().unwrap();
        let c = Connection::open(d.path().join("t.db")).unwrap();
        for step in &MIGRATIONS[..8] {
            c.execute_batch(step).unwrap();
        }
        c.pragma_update(None, "user_version", 8).unwrap();
        let row = |id: &str, tool: &str, args: &str, status: &str| {
            c.execute(
                "INSERT INTO approvals (id, kind, client, tool, arguments, created_at, status)
                 VALUES (?1, 'admin_call', 'bridge:ops', ?2, ?3, '2026-01-01T00:00:00Z', ?4)",
                rusqlite::params![id, tool, format!(r#"{{"tool":"{tool}","args":{args}}}"#), status],
            )
            .unwrap();
        };
        row("a1", "mcp_server_config", r#"{"id":"files","enabled":false}"#, "pending");
        row("a2", "mcp_server_control", r#"{"id":"files","action":"stop"}"#, "pending");
        row("a3", "mcp_server_uninstall", r#"{"id":"files"}"#, "pending");
        row("a4", "mcp_server_install", r#"{"url":"http://127.0.0.1:9/mcp","id":"other"}"#, "pending");
        row("a5", "mcp_server_config", r#"{"id":"files"}"#, "executed");
        migrate(&c).unwrap();
        let get = |id: &str| -> (String, String) {
            c.query_row("SELECT tool, arguments FROM approvals WHERE id = ?1", [id], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
        };
        let json = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
        let (tool, args) = get("a1");
        assert_eq!(tool, "mcp_server_config_write");
        assert_eq!(
            json(&args),
            serde_json::json!({"tool": "mcp_server_config_write", "args": {"server_id": "files", "enabled": false}})
        );
        let (tool, args) = get("a2");
        assert_eq!(tool, "mcp_server_action");
        assert_eq!(json(&args)["args"], serde_json::json!({"server_id": "files", "action": "stop"}));
        assert_eq!(json(&get("a3").1)["args"], serde_json::json!({"server_id": "files"}));
        // An install's `id` is the new record's id, not a path argument.
        assert_eq!(json(&get("a4").1)["args"]["id"], "other");
        assert_eq!(get("a5").0, "mcp_server_config", "decided rows are history");
    }

    #[test]
    fn newer_store_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let c = Connection::open(d.path().join("t.db")).unwrap();
        c.pragma_update(None, "user_version", 999).unwrap();
        assert_eq!(migrate(&c).unwrap_err().code, "store.too_new");
    }
}
