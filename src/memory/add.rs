//! Remembering notes: one ([`MemoryEngine::add`]) or many in one transaction
//! ([`MemoryEngine::add_many`], `memory_add` with `items`). Either way every note is
//! committed, and so durable, before the call returns; the search index catches up from
//! the `memory_changes` log the triggers write.

use super::{
    ALREADY_KNOWN, Added, MemoryEngine, NOTE_COLS, NewNote, Note, history_row, input, marks, namespace, note_row,
    schema_error, set_tags, text_sha,
};
use crate::base::error::Result;
use crate::store::now;
use rusqlite::types::Value as Sql;
use rusqlite::{OptionalExtension, Transaction, params, params_from_iter};
use serde_json::{Value, json};

/// At most this many notes in one `add_many` call.
pub const MAX_ITEMS: usize = 1000;
/// The `memory_changes` rows kept: a process whose index is further behind rebuilds it.
pub const CHANGES_KEPT: i64 = 100_000;

/// SQLITE_CONSTRAINT_UNIQUE: an insert hit a unique index.
const UNIQUE_FAILED: std::ffi::c_int = 2067;

/// A note that passed the checks.
struct Checked {
    text: String,
    sha: String,
    dataset: String,
    tags: Vec<String>,
    tags_json: String,
    metadata: Value,
    metadata_json: String,
    document_id: Option<String>,
}

fn check(n: NewNote) -> Result<Checked> {
    let text = input::text(&n.text, "text")?;
    if !namespace::valid_dataset(&n.dataset) {
        return Err(schema_error(format!("unknown dataset `{}`", n.dataset)));
    }
    let tags = input::tags(&n.tags)?;
    let metadata = input::metadata(n.metadata)?;
    let metadata_json = metadata.to_string();
    let document_id = n.document_id.as_deref().map(input::document_id).transpose()?;
    let tags_json = serde_json::to_string(&tags).unwrap_or_else(|_| "[]".into());
    Ok(Checked {
        sha: text_sha(&text),
        text,
        dataset: n.dataset,
        tags,
        tags_json,
        metadata,
        metadata_json,
        document_id,
    })
}

/// What storing one note did: its row, its id, the operation result, whether it replaced
/// a document, and the note itself when it is new (else it is read back).
struct Stored {
    seq: i64,
    id: String,
    result: Value,
    upserted: bool,
    fresh: Option<Note>,
}

/// Store one checked note in `tx` (dedup, upsert or insert). Leaves the operation row to
/// the caller.
fn store(tx: &Transaction<'_>, writer: &str, n: &Checked, at: &str) -> Result<Stored> {
    let existing: Option<(i64, String, String, String)> = match &n.document_id {
        Some(d) => tx
            .prepare_cached("SELECT seq, id, text, state FROM memory_notes WHERE dataset = ?1 AND document_id = ?2")?
            .query_row(params![n.dataset, d], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()?,
        None => None,
    };
    let known: Option<(i64, String)> = match (&n.document_id, &existing) {
        (Some(_), Some((seq, id, old, state))) => (*old == n.text && state == "active").then(|| (*seq, id.clone())),
        (Some(_), None) => None,
        (None, _) => tx
            .prepare_cached(
                // `+state`: look the text up by its hash (memory_notes_text); on `state` the
                // planner would walk the whole dataset in memory_notes_list for the ORDER BY.
                "SELECT seq, id FROM memory_notes
                 WHERE dataset = ?1 AND text_sha = ?2 AND text = ?3 AND +state = 'active' ORDER BY seq LIMIT 1",
            )?
            .query_row(params![n.dataset, n.sha, n.text], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?,
    };
    if let Some((seq, id)) = known {
        let mut r = json!({"facts_extracted": 0, "nothing_learned": true, "notice": ALREADY_KNOWN});
        if n.document_id.is_some() {
            r["document_fact_count"] = json!(1);
        }
        return Ok(Stored { seq, id, result: r, upserted: false, fresh: None });
    }
    if let Some((seq, id, old, state)) = existing {
        tx.execute(
            "UPDATE memory_notes SET text = ?1, text_sha = ?2, tags = ?3, metadata = ?4, source = ?5,
             state = 'active', timestamp = ?6, updated_at = ?6 WHERE seq = ?7",
            params![n.text, n.sha, n.tags_json, n.metadata_json, writer, at, seq],
        )?;
        set_tags(tx, seq, &n.tags)?;
        let mut ch = json!({});
        if old != n.text {
            ch["text"] = json!({"before": old, "after": n.text});
        }
        if state != "active" {
            ch["state"] = json!({"before": state, "after": "active"});
        }
        history_row(tx, seq, writer, "upserted", &ch)?;
        let result = json!({"facts_extracted": 1, "upserted": true});
        return Ok(Stored { seq, id, result, upserted: true, fresh: None });
    }
    let mut insert = tx.prepare_cached(
        "INSERT INTO memory_notes (id, dataset, text, text_sha, tags, metadata, source, created_by, document_id,
         timestamp, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9, ?9, ?9)",
    )?;
    let mut tries = 0;
    let id = loop {
        let id = input::new_sorted_id("mem")?;
        match insert.execute(params![
            id,
            n.dataset,
            n.text,
            n.sha,
            n.tags_json,
            n.metadata_json,
            writer,
            n.document_id,
            at
        ]) {
            Ok(_) => break id,
            // The id was taken (see `new_sorted_id`): make another.
            Err(rusqlite::Error::SqliteFailure(e, _)) if e.extended_code == UNIQUE_FAILED && tries < 8 => tries += 1,
            Err(e) => return Err(e.into()),
        }
    };
    let seq = tx.last_insert_rowid();
    let mut st = tx.prepare_cached("INSERT OR IGNORE INTO memory_note_tags (tag, seq) VALUES (?1, ?2)")?;
    for t in &n.tags {
        st.execute(params![t, seq])?;
    }
    // The row as the schema's defaults leave it.
    let note = Note {
        id: id.clone(),
        text: n.text.clone(),
        dataset: n.dataset.clone(),
        tags: n.tags.clone(),
        metadata: n.metadata.clone(),
        source: writer.to_string(),
        document_id: n.document_id.clone(),
        context: None,
        occurred_start: None,
        occurred_end: None,
        fact_type: "world".into(),
        entities: vec![],
        state: "active".into(),
        timestamp: at.to_string(),
        created_at: at.to_string(),
        updated_at: at.to_string(),
    };
    Ok(Stored { seq, id, result: json!({"facts_extracted": 1}), upserted: false, fresh: Some(note) })
}

/// The newest `memory_changes` id (0: none).
fn last_change(tx: &Transaction<'_>) -> Result<i64> {
    Ok(tx.prepare_cached("SELECT coalesce(max(id), 0) FROM memory_changes")?.query_row([], |r| r.get(0))?)
}

/// The `retain` operation of one call.
struct Retain<'a> {
    op_id: &'a str,
    writer: &'a str,
    dataset: Option<&'a str>,
    note_id: Option<&'a str>,
    request: Value,
    result: &'a Value,
    at: &'a str,
}

fn record_retain(tx: &Transaction<'_>, r: Retain<'_>) -> Result<()> {
    let Retain { op_id, writer, dataset, note_id, request, result, at } = r;
    tx.prepare_cached(
        "INSERT INTO memory_operations (id, kind, status, client, dataset, note_id, request, result, created_at, updated_at)
         VALUES (?1, 'retain', 'completed', ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
    )?
    .execute(params![op_id, writer, dataset, note_id, request.to_string(), result.to_string(), at])?;
    // Keep the change log bounded (an index further behind rebuilds from the rows).
    tx.prepare_cached("DELETE FROM memory_changes WHERE id <= (SELECT max(id) FROM memory_changes) - ?1")?
        .execute([CHANGES_KEPT])?;
    Ok(())
}

impl MemoryEngine {
    /// Remember a note as `writer` (its `source`). Reusing `document_id` in the same
    /// dataset replaces that document; text already present (in the document, or anywhere
    /// in the dataset without one) is not stored twice. Records a `retain` operation.
    pub fn add(&self, writer: &str, n: NewNote) -> Result<Added> {
        let mut out = self.store_all(writer, vec![check(n)?], true)?;
        out.pop().ok_or_else(|| super::not_found("memory", "just added"))
    }

    /// Remember up to [`MAX_ITEMS`] notes in one transaction, each as [`Self::add`] would
    /// (dedup, document upsert), under one `retain` operation. Every note is checked
    /// before any is stored: a bad one refuses the whole call, naming its position.
    pub fn add_many(&self, writer: &str, notes: Vec<NewNote>) -> Result<Vec<Added>> {
        if notes.is_empty() {
            return Err(schema_error("`items` must hold at least one note"));
        }
        if notes.len() > MAX_ITEMS {
            return Err(schema_error(format!("at most {MAX_ITEMS} items per call (got {})", notes.len())));
        }
        let checked = notes
            .into_iter()
            .enumerate()
            .map(|(i, n)| check(n).map_err(|e| schema_error(format!("items[{i}]: {}", e.message))))
            .collect::<Result<Vec<_>>>()?;
        self.store_all(writer, checked, false)
    }

    /// Store `notes` in one transaction with one `retain` operation (`single`: as
    /// `memory_add` with `text` records it), then index them.
    fn store_all(&self, writer: &str, notes: Vec<Checked>, single: bool) -> Result<Vec<Added>> {
        let op_id = input::new_id("op")?;
        let (stored, logged) = self.write(|tx| {
            let at = now();
            let before = last_change(tx)?;
            let stored = notes.iter().map(|n| store(tx, writer, n, &at)).collect::<Result<Vec<_>>>()?;
            let after = last_change(tx)?;
            let (request, result, dataset, note_id) = if single {
                let (n, s) = (&notes[0], &stored[0]);
                let request = json!({"note_id": s.id, "document_id": n.document_id, "chars": n.text.chars().count()});
                (request, s.result.clone(), Some(n.dataset.as_str()), Some(s.id.as_str()))
            } else {
                let learned: u64 = stored.iter().map(|s| s.result["facts_extracted"].as_u64().unwrap_or(0)).sum();
                let one = notes.iter().all(|n| n.dataset == notes[0].dataset).then_some(notes[0].dataset.as_str());
                let chars: usize = notes.iter().map(|n| n.text.chars().count()).sum();
                let request = json!({"items": notes.len(), "chars": chars});
                (request, json!({"facts_extracted": learned, "items": notes.len()}), one, None)
            };
            let r = Retain { op_id: &op_id, writer, dataset, note_id, request, result: &result, at: &at };
            record_retain(tx, r)?;
            Ok((stored, (before, after)))
        })?;
        self.index_own(&stored, logged);
        let missing: Vec<i64> = stored.iter().filter(|s| s.fresh.is_none()).map(|s| s.seq).collect();
        let mut read: std::collections::HashMap<i64, Note> = std::collections::HashMap::new();
        for chunk in missing.chunks(500) {
            read.extend(self.by_seqs_keyed(chunk)?);
        }
        stored
            .into_iter()
            .map(|s| {
                let note = match s.fresh {
                    Some(n) => n,
                    None => read.get(&s.seq).cloned().ok_or_else(|| super::not_found("memory", &s.id))?,
                };
                let facts = s.result["facts_extracted"].as_u64().unwrap_or(0) as u32;
                Ok(Added { note, operation_id: op_id.clone(), facts_extracted: facts, upserted: s.upserted })
            })
            .collect()
    }

    /// Put the notes this call just inserted straight into the index when it was level
    /// with the log before the call (their change-log rows are `logged`, exclusive start),
    /// saving the read back; otherwise the next search catches up from the log.
    fn index_own(&self, stored: &[Stored], logged: (i64, i64)) {
        let fresh = stored.iter().filter(|s| s.fresh.is_some()).count();
        let changed = stored.iter().filter(|s| s.fresh.is_some() || s.upserted).count();
        if fresh != changed || logged.1 - logged.0 != fresh as i64 {
            return;
        }
        self.feed_index(logged, stored.iter().filter_map(|s| s.fresh.as_ref().map(|n| (s.seq, n))));
    }
    /// Notes by `seq`, any state, in no particular order.
    pub(crate) fn by_seqs_keyed(&self, seqs: &[i64]) -> Result<Vec<(i64, Note)>> {
        if seqs.is_empty() {
            return Ok(vec![]);
        }
        let sql = format!("SELECT {NOTE_COLS}, n.seq FROM memory_notes n WHERE n.seq IN ({})", marks(seqs.len()));
        self.store.with(|c| {
            let mut st = c.prepare_cached(&sql)?;
            let rows = st
                .query_map(params_from_iter(seqs.iter().map(|s| Sql::Integer(*s))), |r| {
                    Ok((r.get::<_, i64>(16)?, note_row(r)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }
}
