//! The embedded memory engine behind `hal0-memory`: notes in SQLite (the only truth), an
//! in-memory word index over them ranked by bm25, their curation history, directives and
//! the operations log. Every function here is a plain blocking call on the [`Store`]; the
//! MCP front (`crate::mcp::memory`) only translates arguments and results.
//!
//! - [`namespace`]: which datasets a caller may write and read.
//! - [`add`]: remembering one note or many in one transaction.
//! - [`words`], [`index`], [`search`]: words, the index, search and recall.
//! - [`input`]: argument checks and normalisation.
//! - [`directives`], [`operations`]: the bank's directives and its operations log.
//! - [`gate`]: deletes that wait in the approvals inbox, and their execution once approved.

pub mod add;
pub mod directives;
pub mod gate;
pub mod index;
pub mod input;
pub mod namespace;
pub mod operations;
pub mod search;
pub mod words;

pub use gate::{CurateOutcome, DeleteOutcome, execute_approved, execute_approved_row};
pub use namespace::{Claim, Via, Who};

use crate::base::error::{Error, Result};
use crate::store::{Store, now};
use rusqlite::types::Value as Sql;
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params, params_from_iter};
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The code of every argument the memory engine refuses.
pub const SCHEMA: &str = "mcp.memory_schema";
/// A note, directive or operation that does not exist or that the caller may not see.
pub const NOT_FOUND: &str = "memory.not_found";
/// What a zero-yield retain of known content reports.
pub const ALREADY_KNOWN: &str = "content was already known";
/// Why `memory_reflect` and mental models answer `unsupported`.
pub const NO_LLM: &str = "memory_reflect and mental models need a language model; the embedded SQLite engine has none";

pub fn schema_error(msg: impl Into<String>) -> Error {
    Error::invalid(SCHEMA, msg)
}

pub(crate) fn not_found(what: &str, id: &str) -> Error {
    Error::not_found(NOT_FOUND, format!("no {what} `{id}`"))
}

/// One memory unit.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Note {
    pub id: String,
    pub text: String,
    pub dataset: String,
    pub tags: Vec<String>,
    pub metadata: Value,
    /// Who wrote it, set by hal0 from the caller's identity, never by the caller.
    pub source: String,
    pub document_id: Option<String>,
    pub context: Option<String>,
    pub occurred_start: Option<String>,
    pub occurred_end: Option<String>,
    pub fact_type: String,
    pub entities: Vec<String>,
    /// `active` or `invalidated`.
    pub state: String,
    /// When the current text was written.
    pub timestamp: String,
    pub created_at: String,
    pub updated_at: String,
}

/// A note to remember. `dataset` is already resolved by the namespace rules.
#[derive(Debug, Clone, Default)]
pub struct NewNote {
    pub text: String,
    pub dataset: String,
    pub tags: Vec<String>,
    pub metadata: Option<Value>,
    /// Reusing one upserts that logical document in the dataset.
    pub document_id: Option<String>,
}

/// The result of [`MemoryEngine::add`].
#[derive(Debug, Clone, Serialize)]
pub struct Added {
    pub note: Note,
    /// The `retain` operation recorded for this call.
    pub operation_id: String,
    /// 1 when the text was learned, 0 when it was already known.
    pub facts_extracted: u32,
    /// The document already existed and was replaced.
    pub upserted: bool,
}

/// A search hit: the note and its relevance (higher is better; bm25).
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    #[serde(flatten)]
    pub note: Note,
    pub score: f64,
}

/// What a search or recall looks at. `datasets` is already resolved by the namespace rules;
/// an empty list matches nothing.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub datasets: Vec<String>,
    /// A note matches when it carries any of these tags.
    pub tags: Vec<String>,
    /// Only notes whose `timestamp` is before this (exclusive).
    pub before: Option<String>,
    /// Only notes whose `timestamp` is at or after this.
    pub after: Option<String>,
    /// Only these fact types.
    pub types: Vec<String>,
}

/// One recalled note with its estimated token cost.
#[derive(Debug, Clone, Serialize)]
pub struct Recalled {
    #[serde(flatten)]
    pub hit: Hit,
    pub tokens: usize,
    /// The text was cut to fit the budget (only ever the first result).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recall {
    pub results: Vec<Recalled>,
    pub token_estimate: usize,
    pub max_tokens: usize,
}

/// A page of [`MemoryEngine::list`].
#[derive(Debug, Clone, Serialize)]
pub struct Page {
    pub items: Vec<Note>,
    pub next_cursor: Option<String>,
}

/// Fields `curate` may change; `None` leaves a field alone, an empty string clears
/// `context`/`occurred_*`.
/// (Stored as JSON in a gated change's approval row: only the fields named.)
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Changes {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occurred_start: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occurred_end: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fact_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entities: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.text.is_none()
            && self.context.is_none()
            && self.occurred_start.is_none()
            && self.occurred_end.is_none()
            && self.fact_type.is_none()
            && self.entities.is_none()
            && self.state.is_none()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Curated {
    pub note: Note,
    /// The fields that actually changed (empty: nothing to record).
    pub changed: Vec<String>,
}

/// One entry of a note's curation history, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryEntry {
    pub at: String,
    pub actor: String,
    /// `created`, `upserted`, `curated` or `consolidated`.
    pub action: String,
    /// `{field: {before, after}}` (plus `duplicate_of` for consolidation).
    pub changes: Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct TagCount {
    pub tag: String,
    pub count: i64,
}

/// The memory engine: a handle on the store. Cheap to create and clone.
#[derive(Clone)]
pub struct MemoryEngine {
    pub store: Store,
    /// The search index over the store's notes, shared by every engine on the store.
    index: std::sync::Arc<search::SharedIndex>,
}

pub(crate) const NOTE_COLS: &str = "n.id, n.text, n.dataset, n.tags, n.metadata, n.source, n.document_id, n.context, \
     n.occurred_start, n.occurred_end, n.fact_type, n.entities, n.state, n.timestamp, n.created_at, n.updated_at";

pub(crate) fn note_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Note> {
    let tags: String = r.get(3)?;
    let metadata: String = r.get(4)?;
    let entities: String = r.get(11)?;
    Ok(Note {
        id: r.get(0)?,
        text: r.get(1)?,
        dataset: r.get(2)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        metadata: serde_json::from_str(&metadata).unwrap_or_else(|_| json!({})),
        source: r.get(5)?,
        document_id: r.get(6)?,
        context: r.get(7)?,
        occurred_start: r.get(8)?,
        occurred_end: r.get(9)?,
        fact_type: r.get(10)?,
        entities: serde_json::from_str(&entities).unwrap_or_default(),
        state: r.get(12)?,
        timestamp: r.get(13)?,
        created_at: r.get(14)?,
        updated_at: r.get(15)?,
    })
}

pub(crate) fn text_sha(text: &str) -> String {
    hex::encode(&Sha256::digest(text.as_bytes())[..16])
}

/// `?, ?, ?` for `n` values.
pub(crate) fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
}

fn texts(xs: &[String]) -> impl Iterator<Item = Sql> + '_ {
    xs.iter().map(|s| Sql::Text(s.clone()))
}

/// `(substr(col,1,8) <> 'private:' OR col = ?own)`: the datasets `who` may see.
pub(crate) fn visible_sql(col: &str, who: &Who, p: &mut Vec<Sql>) -> String {
    p.push(who.own_private().map(Sql::Text).unwrap_or(Sql::Null));
    format!("(substr({col}, 1, 8) <> 'private:' OR {col} = ?)")
}

/// Like [`visible_sql`], less a private dataset `who` only reads as the admin key under a
/// bridge client's name: the datasets a change may touch.
pub(crate) fn changeable_sql(col: &str, who: &Who, p: &mut Vec<Sql>) -> String {
    p.push(who.own_private().filter(|d| !who.borrows(d)).map(Sql::Text).unwrap_or(Sql::Null));
    format!("(substr({col}, 1, 8) <> 'private:' OR {col} = ?)")
}

/// Encode a list position as an opaque cursor.
fn cursor_for(seq: i64) -> String {
    format!("c{}", hex::encode(seq.to_be_bytes()))
}

fn seq_of(cursor: &str) -> Result<i64> {
    let bad = || schema_error("`cursor` is not a cursor from this server: pass the previous page's next_cursor");
    let raw = cursor.strip_prefix('c').ok_or_else(bad)?;
    let b: [u8; 8] = hex::decode(raw).map_err(|_| bad())?.try_into().map_err(|_| bad())?;
    Ok(i64::from_be_bytes(b))
}

/// Estimated tokens of a text (about four characters a token).
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4).max(1)
}

pub(crate) fn set_tags(tx: &Transaction<'_>, seq: i64, tags: &[String]) -> Result<()> {
    tx.execute("DELETE FROM memory_note_tags WHERE seq = ?1", [seq])?;
    let mut st = tx.prepare_cached("INSERT OR IGNORE INTO memory_note_tags (tag, seq) VALUES (?1, ?2)")?;
    for t in tags {
        st.execute(params![t, seq])?;
    }
    Ok(())
}

pub(crate) fn history_row(tx: &Transaction<'_>, seq: i64, actor: &str, action: &str, changes: &Value) -> Result<()> {
    tx.execute(
        "INSERT INTO memory_history (seq, at, actor, action, changes) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![seq, now(), actor, action, changes.to_string()],
    )?;
    Ok(())
}

impl MemoryEngine {
    pub fn new(store: Store) -> Self {
        MemoryEngine { index: store.shared(), store }
    }

    /// Run `f` in one write transaction (taken at once, so it never fails half-way on a
    /// lock upgrade).
    pub(crate) fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        self.store.with(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        })
    }

    /// A note in any state, if `who` may see its dataset.
    pub fn get(&self, who: &Who, id: &str) -> Result<Note> {
        let id = input::id(id, "id")?;
        let n = self
            .store
            .with(|c| {
                Ok(c.query_row(&format!("SELECT {NOTE_COLS} FROM memory_notes n WHERE n.id = ?1"), [&id], note_row)
                    .optional()?)
            })?
            .filter(|n| who.can_see(&n.dataset));
        n.ok_or_else(|| not_found("memory", &id))
    }

    /// Notes by id, any state, in no particular order (missing ids are left out).
    pub fn get_many(&self, ids: &[String]) -> Result<Vec<Note>> {
        if ids.is_empty() {
            return Ok(vec![]);
        }
        self.store.with(|c| {
            let mut st =
                c.prepare(&format!("SELECT {NOTE_COLS} FROM memory_notes n WHERE n.id IN ({})", marks(ids.len())))?;
            let rows = st.query_map(params_from_iter(texts(ids)), note_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Active notes in `datasets`, newest first, `limit` a page; pass `next_cursor` back for
    /// the next page. Notes added meanwhile never shift a page.
    pub fn list(&self, datasets: &[String], cursor: Option<&str>, limit: usize) -> Result<Page> {
        let after = cursor.filter(|c| !c.is_empty()).map(seq_of).transpose()?;
        if datasets.is_empty() || limit == 0 {
            return Ok(Page { items: vec![], next_cursor: None });
        }
        let mut p: Vec<Sql> = texts(datasets).collect();
        p.push(Sql::Integer(after.unwrap_or(i64::MAX)));
        p.push(Sql::Integer(limit as i64 + 1));
        let sql = format!(
            "SELECT {NOTE_COLS}, n.seq FROM memory_notes n
             WHERE n.state = 'active' AND n.dataset IN ({}) AND n.seq < ?
             ORDER BY n.seq DESC LIMIT ?",
            marks(datasets.len())
        );
        let mut rows: Vec<(Note, i64)> = self.store.with(|c| {
            let mut st = c.prepare(&sql)?;
            let rows = st
                .query_map(params_from_iter(p.iter()), |r| Ok((note_row(r)?, r.get::<_, i64>(16)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })?;
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next_cursor = if more { rows.last().map(|(_, s)| cursor_for(*s)) } else { None };
        Ok(Page { items: rows.into_iter().map(|(n, _)| n).collect(), next_cursor })
    }

    /// Delete notes by id (any state), with their tags and history. Returns how many went.
    pub fn delete(&self, ids: &[String]) -> Result<usize> {
        self.delete_in(ids, None)
    }

    /// Delete notes by id, only those filed in `datasets` when given.
    pub fn delete_in(&self, ids: &[String], datasets: Option<&[String]>) -> Result<usize> {
        if ids.is_empty() {
            return Ok(0);
        }
        let mut p: Vec<Sql> = texts(ids).collect();
        let mut sql = format!("DELETE FROM memory_notes WHERE id IN ({})", marks(ids.len()));
        if let Some(ds) = datasets {
            sql.push_str(&format!(" AND dataset IN ({})", marks(ds.len())));
            p.extend(texts(ds));
        }
        self.write(|tx| Ok(tx.execute(&sql, params_from_iter(p.iter()))?))
    }

    /// Edit a note's text/context/occurred range/fact type/entities, or (in)validate it via
    /// `state`. Each call that changes something leaves one history row. An invalidated
    /// note is hidden from search, recall and list; its history stays.
    /// A note in a bridge client's private memory that the admin key reads under that
    /// client's name is refused here (`memory.private_forbidden`); [`Self::curate_request`]
    /// queues such a change for approval instead.
    pub fn curate(&self, who: &Who, id: &str, ch: Changes) -> Result<Curated> {
        check_changes(&ch)?;
        let cur = self.get(who, id)?;
        if who.borrows(&cur.dataset) {
            return Err(who.no_writes_over());
        }
        self.apply_curate(&who.actor(), cur, &ch)
    }

    /// Apply `ch` to the note `cur` as `actor`, leaving one history row when anything changed.
    pub(crate) fn apply_curate(&self, actor: &str, cur: Note, ch: &Changes) -> Result<Curated> {
        let (new, changes) = plan_curate(&cur, ch)?;
        let changed: Vec<String> = changes.keys().cloned().collect();
        if changed.is_empty() {
            return Ok(Curated { note: cur, changed });
        }
        let text_changed = changes.contains_key("text");
        let actor = actor.to_string();
        let changes = Value::Object(changes);
        self.write(|tx| {
            let at = now();
            let seq: i64 = tx.query_row("SELECT seq FROM memory_notes WHERE id = ?1", [&cur.id], |r| r.get(0))?;
            tx.execute(
                "UPDATE memory_notes SET text = ?1, text_sha = ?2, context = ?3, occurred_start = ?4, occurred_end = ?5,
                 fact_type = ?6, entities = ?7, state = ?8, updated_at = ?9,
                 timestamp = CASE WHEN ?10 THEN ?9 ELSE timestamp END WHERE seq = ?11",
                params![
                    new.text,
                    text_sha(&new.text),
                    new.context,
                    new.occurred_start,
                    new.occurred_end,
                    new.fact_type,
                    serde_json::to_string(&new.entities).unwrap_or_else(|_| "[]".into()),
                    new.state,
                    at,
                    text_changed,
                    seq
                ],
            )?;
            history_row(tx, seq, &actor, "curated", &changes)
        })?;
        let note = self.get_many(std::slice::from_ref(&cur.id))?.pop().ok_or_else(|| not_found("memory", &cur.id))?;
        Ok(Curated { note, changed })
    }

    /// A note's history, oldest first, starting with its creation. Invalidated notes keep
    /// theirs; a deleted note has none.
    pub fn history(&self, who: &Who, id: &str) -> Result<(Note, Vec<HistoryEntry>)> {
        let note = self.get(who, id)?;
        let (creator, rows) = self.store.with(|c| {
            let creator: String =
                c.query_row("SELECT created_by FROM memory_notes WHERE id = ?1", [&note.id], |r| r.get(0))?;
            let mut st = c.prepare(
                "SELECT h.at, h.actor, h.action, h.changes FROM memory_history h
                 JOIN memory_notes n ON n.seq = h.seq WHERE n.id = ?1 ORDER BY h.hid",
            )?;
            let rows = st
                .query_map([&note.id], |r| {
                    let ch: String = r.get(3)?;
                    Ok(HistoryEntry {
                        at: r.get(0)?,
                        actor: r.get(1)?,
                        action: r.get(2)?,
                        changes: serde_json::from_str(&ch).unwrap_or(Value::Null),
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok((creator, rows))
        })?;
        let created = HistoryEntry {
            at: note.created_at.clone(),
            actor: creator,
            action: "created".into(),
            changes: Value::Null,
        };
        Ok((note, std::iter::once(created).chain(rows).collect()))
    }

    /// Tags on active notes in `datasets` with how many notes carry each, most used first.
    pub fn tags_list(&self, datasets: &[String]) -> Result<Vec<TagCount>> {
        if datasets.is_empty() {
            return Ok(vec![]);
        }
        let sql = format!(
            "SELECT t.tag, count(*) AS c FROM memory_note_tags t JOIN memory_notes n ON n.seq = t.seq
             WHERE n.state = 'active' AND n.dataset IN ({}) GROUP BY t.tag ORDER BY c DESC, t.tag",
            marks(datasets.len())
        );
        self.store.with(|c| {
            let mut st = c.prepare(&sql)?;
            let rows = st
                .query_map(params_from_iter(texts(datasets)), |r| Ok(TagCount { tag: r.get(0)?, count: r.get(1)? }))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Counts over every dataset `who` may see (all but other callers' private ones).
    pub fn bank_stats(&self, who: &Who) -> Result<Value> {
        self.store.with(|c| {
            let mut p = Vec::new();
            let vis = visible_sql("dataset", who, &mut p);
            let mut pn = Vec::new();
            let vis_n = visible_sql("n.dataset", who, &mut pn);
            let mut per: serde_json::Map<String, Value> = serde_json::Map::new();
            let (mut active, mut invalidated, mut documents) = (0i64, 0i64, 0i64);
            {
                let mut st = c.prepare(&format!(
                    "SELECT dataset, sum(state = 'active'), sum(state <> 'active'), count(document_id)
                     FROM memory_notes WHERE {vis} GROUP BY dataset ORDER BY dataset"
                ))?;
                let mut rows = st.query(params_from_iter(p.iter()))?;
                while let Some(r) = rows.next()? {
                    let (d, a, i, docs): (String, i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
                    active += a;
                    invalidated += i;
                    documents += docs;
                    per.insert(d, json!({"active": a, "invalidated": i}));
                }
            }
            let tags: i64 = c.query_row(
                &format!(
                    "SELECT count(DISTINCT t.tag) FROM memory_note_tags t JOIN memory_notes n ON n.seq = t.seq
                     WHERE n.state = 'active' AND {vis_n}"
                ),
                params_from_iter(pn.iter()),
                |r| r.get(0),
            )?;
            let history: i64 = c.query_row(
                &format!("SELECT count(*) FROM memory_history h JOIN memory_notes n ON n.seq = h.seq WHERE {vis_n}"),
                params_from_iter(pn.iter()),
                |r| r.get(0),
            )?;
            let directives: i64 = c.query_row("SELECT count(*) FROM memory_directives", [], |r| r.get(0))?;
            let mut ops = serde_json::Map::new();
            let mut op_total = 0i64;
            {
                let vis_ops = format!("(dataset IS NULL OR {vis})");
                let mut st = c.prepare(&format!(
                    "SELECT status, count(*) FROM memory_operations WHERE {vis_ops} GROUP BY status ORDER BY status"
                ))?;
                let mut rows = st.query(params_from_iter(p.iter()))?;
                while let Some(r) = rows.next()? {
                    let (s, n): (String, i64) = (r.get(0)?, r.get(1)?);
                    op_total += n;
                    ops.insert(s, json!(n));
                }
            }
            Ok(json!({
                "engine": "sqlite-bm25",
                "notes": active + invalidated,
                "active": active,
                "invalidated": invalidated,
                "documents": documents,
                "datasets": per,
                "tags": tags,
                "history_entries": history,
                "directives": directives,
                "operations": ops,
                "node_count": active,
                "link_count": 0,
                "observation_count": 0,
                "operation_count": op_total,
            }))
        })
    }

    /// Remember `text` in `dataset` as `writer`: the entry point for the bridge's teach
    /// tools, which pick the dataset themselves (no header-based namespace).
    pub fn add_as(&self, writer: &str, dataset: &str, text: &str, tags: &[String]) -> Result<Added> {
        self.add(
            writer,
            NewNote {
                text: text.to_string(),
                dataset: dataset.to_string(),
                tags: tags.to_vec(),
                metadata: None,
                document_id: None,
            },
        )
    }

    /// Search `datasets` for `query`: the bridge's teach tools' search.
    pub fn search_in(&self, datasets: &[String], query: &str, limit: usize) -> Result<Vec<Hit>> {
        self.search(query, &Filter { datasets: datasets.to_vec(), ..Filter::default() }, limit)
    }
}

/// At least one field must be named.
pub(crate) fn check_changes(ch: &Changes) -> Result<()> {
    if ch.is_empty() {
        return Err(schema_error(
            "name at least one field to change: text, context, occurred_start, occurred_end, fact_type, entities or state",
        ));
    }
    Ok(())
}

/// Validate `ch` against the note `cur`: the note as it would be, and `{field: {before,
/// after}}` for every field that would change.
pub(crate) fn plan_curate(cur: &Note, ch: &Changes) -> Result<(Note, serde_json::Map<String, Value>)> {
    check_changes(ch)?;
    let opt_time = |v: &Option<String>, f: &str| -> Result<Option<Option<String>>> {
        match v.as_deref().map(str::trim) {
            None => Ok(None),
            Some("") => Ok(Some(None)),
            Some(s) => Ok(Some(Some(input::time(s, f)?))),
        }
    };
    let text = ch.text.as_deref().map(|t| input::text(t, "text")).transpose()?;
    let context = match ch.context.as_deref().map(str::trim) {
        None => None,
        Some("") => Some(None),
        Some(c) => Some(Some(input::text(c, "context")?)),
    };
    let start = opt_time(&ch.occurred_start, "occurred_start")?;
    let end = opt_time(&ch.occurred_end, "occurred_end")?;
    let fact_type = ch.fact_type.as_deref().map(|t| input::one_of(t, input::FACT_TYPES, "fact_type")).transpose()?;
    let entities = ch.entities.as_deref().map(input::entities).transpose()?;
    let state = ch.state.as_deref().map(|s| input::one_of(s, input::STATES, "state")).transpose()?;

    let mut new = cur.clone();
    let mut changes = serde_json::Map::new();
    let mut record = |field: &str, before: Value, after: Value| {
        if before != after {
            changes.insert(field.to_string(), json!({"before": before, "after": after}));
        }
    };
    if let Some(t) = text {
        record("text", json!(cur.text), json!(t));
        new.text = t;
    }
    if let Some(c) = context {
        record("context", json!(cur.context), json!(c));
        new.context = c;
    }
    if let Some(s) = start {
        record("occurred_start", json!(cur.occurred_start), json!(s));
        new.occurred_start = s;
    }
    if let Some(e) = end {
        record("occurred_end", json!(cur.occurred_end), json!(e));
        new.occurred_end = e;
    }
    if let Some(t) = fact_type {
        record("fact_type", json!(cur.fact_type), json!(t));
        new.fact_type = t;
    }
    if let Some(e) = entities {
        record("entities", json!(cur.entities), json!(e));
        new.entities = e;
    }
    if let Some(s) = state {
        record("state", json!(cur.state), json!(s));
        new.state = s;
    }
    if let (Some(s), Some(e)) = (&new.occurred_start, &new.occurred_end)
        && s > e
    {
        return Err(schema_error("`occurred_start` must not be after `occurred_end`"));
    }
    Ok((new, changes))
}

#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod tests;
